"""Shared fixtures: the engine targets every behavioural test runs on, and a loopback proxy
for fault injection in front of the in-memory OpenSearch-compatible test server (osmem).

``engine_target`` yields ``(target, engine_opts)`` for ``NearDup.open(target, **engine_opts)``:
an SQLite path for the embedded engine, and a fresh osmem clone URL for the HTTP engine.
osmem has no ingest pipelines (and no painless), so HTTP indices are made with
``pipeline=False`` here; the pipeline itself is checked against the API specification
and, when ``NEARDUP_TEST_URL`` names a real cluster, live.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SPEC_DIR = SHARED / "opensearch-api-spec" / "spec"
CORPORA = SHARED / "corpora"


@pytest.fixture(params=["embedded", "http"])
def engine_target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(target, engine_opts) of an empty index on each engine."""
    if request.param == "embedded":
        yield str(tmp_path / "neardup.db"), {}
    else:
        clone = request.getfixturevalue("osmem_clone")
        yield clone.url, {"index": "t", "pipeline": False}


class FaultProxy:
    """A loopback HTTP proxy that forwards to ``upstream`` and misbehaves on request.

    * ``reject_bulk``: answer that many ``_bulk`` requests with HTTP 429
    * ``reject_bulk_items``: answer that many ``_bulk`` requests with 200 and every item 429
      (es_rejected_execution_exception), without forwarding; ``reject_bulk_items_status``
      503 makes every item 503 unavailable_shards_exception instead (a primary shard not
      active: a cluster restarting); ``reject_bulk_items_error`` replaces the error of
      every item (with its ``status``), e.g. a ``cluster_block_exception``
    * ``fail_any``: answer that many requests of any kind with ``fail_status``
    * ``require_auth``: answer 401 unless the request carries this Authorization header
    * ``drop_bulk`` / ``drop_bulk_before``: close the connection without an answer on that many
      ``_bulk`` requests, after forwarding them (the writes happened) / before (they did not)
    * ``delay_bulk``: forward that many ``_bulk`` requests, then wait ``delay_seconds`` before
      answering (a timeout in the middle of a bulk request whose writes happened)
    * ``refuse_bulk_with``: answer 400 to every ``_bulk`` request whose body contains this
      string (a server refusing a whole request for one document)
    * ``as_elasticsearch``: present the server as Elasticsearch 9 (product header, ``GET /``)
      so the elasticsearch client path can run against osmem
    * ``ingest``: an ingest-pipeline front that answers the way OpenSearch of that version
      does (osmem has no ingest): ``PUT _ingest/pipeline/ID`` is checked by the strict
      parser model of tests/ingest_parsers.py (refused with OpenSearch's 400
      ``parse_exception``) and stored, ``GET``/``DELETE`` read and remove it; it cannot run
      processors, so ``default_pipeline`` settings are checked to name a stored pipeline,
      remembered in ``default_pipelines`` and not passed on (documents go in unprocessed).
    """

    def __init__(self, upstream: str, *, as_elasticsearch: bool = False, ingest: tuple[int, ...] | None = None):
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
        self.require_auth: str | None = None  # the Authorization header every request must carry
        self.drop_bulk = 0
        self.drop_bulk_before = 0
        self.delay_bulk = 0
        self.delay_seconds = 0.0
        self.refuse_bulk_with: str | None = None
        self.log: list[tuple[str, str, int]] = []
        self.accept: list[str] = []  # the Accept header of every request
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms delayed-ACK stalls

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
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def _take(self, attr: str) -> bool:
        with self._lock:
            left = getattr(self, attr)
            if left > 0:
                setattr(self, attr, left - 1)
                return True
            return False

    def _ingest_front(self, method: str, path: str, body: bytes) -> tuple[tuple[int, dict[str, str], bytes] | None, bytes]:
        """(answer, body to forward): pipelines are answered here; default_pipeline settings
        are checked, remembered and removed from what osmem gets."""
        from .ingest_parsers import parse_error, pipeline_errors

        bare = path.split("?")[0].rstrip("/")
        parts = [p for p in bare.split("/") if p]
        if parts[:2] == ["_ingest", "pipeline"]:
            pid = parts[2] if len(parts) > 2 else None
            if method == "PUT" and pid:
                errors = pipeline_errors("opensearch", self.ingest, pid, json.loads(body or b"null"))
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
            return self._record(method, path, 404, {"error": {"type": "resource_not_found_exception", "reason": f"pipeline [{pid}] is missing"},
                                                    "status": 404}), body
        index_create = method == "PUT" and len(parts) == 1 and not parts[0].startswith("_")
        if body and parts and (index_create or (method == "PUT" and parts[-1] == "_settings") or (method in ("PUT", "POST") and parts[0] == "_index_template")):
            doc = json.loads(body)
            settings = doc.get("settings") if len(parts) == 1 else (doc.get("template") or {}).get("settings") if parts[0] == "_index_template" else doc
            pipe = _pop_setting(settings, "default_pipeline") if isinstance(settings, dict) else None
            if pipe is not None:
                if pipe not in self.pipelines and pipe != "_none":
                    return self._record(method, path, 400, parse_error(pipe, f"pipeline [{pipe}] does not exist")), body
                self.default_pipelines[parts[1] if parts[0] == "_index_template" else parts[0]] = pipe
                return None, json.dumps(doc).encode()
        return None, body

    def _inject(self, method: str, path: str, headers: dict[str, str], body: bytes, is_bulk: bool) -> Any:
        """The injected answer (None: drop the connection), or False to go on."""
        if self.require_auth is not None and {k.lower(): v for k, v in headers.items()}.get("authorization") != self.require_auth:
            return self._record(method, path, 401, {"error": {"type": "security_exception", "reason": "missing or wrong credentials",
                                                              "root_cause": [{"type": "security_exception", "reason": "missing or wrong credentials"}]},
                                                    "status": 401})
        if self._take("fail_any"):
            return self._record(method, path, self.fail_status, _json_error(self.fail_status, "injected failure"))
        if is_bulk and self._take("drop_bulk_before"):
            self.log.append((method, path, 0))
            return None
        if is_bulk and self.refuse_bulk_with is not None and self.refuse_bulk_with.encode() in body:
            return self._record(method, path, 400, {"error": {"type": "illegal_argument_exception", "reason": "refused request (injected)",
                                                              "root_cause": [{"type": "illegal_argument_exception", "reason": "refused request (injected)"}]},
                                                    "status": 400})
        if is_bulk and self._take("reject_bulk"):
            return self._record(method, path, 429, _json_error(429, "rejected execution (injected)"))
        if is_bulk and self._take("reject_bulk_items"):
            items = []
            status = self.reject_bulk_items_status
            error = self.reject_bulk_items_error or (
                {"type": "es_rejected_execution_exception", "reason": "queue full (injected)"} if status == 429 else
                {"type": "unavailable_shards_exception", "reason": "primary shard is not active (injected)"})
            lines = [json.loads(x) for x in body.decode().splitlines() if x.strip()]
            i = 0
            while i < len(lines):
                op, meta = next(iter(lines[i].items()))
                i += 1 if op == "delete" else 2
                items.append({op: {"_index": meta.get("_index"), "_id": meta.get("_id"), "status": status, "error": error}})
            return self._record(method, path, 200, {"took": 1, "errors": True, "items": items})
        return False

    def _respond(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes] | None:
        is_bulk = path.split("?")[0].endswith("/_bulk")
        self.accept.append({k.lower(): v for k, v in headers.items()}.get("accept", ""))
        injected = self._inject(method, path, headers, body, is_bulk)
        if injected is not False:
            return injected  # type: ignore[return-value]
        if self.ingest is not None and not is_bulk:
            answer, body = self._ingest_front(method, path, body)
            if answer is not None:
                return answer
        conn = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=30)
        fwd = {k: v for k, v in headers.items() if k.lower() not in ("host", "content-length", "connection")}
        if self.as_elasticsearch:  # osmem speaks plain JSON
            for k in list(fwd):
                if k.lower() in ("accept", "content-type"):
                    fwd[k] = "application/x-ndjson" if "ndjson" in fwd[k] else "application/json"
        conn.request(method, path, body=body or None, headers=fwd)
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        out_headers = {"content-type": resp.getheader("content-type") or "application/json"}
        if self.ingest is not None and method == "GET" and path.split("?")[0] in ("", "/"):
            info = json.loads(data)
            info["version"]["number"] = ".".join(str(x) for x in self.ingest)
            data = json.dumps(info).encode()
        if self.as_elasticsearch:
            out_headers["x-elastic-product"] = "Elasticsearch"
            if method == "GET" and path.split("?")[0] in ("", "/"):
                info = json.loads(data)
                info["version"].pop("distribution", None)
                info["version"]["number"] = self.es_version
                info["tagline"] = "You Know, for Search"
                data = json.dumps(info).encode()
        self.log.append((method, path, resp.status))
        if is_bulk and self._take("drop_bulk"):
            return None
        if is_bulk and self._take("delay_bulk"):
            import time

            time.sleep(self.delay_seconds)
        return resp.status, out_headers, data

    def _record(self, method: str, path: str, status: int, obj: Any) -> tuple[int, dict[str, str], bytes]:
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


