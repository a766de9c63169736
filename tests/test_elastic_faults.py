"""Faults on the HTTP engine: server down, 429 storms, 503s, refused documents.

A loopback proxy (conftest.FaultProxy) in front of osmem injects the failures; every
retry loop is bounded by the engine's ``max_retries`` with millisecond backoff."""

from __future__ import annotations

import itertools
import socket
import time

import pytest

from neardup.config import Config
from neardup.engines.base import CandidateQuery, EngineError, KeyGroup
from neardup.engines.elastic import ElasticEngine
from neardup.engines.elastic.options import Connection
from neardup.runtime.retry import Backoff
from neardup.signing.signer import Signer
from neardup.signing.records import Document

pytestmark = pytest.mark.http


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _engine(url: str, **kw) -> ElasticEngine:
    opts = {
        "index": "f",
        "pipeline": False,
        "max_retries": 4,
        "initial_backoff": 0.001,
        "max_backoff": 0.01,
        "chunk_size": 10,
    }
    opts.update(kw)
    return ElasticEngine.from_options(url, **opts)


def _signed(n: int, config: Config) -> list:
    signer = Signer(config)
    return [
        signer.sign(
            Document(
                f"n{i:03d}",
                f"document {i} talks about topic {i % 7} in words of its own, number {i}",
            )
        )
        for i in range(n)
    ]


def test_server_down_is_a_clear_error_after_retries():
    url = f"http://127.0.0.1:{_free_port()}"
    eng = ElasticEngine(
        url,
        index="x",
        retry=Backoff(max_retries=2, initial=0.01),
        connection=Connection(request_timeout=2),
    )
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


@pytest.mark.parametrize("status", [429, 503])
@pytest.mark.parametrize("proxy", ["fault_proxy", "es_proxy"])
def test_items_refused_for_a_passing_reason_are_retried(request, proxy, status):
    """Per-item 429 (queue full) and 503 (unavailable_shards_exception: a primary shard not
    active while a cluster restarts) are sent again with backoff, like whole requests."""
    p = request.getfixturevalue(proxy)
    eng = _engine(p.url, max_retries=4)
    eng.open(Config())
    docs = _signed(25, eng.config)
    p.reject_bulk_items_status = status
    p.reject_bulk_items = 3
    assert eng.put(docs) == []
    assert p.reject_bulk_items == 0
    assert eng.count() == 25 and set(eng.get([d.id for d in docs])) == {d.id for d in docs}


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


def test_candidates_answered_by_only_some_shards_are_asked_again(fault_proxy):
    """A cluster that lost a node answers searches with 200 and a failed shard: taking that
    answer would miss the near-duplicates on the lost shard (found on a real 3-node cluster),
    so the search is sent again; answers that stay partial are an error naming it."""
    eng = _engine(fault_proxy.url)
    eng.open(Config())
    docs = _signed(5, eng.config)
    eng.put(docs)
    q = CandidateQuery((KeyGroup("exact", tuple(int(k) for k in docs[0].keys["exact"])),))
    fault_proxy.partial_msearch = 2
    assert [c.id for c in eng.candidates([q])[0]] == [docs[0].id]
    assert fault_proxy.partial_msearch == 0
    fault_proxy.partial_msearch = 100
    with pytest.raises(
        EngineError,
        match="answered from only some shards .*no_shard_available_action_exception",
    ):
        eng.candidates([q])


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


# -- one bad document never costs the good ones; every accepted document stored once ----------
def _stored_once(eng, ids) -> None:
    """Every id stored, each exactly once, with distinct arrival numbers."""
    rows = list(eng.scan_tags())
    assert sorted(r.id for r in rows) == sorted(ids)
    seqs = [r.seq for r in rows]
    assert len(set(seqs)) == len(seqs) and eng.count() == len(ids)


