"""Connections to Elasticsearch 8/9 and OpenSearch 2/3 with the official clients.

``connect`` asks ``GET /`` which product answers and builds the matching client:
``opensearch-py`` when ``version.distribution`` is ``opensearch`` (the elasticsearch
client refuses non-Elasticsearch servers), else ``elasticsearch``. Credentials and TLS are
read and applied in one place, :class:`Access`: for those clients, and for the plain HTTP
pool of the dashboards' installer (:meth:`Access.pool`). :class:`Retrying`
wraps calls with exponential backoff on 429/502/503/504 and connection errors and turns
what is left into :class:`~neardup.engines.base.EngineError` naming the server.
"""

from __future__ import annotations

import base64
import functools
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar
from urllib.parse import urlsplit, urlunsplit

from ..runtime.redact import redact
from ..runtime.retry import Backoff
from .base import EngineError
from .refusals import plain_http_to_tls, privilege_refusal, tls_failure

T = TypeVar("T")

#: The elasticsearch client neardup installs: the 8.x client talks to Elasticsearch 8 and 9
#: (it asks for compatible-with=8, which Elasticsearch 9 accepts); a 9.x client cannot talk to 8.
ES_CLIENT_REQUIREMENT = "elasticsearch>=8.13,<9"

#: HTTP statuses worth retrying: overloaded (429) or a proxy/cluster in transition.
RETRY_STATUS = (429, 502, 503, 504)


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
    return (
        bool(names & {"ConnectionError", "ConnectionTimeout", "SSLError", "TransportError"})
        and status_of(exc) is None
    )


def retryable(exc: BaseException) -> bool:
    """Worth trying again: the network, or a status of a passing state (:data:`RETRY_STATUS`)
    that is neither a block (a flood-stage block comes as 429 and stays until it is lifted)
    nor a refusal for the request's memory (:func:`memory_limit`, also a 429)."""
    if is_connection_error(exc):
        return tls_failure(describe(exc)) is None  # a certificate does not mend by waiting
    return (
        status_of(exc) in RETRY_STATUS
        and error_type(exc) not in BLOCKS
        and memory_limit(error_of(exc)) is None
    )


def error_of(exc: BaseException) -> dict[str, Any]:
    """The engine's ``error`` object in the answer of a client exception (``{}``: no JSON
    error, e.g. a 413 from the HTTP layer, or the network)."""
    info = getattr(exc, "info", None) or getattr(exc, "body", None)
    err = info.get("error") if isinstance(info, dict) else None
    return err if isinstance(err, dict) else {}


def error_type(exc: BaseException) -> str | None:
    """The engine's ``error.type`` in the answer of a client exception (None: no JSON
    error, e.g. a 413 from the HTTP layer, or the network)."""
    kind = error_of(exc).get("type")
    return str(kind) if kind else None


#: The error type of a circuit breaker's refusal: the engine would need more heap than the
#: breaker allows to take the request. It comes as 429, as a busy node's
#: ``es_rejected_execution_exception`` does, and the clients' bulk helpers (``streaming_bulk``'s
#: ``retry_on_status``, the engines' own bulk ``Retry``) retry both alike, by status. But a
#: request refused for its own size is refused again when sent again as it is, so it is never
#: retried as "busy": a bulk request is split instead.
BREAKER = "circuit_breaking_exception"

#: Error types of a rejected execution (Elasticsearch's, OpenSearch's before and after 2.0).
REJECTED = (
    "es_rejected_execution_exception",
    "rejected_execution_exception",
    "opensearch_rejected_execution_exception",
)

#: An indexing-pressure rejection's bytes of the operation refused and the node's limit:
#: ``coordinating_operation_bytes=N, max_coordinating_and_primary_bytes=M`` (primary and
#: replica operations, and OpenSearch's shard indexing pressure, ``node_operation_bytes=N,
#: node_max_coordinating_and_primary_bytes=M``, alike).
_PRESSURE = re.compile(r"(?:^|[ \[_])operation_bytes=(\d+), (?:node_)?max_[a-z_]*bytes=(\d+)")


