"""The settings of an :class:`~neardup.engines.elastic.ElasticEngine`, one small record a
concern, built by keyword: the connection (:class:`Connection`), the retry policy
(:class:`~neardup.runtime.retry.Backoff`), request sizes (:class:`Paging`), how the indices are set
up (:class:`IndexSetup`) and the write lease (:class:`LeaseTimes`).

:func:`grouped` sorts the flat options a command line or ``NearDup.open(url, **options)``
gives (``max_retries=2, page_size=100, ...``) into those records.

>>> g = grouped(max_retries=2, page_size=100, api_key="secret")
>>> g["retry"].max_retries, g["paging"].page_size, "secret" in repr(g["connection"])
(2, 100, False)
>>> grouped(pagesize=1)
Traceback (most recent call last):
...
TypeError: unknown Elasticsearch/OpenSearch engine option 'pagesize'
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ...runtime.retry import Backoff
from ..transport import Access


@dataclass(frozen=True, kw_only=True)
class Connection(Access):
    """How to reach the cluster: credentials (never shown in a repr) and TLS
    (:class:`~neardup.engines.transport.Access`), and the timeout of one request in seconds.
    ``user:password@`` in the URL is used as ``basic_auth``."""

    request_timeout: float = 30.0


@dataclass(frozen=True, kw_only=True)
class Paging:
    """Request sizes: ``chunk_size`` documents per bulk request, ``msearch_batch`` queries
    per ``_msearch``, ``max_clauses`` the engine's boolean clause limit, ``page_size`` hits
    per page. ``batched_candidates``: the candidate
    queries of a batch go as one search over all their keys, whose hits are matched to each
    query here (False: one search per query, by ``_msearch``)."""

    chunk_size: int = 500
    msearch_batch: int = 100
    max_clauses: int = 1024
    page_size: int = 1000
    batched_candidates: bool = True


@dataclass(frozen=True, kw_only=True)
class IndexSetup:
    """How the indices are made and kept. ``pipeline``: install the ingest pipeline and make
    it the index's ``default_pipeline`` (True), do without (False, for engines without
    ingest such as test servers), or, by default, do as the existing index was built (a new
    index gets one); ``setup`` installs templates and pipeline even on an existing index
    (``neardup init``); ``shards``/``replicas`` of a new documents index (default: the
    template's one shard, the engine's default replicas); ``health_timeout`` how long to
    wait for a usable cluster; ``refresh_on_write`` makes writes visible at a session's end."""

    pipeline: bool | None = None
    setup: bool = False
    shards: int | None = None
    replicas: int | None = None
    health_timeout: str = "30s"
    refresh_on_write: bool = True


@dataclass(frozen=True, kw_only=True)
class LeaseTimes:
    """The write lease: ``duration`` seconds it lasts unrenewed, ``timeout`` how long to
    wait for another writer (None: as long as it takes), ``hold`` how long a run of many
    writes (``neardup index``) keeps it before handing it over between two batches."""

    duration: float = 60.0
    timeout: float | None = None
    hold: float = 30.0


#: The retry policy of requests and bulk items unless one is given.
DEFAULT_RETRY = Backoff(max_retries=5, initial=0.5, maximum=30.0)

#: Each flat option: (the record it belongs to, its field there).
_FLAT = {
    **{f.name: ("connection", f.name) for f in dataclasses.fields(Connection)},
    **{f.name: ("paging", f.name) for f in dataclasses.fields(Paging)},
    **{f.name: ("index_setup", f.name) for f in dataclasses.fields(IndexSetup)},
    "lease_duration": ("lease", "duration"),
    "lease_timeout": ("lease", "timeout"),
    "lease_hold": ("lease", "hold"),
    "max_retries": ("retry", "max_retries"),
    "initial_backoff": ("retry", "initial"),
    "max_backoff": ("retry", "maximum"),
}


def grouped(**options: Any) -> dict[str, Any]:
    """The records of flat ``options`` (the keyword arguments of
    :class:`~neardup.engines.elastic.ElasticEngine` that hold them: ``connection``, ``retry``,
    ``paging``, ``index_setup``, ``lease``); a TypeError names an unknown one."""
    parts: dict[str, dict[str, Any]] = {
        "connection": {},
        "retry": {},
        "paging": {},
        "index_setup": {},
        "lease": {},
    }
    for name, value in options.items():
        if name not in _FLAT:
            raise TypeError(f"unknown Elasticsearch/OpenSearch engine option {name!r}")
        group, key = _FLAT[name]
        parts[group][key] = value
    return {
        "connection": Connection(**parts["connection"]),
        "retry": dataclasses.replace(DEFAULT_RETRY, **parts["retry"]),
        "paging": Paging(**parts["paging"]),
        "index_setup": IndexSetup(**parts["index_setup"]),
        "lease": LeaseTimes(**parts["lease"]),
    }