def _json_error(status: int, reason: str) -> dict[str, Any]:
    kind = "es_rejected_execution_exception" if status == 429 else "unavailable"
    return {"error": {"type": kind, "reason": reason, "root_cause": [{"type": kind, "reason": reason}]}, "status": status}


@pytest.fixture
def fault_proxy(osmem_clone) -> Iterator[FaultProxy]:
    """A FaultProxy in front of a fresh osmem clone (speaking as OpenSearch)."""
    p = FaultProxy(osmem_clone.url)
    yield p
    p.close()


@pytest.fixture(params=[(2, 19, 0), (3, 1, 0)], ids=["opensearch2", "opensearch3"])
def os_ingest(request: pytest.FixtureRequest, osmem_clone) -> Iterator[FaultProxy]:
    """osmem behind the OpenSearch ingest-pipeline front, as OpenSearch 2.19 and 3.1."""
    p = FaultProxy(osmem_clone.url, ingest=request.param)
    yield p
    p.close()


@pytest.fixture
def es_proxy(osmem_clone) -> Iterator[FaultProxy]:
    """osmem presented as Elasticsearch 9, for the elasticsearch-client path."""
    p = FaultProxy(osmem_clone.url, as_elasticsearch=True)
    yield p
    p.close()


@pytest.fixture(params=["opensearch", "elasticsearch"])
def url(request: pytest.FixtureRequest, osmem_clone) -> str:
    """A fresh osmem clone presented as OpenSearch, and through ``es_proxy`` as Elasticsearch 9."""
    if request.param == "opensearch":
        return osmem_clone.url
    return request.getfixturevalue("es_proxy").url