def memory_limit(error: dict[str, Any]) -> str | None:
    """The limit that refused a request for its memory, in an engine's ``error`` object, when
    the same request sent again would be refused again: a circuit breaker (:data:`BREAKER`),
    or indexing pressure refusing an operation larger than its limit by itself (a 429
    ``rejected_execution_exception`` whose other bytes in flight count for nothing). None for
    any other error, a busy node's rejection included.

    >>> memory_limit({"type": BREAKER, "reason": "[parent] Data too large, data for [x]"})
    'the [parent] breaker (indices.breaker.total.limit)'
    >>> over = "coordinating_operation_bytes=81582817, max_coordinating_and_primary_bytes=32440320"
    >>> memory_limit({"type": "rejected_execution_exception", "reason": f"[all_bytes=0, {over}]"})
    'indexing pressure (indexing_pressure.memory.limit)'
    >>> under = "coordinating_operation_bytes=5, max_coordinating_and_primary_bytes=32440320"
    >>> memory_limit({"type": "es_rejected_execution_exception", "reason": under}) is None
    True
    """
    kind, reason = error.get("type"), str(error.get("reason") or "")
    if kind == BREAKER:
        return breaker_limit(reason)
    if kind in REJECTED:
        over = _PRESSURE.search(reason)
        if over and int(over.group(1)) > int(over.group(2)):
            return "indexing pressure (indexing_pressure.memory.limit)"
    return None


#: The setting of each circuit breaker's limit, by the name an engine's reason gives it
#: (``[parent] Data too large, ...``).
BREAKER_LIMITS = {
    "parent": "indices.breaker.total.limit",
    "in_flight_requests": "network.breaker.inflight_requests.limit",
    "request": "indices.breaker.request.limit",
    "fielddata": "indices.breaker.fielddata.limit",
    "accounting": "indices.breaker.accounting.limit",
}


def breaker_limit(reason: str) -> str:
    """The breaker an engine's ``circuit_breaking_exception`` reason names, with the setting
    of its limit.

    >>> breaker_limit("[parent] Data too large, data for [<http_request>] would be [1/1b]")
    'the [parent] breaker (indices.breaker.total.limit)'
    >>> breaker_limit("too much")
    'a circuit breaker (indices.breaker.*.limit)'
    """
    name = re.match(r"\[([a-z_]+)\]", reason)
    setting = BREAKER_LIMITS.get(name.group(1)) if name else None
    if name is None or setting is None:
        return "a circuit breaker (indices.breaker.*.limit)"
    return f"the [{name.group(1)}] breaker ({setting})"


#: What gives an engine more memory for its breakers and indexing pressure (the heap their
#: limits are shares of).
MORE_HEAP = (
    "give the engine a larger heap (-Xms/-Xmx in its config/jvm.options, or "
    "OPENSEARCH_JAVA_OPTS / ES_JAVA_OPTS)"
)


#: Error types of a block: the cluster or an index refuses a kind of request until an
#: operator, or the engine itself (disk watermarks), lifts it.
BLOCKS = ("cluster_block_exception", "index_create_block_exception")

#: What lifts each block, by the words of its description in the engine's reason
#: (OpenSearch and Elasticsearch name their blocks alike, e.g. ``FORBIDDEN/8/index write
#: (api)``); the first match is told.
_LIFTS = (
    (
        "flood-stage watermark",
        "a node's disk passed its flood-stage watermark, so the engine made the index read-only "
        "(index.blocks.read_only_allow_delete): free disk space (the engine lifts the block "
        "itself once usage falls below the high watermark), or lift it with PUT "
        'INDEX/_settings {"index.blocks.read_only_allow_delete": null}',
    ),
    (
        "create-index blocked",
        "the cluster refuses to create indices (cluster.blocks.create_index, which OpenSearch "
        "sets itself when a node's disk passes its high watermark): free disk space, or lift it "
        'with PUT _cluster/settings {"persistent": {"cluster.blocks.create_index": null}}',
    ),
    (
        "cluster read-only / allow delete",
        'the cluster is read-only: lift it with PUT _cluster/settings {"persistent": '
        '{"cluster.blocks.read_only_allow_delete": null}}',
    ),
    (
        "cluster read-only",
        'the cluster is read-only: lift it with PUT _cluster/settings {"persistent": '
        '{"cluster.blocks.read_only": null}}',
    ),
    (
        "index write",
        'the index refuses writes: lift it with PUT INDEX/_settings {"index.blocks.write": null}',
    ),
    (
        "index read-only",
        'the index is read-only: lift it with PUT INDEX/_settings {"index.blocks.read_only": null}',
    ),
    (
        "index metadata",
        "the index refuses changes to its mapping and settings: lift it with PUT INDEX/_settings "
        '{"index.blocks.metadata": null}',
    ),
    (
        "index read",
        'the index refuses reads: lift it with PUT INDEX/_settings {"index.blocks.read": null}',
    ),
    ("index closed", "the index is closed: open it with POST INDEX/_open"),
    ("index_closed_exception", "the index is closed: open it with POST INDEX/_open"),
    (
        "no cluster-manager",
        "the cluster has no elected cluster manager: wait until its nodes elect one",
    ),
    ("no master", "the cluster has no elected master: wait until its nodes elect one"),
    ("state not recovered", "the cluster has not recovered its state yet: wait until it has"),
)


