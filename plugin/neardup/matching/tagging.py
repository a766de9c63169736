"""The cluster rule: one definition for tags, ``clusters``, the report, dashboards and collapse.

In arrival order (``seq``: the order in which documents first entered the index), a document
joins the cluster of the earlier **representative** it resembles most: exact resemblance
r >= t, ties to the earlier one. Then ``cluster_id`` = ``dup_of`` = that representative and
its resemblance to it is stored. Otherwise it is a representative: ``cluster_id`` = its own
id, no ``dup_of``. This is the greedy "leader" clustering of streaming deduplication
(Hartigan, *Clustering Algorithms*, 1975, ch. 3), with exact resemblance as the measure.

What follows, and is tested:

* every member resembles its representative at >= t (clusters do not chain);
* a later arrival never changes an earlier document's tags;
* every tagged document has a ``cluster_id``, so ``collapse`` on it never lumps untagged
  documents together;
* the tags are a function of the surviving documents and their order alone: after any mix of
  index, re-index, resume, update and delete they equal those of a fresh index. Updates and
  deletes are repaired incrementally by :meth:`Tagger.repair`, which re-tags exactly the
  documents whose tags can depend on what changed.

>>> choose([(0.9, 5, "b"), (0.95, 7, "c"), (0.95, 3, "a"), (0.5, 1, "z")], 0.8)
(0.95, 3, 'a')
>>> assign("d", None)
Tags(cluster_id='d', dup_of=None, max_resemblance=0.0, is_duplicate=False)
>>> assign("d", (0.95, 3, "a"))
Tags(cluster_id='a', dup_of='a', max_resemblance=0.95, is_duplicate=True)
"""

from __future__ import annotations

import enum
import heapq
from typing import Iterable, Sequence

from .candidates import (
    CandidateRule,
    HeldRepresentatives,
    SignedLike,
    SimilarEarlier,
    all_candidates,
    engine_fetch,
)
from ..engines.base import Engine, StoredDoc, Tags
from ..sketches.verify import UNBOUNDED

#: Candidates asked of the engine per document before :func:`all_candidates` grows the limit.
TAG_LIMIT = 500


def choose(
    verified: Iterable[tuple[float, int, str]], threshold: float
) -> tuple[float, int, str] | None:
    """The representative to join among ``(resemblance, seq, id)`` of earlier
    representatives: the highest resemblance >= ``threshold``, ties to the smallest ``seq``."""
    best = None
    for r, seq, i in verified:
        if r >= threshold and (best is None or (r, -seq) > (best[0], -best[1])):
            best = (r, seq, i)
    return best


def assign(doc_id: str, best: tuple[float, int, str] | None) -> Tags:
    """Tags of ``doc_id`` given the representative :func:`choose` picked (or none)."""
    if best is None:
        return Tags(cluster_id=doc_id)
    return Tags(
        cluster_id=best[2], dup_of=best[2], max_resemblance=float(best[0]), is_duplicate=True
    )


def is_representative(tags: Tags | None) -> bool:
    return tags is not None and not tags.is_duplicate


class Selection(str, enum.Enum):
    """Which stored documents an export keeps, by their tags: ``all``; ``unique``, the
    representatives (the deduplicated collection: every document left out has a kept one it
    resembles at >= t); ``duplicates``, the members.

    >>> Selection.of("unique").keeps(Tags(cluster_id="a"))
    True
    >>> Selection.of("duplicates").keeps(None)  # an untagged document is no member
    False
    >>> Selection.of("copies")
    Traceback (most recent call last):
    ValueError: which must be all, unique or duplicates, not 'copies'
    """

    ALL = "all"
    UNIQUE = "unique"
    DUPLICATES = "duplicates"

    @classmethod
    def of(cls, which: str) -> Selection:
        try:
            return cls(which)
        except ValueError:
            raise ValueError(f"which must be all, unique or duplicates, not {which!r}") from None

    def keeps(self, tags: Tags | None) -> bool:
        if self is Selection.UNIQUE:
            return is_representative(tags)
        if self is Selection.DUPLICATES:
            return tags is not None and tags.is_duplicate
        return True


