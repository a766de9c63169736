"""Reads of the HTTP engine: stored documents by id, scans over a point in time with
``search_after`` on ``neardup.seq`` (scroll where PIT is missing), members of clusters,
counts, full-text search (plain and folded by cluster) and the stored clusters, every read
after the session's own writes are made visible. Shingles stored as a marker are made again
from the stored text (:mod:`~neardup.engines.stored_shingles`).
"""

from __future__ import annotations

import functools
import itertools
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

import numpy as np

from ...keys.encoding import parse_keys
from ...sketches.hashing import U64
from ..base import ClusterRecord, EngineError, Hit, SearchQuery, StoredDoc, TagRow
from . import dsl
from .layout import ROOT
from .hits import (
    cluster_record,
    error_reason,
    field_mapping,
    found_seq,
    hit_of,
    is_signed,
    neardup_part,
    order_date,
    shingle_row,
    stored_shingles,
    stored_text,
    tag_row,
    tags_of,
)
from .pager_and_bulk import chunks
from .index import Index
from .sessions import Sessions


if TYPE_CHECKING:
    from ...signing.signer import Signer


class Reads:
    """The reads of the engine's index ``remote``, after the writes of its ``sessions`` are
    visible: the protocol's reading methods, which :class:`~.engine.ElasticEngine` has by
    deriving from this class."""

    remote: Index
    sessions: Sessions
    _order_type_read: tuple[str | None] | None  # (read once: _order_type)

    def __init__(self) -> None:
        self._order_type_read = None

    def use_signer(self, signer: Signer) -> None:
        self.remote.shingle_sets.use(signer)

    def get(
        self, ids: Iterable[str], *, text: bool = False, keys: bool = True, shingles: bool = True
    ) -> dict[str, StoredDoc]:
        ids = list(dict.fromkeys(ids))
        self.sessions.wait_for_sent_of(ids)  # (a read by id sees what was sent of them)
        out: dict[str, StoredDoc] = {}
        for chunk in chunks(ids, 500):
            for sd in self._stored_docs(
                self._signed_sources(chunk, text or shingles), text, keys and shingles, shingles
            ):
                out[sd.id] = sd
        return out

    def _signed_sources(self, ids: Sequence[str], text: bool) -> list[dict[str, Any]]:
        """The ``_source`` of each of ``ids`` the index holds signed (one ``mget``; with the
        text when ``text``: the text makes the shingles)."""
        body = dsl.mget_body(ids, text, self.remote.layout)
        r = self.remote.retry.call(
            "mget", self.remote.client.mget, index=self.remote.name, body=body
        )
        docs = r.get("docs", [])
        if self.sessions.in_session:  # (a write of these ids in this session reads no more)
            self.sessions.known.update((d["_id"], found_seq(d)) for d in docs if "_id" in d)
        return [d["_source"] for d in docs if d.get("found") and is_signed(d.get("_source"))]

    def _stored_docs(
        self,
        sources: Sequence[dict[str, Any]],
        text: bool,
        with_keys: bool = True,
        shingles: bool = True,
    ) -> list[StoredDoc]:
        """The documents of ``_source`` objects read with their text; shingles stored as a
        marker are made again from the text (:mod:`~neardup.engines.stored_shingles`),
        all of a read at once, through a bounded cache that also holds what this process
        stored; ``shingles=False``: left empty (:meth:`get`)."""
        docs = [self._stored(src, text, with_keys) for src in sources]
        if not shingles:
            for d in docs:
                d.shingles = np.empty(0, dtype=U64)
            return docs
        todo = [i for i, d in enumerate(docs) if d.shingles is None]
        if todo:
            rows = [shingle_row(sources[i], self.remote.layout) for i in todo]
            for i, made in zip(todo, self.remote.shingle_sets.sets(rows), strict=True):
                docs[i].shingles = made
        return docs

    def _stored(self, src: dict[str, Any], text: bool, with_keys: bool = True) -> StoredDoc:
        nd, lay = src[ROOT], self.remote.layout
        return StoredDoc(
            id=nd["id"],
            lang=nd.get("lang"),
            n_shingles=int(nd.get("n_shingles") or 0),
            shingles=stored_shingles(nd),  # (None: made from the text, _stored_docs)
            simhash=int(nd.get("simhash") or "0", 16),
            exact=nd.get("exact"),
            keys=self._keys(nd) if with_keys else {},
            tags=tags_of(nd),
            title=stored_text(src, lay, lay.title),
            text=stored_text(src, lay, lay.text) if text else None,
            fields=dict(src.get("fields") or {}) if not lay.adopted else {},
            indexed_at=nd.get("indexed_at"),
            seq=int(nd.get("seq") or 0),
            ordered_at=self._order_date(src) if lay.order else None,
            too_short=bool(nd.get("too_short")),
        )

    def _keys(self, nd: dict[str, Any]) -> dict[str, Any]:
        """The key sets of the ``neardup`` object ``nd``, one per signature of the index."""
        keys = nd.get("keys") or {}
        c = self.remote.config
        return {f: parse_keys(f, keys.get(f, []), c.version) for f in c.signatures}

    def _order_date(self, src: dict[str, Any]) -> str | None:
        """The order field's value as a date (:func:`order_date`); a number is one only in a
        ``date`` or ``date_nanos`` field (epoch milliseconds), as the mapping says."""
        v: Any = src
        for part in (self.remote.layout.order or "").split("."):
            v = v.get(part) if isinstance(v, dict) else None
        if isinstance(v, list):
            v = v[0] if v else None
        if (
            isinstance(v, (int, float))
            and not isinstance(v, bool)
            and self._order_type() not in ("date", "date_nanos")
        ):
            return None
        return order_date(v)

    def _order_type(self) -> str | None:
        """The mapped type of the adopted index's order field (read once)."""
        if self._order_type_read is None:
            spec = field_mapping(self.remote.mappings(), self.remote.layout.order or "")
            self._order_type_read = ((spec or {}).get("type"),)
        return self._order_type_read[0]

    def scan(self, *, text: bool = False, batch_size: int = 1000) -> Iterator[StoredDoc]:
        self.sessions.see_writes()
        body_of = functools.partial(dsl.scan_body, batch_size, text=True, layout=self.remote.layout)
        page: list[dict[str, Any]] = []
        for h in self.remote.pager().snapshot(self.remote.name, body_of, batch_size):
            page.append(h["_source"])
            if len(page) >= batch_size:
                yield from self._stored_docs(page, text)
                page = []
        yield from self._stored_docs(page, text)

    def scan_tags(self, *, batch_size: int = 5000) -> Iterator[TagRow]:
        self.sessions.see_writes()
        body_of = functools.partial(dsl.tag_scan_body, batch_size, layout=self.remote.layout)
        for h in self.remote.pager().snapshot(self.remote.name, body_of, batch_size):
            yield tag_row(h["_source"], self.remote.layout)

    def members(self, representatives: Iterable[str]) -> dict[str, list[str]]:
        self.sessions.see_writes()
        out: dict[str, list[str]] = {}
        for chunk in chunks(list(dict.fromkeys(representatives)), 1000):
            body_of = functools.partial(dsl.members_body, chunk, self.remote.paging.page_size)
            for h in self.remote.pager().hits(
                self.remote.name, body_of, self.remote.paging.page_size, "members"
            ):
                nd = neardup_part(h["_source"])
                out.setdefault(nd["dup_of"], []).append(nd.get("id") or h["_id"])
        return out

    def count(self) -> int:
        """Documents neardup has signed."""
        self.sessions.see_writes()
        return int(
            self.remote.retry.call(
                "count", self.remote.client.count, index=self.remote.name, body=dsl.count_body()
            )["count"]
        )

    def unsigned(self) -> int:
        """Documents of the index without neardup's fields (written by other clients): every
        read skips them; ``neardup attach`` signs them."""
        self.sessions.see_writes()
        return int(
            self.remote.retry.call(
                "count",
                self.remote.client.count,
                index=self.remote.name,
                body=dsl.count_body(False),
            )["count"]
        )

    # -- full-text search -------------------------------------------------------------------------
    def search(self, query: SearchQuery, size: int = 10) -> list[Hit]:
        self.sessions.see_writes()
        body = dsl.fulltext_body(query, size, self.remote.layout, self.remote.paging.max_clauses)
        r = self.remote.retry.call(
            "search", self.remote.client.search, index=self.remote.name, body=body
        )
        return [hit_of(h, self.remote.layout) for h in r["hits"]["hits"]]

    def search_collapsed(self, query: SearchQuery, size: int = 10) -> list[Hit]:
        """Search with near-copies folded: tagged hits collapse on ``cluster_id`` (their
        copies in ``folded``), untagged hits stay as they are; merged by score."""
        self.sessions.see_writes()
        tagged, untagged = dsl.collapsed_bodies(
            query, size, layout=self.remote.layout, max_clauses=self.remote.paging.max_clauses
        )
        a, b = self._msearch_index([tagged, untagged])
        hits = []
        for h in a["hits"]["hits"]:
            hit = hit_of(h, self.remote.layout)
            inner = (
                ((h.get("inner_hits") or {}).get("copies") or {}).get("hits", {}).get("hits", [])
            )
            hit.folded = [x["_id"] for x in inner if x["_id"] != hit.id]
            hits.append(hit)
        hits.extend(hit_of(h, self.remote.layout) for h in b["hits"]["hits"])
        hits.sort(key=lambda h: -h.score)  # stable: ties keep engine order
        return hits[:size]

    def _msearch_index(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        lines = dsl.msearch_lines(self.remote.name, bodies)
        r = self.remote.retry.call("search", self.remote.client.msearch, body=lines)
        for resp in r["responses"]:
            if "error" in resp:
                raise EngineError(f"{self.remote.location}: search failed: {error_reason(resp)}")
        return r["responses"]

    def read_clusters(self, limit: int | None = None) -> list[ClusterRecord]:
        size = (
            self.remote.paging.page_size
            if limit is None
            else max(1, min(self.remote.paging.page_size, limit))
        )
        hits = self.remote.pager().hits(
            self.remote.clusters,
            functools.partial(dsl.read_clusters_body, size),
            size,
            "read clusters",
        )
        return [cluster_record(h["_source"]) for h in itertools.islice(hits, limit)]
