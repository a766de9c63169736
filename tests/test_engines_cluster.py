"""A real 3-node cluster (tests/engines/run --nodes 3) losing a node in the middle of
``neardup index``: the command finishes or, run again, resumes; every document is stored
once, and the tags equal those of the same documents on a single node. Runs when a real
engine is selected (NEARDUP_TEST_ENGINE); the single node is the session's cluster."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli import main

from .conftest import RealCluster, real_engine
from .test_elastic_engine import _texts

pytestmark = pytest.mark.http
from .corpora import NEARDUP_PATH

PLUGIN = NEARDUP_PATH  # the neardup under test, for child processes
N_DOCS = 3000


@pytest.fixture(scope="module")
def three_nodes():
    engine = real_engine()
    if not engine:
        pytest.skip("no real engine selected (NEARDUP_TEST_ENGINE)")
    cluster = RealCluster(engine, nodes=3)
    yield cluster
    cluster.close()


def _get(url: str, path: str) -> dict:
    with urllib.request.urlopen(url + path, timeout=120) as r:
        return json.loads(r.read())


def _count(url: str, index: str) -> int:
    try:
        return int(_get(url, f"/{index}/_count")["count"])
    except OSError:
        return -1


def _index_cmd(src: Path, url: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "neardup.cli",
        "index",
        str(src),
        "--engine",
        url,
        "--index",
        "big",
        "--batch-size",
        "100",
        "-q",
    ]


def _export(url: str, tmp_path: Path, name: str) -> list[dict]:
    out = tmp_path / f"{name}.jsonl"
    r = CliRunner().invoke(
        main, ["export", "--engine", url, "--index", "big", "-o", str(out)], catch_exceptions=False
    )
    assert r.exit_code == 0, r.output
    return [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]


@pytest.mark.real_engine
def test_a_node_lost_during_index_costs_no_document(three_nodes, osmem_clone, tmp_path):
    url = three_nodes.url
    src = tmp_path / "docs.jsonl"
    src.write_text(
        "\n".join(
            json.dumps({"id": d.id, "text": d.text, "title": d.title})
            for d in _texts(N_DOCS, seed=11)
        )
    )
    r = CliRunner().invoke(
        main,
        ["init", "--engine", url, "--index", "big", "--shards", "3", "--replicas", "1", "--json"],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    settings = _get(url, "/big/_settings")["big"]["settings"]["index"]
    assert (settings["number_of_shards"], settings["number_of_replicas"]) == ("3", "1")
    assert _get(url, "/_cluster/health/big?wait_for_status=green&timeout=60s")["status"] == "green"
    shards = _get(url, "/_cat/shards/big?format=json&h=node,prirep")
    assert len({s["node"] for s in shards if s["prirep"] == "p"}) == 3  # a primary on every node

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(PLUGIN), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        _index_cmd(src, url), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    deadline = time.monotonic() + 300
    while _count(url, "big") < N_DOCS // 4 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert proc.poll() is None, (
        "neardup index ended before the node could be stopped: " + proc.communicate()[0]
    )
    three_nodes.control("stop-node 3")
    out, _ = proc.communicate(timeout=600)
    runs = [(proc.returncode, out)]
    while runs[-1][0] != 0 and len(runs) < 4:  # resume: the same command again
        again = subprocess.run(
            _index_cmd(src, url), env=env, capture_output=True, text=True, timeout=600
        )
        runs.append((again.returncode, again.stdout + again.stderr))
    assert runs[-1][0] == 0, runs
    assert len(_get(url, "/_nodes/_all/none")["nodes"]) == 2  # the node stayed down

    _get(url, "/big/_refresh")
    assert _count(url, "big") == N_DOCS
    stored = _export(url, tmp_path, "three")
    assert sorted(d["id"] for d in stored) == sorted(
        json.loads(x)["id"] for x in src.read_text().splitlines()
    )
    assert (
        len({d["neardup"]["seq"] for d in stored}) == N_DOCS
    )  # each document stored once, one arrival number each

    # the same documents on one node
    single = osmem_clone.url
    assert (
        CliRunner()
        .invoke(main, ["init", "--engine", single, "--index", "big"], catch_exceptions=False)
        .exit_code
        == 0
    )
    one = subprocess.run(
        _index_cmd(src, single), env=env, capture_output=True, text=True, timeout=600
    )
    assert one.returncode == 0, one.stdout + one.stderr
    reference = _export(single, tmp_path, "one")

    def tags(rows: list[dict]) -> dict:
        return {d["id"]: {k: v for k, v in d["neardup"].items() if k != "seq"} for d in rows}

    assert tags(stored) == tags(reference)
    assert sum(t["is_duplicate"] for t in tags(stored).values()) > N_DOCS // 10