def what_lifts(reason: str) -> str:
    """What lifts the block an engine's ``reason`` names (INDEX: the index it names).

    >>> what_lifts("index [docs] blocked by: [FORBIDDEN/8/index write (api)];")
    'the index refuses writes: lift it with PUT docs/_settings {"index.blocks.write": null}'
    >>> what_lifts("blocked by: [FORBIDDEN/10/cluster create-index blocked (api)];")[:40]
    'the cluster refuses to create indices (c'
    """
    named = re.search(r"index \[([^\]]+)\] blocked", reason)
    for words, lift in _LIFTS:
        if words in reason:
            return lift.replace("INDEX/", f"{named.group(1)}/") if named else lift
    return "lift the block the reason names (index.blocks.* or cluster.blocks.* settings)"


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """(the URL without user:password@, the basic-auth pair it carried) — so credentials
    travel as an Authorization header and never appear in a location or a message."""
    parts = urlsplit(url)
    if parts.username is None:
        return url, None
    from urllib.parse import unquote

    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)), (
        unquote(parts.username),
        unquote(parts.password or ""),
    )


def describe(exc: BaseException) -> str:
    """A one-line reason from either client's exception (credentials in URLs redacted)."""
    return redact(_describe(exc))


def _describe(exc: BaseException) -> str:
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


def response_body(resp: Any) -> Any:
    """The body of either client's response: elasticsearch-py wraps it in an
    :class:`elastic_transport.ApiResponse` (its ``body``: the JSON, or a bool for HEAD
    requests), opensearch-py gives the body itself. The one place a response is unwrapped.

    >>> response_body({"found": True})
    {'found': True}
    """
    try:
        from elastic_transport import ApiResponse
    except ImportError:  # (only opensearch-py installed: its responses are their bodies)
        return resp
    return resp.body if isinstance(resp, ApiResponse) else resp


