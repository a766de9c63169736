"""A cluster's own refusals are named for what they are: a block is a block (with what lifts
it, never retried as "busy", never a credentials problem), a request over the engine's size
limit names its size and the limit, a write lease whose owner is gone is taken over at once,
and the failure told is the first cause, never a later clean-up error.

Blocks are set on the real engine (``NEARDUP_TEST_ENGINE``: ``cluster.blocks.create_index``,
``index.blocks.read_only_allow_delete`` as a flood-stage watermark sets it); the answers a
real engine cannot give on cue (a 413, a 403 of each kind) come through the fault proxy.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from neardup.engines.base import EngineError
from neardup.engines.elastic import ElasticEngine
from neardup.config import Config
from neardup.signing.records import Document
from neardup.signing.signer import Signer

from .conftest import real_engine
from .test_hardening import good_text, run, write_jsonl

pytestmark = pytest.mark.http


def request(url: str, method: str, path: str, body: Any = None) -> Any:
    """One request to the cluster at ``url`` (the JSON answer; HTTP errors raised)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(
        url + path, data=data, method=method, headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read() or b"null")


def exists(url: str, index: str) -> bool:
    try:
        request(url, "GET", f"/{index}/_mapping")
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return False
        raise
    return True


def neardup_templates(url: str) -> list[str]:
    found = request(url, "GET", "/_index_template").get("index_templates", [])
    return sorted(t["name"] for t in found if t["name"].startswith("neardup-"))


def one_line(r) -> str:
    lines = r.output.strip().splitlines()
    assert r.exit_code == 1 and len(lines) == 1 and "Traceback" not in r.output, r.output
    return lines[0]


@pytest.fixture
def cluster(osmem_clone):
    """The URL of the real engine (these are its own refusals: skipped on osmem); cluster
    blocks set by a test are lifted afterwards."""
    if not real_engine():
        pytest.skip("a real engine's own refusal (NEARDUP_TEST_ENGINE selects one)")
    yield osmem_clone.url
    request(
        osmem_clone.url,
        "PUT",
        "/_cluster/settings",
        {"persistent": {"cluster.blocks.create_index": None}},
    )


def _signed(n: int, start: int = 0) -> list:
    signer = Signer(Config())
    return [signer.sign(Document(f"d{i}", good_text(i))) for i in range(start, start + n)]


# -- blocks ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["init", "index"])
def test_a_cluster_that_refuses_new_indices_is_a_block_and_leaves_no_template(
    cluster, tmp_path, command
):
    request(
        cluster, "PUT", "/_cluster/settings", {"persistent": {"cluster.blocks.create_index": True}}
    )
    src = write_jsonl(tmp_path / "d.jsonl", [{"id": "a", "text": good_text(1)}])
    args = [src, "-q"] if command == "index" else []
    r = run(command, *args, "-e", cluster, "--index", "blk")
    line = one_line(r)
    assert "index_create_block_exception" in line and "blocked" in line, line
    assert "cluster.blocks.create_index" in line and "--api-key" not in line, line
    assert neardup_templates(cluster) == [] and not exists(cluster, "blk")
    request(
        cluster, "PUT", "/_cluster/settings", {"persistent": {"cluster.blocks.create_index": None}}
    )
    again = run(command, *args, "-e", cluster, "--index", "blk")
    assert again.exit_code == 0, again.output


