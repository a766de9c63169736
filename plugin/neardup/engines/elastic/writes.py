"""Writes of the HTTP engine: documents stored (checked first, so the engine never refuses a
whole request for one of them), tags updated, documents deleted and clusters replaced, each
inside a write session (:mod:`.sessions`) and sent through
:class:`~neardup.engines.elastic.pager_and_bulk.BulkStreamer` (``_id`` = document id, so retries are
idempotent); refused documents come back as Failures, none dropped.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, Iterator, Sequence

from ...signing.records import Signed
from ..base import ClusterRecord, Failure, PendingPut, PreparedBatch, Tags
from ..stored_shingles import column
from . import dsl
from .hits import found_seq
from .pager_and_bulk import chunks, document_problem
from .index import Index, utc_now, set_key
from .key_match import Entry
from .sessions import Sessions
from .setup import SetUp


def _checked(docs: Sequence[Signed]) -> tuple[list[Signed], list[Failure]]:
    """The documents to send, and a Failure for each that would make the engine refuse a
    whole request (:func:`~neardup.engines.elastic.pager_and_bulk.document_problem`):
    refused here, alone."""
    good, failures = [], []
    for s in docs:
        d = s.doc
        problem = document_problem(
            s.id, (d.text, d.title, d.fields or None) if d is not None else ()
        )
        if problem:
            failures.append(Failure(s.id, problem))
        else:
            good.append(s)
    return good, failures


class Writes:
    """The writes to the engine's index ``remote``, each in a session of its ``sessions``; the
    clusters index must be neardup's own (``setup``): the protocol's writing methods, which
    :class:`~.engine.ElasticEngine` has by deriving from this class."""

    remote: Index
    setup: SetUp
    sessions: Sessions
    #: ids :meth:`~.attach.Attach.unsigned_documents` read from the adopted index and
    #: :meth:`put` has not written yet: signed by an update of the document the index
    #: holds, never re-created
    held: set[str]
    #: the thread :meth:`start_put` sends from (made when first needed)
    _sender: ThreadPoolExecutor | None

    def __init__(self) -> None:
        self.held = set()
        self._sender = None

    def put(
        self,
        docs: Sequence[Signed],
        tags: dict[str, Tags] | None = None,
        *,
        prepared: PreparedBatch | None = None,
    ) -> list[Failure]:
        """Store signed documents; every one refused (before sending: an id over 512 bytes,
        text that is not valid Unicode; by the engine: its reason) is returned, the others
        are stored. Nothing is prepared in advance (``prepared`` is always None here)."""
        return self._put(docs, tags or {}, background=False).failures()

    def start_put(
        self,
        docs: Sequence[Signed],
        tags: dict[str, Tags] | None = None,
        *,
        prepared: PreparedBatch | None = None,
    ) -> PendingPut:
        """:meth:`put`, sent from a thread of its own inside a run (a
        :class:`~.sessions.Turn`), so that the run tags its next batch meanwhile: the
        documents are held as stored at once, and those the engine refuses are no longer
        held once :meth:`PendingPut.failures` has answered. One request is in flight at a
        time (:attr:`.sessions.Sessions.in_flight`). Outside a run, :meth:`put`."""
        return self._put(docs, tags or {}, background=self.sessions.turn is not None)

    def _put(self, docs: Sequence[Signed], tags: dict[str, Tags], background: bool) -> PendingPut:
        docs = list(docs)
        ids = [s.id for s in docs]
        good, failures = _checked(docs)
        if not good:
            return PendingPut.settled(failures, ids)
        with self.sessions.writing():
            found: set[str] = set()
            seqs = self._assign_seq([s.id for s in good], found)
            now = utc_now()
            version = self.remote.config.version
            actions = dsl.index_actions(
                self.remote.name,
                good,
                tags,
                seqs,
                now,
                self.remote.layout,
                version,
                held=found | self.held,
            )
            self.held.difference_update(seqs)
            if background:
                return self._sent(good, tags, seqs, actions, failures)
            failures += self.remote.bulker().run(actions, "index documents").failures
            refused = {f.id for f in failures}
            self.sessions.remember_written(seqs, refused)
            self._remember(good, tags, seqs, refused)
            if self.remote.index_setup.refresh_on_write and self.sessions.turn is None:
                self.sessions.refresh()
        return PendingPut.settled(failures, ids)

    def _sent(
        self,
        good: list[Signed],
        tags: dict[str, Tags],
        seqs: dict[str, int],
        actions: list[dict],
        failures: list[Failure],
    ) -> PendingPut:
        """The bulk of ``actions`` handed to the sending thread; the documents are held as
        stored until the answer says otherwise."""
        self.sessions.remember_written(seqs, set())
        self._remember(good, tags, seqs, set())
        hold = self.sessions.turn
        if self._sender is None:
            self._sender = ThreadPoolExecutor(max_workers=1, thread_name_prefix="neardup-bulk")
        sent = self._sender.submit(self.remote.bulker().run, actions, "index documents")

        def answered() -> list[Failure]:
            refused = sent.result().failures
            for f in refused:  # (not stored after all: matched no more, read again)
                self.sessions.known.pop(f.id, None)
                if hold is not None and f.id in hold.recent:
                    hold.recent.remove(f.id)
            return failures + refused

        pending = PendingPut([*seqs, *(f.id for f in failures)], answered)
        self.sessions.in_flight = pending
        return pending

    def stop_sending(self) -> None:
        """Wait for what is in flight, and end the sending thread."""
        try:
            self.sessions.wait_for_sent()
        finally:
            if self._sender is not None:
                self._sender.shutdown(wait=True)
                self._sender = None

    def _remember(
        self,
        docs: Sequence[Signed],
        tags: dict[str, Tags],
        seqs: dict[str, int],
        failed: set[str],
    ) -> None:
        """Documents a run stored, matched here from now on (:class:`~.sessions.Turn`)."""
        stored = [s for s in docs if s.id not in failed]
        cached: dict[str, tuple[str | None, str | None]] = {}
        for s in stored:
            if len(column(s)) != 8 * s.n_shingles:  # (a marker: kept to verify against)
                cached[s.id] = set_key(s.exact, s.lang)
                self.remote.shingle_sets.remember(cached[s.id], s.shingles)
        hold = self.sessions.turn
        if hold is None:
            return
        if any(seqs[s.id] < hold.start_seq for s in stored):
            hold.stale = True  # the engine holds an older version of a document stored before
        hold.recent.add(
            [
                Entry(
                    id=s.id,
                    seq=seqs[s.id],
                    n_shingles=int(s.n_shingles),
                    simhash=int(s.simhash),
                    keys=s.keys,
                    tags=tags.get(s.id),
                    shingle_key=cached.get(s.id),
                )
                for s in stored
            ]
        )

    def _assign_seq(self, ids: list[str], found: set[str] | None = None) -> dict[str, int]:
        """Existing documents keep their arrival number; new ones get the next ones. The ids
        of the documents the index holds (signed or not) are added to ``found``. Ids this
        session already read (:attr:`.sessions.Sessions.known`) are not read again."""
        uniq = list(dict.fromkeys(ids))
        known = self.sessions.known
        self._read_seqs([i for i in uniq if i not in known])
        out = {}
        for i in uniq:
            was_found, seq = known[i]
            if was_found and found is not None:
                found.add(i)
            if seq is None:
                seq = self.sessions.next_seq
                self.sessions.next_seq += 1
            out[i] = seq
        return out

    def _read_seqs(self, ids: list[str]) -> None:
        """Whether the index holds each of ``ids``, and its arrival number, into the
        session's :attr:`~.sessions.Sessions.known`."""
        for chunk in chunks(ids, 1000):
            body = dsl.existing_seq_body(chunk)
            r = self.remote.retry.call(
                "mget", self.remote.client.mget, index=self.remote.name, body=body
            )
            self.sessions.known.update((d["_id"], found_seq(d)) for d in r.get("docs", []))

    def delete(self, ids: Iterable[str]) -> int:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return 0
        with self.sessions.writing():
            actions = [dsl.delete_action(self.remote.name, i) for i in ids]
            deleted = (
                self.remote.bulker()
                .run_or_raise(actions, "delete documents", ignore_missing=True)
                .deleted
            )
            self._forget(ids)
            for i in ids:
                self.sessions.known.pop(i, None)
            if self.remote.index_setup.refresh_on_write and self.sessions.turn is None:
                self.sessions.refresh()
        return deleted

    def update_tags(self, tags: dict[str, Tags]) -> None:
        if not tags:
            return
        with self.sessions.writing():
            actions = [dsl.update_tags_action(self.remote.name, i, t) for i, t in tags.items()]
            self.remote.bulker().run_or_raise(actions, "update tags", ignore_missing=True)
            if self.sessions.turn is not None:
                for i, t in tags.items():
                    if i in self.sessions.turn.recent:
                        self.sessions.turn.recent.set_tags(i, t)
                    else:
                        self.sessions.turn.stale = True
            if self.remote.index_setup.refresh_on_write and self.sessions.turn is None:
                self.sessions.refresh()

    def _forget(self, ids: Sequence[str]) -> None:
        """Deleted documents: no longer matched here; one stored before the run makes the
        engine's answers stale until a refresh."""
        if self.sessions.turn is None:
            return
        for i in ids:
            if i in self.sessions.turn.recent:
                self.sessions.turn.recent.remove(i)
            else:
                self.sessions.turn.stale = True

    # -- clusters --------------------------------------------------------------------------------
    def write_clusters(self, clusters: Sequence[ClusterRecord]) -> None:
        """Store the clusters in ``<index>-clusters`` (which must be neardup's own): each
        one replaced by id, and those neardup wrote before that are no longer clusters
        deleted; documents without neardup's mark (``managed_by``) are never touched."""
        self._mark_clusters_index()
        with self.sessions.writing():
            now = utc_now()
            new_ids = {c.cluster_id for c in clusters}
            stale = [i for i in self._cluster_ids() if i not in new_ids]
            actions = [dsl.cluster_action(self.remote.name, c, now) for c in clusters]
            actions += [
                {"_op_type": "delete", "_index": self.remote.clusters, "_id": i} for i in stale
            ]
            self.remote.bulker().run_or_raise(actions, "write clusters", ignore_missing=True)
            self.sessions.refresh()

    def _mark_clusters_index(self) -> None:
        """Refuse a clusters index neardup did not create; map ``managed_by`` in one made
        before the mark (its mapping is strict)."""
        m = self.setup.check_own(self.remote.clusters, "clusters")
        if m is None:
            return
        if all(
            "managed_by" in ((v.get("mappings") or {}).get("properties") or {}) for v in m.values()
        ):
            return
        self.remote.retry.call(
            "put mapping",
            self.remote.client.indices.put_mapping,
            index=self.remote.clusters,
            body={"properties": {"managed_by": {"type": "keyword"}}},
        )

    def _cluster_ids(self) -> Iterator[str]:
        body_of = functools.partial(dsl.cluster_ids_body, self.remote.paging.page_size)
        for h in self.remote.pager().hits(
            self.remote.clusters, body_of, self.remote.paging.page_size, "read clusters"
        ):
            yield h["_id"]
