"""Faults on the HTTP engine: server down, 429 storms, 503s, refused documents.

A loopback proxy (conftest.FaultProxy) in front of osmem injects the failures; every
retry loop is bounded by the engine's ``max_retries`` with millisecond backoff."""

from __future__ import annotations

import socket
import time

import pytest

from neardup.config import Config
from neardup.engines.base import CandidateQuery, EngineError, KeyGroup
from neardup.engines.elastic import ElasticEngine
from neardup.signer import Document, Signer

pytestmark = pytest.mark.http


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _engine(url: str, **kw) -> ElasticEngine:
    opts = {"index": "f", "pipeline": False, "max_retries": 4, "initial_backoff": 0.001, "max_backoff": 0.01, "chunk_size": 10}
    opts.update(kw)
    return ElasticEngine(url, **opts)


def _signed(n: int, config: Config) -> list:
    signer = Signer(config)
    return [signer.sign(Document(f"n{i:03d}", f"document {i} talks about topic {i % 7} in words of its own, number {i}")) for i in range(n)]


def test_server_down_is_a_clear_error_after_retries():
    url = f"http://127.0.0.1:{_free_port()}"
    eng = ElasticEngine(url, index="x", max_retries=2, initial_backoff=0.01, request_timeout=2)
    t0 = time.monotonic()
    with pytest.raises(EngineError) as err:
        eng.open()
    assert time.monotonic() - t0 < 10
    msg = str(err.value)
    assert url in msg and "cannot reach" in msg and "3 attempt" in msg


@pytest.mark.parametrize("proxy", ["fault_proxy", "es_proxy"])
def test_429_storm_on_bulk_loses_nothing(request, proxy):
    p = request.getfixturevalue(proxy)
    eng = _engine(p.url, max_retries=6)  # five refusals in a row: within the budget
    eng.open(Config())
    docs = _signed(45, eng.config)
    p.reject_bulk = 3  # whole requests refused
    p.reject_bulk_items = 2  # every item of a request refused
    assert eng.put(docs) == []
    assert p.reject_bulk == 0 and p.reject_bulk_items == 0
    assert sum(1 for m, path, st in p.log if "_bulk" in path and st == 429) == 3
    assert eng.count() == 45 and set(eng.get([d.id for d in docs])) == {d.id for d in docs}


def test_item_429_beyond_retries_are_reported_not_dropped(fault_proxy):
    eng = _engine(fault_proxy.url, max_retries=1)
    eng.open(Config())
    docs = _signed(8, eng.config)
    fault_proxy.reject_bulk_items = 2  # the first try and the single retry
    failures = eng.put(docs[:5])
    assert sorted(f.id for f in failures) == [d.id for d in docs[:5]]
    assert all(f.reason.startswith("429 es_rejected_execution_exception") for f in failures)
    assert eng.put(docs) == [] and eng.count() == 8


def test_whole_request_429_beyond_retries_raises(fault_proxy):
    eng = _engine(fault_proxy.url, max_retries=1)
    eng.open(Config())
    fault_proxy.reject_bulk = 50
    with pytest.raises(EngineError, match="429"):
        eng.put(_signed(3, eng.config))
    assert fault_proxy.reject_bulk > 0  # bounded: it gave up


@pytest.mark.parametrize("status", [502, 503, 504])
def test_gateway_errors_on_search_are_retried(fault_proxy, status):
    eng = _engine(fault_proxy.url)
    eng.open(Config())
    docs = _signed(5, eng.config)
    eng.put(docs)
    fault_proxy.fail_status, fault_proxy.fail_any = status, 3
    q = CandidateQuery((KeyGroup("exact", tuple(int(k) for k in docs[0].keys["exact"])),))
    assert [c.id for c in eng.candidates([q])[0]] == [docs[0].id]
    assert fault_proxy.fail_any == 0


def test_persistent_503_names_the_server(fault_proxy):
    eng = _engine(fault_proxy.url, max_retries=2)
    eng.open(Config())
    fault_proxy.fail_any = 100
    with pytest.raises(EngineError) as err:
        eng.count()
    assert fault_proxy.url in str(err.value) and "503" in str(err.value)


@pytest.mark.parametrize("proxy", ["fault_proxy", "es_proxy"])
def test_basic_auth_and_api_key_reach_every_request(request, proxy):
    import base64

    p = request.getfixturevalue(proxy)
    p.require_auth = "Basic " + base64.b64encode(b"elastic:s3cret").decode()
    eng = _engine(p.url, basic_auth=("elastic", "s3cret"))
    eng.open(Config())
    assert eng.put(_signed(3, eng.config)) == [] and eng.count() == 3
    with pytest.raises(EngineError, match="refused.*(--api-key|--user)"):
        _engine(p.url, basic_auth=("elastic", "wrong")).open()
    p.require_auth = "ApiKey a2V5LWlkOmtleS1zZWNyZXQ="
    key = _engine(p.url, api_key="a2V5LWlkOmtleS1zZWNyZXQ=")
    key.open()
    assert key.count() == 3 and all(st != 401 for _, _, st in p.log[-3:])


def test_unsupported_elasticsearch_versions_are_named(es_proxy):
    import elasticsearch

    es_proxy.es_version = "7.17.0"
    with pytest.raises(EngineError) as err:
        _engine(es_proxy.url).open()
    assert "7.17.0" in str(err.value) and "needs Elasticsearch 8 or 9" in str(err.value)
    es_proxy.es_version = "8.15.3"
    if elasticsearch.__versionstr__.startswith("8."):  # neardup's client: 8 and 9 both served
        assert _engine(es_proxy.url).open() == Config()
        return
    with pytest.raises(EngineError) as err:  # a 9.x client installed by hand cannot talk to 8
        _engine(es_proxy.url).open()
    assert "8.15.3" in str(err.value) and "pip install 'elasticsearch>=8.13,<9'" in str(err.value)


def test_scan_uses_a_point_in_time_on_opensearch_and_scroll_where_missing(fault_proxy, es_proxy):
    for proxy, used in ((fault_proxy, "/_search/point_in_time"), (es_proxy, "/_search/scroll")):
        eng = _engine(proxy.url)
        eng.open(Config())
        eng.put(_signed(7, eng.config))
        assert [d.id for d in eng.scan(batch_size=3)] == [f"n{i:03d}" for i in range(7)]
        assert any(used in path for _, path, _ in proxy.log), used