def test_a_flood_stage_block_is_told_at_once_as_the_first_cause(cluster):
    """The flood-stage block (429 ``cluster_block_exception``) on the documents and the state
    index: the write stops at its first refusal (no retries as if the node were busy), and
    the error is the block, not the release of the lease the block also refuses."""
    eng = ElasticEngine(cluster, "flood")
    eng.open(create=True)
    try:
        eng.put(_signed(5))
        started = time.monotonic()
        with pytest.raises(EngineError) as err:
            with eng.writer():
                for index in ("flood", "flood-neardup-state"):
                    request(
                        cluster,
                        "PUT",
                        f"/{index}/_settings",
                        {"index.blocks.read_only_allow_delete": True},
                    )
                eng.put(_signed(5, start=5))
        took = time.monotonic() - started
    finally:
        for index in ("flood", "flood-neardup-state"):
            request(
                cluster, "PUT", f"/{index}/_settings", {"index.blocks.read_only_allow_delete": None}
            )
        eng.close()
    message = str(err.value)
    assert "refuses writes" in message and "flood-stage" in message, message
    assert 'PUT flood/_settings {"index.blocks.read_only_allow_delete": null}' in message
    assert "lease" not in message and took < 5.0, (took, message)


@pytest.mark.parametrize(
    "status,error,wanted,unwanted",
    [
        (
            403,
            {
                "type": "cluster_block_exception",
                "reason": "index [t] blocked by: [FORBIDDEN/8/index write (api)];",
            },
            ["blocked", 'PUT t/_settings {"index.blocks.write": null}'],
            ["--api-key"],
        ),
        (
            429,
            {
                "type": "cluster_block_exception",
                "reason": "index [t] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded "
                "flood-stage watermark, index has read-only-allow-delete block];",
            },
            ["blocked", "flood-stage", "index.blocks.read_only_allow_delete"],
            ["--api-key", "attempt"],
        ),
        (
            403,
            {
                "type": "security_exception",
                "reason": "no permissions for [indices:data/write/bulk]",
            },
            ["lacks the privilege indices:data/write/bulk on index t", "privileges"],
            ["blocked"],
        ),
        (
            401,
            {"type": "security_exception", "reason": "missing authentication credentials"},
            ["--api-key"],
            ["blocked"],
        ),
    ],
)
def test_errors_are_told_by_the_engines_error_type(
    fault_proxy, tmp_path, status, error, wanted, unwanted
):
    assert run("init", "-e", fault_proxy.url, "--index", "t", "--no-pipeline").exit_code == 0
    sent = len(fault_proxy.log)  # (init's bulk privilege check before)
    fault_proxy.fail_status, fault_proxy.fail_error = status, error
    fault_proxy.fail_path, fault_proxy.fail_any = "/_bulk", 1000
    src = write_jsonl(tmp_path / "d.jsonl", [{"id": "a", "text": good_text(1)}])
    line = one_line(run("index", src, "-e", fault_proxy.url, "--index", "t", "-q", "-j", "0"))
    assert all(w in line for w in wanted) and not any(u in line for u in unwanted), line
    bulks = [s for _, p, s in fault_proxy.log[sent:] if p.split("?")[0].endswith("/_bulk")]
    assert bulks == [status], fault_proxy.log  # told at once: not tried again


def test_a_blocked_bulk_item_is_not_sent_again(fault_proxy, tmp_path):
    assert run("init", "-e", fault_proxy.url, "--index", "t", "--no-pipeline").exit_code == 0
    sent = len(fault_proxy.log)  # (init's bulk privilege check before)
    fault_proxy.reject_bulk_items_status = 429
    fault_proxy.reject_bulk_items_error = {
        "type": "cluster_block_exception",
        "reason": "index [t] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage "
        "watermark, index has read-only-allow-delete block];",
    }
    fault_proxy.reject_bulk_items = 1000
    src = write_jsonl(
        tmp_path / "d.jsonl", [{"id": f"r{i}", "text": good_text(i)} for i in range(9)]
    )
    line = one_line(run("index", src, "-e", fault_proxy.url, "--index", "t", "-q", "-j", "0"))
    assert "refuses writes" in line and "flood-stage" in line, line
    bulks = [p for _, p, _ in fault_proxy.log[sent:] if p.split("?")[0].endswith("/_bulk")]
    assert bulks == ["/_bulk"]