@pytest.mark.parametrize("proxy", ["fault_proxy", "es_proxy"])
def test_bad_documents_are_reported_and_the_good_ones_stored(request, proxy):
    p = request.getfixturevalue(proxy)
    eng = _engine(p.url, chunk_size=100)
    eng.open(Config())
    signer = Signer(eng.config)
    docs = [
        signer.sign(
            Document(f"g{i:02d}", f"good document {i} about topic {i % 5} with words of its own")
        )
        for i in range(49)
    ]
    long_id = "x" * 300 + "й" * 120  # 540 bytes in UTF-8
    docs.insert(
        10, signer.sign(Document(long_id, "a document whose id is too long for the engine"))
    )
    docs.insert(
        30, signer.sign(Document("surrogate", "a text with a lone surrogate \ud800 inside it"))
    )
    failures = eng.put(docs)
    assert sorted(f.id for f in failures) == sorted([long_id, "surrogate"])
    reasons = {f.id: f.reason for f in failures}
    assert "540 bytes" in reasons[long_id] and "512" in reasons[long_id]
    assert "not valid Unicode" in reasons["surrogate"] and "position 29" in reasons["surrogate"]
    _stored_once(eng, [f"g{i:02d}" for i in range(49)])


def test_a_request_refused_as_a_whole_is_split_document_by_document(fault_proxy):
    eng = _engine(fault_proxy.url, chunk_size=50)
    eng.open(Config())
    signer = Signer(eng.config)
    docs = [
        signer.sign(
            Document(f"d{i:02d}", f"document {i} says something about subject {i % 4} today")
        )
        for i in range(20)
    ]
    docs[7] = signer.sign(
        Document("poison", "the server refuses any request that carries this one")
    )
    fault_proxy.refuse_bulk_with = "poison"
    sent = len(fault_proxy.log)  # (open's bulk privilege check before)
    failures = eng.put(docs)
    assert [f.id for f in failures] == ["poison"] and failures[0].reason.startswith("400")
    _stored_once(eng, [d.id for d in docs if d.id != "poison"])
    bulk = [x for x in fault_proxy.log[sent:] if "_bulk" in x[1]]
    assert bulk[0][2] == 400 and len(bulk) == 1 + 20  # the whole request, then one per document


@pytest.mark.parametrize("proxy", ["fault_proxy", "es_proxy"])
@pytest.mark.parametrize(
    "fault", ["429 storm", "503", "timeout mid-bulk", "dropped after write", "dropped before write"]
)
def test_faults_during_bulk_store_every_document_exactly_once(request, proxy, fault):
    p = request.getfixturevalue(proxy)
    eng = _engine(p.url, max_retries=6, request_timeout=1.0)
    eng.open(Config())
    docs = _signed(45, eng.config)  # 5 bulk requests of 10 (chunk_size 10)
    if fault == "429 storm":
        p.reject_bulk, p.reject_bulk_items = 3, 3
    elif fault == "503":
        p.fail_status, p.fail_any = 503, 4
    elif fault == "timeout mid-bulk":
        p.delay_bulk, p.delay_seconds = 2, 1.6
    elif fault == "dropped after write":
        p.drop_bulk = 2
    else:
        p.drop_bulk_before = 2
    assert eng.put(docs) == []
    assert (
        p.reject_bulk
        == p.reject_bulk_items
        == p.fail_any
        == p.delay_bulk
        == p.drop_bulk
        == p.drop_bulk_before
        == 0
    )
    _stored_once(eng, [d.id for d in docs])
    assert [r.seq for r in eng.scan_tags()] == list(range(1, 46))


def test_credentials_in_the_url_never_appear_in_messages(fault_proxy):
    import base64

    from neardup.runtime.redact import redact

    fault_proxy.require_auth = "Basic " + base64.b64encode(b"elastic:s3cret-pw").decode()
    url = fault_proxy.url.replace("http://", "http://elastic:s3cret-pw@")
    eng = _engine(url, max_retries=1)
    eng.open(Config())
    assert "s3cret" not in eng.location and eng.location.startswith("http://127.0.0.1:")
    assert eng.put(_signed(3, eng.config)) == [] and eng.count() == 3
    fault_proxy.fail_any = 100
    with pytest.raises(EngineError) as err:
        eng.count()
    assert "s3cret" not in str(err.value) and "503" in str(err.value)
    fault_proxy.fail_any = 0
    wrong = _engine(fault_proxy.url.replace("http://", "http://elastic:wrong-pw@"), max_retries=0)
    with pytest.raises(EngineError) as err:
        wrong.open()
    assert "wrong-pw" not in str(err.value) and "refused" in str(err.value)
    down = _engine(
        f"http://elastic:s3cret-pw@127.0.0.1:{_free_port()}", max_retries=0, request_timeout=1
    )
    with pytest.raises(EngineError) as err:
        down.open()
    assert "s3cret" not in str(err.value) and "cannot reach" in str(err.value)
    assert (
        redact("GET https://u:p%40ss@h:9200/x failed; http://a:b@c")
        == "GET https://u:***@h:9200/x failed; http://a:***@c"
    )
    # (the rules the transport's own redact lacked: '@' inside a password, secret query parameters)
    assert (
        redact("https://u:p@ss@h:9200/_search?api_key=abc123&size=1")
        == "https://u:***@h:9200/_search?api_key=***&size=1"
    )


