"""Connections to Elasticsearch 8/9 and OpenSearch 2/3 with the official clients.

``connect`` asks ``GET /`` which product answers and builds the matching client:
``opensearch-py`` when ``version.distribution`` is ``opensearch`` (the elasticsearch
client refuses non-Elasticsearch servers), else ``elasticsearch``. :class:`Retrying`
wraps calls with exponential backoff on 429/502/503/504 and connection errors and turns
what is left into :class:`~neardup.engines.base.EngineError` naming the server.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from .base import EngineError

T = TypeVar("T")

#: The elasticsearch client neardup installs: the 8.x client talks to Elasticsearch 8 and 9
#: (it asks for compatible-with=8, which Elasticsearch 9 accepts); a 9.x client cannot talk to 8.
ES_CLIENT_REQUIREMENT = "elasticsearch>=8.13,<9"

#: HTTP statuses worth retrying: overloaded (429) or a proxy/cluster in transition.
RETRY_STATUS = (429, 502, 503, 504)


@dataclass
class Backoff:
    """Retry policy: ``max_retries`` more attempts, sleeping initial * 2**attempt (capped)."""

    max_retries: int = 5
    initial: float = 0.5
    maximum: float = 30.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def delay(self, attempt: int) -> float:
        return min(self.maximum, self.initial * 2**attempt)


def status_of(exc: BaseException) -> int | None:
    """HTTP status of a client exception (both clients), None for connection-level errors."""
    for attr in ("status_code", "status"):
        v = getattr(exc, attr, None)
        if isinstance(v, int):
            return v
    meta = getattr(exc, "meta", None)
    v = getattr(meta, "status", None)
    return v if isinstance(v, int) else None


def is_connection_error(exc: BaseException) -> bool:
    names = {c.__name__ for c in type(exc).__mro__}
    return bool(names & {"ConnectionError", "ConnectionTimeout", "SSLError", "TransportError"}) and status_of(exc) is None


def retryable(exc: BaseException) -> bool:
    return is_connection_error(exc) or status_of(exc) in RETRY_STATUS


def describe(exc: BaseException) -> str:
    """A one-line reason from either client's exception."""
    info = getattr(exc, "info", None) or getattr(exc, "body", None)
    if isinstance(info, dict) and isinstance(info.get("error"), dict):
        err = info["error"]
        root = (err.get("root_cause") or [{}])[0]
        reason = root.get("reason") or err.get("reason")
        return f"{status_of(exc)} {err.get('type')}: {reason}"
    if isinstance(info, dict) and "error" in info:
        return f"{status_of(exc)} {info['error']}"
    s = status_of(exc)
    msg = str(exc) or type(exc).__name__
    return f"{s} {msg}" if s else f"{type(exc).__name__}: {msg}"


class Retrying:
    """Calls with retries; errors become EngineError naming ``location``."""

    def __init__(self, location: str, backoff: Backoff):
        self.location = location
        self.backoff = backoff

    def __call__(self, what: str, fn: Callable[[], T], *, ok_status: tuple[int, ...] = ()) -> T:
        attempt = 0
        while True:
            try:
                return fn()
            except Exception as e:  # noqa: BLE001 -- both clients' exception trees
                st = status_of(e)
                if st is not None and st in ok_status:
                    raise
                if retryable(e) and attempt < self.backoff.max_retries:
                    self.backoff.sleep(self.backoff.delay(attempt))
                    attempt += 1
                    continue
                if is_connection_error(e):
                    raise EngineError(f"cannot reach {self.location} ({what}) after {attempt + 1} attempt(s): {describe(e)}") from None
                if st in (401, 403):
                    raise EngineError(f"{self.location} refused {what}: {describe(e)}; check --api-key or --user/--password") from None
                if st is not None:
                    raise EngineError(f"{self.location}: {what} failed: {describe(e)}") from None
                raise


