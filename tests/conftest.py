"""Shared fixtures: the engine targets every behavioural test runs on, and a loopback proxy
for fault injection in front of the in-memory OpenSearch-compatible test server (osmem).

``engine_target`` yields ``(target, engine_opts)`` for ``NearDup.open(target, **engine_opts)``:
an SQLite path for the embedded engine, and for the HTTP engine a fresh osmem clone URL or,
when a real engine is selected, the real cluster (wiped after each test).

Real engines: ``NEARDUP_TEST_ENGINE=opensearch-2`` (or ``--engine-real opensearch-2``, or
just ``-m opensearch2``) starts that engine once per run through ``tests/engines/run``; every
test that talks HTTP to a cluster (``osmem_clone``, the ``http`` param of ``engine_target``,
the ``opensearch`` param of ``url``, tests/test_elastic_live.py) then runs against it with
neardup's ingest pipeline, and carries the markers ``real_engine`` and the engine's own
(``opensearch2``, ``opensearch3``). osmem has no ingest pipelines, so on osmem the HTTP indices
are made with ``pipeline=False``. Fault injection (``fault_proxy``, ``os_ingest``,
``es_proxy``) always runs on osmem.
"""

from __future__ import annotations

import http.client
import importlib
import json
import os
import re
import socket
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import urlsplit

import pytest

from neardup.sketches.loops import compiled_name, installed, missing
from tests.engines import launch

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(
    os.environ.get("NEARDUP_SHARED") or ROOT.parent / "shared"
)  # shared/ beside the clone
SPEC_DIR = SHARED / "opensearch-api-spec" / "spec"
CORPORA = SHARED / "corpora"


# -- real engines -------------------------------------------------------------------------------
REAL_ENGINES = {
    "opensearch-2": "opensearch2",
    "opensearch-3": "opensearch3",
}  # engine -> its marker
FAULT_FIXTURES = {"fault_proxy", "os_ingest", "es_proxy"}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--engine-real",
        choices=sorted(REAL_ENGINES),
        default=None,
        help="run the HTTP tests against this real engine (tests/engines/run); "
        "same as NEARDUP_TEST_ENGINE",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "real_engine: a test that talks HTTP to a cluster (a real one when one is selected)",
    )
    for engine, mark in REAL_ENGINES.items():
        config.addinivalue_line(
            "markers", f"{mark}: runs against real {engine} (selects it when given with -m)"
        )
    engine = config.getoption("--engine-real") or os.environ.get("NEARDUP_TEST_ENGINE")
    if not engine:
        expr = config.getoption("markexpr", "") or ""
        engine = next(
            (
                e
                for e, m in REAL_ENGINES.items()
                if re.search(rf"\b{m}\b", expr) and not re.search(rf"not\s+{m}\b", expr)
            ),
            None,
        )
    if engine:
        if engine not in REAL_ENGINES:
            raise pytest.UsageError(
                f"NEARDUP_TEST_ENGINE={engine!r}: expected one of {', '.join(REAL_ENGINES)}"
            )
        os.environ["NEARDUP_TEST_ENGINE"] = engine


# -- the compiled loops -------------------------------------------------------------------------
def compiled_required() -> bool:
    """Whether this run requires the compiled loops: ``NEARDUP_REQUIRE_COMPILED=1``, as .ci/run
    sets it for every run but the one that installs neardup without them. A run without one
    of them then stops at its start, naming it, and the tests that compare the compiled form
    with the interpreted one fail instead of skipping (:data:`needs_compiled`)."""
    return os.environ.get("NEARDUP_REQUIRE_COMPILED") == "1"


#: A test that compares the compiled loops with the interpreted ones: skipped where they are
#: not installed, unless the run requires them (:func:`compiled_required`).
needs_compiled = pytest.mark.skipif(
    not compiled_required() and not installed(),
    reason="the compiled loops are not installed (no C compiler at install)",
)


