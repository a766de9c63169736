"""Candidates from the HTTP engine: one search per query through ``_msearch``, or one search
over all the keys of a batch matched here by the rule of the engine's query
(:class:`~.key_match.KeyMatcher`); inside a run, the documents it stored are matched in this
process and the engine is asked only about those stored before. ``collisions`` reads a
field's keys of every document over a point in time and groups them here. An answer from
only some of the shards is asked again with backoff, then refused: it would miss
near-duplicates on the other shards.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from ..base import Candidate, CandidateQuery, EngineError
from . import dsl
from .hits import (
    candidate_of,
    entry_of,
    error_reason,
    missing_shards,
    neardup_part,
    shingle_row,
    stored_text,
)
from .pager_and_bulk import chunks
from .index import Index
from .key_match import KeyMatcher, merged
from .sessions import Sessions


class Candidates:
    """The candidate queries on the engine's index ``remote``, with the run's own documents of
    its ``sessions``: the protocol's candidate methods, which :class:`~.engine.ElasticEngine`
    has by deriving from this class."""

    remote: Index
    sessions: Sessions

    def candidates(self, queries: Sequence[CandidateQuery]) -> list[list[Candidate]]:
        """Candidates of each query. Inside a run (:meth:`writes_in_a_row`) the documents it
        stored are matched here (:class:`~.key_match.KeyMatcher`, the rule of
        the engine's query), and the engine is asked only about those stored before, and
        not at all when the index held none."""
        hold = self.sessions.turn
        if hold is None:
            return self._stored_candidates(queries)
        local = hold.recent.candidates(queries)
        self._held_shingles(hold.recent, local)
        if hold.start_seq <= 1:  # (nothing was stored before this turn)
            return local
        if hold.stale:
            self.sessions.refresh()
            hold.stale = False
        before = [
            dataclasses.replace(
                q,
                before_seq=hold.start_seq
                if q.before_seq is None
                else min(q.before_seq, hold.start_seq),
            )
            for q in queries
        ]
        stored = self._stored_candidates(before)
        return [merged(a, b, q.limit) for a, b, q in zip(local, stored, queries, strict=True)]

    def _held_shingles(self, recent: KeyMatcher, found: list[list[Candidate]]) -> None:
        """Give the run's own documents among ``found`` the shingles the run kept of them
        (:meth:`~neardup.engines.stored_shingles.StoredShingles.cached`): verifying
        against them then reads nothing from the engine. Those the bounded cache no longer
        holds are read as any stored document's."""
        for hits in found:
            for c in hits:
                e = recent.get(c.id) if c.shingles is None else None
                if e is not None and e.shingle_key is not None:
                    c.shingles = self.remote.shingle_sets.cached(e.shingle_key)

    def _stored_candidates(self, queries: Sequence[CandidateQuery]) -> list[list[Candidate]]:
        """Candidates of each query from the engine's index: many queries in one search over
        all their keys (:meth:`_candidates_by_keys`), else one search each by ``_msearch``."""
        if self.remote.paging.batched_candidates and len(queries) > 1:
            return self._candidates_by_keys(queries)
        return self._candidates_by_query(queries)

    def _candidates_by_query(self, queries: Sequence[CandidateQuery]) -> list[list[Candidate]]:
        """One search per query (:func:`~.dsl.candidate_body`), sent by ``_msearch``; a query
        that can match nothing is not sent. Hits come with their text and title, and
        candidates with their shingle sets and titles (:meth:`_verifiable`): verifying and
        showing them reads nothing more."""
        out: list[list[Candidate]] = [[] for _ in queries]
        lay = self.remote.layout
        read = [*lay.stored(lay.text), *lay.stored(lay.title)]
        version = self.remote.config.version
        todo = [
            (
                i,
                dsl.candidate_body(
                    q, self.remote.paging.max_clauses, version=version, read_fields=read
                ),
            )
            for i, q in enumerate(queries)
        ]
        todo = [(i, b) for i, b in todo if b is not None]
        for batch in chunks(todo, self.remote.paging.msearch_batch):
            for (i, _), resp in zip(batch, self._msearch([b for _, b in batch]), strict=True):
                out[i] = self._verifiable(resp["hits"]["hits"])
        return out

    def _verifiable(self, hits: Sequence[dict[str, Any]]) -> list[Candidate]:
        """The candidates of hits read with their text and title, each with its title and
        shingle set: one stored as a marker is made again from the hit's text, through the
        cache of sets (:meth:`~neardup.engines.stored_shingles.StoredShingles.sets`), as a
        read by id would make it."""
        lay = self.remote.layout
        found = [candidate_of(h) for h in hits]
        for c, h in zip(found, hits, strict=True):
            c.title, c.title_read = stored_text(h.get("_source") or {}, lay, lay.title), True
        todo = [i for i, c in enumerate(found) if c.shingles is None]
        if todo:
            rows = [shingle_row(hits[i]["_source"], self.remote.layout) for i in todo]
            for i, made in zip(todo, self.remote.shingle_sets.sets(rows), strict=True):
                found[i].shingles = made
        return found

    def _candidates_by_keys(self, queries: Sequence[CandidateQuery]) -> list[list[Candidate]]:
        """The stored documents holding any key of ``queries`` (:func:`dsl.keys_body`, page
        after page), matched to each query here by the rule of the engine's candidate query
        (:class:`~.key_match.KeyMatcher`): one search for a whole batch instead
        of one per document."""
        held = KeyMatcher()
        size, after = self.remote.paging.page_size, None
        version = self.remote.config.version
        while (body := dsl.keys_body(queries, size, after, version=version)) is not None:
            hits = self._search_every_shard(body, "candidate search")
            held.add([entry_of(h, version) for h in hits])
            if len(hits) < size:
                break
            after = hits[-1]["sort"]
        return held.candidates(queries)

    def _search_every_shard(self, body: dict[str, Any], what: str) -> list[dict[str, Any]]:
        """The hits of one search; an answer from only some of the shards (a node lost, a
        primary not yet promoted) is asked again with backoff, then refused."""
        answer: list[dict[str, Any]] = []

        def send(_: Sequence[int], last: bool) -> list[int]:
            r = self.remote.retry.call(
                what, self.remote.client.search, index=self.remote.name, body=body
            )
            missing = missing_shards(r)
            if missing and not last:
                return [0]
            if missing:
                raise EngineError(
                    f"{self.remote.location}: {what} answered from only some shards ({missing})"
                )
            answer.extend(r["hits"]["hits"])
            return []

        self.remote.backoff.resend([0], send)
        return answer

    def _msearch(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Responses in order; items refused with 429, and answers from only some of the
        shards (a node lost, a primary not yet promoted), are sent again with backoff."""
        results: list[dict[str, Any] | None] = [None] * len(bodies)

        def send(pending: Sequence[int], last: bool) -> list[int]:
            lines = dsl.msearch_lines(self.remote.name, [bodies[i] for i in pending])
            r = self.remote.retry.call("msearch", self.remote.client.msearch, body=lines)
            again = []
            for i, resp in zip(pending, r["responses"], strict=True):
                if "error" in resp:
                    if resp.get("status") in (429, 503) and not last:
                        again.append(i)
                        continue
                    raise EngineError(
                        f"{self.remote.location}: candidate search failed: {error_reason(resp)}"
                    )
                missing = missing_shards(resp)
                if missing:  # a partial answer would miss near-duplicates on the other shards
                    if not last:
                        again.append(i)
                        continue
                    raise EngineError(
                        f"{self.remote.location}: candidate search answered from only some shards "
                        f"({missing})"
                    )
                results[i] = resp
            return again

        self.remote.backoff.resend(range(len(bodies)), send)
        return results  # type: ignore[return-value]

    def collisions(self, fields: Sequence[str] = ("minhash",)) -> Iterator[list[str]]:
        """The groups of documents sharing a key of each field: the field's keys of every
        document, read over one point in time (:func:`~.dsl.field_keys_body`), grouped here
        (:func:`key_groups`)."""
        self.sessions.see_writes()
        size = self.remote.paging.page_size
        for f in fields:
            if f not in self.remote.config.signatures:
                continue
            body_of = functools.partial(dsl.field_keys_body, f, size)
            hits = self.remote.pager().snapshot(self.remote.name, body_of, size)
            yield from key_groups(_field_keys(h, f) for h in hits)


def _field_keys(hit: dict[str, Any], field: str) -> tuple[str, list[str]]:
    nd = neardup_part(hit.get("_source"))
    keys = (nd.get("keys") or {}).get(field) or []
    return str(nd.get("id", hit.get("_id"))), keys if isinstance(keys, list) else [keys]


def key_groups(docs: Iterable[tuple[str, Sequence[str]]]) -> Iterator[list[str]]:
    """The ids of the documents holding each key held by more than one, from (id, keys)
    pairs: groups in key order, ids in the order they came (a key a document holds twice
    counts once), as a ``terms`` aggregation on the key and the id would pair them.

    >>> list(key_groups([("a", ["k1", "k2"]), ("b", ["k2", "k2"]), ("c", ["k1", "k3"])]))
    [['a', 'c'], ['a', 'b']]
    """
    ids: list[str] = []
    keys: list[bytes] = []
    rows: list[int] = []
    for doc_id, held in docs:
        distinct = set(held)
        ids.append(doc_id)
        keys.extend(k.encode("utf-8") for k in distinct)
        rows.extend([len(ids) - 1] * len(distinct))
    if not keys:
        return
    which = np.unique(np.array(keys, dtype=bytes), return_inverse=True)[1].ravel()
    row = np.array(rows, dtype=np.int64)
    order = np.lexsort((row, which))
    which, row = which[order], row[order]
    starts = np.flatnonzero(np.r_[True, which[1:] != which[:-1]])
    ends = np.r_[starts[1:], len(which)]
    shared = ends - starts > 1
    for a, b in zip(starts[shared], ends[shared], strict=True):
        yield [ids[r] for r in row[a:b]]
