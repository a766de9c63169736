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
      (es_rejected_execution_exception), without forwarding
    * ``fail_any``: answer that many requests of any kind with ``fail_status``
    * ``require_auth``: answer 401 unless the request carries this Authorization header
    * ``as_elasticsearch``: present the server as Elasticsearch 9 (product header, ``GET /``)
      so the elasticsearch client path can run against osmem
    """

    def __init__(self, upstream: str, *, as_elasticsearch: bool = False):
        self.upstream = urlsplit(upstream)
        self.as_elasticsearch = as_elasticsearch
        self.es_version = "9.1.0"  # what GET / reports when presenting as Elasticsearch
        self.reject_bulk = 0
        self.reject_bulk_items = 0
        self.fail_any = 0
        self.fail_status = 503
        self.require_auth: str | None = None  # the Authorization header every request must carry
        self.log: list[tuple[str, str, int]] = []
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
                status, headers, out = proxy._respond(self.command, self.path, dict(self.headers), body)
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

    def _respond(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        is_bulk = path.split("?")[0].endswith("/_bulk")
        if self.require_auth is not None and {k.lower(): v for k, v in headers.items()}.get("authorization") != self.require_auth:
            return self._record(method, path, 401, {"error": {"type": "security_exception", "reason": "missing or wrong credentials",
                                                              "root_cause": [{"type": "security_exception", "reason": "missing or wrong credentials"}]},
                                                    "status": 401})
        if self._take("fail_any"):
            return self._record(method, path, self.fail_status, _json_error(self.fail_status, "injected failure"))
        if is_bulk and self._take("reject_bulk"):
            return self._record(method, path, 429, _json_error(429, "rejected execution (injected)"))
        if is_bulk and self._take("reject_bulk_items"):
            items = []
            lines = [json.loads(x) for x in body.decode().splitlines() if x.strip()]
            i = 0
            while i < len(lines):
                op, meta = next(iter(lines[i].items()))
                i += 1 if op == "delete" else 2
                items.append({op: {"_index": meta.get("_index"), "_id": meta.get("_id"), "status": 429,
                                   "error": {"type": "es_rejected_execution_exception", "reason": "queue full (injected)"}}})
            return self._record(method, path, 200, {"took": 1, "errors": True, "items": items})
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
        if self.as_elasticsearch:
            out_headers["x-elastic-product"] = "Elasticsearch"
            if method == "GET" and path.split("?")[0] in ("", "/"):
                info = json.loads(data)
                info["version"].pop("distribution", None)
                info["version"]["number"] = self.es_version
                info["tagline"] = "You Know, for Search"
                data = json.dumps(info).encode()
        self.log.append((method, path, resp.status))
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


def _json_error(status: int, reason: str) -> dict[str, Any]:
    kind = "es_rejected_execution_exception" if status == 429 else "unavailable"
    return {"error": {"type": kind, "reason": reason, "root_cause": [{"type": kind, "reason": reason}]}, "status": status}


@pytest.fixture
def fault_proxy(osmem_clone) -> Iterator[FaultProxy]:
    """A FaultProxy in front of a fresh osmem clone (speaking as OpenSearch)."""
    p = FaultProxy(osmem_clone.url)
    yield p
    p.close()


@pytest.fixture
def es_proxy(osmem_clone) -> Iterator[FaultProxy]:
    """osmem presented as Elasticsearch 9, for the elasticsearch-client path."""
    p = FaultProxy(osmem_clone.url, as_elasticsearch=True)
    yield p
    p.close()