def forms(name: str) -> list:
    """The module of loops ``name`` (:data:`neardup.sketches.loops.MODULES`) in each form
    installed: compiled (where built, and always where the run requires it: then its
    ImportError fails the test), then interpreted."""
    found = [importlib.import_module(name)]
    try:
        found.insert(0, importlib.import_module(compiled_name(name)))
    except ImportError:  # (an install without a C compiler: the interpreted form only)
        if compiled_required():
            raise
    return found


def pytest_sessionstart(session: pytest.Session) -> None:
    if not compiled_required():
        return
    reasons = []
    for name in missing():
        try:
            importlib.import_module(name)
        except ImportError as exc:
            reasons.append(f"{name}: {exc}")
    if reasons:
        pytest.exit(
            "NEARDUP_REQUIRE_COMPILED=1, but these compiled loops are not installed (see the"
            " C compiler's errors in the build log of `pip install -v .`):\n  "
            + "\n  ".join(reasons),
            returncode=pytest.ExitCode.TESTS_FAILED,
        )


def real_engine() -> str | None:
    """The real engine selected for this run (``opensearch-2``...), or None (osmem)."""
    return os.environ.get("NEARDUP_TEST_ENGINE") or None


def http_pipeline() -> bool:
    """Whether HTTP indices get neardup's ingest pipeline: on a real engine yes, osmem has none."""
    return real_engine() is not None


def _on_cluster(item: pytest.Item) -> bool:
    """Whether the test talks HTTP to the cluster fixture (not to a fault-injecting front)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    names = set(getattr(item, "fixturenames", ()))
    if names & FAULT_FIXTURES or "elasticsearch" in (params.get("url"), params.get("client_url")):
        return False
    if "engine_target" in names:
        return params.get("engine_target") == "http"
    return bool(names & {"osmem_clone", "url", "client_url", "live_url"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    engine = real_engine()
    for item in items:
        if _on_cluster(item):
            item.add_marker(pytest.mark.real_engine)
            if engine:
                item.add_marker(getattr(pytest.mark, REAL_ENGINES[engine]))


class RealCluster:
    """A cluster started by ``tests/engines/run`` for the whole test run."""

    def __init__(self, engine: str, nodes: int = 1):
        self.engine = engine
        timeout = float(os.environ.get("NEARDUP_TEST_ENGINE_TIMEOUT", "900"))
        self.proc, self.url = launch.start(engine, "--nodes", str(nodes), timeout=timeout)

    def control(self, line: str) -> None:
        """Send a control line (``stop-node I``) to the launcher."""
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"content-type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            if e.code == 404:  # nothing of that kind (no pipeline, no PIT open)
                return {}
            raise

    def wipe(self) -> None:
        """Remove every index, template, pipeline, PIT and scroll a test left."""
        names = [
            x["index"]
            for x in self.request("GET", "/_cat/indices?format=json&h=index&expand_wildcards=all")
            if not x["index"].startswith(".")
        ]
        for i in range(0, len(names), 50):
            self.request("DELETE", "/" + ",".join(names[i : i + 50]) + "?expand_wildcards=all")
        for name in self.request("GET", "/_index_template").get("index_templates", []):
            if not name["name"].startswith("."):
                self.request("DELETE", f"/_index_template/{name['name']}")
        for name in self.request("GET", "/_template"):
            if not name.startswith("."):
                self.request("DELETE", f"/_template/{name}")
        for pid in self.request("GET", "/_ingest/pipeline"):
            self.request("DELETE", f"/_ingest/pipeline/{pid}")
        for path in ("/_search/point_in_time/_all", "/_search/scroll/_all"):
            self.request("DELETE", path)

    def close(self) -> None:
        launch.stop(self.proc)


@pytest.fixture(scope="session")
def real_cluster() -> Iterator[RealCluster]:
    """The selected real engine, started once per run (skips when none is selected)."""
    engine = real_engine()
    if not engine:
        pytest.skip("no real engine selected (NEARDUP_TEST_ENGINE)")
    cluster = RealCluster(engine)
    yield cluster
    cluster.close()


class _ClusterClone:
    """What a test gets as ``osmem_clone`` on a real engine: the cluster's URL."""

    def __init__(self, url: str):
        self.url = url


