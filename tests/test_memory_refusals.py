"""A document the engine has no heap for costs only itself: a bulk request refused for its
memory (a circuit breaker's 429 ``circuit_breaking_exception``, or indexing pressure's 429
``rejected_execution_exception`` for a request over its limit by itself), whether for the
whole request or item by item, is sent again in halves, never again as it is; the document
refused alone is named with the engine's reason and what would let it in, the good ones are
stored with the tags of a clean run, and ``index`` exits 2. A busy node's 429 is still sent
again whole, after the backoff.

The fault proxy gives both kinds of refusal, both ways, on cue. On a real engine
(``NEARDUP_TEST_ENGINE``): the in-flight requests breaker of the shared cluster, whose limit
is a dynamic setting, refuses a large document; and a node of its own with a 256 MB heap
refuses a Russian text of 14,000,000 characters (28 MB in UTF-8) as the engine chooses, by
its parent breaker or by indexing pressure (a tenth of the heap).
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from tests.engines import launch

from .conftest import real_engine
from .test_engine_refusals import request
from .test_hardening import good_text, run, write_jsonl

pytestmark = pytest.mark.http

#: The words each kind of refusal is named with: the engine's own, and the limit's setting.
NAMED = {
    "breaker": ("circuit_breaking_exception", "[parent] Data too large", "indices.breaker.total"),
    "pressure": (
        "rejected_execution_exception",
        "coordinating_operation_bytes",
        "indexing_pressure",
    ),
}


def good_records() -> list[dict[str, str]]:
    """Twenty documents and two copies of them with one word changed (near-duplicates)."""
    docs = [{"id": f"s{i:02d}", "text": good_text(i)} for i in range(20)]
    for i in (3, 11):
        words = docs[i]["text"].split()
        words[5] = "changed"
        docs.append({"id": f"s{i:02d}-copy", "text": " ".join(words)})
    return docs


def with_big(big_text: str) -> list[dict[str, str]]:
    good = good_records()
    return [*good[:10], {"id": "big", "text": big_text}, *good[10:]]


def tags(url: str, index: str) -> dict[str, tuple]:
    out = run("export", "-e", url, "--index", index, "-q").stdout
    recs = [json.loads(line) for line in out.splitlines()]
    return {
        r["id"]: (r["neardup"]["cluster_id"], r["neardup"]["dup_of"], r["neardup"]["resemblance"])
        for r in recs
    }


def index_json(src: Path, url: str, index: str) -> tuple[int, dict]:
    r = run("index", src, "-e", url, "--index", index, "-q", "-j", "0", "--json")
    assert "{" in r.output, r.output
    return r.exit_code, json.loads(r.output[r.output.index("{") :])


def clean_tags(url: str, tmp_path: Path, *, pipeline: bool) -> dict[str, tuple]:
    """The tags of the good documents indexed alone."""
    init = ["init", "-e", url, "--index", "clean"] + ([] if pipeline else ["--no-pipeline"])
    assert run(*init).exit_code == 0
    code, _ = index_json(write_jsonl(tmp_path / "good.jsonl", good_records()), url, "clean")
    assert code == 0
    return tags(url, "clean")


@pytest.mark.parametrize("items", [False, True], ids=["whole-request", "item-by-item"])
@pytest.mark.parametrize("kind", ["breaker", "pressure"])
@pytest.mark.parametrize("proxy", ["fault_proxy", "es_proxy"])
def test_a_document_refused_for_memory_costs_no_good_one(request, tmp_path, proxy, kind, items):
    fault_proxy = request.getfixturevalue(proxy)  # (OpenSearch's client, Elasticsearch's)
    assert run("init", "-e", fault_proxy.url, "--index", "t", "--no-pipeline").exit_code == 0
    fault_proxy.memory_over, fault_proxy.memory_error = 60_000, kind
    fault_proxy.memory_items = items
    big = " ".join(good_text(i) for i in range(100, 300))
    code, out = index_json(write_jsonl(tmp_path / "d.jsonl", with_big(big)), fault_proxy.url, "t")
    assert code == 2, out
    assert [f["id"] for f in out["failed"]] == ["big"], out["failed"]
    reason = out["failed"][0]["reason"]
    assert reason.startswith("429 "), reason
    assert all(words in reason for words in NAMED[kind]), reason
    assert "alone is" in reason and "-Xmx" in reason and "neardup's own limit" in reason, reason
    # split, never sent again as it was: each request refused is smaller than the one before
    sizes = fault_proxy.memory_refused
    assert len(sizes) >= 2 and all(a > b for a, b in zip(sizes, sizes[1:], strict=False)), sizes
    stated = int(reason.split(" alone is ")[1].split(" bytes")[0].replace(",", ""))
    assert abs(stated - sizes[-1]) <= sizes[-1] // 100, (sizes, reason)
    fault_proxy.memory_over = None
    assert out["documents"] == 22, out
    assert tags(fault_proxy.url, "t") == clean_tags(fault_proxy.url, tmp_path, pipeline=False)


@pytest.mark.parametrize("items", [False, True], ids=["whole-request", "item-by-item"])
def test_a_busy_node_429_is_sent_again_whole(fault_proxy, tmp_path, items):
    """es_rejected_execution_exception (a full queue): the same request again after the
    backoff, not split."""
    assert run("init", "-e", fault_proxy.url, "--index", "t", "--no-pipeline").exit_code == 0
    sent = len(fault_proxy.log)  # (init's bulk privilege check before)
    if items:
        fault_proxy.reject_bulk_items = 2
    else:
        fault_proxy.reject_bulk = 2
    code, out = index_json(write_jsonl(tmp_path / "d.jsonl", good_records()), fault_proxy.url, "t")
    assert code == 0 and out["documents"] == 22, out
    log = fault_proxy.log[sent:]
    bulks = [status for _, path, status in log if path.split("?")[0].endswith("_bulk")]
    assert bulks == ([200, 200, 200] if items else [429, 429, 200]), bulks


@pytest.mark.parametrize("kind", ["breaker", "busy"])
def test_any_other_request_a_breaker_refuses_stops_at_once_with_the_advice(kind):
    """Not only bulk requests: a breaker's 429 is not retried, a busy node's is."""
    from opensearchpy.exceptions import TransportError

    from neardup.engines.base import EngineError
    from neardup.engines.transport import Retrying
    from neardup.runtime.retry import Backoff

    from .conftest import _memory_error

    if kind == "breaker":
        error = _memory_error("breaker", 2_000_000, 1_000_000)
    else:
        error = {"type": "es_rejected_execution_exception", "reason": "queue full"}
    calls = []

    def search():
        calls.append(1)
        raise TransportError(429, error["type"], {"error": error, "status": 429})

    retry = Retrying("http://host:9200", Backoff(max_retries=3, sleep=lambda s: None))
    with pytest.raises(EngineError) as refused:
        retry("search", search)
    said = str(refused.value)
    if kind == "breaker":
        assert len(calls) == 1, said
        assert "[parent] Data too large" in said and "indices.breaker.total.limit" in said, said
        assert "-Xmx" in said, said
    else:
        assert len(calls) == 4 and "queue full" in said, said


# -- a real engine's breaker -----------------------------------------------------------------
@pytest.fixture
def small_breaker(osmem_clone):
    """The real engine (skipped on osmem), its in-flight requests breaker limited to 1mb
    for the test (a dynamic setting: no heap of its own needed), reset afterwards."""
    if not real_engine():
        pytest.skip("a real engine's own breaker (NEARDUP_TEST_ENGINE selects one)")
    url = osmem_clone.url
    setting = "network.breaker.inflight_requests.limit"
    request(url, "PUT", "/_cluster/settings", {"transient": {setting: "1mb"}})
    try:
        yield url
    finally:
        request(url, "PUT", "/_cluster/settings", {"transient": {setting: None}})


def test_a_document_a_real_breaker_refuses_is_named_and_the_good_ones_stored(
    small_breaker, tmp_path
):
    url = small_breaker
    assert run("init", "-e", url, "--index", "t").exit_code == 0
    big = " ".join(good_text(i) for i in range(1000, 5000))  # over 1 MB as a bulk request
    code, out = index_json(write_jsonl(tmp_path / "d.jsonl", with_big(big)), url, "t")
    assert code == 2, out
    assert [f["id"] for f in out["failed"]] == ["big"], out["failed"]
    reason = out["failed"][0]["reason"]
    assert reason.startswith("429 circuit_breaking_exception: [in_flight_requests] Data too large")
    assert "network.breaker.inflight_requests.limit" in reason and "-Xmx" in reason, reason
    assert out["documents"] == 22, out
    assert tags(url, "t") == clean_tags(url, tmp_path, pipeline=True)


def russian_text(chars: int) -> str:
    """A Russian text of ``chars`` characters (two bytes each in UTF-8, but digits and spaces)
    whose words, drawn at random from 20,000, seldom repeat a shingle."""
    rnd = random.Random(7)
    words = (
        "мир дом книга город река время человек работа слово жизнь день рука глаз земля "
        "вопрос сила война голова друг дело"
    ).split()
    vocabulary = [f"{w}{n}" for w in words for n in range(1000)]
    return " ".join(rnd.choices(vocabulary, k=chars // 7))[:chars]


@pytest.fixture(scope="module")
def small_heap():
    """A node of the real engine with a 256 MB heap, for this module only (skipped on osmem)."""
    engine = real_engine()
    if not engine:
        pytest.skip("a real engine's own heap (NEARDUP_TEST_ENGINE selects one)")
    proc, url = launch.start(engine, "--heap", "256m", stdin=subprocess.DEVNULL)
    try:
        yield url
    finally:
        launch.stop(proc)


@pytest.mark.real_engine
def test_a_document_a_small_heap_cannot_take_is_named_and_the_good_ones_stored(
    small_heap, tmp_path
):
    url = small_heap
    assert run("init", "-e", url, "--index", "t").exit_code == 0
    src = tmp_path / "d.jsonl"  # (in UTF-8, not escaped: read as fast as a user's file)
    src.write_text(
        "".join(
            json.dumps(r, ensure_ascii=False) + "\n" for r in with_big(russian_text(16_000_000))
        ),
        encoding="utf-8",
    )
    code, out = index_json(src, url, "t")
    assert code == 2, out
    assert [f["id"] for f in out["failed"]] == ["big"], out["failed"]
    reason = out["failed"][0]["reason"]
    breaker = reason.startswith("429 circuit_breaking_exception: [parent] Data too large")
    pressure = reason.startswith("429 rejected_execution_exception: rejected execution of")
    assert breaker or pressure, reason
    limit = "indices.breaker.total.limit" if breaker else "indexing_pressure.memory.limit"
    assert limit in reason and "-Xmx" in reason and "alone is" in reason, reason
    assert out["documents"] == 22, out
    assert tags(url, "t") == clean_tags(url, tmp_path, pipeline=True)