class Retrying:
    """Calls with retries; errors become EngineError naming ``location``.

    ``retry.call("search", client.search, index=i, body=b)`` is the one way the engine sends
    a request: arguments are bound when the call is made (no closures over loop variables)
    and the JSON body of either client's response comes back. ``observe``, when set, is
    called as ``observe(what, seconds)`` after each request, retries included, whether it
    failed or not: how a caller times the requests by kind. ``index``, the index the caller
    works on, is named when a request without one (``GET /``) is refused a privilege."""

    def __init__(
        self,
        location: str,
        backoff: Backoff,
        observe: Callable[[str, float], None] | None = None,
        index: str | None = None,
    ):
        self.location = redact(location)
        self.backoff = backoff
        self.observe = observe
        self.index = index

    def call(
        self,
        what: str,
        fn: Callable[..., Any],
        /,
        *args: Any,
        ok_status: tuple[int, ...] = (),
        **kwargs: Any,
    ) -> Any:
        """``fn(*args, **kwargs)`` with retries; the response body (``bool`` for HEAD requests)."""
        index = kwargs.get("index")
        resp = self(
            what,
            functools.partial(fn, *args, **kwargs),
            ok_status=ok_status,
            index=index if isinstance(index, str) else None,
        )
        return response_body(resp)

    def __call__(
        self,
        what: str,
        fn: Callable[[], T],
        *,
        ok_status: tuple[int, ...] = (),
        ok_memory: bool = False,
        index: str | None = None,
    ) -> T:
        """``fn()`` with retries; an error of a status in ``ok_status``, or (``ok_memory``) a
        refusal for the request's memory (:func:`memory_limit`), is raised as it is, not
        retried (the caller handles it). ``index``, the index the request is about, is named
        when the server refuses the user a privilege on it."""
        if self.observe is None:
            return self._send(what, fn, ok_status, ok_memory, index)
        t = time.perf_counter()
        try:
            return self._send(what, fn, ok_status, ok_memory, index)
        finally:
            self.observe(what, time.perf_counter() - t)

    def _send(
        self,
        what: str,
        fn: Callable[[], T],
        ok_status: tuple[int, ...],
        ok_memory: bool,
        index: str | None,
    ) -> T:
        retried = [0]

        def retry_if(e: Exception) -> bool:
            return status_of(e) not in ok_status and retryable(e)

        try:
            return self.backoff.call(
                fn,
                retry_if=retry_if,
                on_retry=lambda attempt, e: retried.__setitem__(0, attempt + 1),
            )
        except Exception as e:  # noqa: BLE001 -- both clients' exception trees
            st = status_of(e)
            memory = memory_limit(error_of(e))
            if (st is not None and st in ok_status) or (ok_memory and memory is not None):
                raise
            if is_connection_error(e):
                raise EngineError(self._unreachable(what, describe(e), retried[0] + 1)) from None
            kind = error_type(e)
            if kind in BLOCKS:
                raise EngineError(
                    f"{self.location} refused {what}: blocked ({describe(e)}): "
                    f"{what_lifts(describe(e))}; what was stored before is kept: run the same "
                    "command again once the block is lifted"
                ) from None
            if st == 401:
                raise EngineError(
                    f"{self.location} refused {what}: 401, the user name and password (or the "
                    "API key) are not those of a user of the cluster: check --user/--password "
                    "(NEARDUP_USER/NEARDUP_PASSWORD) or --api-key (NEARDUP_API_KEY)"
                ) from None
            if st == 403 and kind in ("security_exception", None):
                raise EngineError(
                    f"{self.location} refused {what}: "
                    f"{privilege_refusal(describe(e) if kind else '', index or self.index)}"
                ) from None
            if kind == "security_exception":
                raise EngineError(
                    f"{self.location} refused {what}: {describe(e)}; check --api-key or "
                    "--user/--password, and the privileges of that user or key"
                ) from None
            if memory is not None:
                raise EngineError(
                    f"{self.location} refused {what}: it needs more memory than {memory} "
                    f"allows ({describe(e)}); {MORE_HEAP}"
                ) from None
            if st == 413:
                raise EngineError(
                    f"{self.location}: {what} refused: the request is larger than the engine "
                    "accepts (http.max_content_length, 100mb by default; a proxy in front of "
                    f"it may allow less): {describe(e)}"
                ) from None
            if st is not None:
                raise EngineError(f"{self.location}: {what} failed: {describe(e)}") from None
            raise

    def _unreachable(self, what: str, reason: str, attempts: int) -> str:
        """The one line of a server not reached: a TLS failure says what is wrong and how to
        fix it."""
        tls = tls_failure(reason)
        if tls:
            return f"cannot connect to {self.location} ({what}): {tls} ({reason})"
        if self.location.startswith("http://") and plain_http_to_tls(reason):
            return (
                f"cannot reach {self.location} ({what}): the server closed the connection "
                f"without an answer, as a server that speaks TLS does to plain HTTP: if it "
                f"does, use an https:// URL ({reason})"
            )
        return f"cannot reach {self.location} ({what}) after {attempts} attempt(s): {reason}"


@dataclass(frozen=True, kw_only=True)
class Access:
    """Credentials and TLS for one server: an API key (a string, or ``(id, key)``) or basic
    auth (never shown in a repr), the CA bundle and whether certificates are verified. The
    engine's clients (:func:`connect`) and the dashboards' HTTP pool (:meth:`pool`) both
    take them from here.

    >>> Access(api_key="abc").headers()
    {'authorization': 'ApiKey abc'}
    >>> Access(api_key=("id", "key")).headers()
    {'authorization': 'ApiKey aWQ6a2V5'}
    >>> Access(basic_auth=("admin", "s3cret")).headers(), Access(basic_auth=("a", "b"))
    ({'authorization': 'Basic YWRtaW46czNjcmV0'}, Access(ca_certs=None, verify_certs=True))
    >>> Access(verify_certs=False).tls()
    {'ca_certs': None, 'verify_certs': False, 'ssl_show_warn': False}
    """

    api_key: Any = field(default=None, repr=False)
    basic_auth: tuple[str, str] | None = field(default=None, repr=False)
    ca_certs: str | None = None
    verify_certs: bool = True

    def tls(self) -> dict[str, Any]:
        """The TLS options of both clients (no warning per request when verification is off:
        it was asked for)."""
        out: dict[str, Any] = {"ca_certs": self.ca_certs, "verify_certs": self.verify_certs}
        if not self.verify_certs:
            out["ssl_show_warn"] = False
        return out

    def headers(self, *, basic: bool = True) -> dict[str, str]:
        """The ``authorization`` header: the API key, else (``basic``) basic auth; none
        without credentials."""
        if self.api_key:
            key = self.api_key
            token = (
                key
                if isinstance(key, str)
                else base64.b64encode(f"{key[0]}:{key[1]}".encode()).decode()
            )
            return {"authorization": f"ApiKey {token}"}
        if basic and self.basic_auth:
            user, password = self.basic_auth
            token = base64.b64encode(f"{user}:{password}".encode()).decode()
            return {"authorization": f"Basic {token}"}
        return {}

    def pool(self) -> Any:
        """A urllib3 pool that verifies as asked (the CA bundle, or the system's; verification
        off: no certificate asked, and urllib3's insecure-request warning off)."""
        import urllib3

        if not self.verify_certs:
            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
            return urllib3.PoolManager(cert_reqs="CERT_NONE")
        if self.ca_certs:
            return urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=self.ca_certs)
        return urllib3.PoolManager()


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