def test_split_credentials():
    from neardup.engines.transport import split_credentials

    assert split_credentials("https://u:p%40ss@[::1]:9200/x") == (
        "https://[::1]:9200/x",
        ("u", "p@ss"),
    )
    assert split_credentials("http://elastic:s3cret@host:9200") == (
        "http://host:9200",
        ("elastic", "s3cret"),
    )
    assert split_credentials("http://host:9200") == ("http://host:9200", None)


class _Silent:
    """A loopback HTTP server that reads each request and answers it after ``delay`` seconds
    (None: never), with an OpenSearch ``GET /`` body; ``arrivals`` holds when each came."""

    def __init__(self, delay: float | None):
        import threading

        self.delay = delay
        self.arrivals: list[float] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(50)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.conns: list[socket.socket] = []
        self.closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import threading

        while not self.closed.is_set():
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c: socket.socket) -> None:
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                chunk = c.recv(65536)
                if not chunk:
                    return
                data += chunk
            self.arrivals.append(time.monotonic())
            if self.delay is None or self.closed.wait(self.delay):
                return
            body = (
                b'{"name":"n","cluster_name":"c","tagline":"x",'
                b'"version":{"number":"2.19.0","distribution":"opensearch"}}'
            )
            c.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
                % len(body)
                + body
            )
        except OSError:
            pass

    def close(self) -> None:
        self.closed.set()
        self.sock.close()
        for c in self.conns:
            c.close()


def test_timeout_bounds_each_request_against_a_node_that_never_answers():
    from neardup.runtime.retry import Backoff

    node = _Silent(None)
    try:
        eng = ElasticEngine.from_options(
            node.url, index="x", max_retries=2, initial_backoff=0.1, request_timeout=1.0
        )
        t0 = time.monotonic()
        with pytest.raises(EngineError, match="3 attempt"):
            eng.open()
        took = time.monotonic() - t0
        bound = Backoff(max_retries=2, initial=0.1).give_up_after(1.0)  # 3 x 1 s + 0.1 + 0.2
        assert bound == pytest.approx(3.3)
        assert took <= bound + 1.0, took
        gaps = [b - a for a, b in itertools.pairwise(node.arrivals)]
        assert len(node.arrivals) == 3 and all(g < 1.6 for g in gaps), gaps
    finally:
        node.close()


def test_a_slow_node_is_waited_for_up_to_the_timeout():
    """A node that answers after 10.5 s (more than the clients' transport default of 10 s) is
    waited for with --timeout 13, and given up on at once with --timeout 2 (no retry then)."""
    from neardup.engines.transport import Retrying, connect
    from neardup.runtime.retry import Backoff

    node = _Silent(10.5)
    try:
        t0 = time.monotonic()
        _, server, _ = connect(
            node.url,
            request_timeout=13.0,
            retry=Retrying(node.url, Backoff(max_retries=0, initial=0.01)),
        )
        assert server.product == "opensearch" and 10.4 < time.monotonic() - t0 < 13.0
        t0 = time.monotonic()
        with pytest.raises(EngineError, match="1 attempt"):
            connect(
                node.url,
                request_timeout=2.0,
                retry=Retrying(node.url, Backoff(max_retries=0, initial=0.01)),
            )
        assert time.monotonic() - t0 < 3.0
    finally:
        node.close()
