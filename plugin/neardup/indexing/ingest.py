"""Ingest: documents in, signed and tagged documents stored, one batch at a time.

Per batch, inside one writer session of the engine (so concurrent writers never tag against
each other's half-written state):

1. documents already stored with the same signature are *unchanged*: they keep their place
   and tags (their text, title and fields are refreshed if those changed);
2. documents stored with another signature are *updates*: replaced in place (same ``seq``),
   then :meth:`~neardup.matching.tagging.Tagger.repair` re-tags them and what depended on them;
3. new documents follow everything stored, in input order, and are tagged by the rule.

So re-running a file changes nothing, resuming after a crash (half a file, then all of it)
gives the tags of one run, and an edited document is tagged as if it had always read so.
Signing can run in worker processes beside the process that tags and stores
(:mod:`neardup.indexing.workers`).
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..engines.base import Engine, Failure, PendingPut, PreparedBatch, StoredDoc, Tags
from ..signing.signer import Signer
from ..signing.records import Document, Signed
from ..matching.candidates import CandidateRule, SimilarEarlier, similar_earlier
from ..matching.tagging import Tagger
from .workers import signed_ahead, signed_batches


@dataclass
class IndexReport:
    """What one ``index`` run did."""

    indexed: int = 0  # new documents stored
    duplicates: int = 0  # of them, near-duplicates of an earlier representative
    updated: int = 0  # stored documents whose text changed (re-signed in place)
    unchanged: int = 0  # stored documents sent again with the same signature
    retagged: int = 0  # stored documents whose tags changed because of the updates
    wordless: int = 0  # documents without a canonical token, sent this run (never near-duplicates)
    failed: list[Failure] = field(default_factory=list)
    skipped: int = 0
    stopped: bool = (
        False  # asked to stop (an interrupt): the input after the last stored batch not stored
    )

    def to_dict(self) -> dict[str, Any]:
        return {
            "indexed": self.indexed,
            "duplicates": self.duplicates,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "retagged": self.retagged,
            "wordless": self.wordless,
            "skipped": self.skipped,
            "failed": [f.__dict__ for f in self.failed],
            "interrupted": self.stopped,
        }


def same_signature(old: StoredDoc, new: Signed) -> bool:
    """True when a stored document and a re-sent one sign the same (its tags cannot change)."""
    return (
        old.exact == new.exact
        and old.n_shingles == new.n_shingles
        and np.array_equal(old.shingles, new.shingles)
    )


def _same_content(old: StoredDoc, new: Signed) -> bool:
    d = new.doc
    return (old.text, old.title, old.fields or {}, old.lang) == (
        d.text,
        d.title,
        d.fields or {},
        new.lang,
    )


@dataclass(frozen=True, kw_only=True)
class Prepared:
    """What the signing workers make of a batch beside its signatures (:func:`prepare_batch`):
    the engine's rows (:meth:`~neardup.engines.base.Engine.batch_preparer`) and, by the rule,
    each document's earlier ones of the batch it resembles (:func:`similar_earlier`), so
    that tagging here keeps only those of its representatives."""

    engine: PreparedBatch | None = None
    similar: SimilarEarlier | None = None


def prepare_batch(
    engine_preparer: Callable[[Sequence[Signed]], PreparedBatch] | None,
    rule: CandidateRule | None,
    signed: Sequence[Signed],
) -> Prepared:
    """:class:`Prepared` of a signed batch: ``engine_preparer``'s, and the similarities by
    ``rule`` (none without one: the batch is not tagged)."""
    return Prepared(
        engine=engine_preparer(signed) if engine_preparer is not None else None,
        similar=similar_earlier(rule, signed) if rule is not None else None,
    )


@dataclass(kw_only=True)
class _InFlight:
    """A batch whose new documents the engine may still be storing
    (:meth:`~neardup.engines.base.Engine.start_put`), counted once it answers."""

    signed: list[Signed]  # the whole batch
    failed: set[str]  # what was refused of it before (unchanged and updated documents)
    new: list[Signed]
    tags: dict[str, Tags]
    pending: PendingPut


class Ingest:
    """Stores signed batches with the rule's tags (see the module docstring). The new
    documents of a batch may still be on their way to the engine when :meth:`store`
    returns (an engine that stores in the background); they are counted, and a refusal
    among them handled, by the next :meth:`store` or by :meth:`finish`."""

    def __init__(self, engine: Engine, tagger: Tagger | None):
        self.engine = engine
        self.tagger = tagger
        self._sent: _InFlight | None = None

    def store(
        self, signed: list[Signed], report: IndexReport, made: Prepared | None = None
    ) -> None:
        """Store a signed batch (``made``: what was made of it in advance, where it was
        signed)."""
        made = made or Prepared()
        prepared = made.engine
        already = len(report.failed)
        with self.engine.writer():
            existing = self.engine.get([s.id for s in signed], text=True)
            new, updates, refresh = _split_by_stored(signed, existing, report)
            if updates or refresh:
                self._store_again(updates, refresh, existing, report, prepared)
            tags = self._tags(new, made.similar)  # (while the batch before may still be stored)
            if self.finish(report):  # it lost documents: the new ones are tagged without them
                tags = self._tags(new, made.similar)
            pending = (
                self.engine.start_put(new, tags, prepared=prepared)
                if new
                else PendingPut.settled([])
            )
        self._sent = _InFlight(
            signed=signed,
            failed={f.id for f in report.failed[already:]},
            new=new,
            tags=tags,
            pending=pending,
        )
        if not pending.in_flight:
            self.finish(report)

    def _store_again(
        self,
        updates: list[Signed],
        refresh: list[Signed],
        existing: dict[str, StoredDoc],
        report: IndexReport,
        prepared: PreparedBatch | None,
    ) -> None:
        """Store again documents stored before (``updates``: with another signature;
        ``refresh``: the same one, other text, title or fields), keeping their tags; what
        they change is repaired after every earlier batch is counted."""
        self.finish(report)
        kept = {
            s.id: existing[s.id].tags for s in updates + refresh if existing[s.id].tags is not None
        }
        if refresh:
            report.failed.extend(self.engine.put(refresh, kept, prepared=prepared))
        if updates:
            self._store_updates(updates, kept, report, prepared)

    def finish(self, report: IndexReport) -> bool:
        """Count the batch the engine may still be storing, once it answers; a document of
        it that others joined and the engine refused leaves them tagged again without it.
        True when the engine refused any of its documents."""
        sent, self._sent = self._sent, None
        if sent is None:
            return False
        failures = sent.pending.failures()
        failed = {f.id for f in failures}
        tags = sent.tags
        if failed and any(t.dup_of in failed for t in tags.values()):
            tags = self._tag_again_without(sent.new, failed, tags)
        report.failed.extend(failures)
        _count(report, sent, tags, failed)
        return bool(failures)

    def _tags(self, new: list[Signed], similar: SimilarEarlier | None = None) -> dict[str, Tags]:
        if self.tagger is None or not new:
            return {}
        return self.tagger.tag_ordered(new, similar=similar)

    def _store_updates(
        self,
        updates: list[Signed],
        kept: dict[str, Tags],
        report: IndexReport,
        prepared: PreparedBatch | None,
    ) -> None:
        """Replace documents stored with another signature in place, then repair the tags of
        what depended on them."""
        failures = self.engine.put(updates, kept, prepared=prepared)
        report.failed.extend(failures)
        failed = {f.id for f in failures}
        ok = [s.id for s in updates if s.id not in failed]
        report.updated += len(ok)
        if self.tagger is not None and ok:
            report.retagged += len(self.tagger.repair((), ok) - set(ok))

    def _tag_again_without(
        self, new: list[Signed], failed: set[str], tags: dict[str, Tags]
    ) -> dict[str, Tags]:
        """A document of this batch that others joined was refused: the stored ones are
        tagged again without it (only tags that change are written)."""
        assert self.tagger is not None  # (tags came from it)
        again = self.tagger.tag_ordered([s for s in new if s.id not in failed])
        self.engine.update_tags({i: t for i, t in again.items() if tags.get(i) != t})
        return again


def _count(report: IndexReport, sent: _InFlight, tags: dict[str, Tags], failed: set[str]) -> None:
    """Count a batch the engine answered for in ``report``: ``failed``, the ids it refused."""
    report.indexed += len(sent.new) - len(failed)
    report.duplicates += sum(1 for i, t in tags.items() if t.is_duplicate and i not in failed)
    refused = failed | sent.failed
    report.wordless += sum(1 for s in sent.signed if s.wordless and s.id not in refused)


def _split_by_stored(
    signed: list[Signed], existing: dict[str, StoredDoc], report: IndexReport
) -> tuple[list[Signed], list[Signed], list[Signed]]:
    """(new, updates, refresh) of a batch: not stored yet; stored with another signature;
    stored with the same one, whose text, title or fields changed (counted unchanged)."""
    new, updates, refresh = [], [], []
    for s in signed:
        old = existing.get(s.id)
        if old is None:
            new.append(s)
        elif not same_signature(old, s):
            updates.append(s)
        else:
            report.unchanged += 1
            if not _same_content(old, s):
                refresh.append(s)
    return new, updates, refresh


def run(
    ingest: Ingest,
    signer: Signer,
    docs: Iterable[Document],
    *,
    batch_size: int = 500,
    progress: Callable[[int], None] | None = None,
    workers: int = 0,
    checked: bool = False,
    stop: Callable[[], bool] | None = None,
) -> IndexReport:
    """Sign and store ``docs`` batch by batch (``workers`` processes sign, 0: this one, or,
    for an engine whose writes wait on a server, a thread one batch ahead:
    :func:`~neardup.indexing.workers.signed_ahead`; ``checked``: as for
    :func:`~neardup.indexing.workers.sign_batch`); returns what was done. ``stop`` is asked
    after each stored batch: when it answers true, the run ends there (``report.stopped``),
    with every batch before stored and committed and none after, so what is stored is a
    prefix of the input and running again goes on from it."""
    report = IndexReport()
    with ingest.engine.writes_in_a_row():
        preparer = (
            functools.partial(
                prepare_batch,
                ingest.engine.batch_preparer(),
                ingest.tagger.rule if ingest.tagger is not None else None,
            )
            if workers > 0
            else None
        )
        batches_in = signed_batches(signer, docs, batch_size, workers, preparer, checked)
        if workers <= 0 and ingest.engine.writes_wait_on_a_server:
            batches_in = signed_ahead(batches_in)
        try:
            for batch, signed, failures, prepared in batches_in:
                report.failed.extend(failures)
                ingest.store(signed, report, prepared)
                if progress:
                    progress(len(batch))
                if stop is not None and stop():
                    report.stopped = True
                    break
            ingest.finish(report)
        except BaseException:
            with contextlib.suppress(Exception):  # (the first cause is the one told)
                ingest.finish(report)  # what was sent is stored, and tagged by the rule
            raise
        finally:
            batches_in.close()  # the signing workers end before the last commit
    return report


__all__ = ["IndexReport", "Ingest", "Prepared", "Tags", "prepare_batch", "run", "same_signature"]