def connect(
    url: str,
    *,
    access: Access = Access(),
    request_timeout: float = 30.0,
    retry: Retrying,
) -> tuple[Any, Server, Any]:
    """(client, server, helpers module) for ``url`` with the credentials and TLS of
    ``access``: ``GET /`` through the elasticsearch client's transport tells which product
    answers; OpenSearch gets opensearch-py."""
    from elasticsearch import Elasticsearch

    if urlsplit(url).scheme == "http" and access.ca_certs:
        raise EngineError(
            f"--ca-certs is for a server that speaks TLS, and {redact(url)} is an http:// "
            "URL: if the server speaks TLS, use https://; if not, leave --ca-certs out"
        )
    ssl = access.tls()
    es = Elasticsearch(
        url,
        api_key=access.api_key,
        basic_auth=access.basic_auth,
        request_timeout=request_timeout,
        max_retries=0,
        retry_on_timeout=False,
        **ssl,
    )
    server = parse_server(retry("GET /", functools.partial(_probe, es, request_timeout)))
    if server.product == "elasticsearch":
        _check_elasticsearch(url, server)
        from elasticsearch import helpers

        return es, server, helpers
    es.close()
    if server.version[0] < 2:
        raise EngineError(
            f"{redact(url)} runs OpenSearch {server.number}; neardup needs OpenSearch 2 or 3"
        )
    try:
        from opensearchpy import OpenSearch, helpers as os_helpers
    except ImportError:
        raise EngineError(
            f"{redact(url)} runs OpenSearch; install its client: pip install "
            "'opensearch-py>=2.4,<4'"
        ) from None
    from .serializer import OrjsonSerializer

    headers = access.headers(basic=False)  # (basic auth as the client's own http_auth)
    client = OpenSearch(
        hosts=[url],
        serializer=OrjsonSerializer(),
        http_auth=access.basic_auth,
        timeout=request_timeout,
        max_retries=0,
        retry_on_status=(),
        retry_on_timeout=False,
        headers=headers or None,
        **ssl,
    )
    return client, server, os_helpers


def _probe(es: Any, request_timeout: float) -> dict[str, Any]:
    """``GET /`` at the transport level with plain JSON: the client's own calls would send
    Elasticsearch compatibility media types and refuse a non-Elasticsearch answer. The
    transport does not know the client's ``request_timeout`` (its own default is 10 s), so
    it is given here."""
    from elasticsearch import ApiError

    headers = dict(getattr(es, "_headers", None) or {})  # auth and user agent of the client
    headers["accept"] = "application/json"
    resp = es.transport.perform_request(
        "GET", "/", headers=headers, request_timeout=request_timeout
    )
    if resp.meta.status >= 400:  # the transport returns HTTP errors; the client would raise
        raise ApiError(f"GET / answered {resp.meta.status}", meta=resp.meta, body=resp.body)
    return resp.body if isinstance(resp.body, dict) else {}


def _check_elasticsearch(url: str, server: Server) -> None:
    import elasticsearch

    client_major = int(elasticsearch.__versionstr__.split(".")[0])
    if server.version[0] < 8:
        raise EngineError(
            f"{redact(url)} runs Elasticsearch {server.number}; neardup needs Elasticsearch 8 or 9"
        )
    if server.version[0] < client_major:
        # a 9.x client sends compatible-with=9, which Elasticsearch 8 refuses; the 8.x client
        # (neardup's dependency) sends compatible-with=8, which 8 and 9 both accept
        raise EngineError(
            f"{redact(url)} runs Elasticsearch {server.number} but the installed elasticsearch "
            f"client is {elasticsearch.__versionstr__}; install the client neardup depends on, "
            f"which serves Elasticsearch 8 and 9: pip install '{ES_CLIENT_REQUIREMENT}'"
        )