@pytest.fixture
def osmem_clone(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh cluster for one test: an osmem clone, or the real engine (wiped afterwards)."""
    if real_engine():
        cluster: RealCluster = request.getfixturevalue("real_cluster")
        yield _ClusterClone(cluster.url)
        cluster.wipe()
    else:
        clone = request.getfixturevalue("osmem_server").clone()
        yield clone
        clone.close()


@pytest.fixture
def osmem_fault_clone(osmem_server) -> Iterator[Any]:
    """Always an osmem clone: the upstream of the fault-injecting fronts."""
    clone = osmem_server.clone()
    yield clone
    clone.close()


@pytest.fixture
def live_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A real cluster: NEARDUP_TEST_URL when set, else the selected real engine (skip if
    neither)."""
    url = os.environ.get("NEARDUP_TEST_URL")
    if url:
        yield url
    elif real_engine():
        yield request.getfixturevalue("osmem_clone").url
    else:
        pytest.skip(
            "no real cluster: set NEARDUP_TEST_ENGINE (tests/engines/run) or NEARDUP_TEST_URL"
        )


@pytest.fixture(params=["embedded", "http"])
def engine_target(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(target, engine_opts) of an empty index on each engine."""
    if request.param == "embedded":
        yield str(tmp_path / "neardup.db"), {}
    else:
        clone = request.getfixturevalue("osmem_clone")
        yield clone.url, {"index": "t", "pipeline": http_pipeline()}


class FaultProxy:
    """A loopback HTTP proxy that forwards to ``upstream`` and misbehaves on request.

    * ``reject_bulk``: answer that many ``_bulk`` requests with HTTP 429
    * ``reject_bulk_items``: answer that many ``_bulk`` requests with 200 and every item 429
      (es_rejected_execution_exception), without forwarding; ``reject_bulk_items_status``
      503 makes every item 503 unavailable_shards_exception instead (a primary shard not
      active: a cluster restarting); ``reject_bulk_items_error`` replaces the error of
      every item (with its ``status``), e.g. a ``cluster_block_exception``
    * ``fail_any``: answer that many requests of any kind with ``fail_status`` (and the
      engine's ``error`` object ``fail_error`` when set, e.g. a ``cluster_block_exception``;
      only requests whose path holds ``fail_path`` when that is set)
    * ``max_content_length``: answer a ``_bulk`` request whose body is longer than that many
      bytes as the engine's HTTP layer does, 413 with an empty body, and report the limit as the
      engine's default ``http.max_content_length`` in ``GET _cluster/settings``
    * ``memory_over``: answer a ``_bulk`` request whose body is longer than that many bytes as
      an engine short of heap for it does, with 429: ``memory_error`` ``"breaker"`` (the
      parent circuit breaker's ``circuit_breaking_exception``) or ``"pressure"`` (indexing
      pressure's ``rejected_execution_exception`` for an operation over its limit by itself);
      for the whole request, or with ``memory_items`` in a 200 answer, every item refused so
      (a data node's breaker refusing the shard's share of the request); the size of each
      request refused is in ``memory_refused``
    * ``require_auth``: answer 401 unless the request carries this Authorization header
    * ``drop_bulk`` / ``drop_bulk_before``: close the connection without an answer on that many
      ``_bulk`` requests, after forwarding them (the writes happened) / before (they did not)
    * ``delay_bulk``: forward that many ``_bulk`` requests, then wait ``delay_seconds`` before
      answering (a timeout in the middle of a bulk request whose writes happened)
    * ``refuse_bulk_with``: answer 400 to every ``_bulk`` request whose body contains this
      string (a server refusing a whole request for one document)
    * ``partial_msearch``: forward that many ``_msearch`` requests, then answer each search
      in them as a cluster that lost a node does: hits from none of the shards, one shard
      failed (``_shards.failed``), status 200
    * ``as_elasticsearch``: present the server as Elasticsearch 9 (product header, ``GET /``)
      so the elasticsearch client path can run against osmem
    * ``ingest``: an ingest-pipeline front that answers the way OpenSearch of that version
      does (osmem has no ingest): ``PUT _ingest/pipeline/ID`` is checked by the strict
      parser model of tests/ingest_parsers.py (refused with OpenSearch's 400
      ``parse_exception``) and stored, ``GET``/``DELETE`` read and remove it; it cannot run
      processors, so ``default_pipeline`` settings are checked to name a stored pipeline,
      remembered in ``default_pipelines`` and not passed on (documents go in unprocessed).
    """

    def __init__(
        self,
        upstream: str,
        *,
        as_elasticsearch: bool = False,
        ingest: tuple[int, ...] | None = None,
    ):
        self.upstream = urlsplit(upstream)
        self.as_elasticsearch = as_elasticsearch
        self.ingest = ingest
        self.pipelines: dict[str, Any] = {}
        self.default_pipelines: dict[str, str] = {}  # index or template name -> pipeline
        self.es_version = "9.1.0"  # what GET / reports when presenting as Elasticsearch
        self.reject_bulk = 0
        self.reject_bulk_items = 0
        self.reject_bulk_items_status = 429
        self.reject_bulk_items_error: dict[str, Any] | None = None
        self.fail_any = 0
        self.fail_status = 503
        self.fail_error: dict[str, Any] | None = None
        self.fail_path: str | None = None
        self.max_content_length: int | None = None
        self.too_large: list[int] = []  # the size of each request answered 413
        self.memory_over: int | None = None
        self.memory_error = "breaker"
        self.memory_items = False
        self.memory_refused: list[int] = []  # the size of each request refused for its memory
        self.require_auth: str | None = None  # the Authorization header every request must carry
        self.drop_bulk = 0
        self.drop_bulk_before = 0
        self.delay_bulk = 0
        self.delay_seconds = 0.0
        self.refuse_bulk_with: str | None = None
        self.partial_msearch = 0
        self.log: list[tuple[str, str, int]] = []
        self.accept: list[str] = []  # the Accept header of every request
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                self.connection.setsockopt(
                    socket.IPPROTO_TCP, socket.TCP_NODELAY, 1
                )  # no 40 ms delayed-ACK stalls

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(n) if n else b""
                answer = proxy._respond(self.command, self.path, dict(self.headers), body)
                if answer is None:  # drop the connection without an answer
                    self.close_connection = True
                    return
                status, headers, out = answer
                try:
                    self._write(status, headers, out)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                    self.close_connection = True

            def _write(self, status: int, headers: dict[str, str], out: bytes) -> None:
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(out)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(out)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def _take(self, attr: str) -> bool:
        with self._lock:
            left = getattr(self, attr)
            if left > 0:
                setattr(self, attr, left - 1)
                return True
            return False

    def _ingest_front(
        self, method: str, path: str, body: bytes
    ) -> tuple[tuple[int, dict[str, str], bytes] | None, bytes]:
        """(answer, body to forward): pipelines are answered here; default_pipeline settings
        are checked, remembered and removed from what osmem gets."""
        from .ingest_parsers import parse_error, pipeline_errors

        bare = path.split("?")[0].rstrip("/")
        parts = [p for p in bare.split("/") if p]
        if parts[:2] == ["_ingest", "pipeline"]:
            pid = parts[2] if len(parts) > 2 else None
            if method == "PUT" and pid:
                errors = pipeline_errors(
                    "opensearch", self.ingest, pid, json.loads(body or b"null")
                )
                if errors:
                    return self._record(method, path, 400, parse_error(pid, errors[0])), body
                self.pipelines[pid] = json.loads(body)
                return self._record(method, path, 200, {"acknowledged": True}), body
            if method == "GET":
                found = {k: v for k, v in self.pipelines.items() if pid is None or k == pid}
                return self._record(method, path, 200 if found or pid is None else 404, found), body
            if method == "DELETE" and pid in self.pipelines:
                del self.pipelines[pid]
                return self._record(method, path, 200, {"acknowledged": True}), body
            return self._record(
                method,
                path,
                404,
                {
                    "error": {
                        "type": "resource_not_found_exception",
                        "reason": f"pipeline [{pid}] is missing",
                    },
                    "status": 404,
                },
            ), body
        index_create = method == "PUT" and len(parts) == 1 and not parts[0].startswith("_")
        if (
            body
            and parts
            and (
                index_create
                or (method == "PUT" and parts[-1] == "_settings")
                or (method in ("PUT", "POST") and parts[0] == "_index_template")
            )
        ):
            doc = json.loads(body)
            settings = (
                doc.get("settings")
                if len(parts) == 1
                else (doc.get("template") or {}).get("settings")
                if parts[0] == "_index_template"
                else doc
            )
            pipe = (
                _pop_setting(settings, "default_pipeline") if isinstance(settings, dict) else None
            )
            if pipe is not None:
                if pipe not in self.pipelines and pipe != "_none":
                    return self._record(
                        method, path, 400, parse_error(pipe, f"pipeline [{pipe}] does not exist")
                    ), body
                self.default_pipelines[parts[1] if parts[0] == "_index_template" else parts[0]] = (
                    pipe
                )
                return None, json.dumps(doc).encode()
        return None, body

    def _inject(
        self, method: str, path: str, headers: dict[str, str], body: bytes, is_bulk: bool
    ) -> Any:
        """The injected answer (None: drop the connection), or False to go on."""
        if (
            self.require_auth is not None
            and {k.lower(): v for k, v in headers.items()}.get("authorization") != self.require_auth
        ):
            return self._record(
                method,
                path,
                401,
                {
                    "error": {
                        "type": "security_exception",
                        "reason": "missing or wrong credentials",
                        "root_cause": [
                            {"type": "security_exception", "reason": "missing or wrong credentials"}
                        ],
                    },
                    "status": 401,
                },
            )
        if (self.fail_path is None or self.fail_path in path) and self._take("fail_any"):
            error = (
                {"error": {**self.fail_error, "root_cause": [self.fail_error]}}
                if self.fail_error
                else _json_error(self.fail_status, "injected failure")
            )
            return self._record(
                method, path, self.fail_status, {**error, "status": self.fail_status}
            )
        if self.max_content_length is not None:
            if is_bulk and len(body) > self.max_content_length:
                self.log.append((method, path, 413))
                self.too_large.append(len(body))
                return 413, {"content-type": "text/plain"}, b""
            if method == "GET" and path.split("?")[0] == "/_cluster/settings":
                limit = f"{self.max_content_length}b"
                return self._record(
                    method,
                    path,
                    200,
                    {
                        "persistent": {},
                        "transient": {},
                        "defaults": {"http.max_content_length": limit},
                    },
                )
        if is_bulk and self.memory_over is not None and len(body) > self.memory_over:
            self.memory_refused.append(len(body))
            error = _memory_error(self.memory_error, len(body), self.memory_over)
            if self.memory_items:
                answer = {"took": 1, "errors": True, "items": _every_item(body, 429, error)}
                return self._record(method, path, 200, answer)
            return self._record(
                method, path, 429, {"error": {**error, "root_cause": [error]}, "status": 429}
            )
        if is_bulk and self._take("drop_bulk_before"):
            self.log.append((method, path, 0))
            return None
        if is_bulk and self.refuse_bulk_with is not None and self.refuse_bulk_with.encode() in body:
            return self._record(
                method,
                path,
                400,
                {
                    "error": {
                        "type": "illegal_argument_exception",
                        "reason": "refused request (injected)",
                        "root_cause": [
                            {
                                "type": "illegal_argument_exception",
                                "reason": "refused request (injected)",
                            }
                        ],
                    },
                    "status": 400,
                },
            )
        if is_bulk and self._take("reject_bulk"):
            return self._record(
                method, path, 429, _json_error(429, "rejected execution (injected)")
            )
        if is_bulk and self._take("reject_bulk_items"):
            status = self.reject_bulk_items_status
            error = self.reject_bulk_items_error or (
                {"type": "es_rejected_execution_exception", "reason": "queue full (injected)"}
                if status == 429
                else {
                    "type": "unavailable_shards_exception",
                    "reason": "primary shard is not active (injected)",
                }
            )
            items = _every_item(body, status, error)
            return self._record(method, path, 200, {"took": 1, "errors": True, "items": items})
        return False

    def _respond(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes] | None:
        is_bulk = path.split("?")[0].endswith("/_bulk")
        self.accept.append({k.lower(): v for k, v in headers.items()}.get("accept", ""))
        injected = self._inject(method, path, headers, body, is_bulk)
        if injected is not False:
            return injected  # type: ignore[return-value]
        if self.ingest is not None and not is_bulk:
            answer, body = self._ingest_front(method, path, body)
            if answer is not None:
                return answer
        status, content_type, data = self._forward(method, path, headers, body)
        out_headers = {"content-type": content_type or "application/json"}
        if method == "GET" and path.split("?")[0] in ("", "/"):
            data = self._root_info(data)
        if self.as_elasticsearch:
            out_headers["x-elastic-product"] = "Elasticsearch"
        self.log.append((method, path, status))
        if (
            path.split("?")[0].endswith("/_msearch")
            and status == 200
            and self._take("partial_msearch")
        ):
            data = _fail_one_shard(data)
        if is_bulk and self._take("drop_bulk"):
            return None
        if is_bulk and self._take("delay_bulk"):
            import time

            time.sleep(self.delay_seconds)
        return status, out_headers, data

    def _forward(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, str | None, bytes]:
        """Send the request upstream: its status, content type and body."""
        conn = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=30)
        fwd = {
            k: v
            for k, v in headers.items()
            if k.lower() not in ("host", "content-length", "connection")
        }
        if self.as_elasticsearch:  # osmem speaks plain JSON
            for k in list(fwd):
                if k.lower() in ("accept", "content-type"):
                    fwd[k] = "application/x-ndjson" if "ndjson" in fwd[k] else "application/json"
        conn.request(method, path, body=body or None, headers=fwd)
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        return resp.status, resp.getheader("content-type"), data

    def _root_info(self, data: bytes) -> bytes:
        """The ``GET /`` answer with the version the proxy poses as."""
        if self.ingest is not None:
            info = json.loads(data)
            info["version"]["number"] = ".".join(str(x) for x in self.ingest)
            data = json.dumps(info).encode()
        if self.as_elasticsearch:
            info = json.loads(data)
            info["version"].pop("distribution", None)
            info["version"]["number"] = self.es_version
            info["tagline"] = "You Know, for Search"
            data = json.dumps(info).encode()
        return data

    def _record(
        self, method: str, path: str, status: int, obj: Any
    ) -> tuple[int, dict[str, str], bytes]:
        self.log.append((method, path, status))
        headers = {"content-type": "application/json"}
        if self.as_elasticsearch:
            headers["x-elastic-product"] = "Elasticsearch"
        return status, headers, json.dumps(obj).encode()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(5)


def _pop_setting(settings: dict[str, Any], name: str) -> Any:
    """Remove ``index.NAME`` (nested or flat) from index settings; its value or None."""
    found = None
    for key in (name, f"index.{name}"):
        if key in settings:
            found = settings.pop(key)
    inner = settings.get("index")
    if isinstance(inner, dict) and name in inner:
        found = inner.pop(name)
    return found


def _every_item(body: bytes, status: int, error: dict[str, Any]) -> list[dict[str, Any]]:
    """The items of a ``_bulk`` answer refusing every action of ``body`` with ``error``."""
    items = []
    lines = [json.loads(x) for x in body.decode().splitlines() if x.strip()]
    i = 0
    while i < len(lines):
        op, meta = next(iter(lines[i].items()))
        i += 1 if op == "delete" else 2
        items.append(
            {
                op: {
                    "_index": meta.get("_index"),
                    "_id": meta.get("_id"),
                    "status": status,
                    "error": error,
                }
            }
        )
    return items


def _memory_error(kind: str, size: int, limit: int) -> dict[str, Any]:
    """The error an engine gives a request of ``size`` bytes it has no heap for: OpenSearch's
    parent circuit breaker (``"breaker"``), or its indexing pressure (``"pressure"``), whose
    limit ``limit`` the request exceeds by itself."""
    if kind == "breaker":
        return {
            "type": "circuit_breaking_exception",
            "reason": f"[parent] Data too large, data for [<http_request>] would be "
            f"[{size}/{size}b], which is larger than the limit of [{limit}/{limit}b], real "
            f"usage: [0/0b], new bytes reserved: [{size}/{size}b]",
            "bytes_wanted": size,
            "bytes_limit": limit,
            "durability": "TRANSIENT",
        }
    return {
        "type": "rejected_execution_exception",
        "reason": "rejected execution of coordinating operation [coordinating_and_primary_bytes=0, "
        f"replica_bytes=0, all_bytes=0, coordinating_operation_bytes={size}, "
        f"max_coordinating_and_primary_bytes={limit}]",
    }


def _json_error(status: int, reason: str) -> dict[str, Any]:
    kind = "es_rejected_execution_exception" if status == 429 else "unavailable"
    return {
        "error": {"type": kind, "reason": reason, "root_cause": [{"type": kind, "reason": reason}]},
        "status": status,
    }


def _fail_one_shard(data: bytes) -> bytes:
    """An ``_msearch`` answer with one shard of every response failed and its hits dropped."""
    answer = json.loads(data)
    for r in answer.get("responses", []):
        total = (r.get("_shards") or {}).get("total", 1)
        r["_shards"] = {
            "total": total,
            "successful": total - 1,
            "skipped": 0,
            "failed": 1,
            "failures": [
                {
                    "shard": 0,
                    "index": "?",
                    "reason": {
                        "type": "no_shard_available_action_exception",
                        "reason": "injected: the node holding it left",
                    },
                }
            ],
        }
        r.setdefault("hits", {})["hits"] = []
    return json.dumps(answer).encode()


@pytest.fixture
def fault_proxy(osmem_fault_clone) -> Iterator[FaultProxy]:
    """A FaultProxy in front of a fresh osmem clone (speaking as OpenSearch)."""
    p = FaultProxy(osmem_fault_clone.url)
    yield p
    p.close()


@pytest.fixture(params=[(2, 19, 0), (3, 1, 0)], ids=["opensearch2", "opensearch3"])
def os_ingest(request: pytest.FixtureRequest, osmem_fault_clone) -> Iterator[FaultProxy]:
    """osmem behind the OpenSearch ingest-pipeline front, as OpenSearch 2.19 and 3.1."""
    p = FaultProxy(osmem_fault_clone.url, ingest=request.param)
    yield p
    p.close()


@pytest.fixture
def es_proxy(request: pytest.FixtureRequest) -> Iterator[FaultProxy]:
    """osmem presented as Elasticsearch 9, for the elasticsearch-client path (the test's own
    osmem clone; on a real engine the disguise does not apply, and the test is skipped)."""
    if real_engine():
        pytest.skip("osmem presented as Elasticsearch: runs on osmem only")
    p = FaultProxy(request.getfixturevalue("osmem_clone").url, as_elasticsearch=True)
    yield p
    p.close()


@pytest.fixture(params=["opensearch", "elasticsearch"])
def url(request: pytest.FixtureRequest) -> str:
    """A fresh osmem clone (or the real engine) presented as OpenSearch, and through ``es_proxy``
    as Elasticsearch 9."""
    if request.param == "opensearch":
        return request.getfixturevalue("osmem_clone").url
    return request.getfixturevalue("es_proxy").url


@pytest.fixture
def count_signers(monkeypatch: pytest.MonkeyPatch) -> Callable[[], list]:
    """``count_signers()``: from then on, each Signer made is appended to the list it returns
    (what a test of "made once, handed on" counts)."""
    from neardup.signing.signer import Signer

    def start() -> list:
        made: list = []
        init = Signer.__init__

        def counted(self, *args, **kwargs):
            made.append(self)
            init(self, *args, **kwargs)

        monkeypatch.setattr(Signer, "__init__", counted)
        return made

    return start
