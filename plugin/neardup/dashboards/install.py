"""Importing saved objects into Kibana or OpenSearch Dashboards over HTTP
(``POST /api/saved_objects/_import``): the target product asked from the server, API key or
basic auth and TLS as the engines apply them (:class:`~neardup.engines.transport.Access`),
retries of connection errors, 429 and 5xx with backoff
(:class:`~neardup.runtime.retry.Backoff`), and a clear :class:`DashboardError` naming each
refused object."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..engines.transport import Access
from ..runtime.retry import Backoff
from .fields import (
    DashboardError,
)
from .saved_objects import DEFAULT_SOURCE_FIELD, PRODUCTS, TARGETS, export


def detect_target(
    url: str, *, headers: Mapping[str, str] | None = None, http: Any = None, timeout: float = 10.0
) -> str:
    """``kibana`` or ``opensearch-dashboards``, from the ``kbn-name``/``osd-name`` header of
    ``/api/status``."""
    http = http or Access().pool()
    resp = _request(
        http,
        "GET",
        url.rstrip("/") + "/api/status",
        headers=dict(headers or {}),
        timeout=timeout,
        retry=Backoff(max_retries=2, initial=0.5, maximum=float("inf")),
        what="status",
    )
    if "osd-name" in resp.headers:
        return "opensearch-dashboards"
    if "kbn-name" in resp.headers:
        return "kibana"
    raise DashboardError(
        f"{url} does not answer like Kibana or OpenSearch Dashboards (no kbn-name/osd-name "
        "header on /api/status): pass --target"
    )


def _retry_policy() -> Backoff:
    return Backoff(max_retries=5, initial=0.5, maximum=float("inf"))


@dataclass(frozen=True, kw_only=True)
class Destination:
    """Where and how saved objects are imported: the product (``auto``: asked from the
    server), credentials and TLS as the engines apply them (:class:`Access`), a Kibana
    ``space`` or an OpenSearch security ``tenant`` (``global``, ``private`` or a custom one;
    sent as the ``securitytenant`` header), seconds per request, and the retry policy of
    connection errors, 429 and 5xx (:class:`~neardup.runtime.retry.Backoff`)."""

    target: str = "auto"
    access: Access = field(default_factory=Access)
    space: str | None = None
    tenant: str | None = None
    timeout: float = 30.0
    retry: Backoff = field(default_factory=_retry_policy)


def install(
    url: str,
    ndjson: str | bytes | None = None,
    *,
    to: Destination | None = None,
    index: str = "neardup",
    engine: Any = None,
    source: str = DEFAULT_SOURCE_FIELD,
) -> dict[str, Any]:
    """Import saved objects with ``POST /api/saved_objects/_import?overwrite=true`` into the
    dashboards at ``url``, as ``to`` says (:class:`Destination`; default: asked product, no
    credentials).

    ``ndjson`` defaults to :func:`export` of ``index`` for the target product (``engine``,
    ``source``: as for :func:`export`). Retries as ``to.retry`` says, then raises
    :class:`DashboardError`; an import the server answers with errors raises too, naming each
    refused object. Returns the server's answer (``successCount`` ...).
    """
    to = to or Destination()
    headers = to.access.headers()
    if to.tenant:
        headers["securitytenant"] = to.tenant
    http = to.access.pool()
    target = to.target
    if target == "auto":
        target = detect_target(url, headers=headers, http=http, timeout=to.timeout)
    if target not in PRODUCTS:
        raise DashboardError(
            f"unknown target {target!r}: choose auto or one of {', '.join(TARGETS)}"
        )
    if ndjson is None:
        ndjson = export(index, target=target, source=source, engine=engine)
    headers[PRODUCTS[target].xsrf_header] = "true"
    base = url.rstrip("/") + (f"/s/{to.space}" if to.space else "")
    body = ndjson.encode() if isinstance(ndjson, str) else ndjson
    resp = _request(
        http,
        "POST",
        base + "/api/saved_objects/_import?overwrite=true",
        headers=headers,
        fields={"file": ("neardup.ndjson", body, "application/ndjson")},
        timeout=to.timeout,
        retry=to.retry,
        what="import",
    )
    answer = _answer(url, target, resp)
    answer["target"] = target
    return answer


def _answer(url: str, target: str, resp: Any) -> dict[str, Any]:
    """The server's answer to an import; one that is not JSON, or that refused objects
    (each named with its error), raises :class:`DashboardError`."""
    try:
        answer = json.loads(resp.data)
    except ValueError:
        raise DashboardError(
            f"import into {url}: the answer is not JSON: {resp.data[:200]!r}"
        ) from None
    if not answer.get("success", False):
        problems = (
            "; ".join(
                f"{e.get('type')} {e.get('id')} ({e.get('title', '')}): "
                f"{json.dumps(e.get('error'))}"
                for e in answer.get("errors", [])
            )
            or json.dumps(answer)[:500]
        )
        raise DashboardError(
            f"import into {url} ({PRODUCTS[target].name}) refused objects: {problems}"
        )
    return answer


_RETRY_STATUS = {429, 500, 502, 503, 504}


class _Passing(DashboardError):
    """A failure worth another attempt (connection, 429, 5xx); its message is the reason."""


def _request(
    http: Any,
    method: str,
    url: str,
    *,
    headers: dict[str, str],
    timeout: float,
    retry: Backoff,
    what: str,
    fields: dict[str, Any] | None = None,
) -> Any:
    import urllib3

    def attempt() -> Any:
        try:
            if fields is not None:
                resp = http.request(
                    method, url, fields=fields, headers=headers, timeout=timeout, retries=False
                )
            else:
                resp = http.request(method, url, headers=headers, timeout=timeout, retries=False)
        except urllib3.exceptions.HTTPError as e:
            raise _Passing(f"{type(e).__name__}: {e}") from None
        if resp.status in _RETRY_STATUS:
            raise _Passing(f"HTTP {resp.status}: {resp.data[:200].decode(errors='replace')}")
        return resp

    try:
        resp = retry.call(attempt, retry_if=lambda e: isinstance(e, _Passing))
    except _Passing as e:
        raise DashboardError(
            f"{what} {url}: failed after {(retry.max_retries or 0) + 1} attempts; last error: {e}"
        ) from None
    if 300 <= resp.status < 400:
        raise DashboardError(
            f"{what} {url}: HTTP {resp.status} redirect to {resp.headers.get('location')!r}; "
            "give that address (with its base path) instead"
        )
    if resp.status >= 400:
        hint = " (check --api-key / --user / --password)" if resp.status in (401, 403) else ""
        raise DashboardError(
            f"{what} {url}: HTTP {resp.status}{hint}: {resp.data[:300].decode(errors='replace')}"
        )
    return resp