# -- a request over the engine's size limit ------------------------------------------------------
def test_a_413_names_the_size_the_limit_and_batch_size(fault_proxy, tmp_path):
    assert run("init", "-e", fault_proxy.url, "--index", "t", "--no-pipeline").exit_code == 0
    fault_proxy.max_content_length = 60_000
    small = [{"id": f"s{i}", "text": good_text(i)} for i in range(40)]  # ~20 kB each batch half
    big = {"id": "big", "text": " ".join(good_text(i) for i in range(200))}
    src = write_jsonl(tmp_path / "d.jsonl", [*small[:20], big, *small[20:]])
    r = run("index", src, "-e", fault_proxy.url, "--index", "t", "-q", "-j", "0", "--json")
    assert r.exit_code == 2, r.output
    failed = json.loads(r.output[r.output.index("{") :])["failed"]
    assert [f["id"] for f in failed] == ["big"], failed
    reason = failed[0]["reason"]
    assert reason.startswith("413 request too large") and "60,000 bytes" in reason, reason
    assert "--batch-size" in reason and "http.max_content_length" in reason, reason
    stated = int(reason.split(" alone is ")[1].split(" bytes")[0].replace(",", ""))
    sent = fault_proxy.too_large[-1]  # the request of "big" alone
    assert abs(stated - sent) <= sent // 100, (sent, reason)
    fault_proxy.max_content_length = None
    info = json.loads(run("info", "-e", fault_proxy.url, "--index", "t", "--json").stdout)
    assert info["documents"] == 40, info


# -- the write lease -----------------------------------------------------------------------------
def _dead_pid() -> int:
    """The id of a process of this host that has exited."""
    p = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    return int(p.stdout)


def _leave_lease(url: str, index: str, host: str, pid: int, expires_in: float) -> None:
    """The lease document a writer leaves when it stops without releasing its lease."""
    now = time.time()
    request(
        url,
        "PUT",
        f"/{index}-neardup-state/_doc/lock?refresh=true",
        {
            "kind": "lock",
            "owner": f"{host}:{pid}:gone",
            "host": host,
            "pid": pid,
            "acquired_at": "2026-01-01T00:00:00+00:00",
            "renewed_at": "2026-01-01T00:00:00+00:00",
            "expires_at": int((now + expires_in) * 1000),
        },
    )


def test_a_lease_left_by_a_process_that_is_gone_is_taken_over_at_once(osmem_clone, tmp_path):
    url = osmem_clone.url
    src = write_jsonl(
        tmp_path / "d.jsonl", [{"id": f"r{i}", "text": good_text(i)} for i in range(6)]
    )
    assert run("init", "-e", url, "--index", "t", "--no-pipeline").exit_code == 0
    pid = _dead_pid()
    _leave_lease(url, "t", socket.gethostname(), pid, expires_in=600)
    started = time.monotonic()
    r = run("index", src, "-e", url, "--index", "t", "-q", "-j", "0")
    took = time.monotonic() - started
    assert r.exit_code == 0, r.output
    assert f"took over the write lease of owner {socket.gethostname()} pid {pid}" in r.output
    assert "no longer exists" in r.output and "waiting" not in r.output, r.output
    assert took < 30, took


def test_a_lease_of_another_host_is_waited_for_until_it_expires(osmem_clone):
    url = osmem_clone.url
    assert run("init", "-e", url, "--index", "t", "--no-pipeline").exit_code == 0
    _leave_lease(url, "t", "another-host", os.getpid(), expires_in=600)
    eng = ElasticEngine.from_options(url, "t", lease_timeout=1.0, pipeline=False)
    eng.open()
    try:
        with pytest.raises(EngineError, match="another writer holds the write lease"):
            eng.put(_signed(2))
        _leave_lease(url, "t", "another-host", os.getpid(), expires_in=-1)
        told: list[str] = []
        eng.on_wait = told.append
        assert eng.put(_signed(2)) == []
        assert told and "its lease expired at" in told[-1], told
    finally:
        eng.close()