class Tagger:
    """Applies the rule against an engine's stored documents."""

    def __init__(self, engine: Engine, rule: CandidateRule):
        self.engine = engine
        self.rule = rule

    # -- tagging documents in order ----------------------------------------------------------
    def tag_ordered(
        self,
        docs: Sequence[SignedLike],
        seqs: Sequence[int | None] | None = None,
        *,
        similar: SimilarEarlier | None = None,
    ) -> dict[str, Tags]:
        """Tags of ``docs``, which arrive in this order after every stored document they
        are compared with. ``seqs`` gives each one's stored ``seq`` (re-tagging stored
        documents; the engine then only proposes representatives before it), or None for new
        documents that follow everything stored. Among ``docs`` themselves the rule is applied
        in memory, with the tags computed here (the stored ones may be stale): against the
        earlier representatives of ``docs`` (:class:`HeldRepresentatives`), or, given
        ``similar`` (:func:`similar_earlier` of the batch ``docs`` are new documents of, in
        its order, made where it was signed), those of them it names for each."""
        if similar is not None and seqs is not None:
            raise ValueError("similar is for new documents (seqs None)")
        seqs = list(seqs) if seqs is not None else [None] * len(docs)
        batch_ids = {d.id for d in docs}
        queries = [
            self.rule.query(
                d.keys,
                d.n_shingles,
                exclude_id=d.id,
                limit=TAG_LIMIT,
                before_seq=s,
                representatives=True,
            )
            for d, s in zip(docs, seqs, strict=True)
        ]
        results = [
            [
                c
                for c in found
                if c.id not in batch_ids and self.rule.plausible(c.matched, d.simhash, c.simhash)
            ]
            for d, found in zip(docs, all_candidates(self.engine, queries), strict=True)
        ]
        # the shingles of every candidate of the batch in one read, not one per document
        have = engine_fetch(self.engine)(
            sorted({c.id for found in results for c in found if c.shingles is None})
        )
        held = HeldRepresentatives(self.rule)  # this batch's representatives so far
        at = {d.id: i for i, d in enumerate(docs)} if similar is not None else {}
        # similar: the copies that are representatives (their original not among docs), by
        # their original, which stands for them in the documents' pairs
        copies: dict[str, list[str]] = {}
        tags: dict[str, Tags] = {}
        for i, d in enumerate(docs):
            # an earlier representative of this batch follows every stored document
            found = results[i] if similar is not None else results[i] + held.candidates(d)
            verified = [
                (sim.resemblance, c.seq, c.id)
                for c, sim in self.rule.verify(
                    d.shingles,
                    d.simhash,
                    found,
                    lambda ids: {x: have[x] for x in ids if x in have},
                )
            ]
            if similar is not None:  # (only a document tagged already has tags)
                pairs = similar.pairs[d.id]
                verified += [
                    (r, UNBOUNDED + at[j], j) for j, r in pairs if is_representative(tags.get(j))
                ]
                verified += [(r, UNBOUNDED + at[c], c) for j, r in pairs for c in copies.get(j, ())]
            tags[d.id] = assign(d.id, choose(verified, self.rule.threshold))
            if similar is None and is_representative(tags[d.id]):
                held.add(d, UNBOUNDED + i if seqs[i] is None else seqs[i])
            elif similar is not None and d.id in similar.copies and is_representative(tags[d.id]):
                copies.setdefault(similar.copies[d.id], []).append(d.id)
        return tags

    # -- repairs after updates and deletes -------------------------------------------------------
    def repair(self, seeds: Iterable[str], changed: Iterable[str] = ()) -> set[str]:
        """Re-tag what can depend on a change, in arrival order; returns the ids whose tags
        changed.

        ``seeds`` are stored documents to re-tag (the members of deleted representatives);
        ``changed`` are stored documents whose text was replaced in place (they keep their
        ``seq`` and are re-tagged too). When a document's influence on later ones changes
        (it became or stopped being a representative, or it is a representative whose text
        changed), its former members and every later candidate of it are re-tagged in turn.
        Members have no influence, so the cascade stops at them.
        """
        changed = set(changed)
        heap: list[tuple[int, str]] = []
        self._push(heap, set(seeds) | changed)
        done: set[str] = set()
        retagged: set[str] = set()
        while heap:
            _, doc_id = heapq.heappop(heap)
            if doc_id in done:
                continue
            done.add(doc_id)
            d = self.engine.get([doc_id]).get(doc_id)
            if d is None:
                continue
            new = self.tag_ordered([d], [d.seq])[doc_id]
            old = d.tags
            if new != old:
                self.engine.update_tags({doc_id: new})
                retagged.add(doc_id)
            moved = doc_id in changed or is_representative(old) != is_representative(new)
            if moved and is_representative(old):
                self._push(heap, self._former_members(doc_id) - done)
            if moved and is_representative(new):
                self._push(heap, self._later_candidates(d, doc_id) - done)
        return retagged

    def _former_members(self, doc_id: str) -> set[str]:
        """The stored members of representative ``doc_id``."""
        return {m for ms in self.engine.members([doc_id]).values() for m in ms}

    def _later_candidates(self, d: StoredDoc, doc_id: str) -> set[str]:
        """The documents after ``d`` (stored as ``doc_id``; by arrival) that the candidate
        rule proposes for it."""
        q = self.rule.query(
            d.keys, d.n_shingles, exclude_id=doc_id, limit=TAG_LIMIT, after_seq=d.seq
        )
        later = all_candidates(self.engine, [q])[0]
        return {c.id for c in later if self.rule.plausible(c.matched, d.simhash, c.simhash)}

    def _push(self, heap: list[tuple[int, str]], ids: set[str]) -> None:
        if ids:
            for d in self.engine.get(sorted(ids), shingles=False).values():
                heapq.heappush(heap, (d.seq, d.id))