@dataclass
class Server:
    """What answered ``GET /``."""

    product: str  # "elasticsearch" | "opensearch"
    version: tuple[int, ...]
    number: str


def parse_server(info: dict) -> Server:
    v = info.get("version") or {}
    number = str(v.get("number") or "0")
    parts = tuple(int(p) for p in number.split("-")[0].split(".")[:3] if p.isdigit())
    product = "opensearch" if v.get("distribution") == "opensearch" else "elasticsearch"
    return Server(product, parts or (0,), number)


def connect(url: str, *, api_key: Any = None, basic_auth: tuple[str, str] | None = None, ca_certs: str | None = None,
            verify_certs: bool = True, request_timeout: float = 30.0, retry: Retrying) -> tuple[Any, Server, Any]:
    """(client, server, helpers module) for ``url``."""
    try:
        from elasticsearch import Elasticsearch
    except ImportError:  # pragma: no cover - a base dependency
        Elasticsearch = None  # type: ignore[assignment]
    ssl = {"ca_certs": ca_certs, "verify_certs": verify_certs}
    if not verify_certs:
        ssl["ssl_show_warn"] = False
    if Elasticsearch is not None:
        es = Elasticsearch(url, api_key=api_key, basic_auth=basic_auth, request_timeout=request_timeout, max_retries=0,
                           retry_on_timeout=False, **ssl)
        # Ask at the transport level with plain JSON: the client's own calls would send
        # Elasticsearch compatibility media types and refuse a non-Elasticsearch answer.
        headers = dict(getattr(es, "_headers", None) or {})  # auth and user agent of the client
        headers["accept"] = "application/json"
        def probe() -> Any:
            from elasticsearch import ApiError

            resp = es.transport.perform_request("GET", "/", headers=headers)
            if resp.meta.status >= 400:  # the transport returns HTTP errors; the client would raise
                raise ApiError(f"GET / answered {resp.meta.status}", meta=resp.meta, body=resp.body)
            return resp.body

        info = retry("GET /", probe)
        server = parse_server(info if isinstance(info, dict) else {})
        if server.product == "elasticsearch":
            import elasticsearch
            from elasticsearch import helpers

            client_major = int(elasticsearch.__versionstr__.split(".")[0])
            if server.version[0] < 8:
                raise EngineError(f"{url} runs Elasticsearch {server.number}; neardup needs Elasticsearch 8 or 9")
            if server.version[0] < client_major:
                # a 9.x client sends compatible-with=9, which Elasticsearch 8 refuses; the 8.x client
                # (neardup's dependency) sends compatible-with=8, which 8 and 9 both accept
                raise EngineError(f"{url} runs Elasticsearch {server.number} but the installed elasticsearch client is "
                                  f"{elasticsearch.__versionstr__}; install the client neardup depends on, which serves "
                                  f"Elasticsearch 8 and 9: pip install '{ES_CLIENT_REQUIREMENT}'")
            return es, server, helpers
        es.close()
    else:
        server = None  # type: ignore[assignment]
    try:
        from opensearchpy import OpenSearch, helpers as os_helpers
    except ImportError:
        raise EngineError(f"{url} runs OpenSearch; install its client: pip install 'opensearch-py>=2.4,<4'") from None
    headers = {}
    if api_key:
        import base64

        token = api_key if isinstance(api_key, str) else base64.b64encode(f"{api_key[0]}:{api_key[1]}".encode()).decode()
        headers["authorization"] = f"ApiKey {token}"
    client = OpenSearch(hosts=[url], http_auth=basic_auth, timeout=request_timeout, max_retries=0, retry_on_status=(),
                        retry_on_timeout=False, headers=headers or None, **ssl)
    if server is None:
        server = parse_server(retry("GET /", lambda: client.info()))
    if server.product == "opensearch" and server.version[0] < 2:
        raise EngineError(f"{url} runs OpenSearch {server.number}; neardup needs OpenSearch 2 or 3")
    return client, server, os_helpers
