"""The Python API: one index on one engine, and what users do with it.

>>> from neardup import NearDup, Document
>>> nd = NearDup.open(":memory:")
>>> nd.index([Document("a", "the quick brown fox jumps over the lazy dog again and again"),
...           Document("b", "the quick brown fox jumps over the lazy dog again and again!")],
...          progress=None).duplicates
1
>>> nd.show("b").representative
'a'

:class:`NearDup` is a facade; the work is done by one module per step of the flow:
:mod:`neardup.indexing.ingest` (batches, workers, updates), :mod:`neardup.matching.candidates` (the
candidate rule and exact verification), :mod:`neardup.matching.tagging` (the cluster rule) and
:mod:`neardup.matching.clustering` (N-to-N).
"""

from __future__ import annotations

import importlib
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from .config import Config
from .engines import Engine, open_engine
from .engines.base import CandidateQuery, ClusterRecord, Hit, StoredDoc, Tags
from .errors import DocumentNotFound
from .signing.records import Document, Signed

if TYPE_CHECKING:
    from .indexing.ingest import IndexReport
    from .matching.candidates import RESEMBLANCE_FIELDS, CandidateRule
    from .matching.clustering import Pair
    from .matching.tagging import Tagger
    from .comparison.explain import Comparison
    from .signing.signer import Signer

#: Where the names this module re-exports live, imported on first use (PEP 562), as is
#: everything signing, indexing and clustering need: a process that only reads an index's
#: clusters loads none of it.
_ELSEWHERE = {
    "RESEMBLANCE_FIELDS": "matching.candidates",
    "IndexReport": "indexing.ingest",
    "Pair": "matching.clustering",
}


def __getattr__(name: str) -> Any:
    if name in _ELSEWHERE:
        return getattr(importlib.import_module(f"{__package__}.{_ELSEWHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "RESEMBLANCE_FIELDS",
    "DeleteReport",
    "DocumentTags",
    "IndexReport",
    "Match",
    "NearDup",
    "Pair",
]


@dataclass(kw_only=True)
class Match:
    """A verified near-duplicate of a query document, with exact similarities."""

    id: str
    resemblance: float
    containment: float  # c(query, match): share of the query inside the match
    containment_ba: float  # c(match, query)
    intersection: int
    n_shingles: int
    title: str | None = None
    cluster_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(kw_only=True)
class DocumentTags:
    """One document's place in its cluster (``neardup show``)."""

    id: str
    seq: int
    title: str | None
    tags: Tags | None
    representative: str | None  # its representative (itself for a representative)
    resemblance: float | None  # to the representative (None for a representative)
    members: list[tuple[str, float]] = field(default_factory=list)  # a representative's members
    #: too short for the shingle size to tell texts apart
    #: (:func:`~neardup.signing.signer.too_short`)
    too_short: bool = False

    def to_dict(self) -> dict[str, Any]:
        t = self.tags
        return {
            "id": self.id,
            "seq": self.seq,
            "title": self.title,
            "cluster_id": t.cluster_id if t else None,
            "dup_of": t.dup_of if t else None,
            "is_duplicate": t.is_duplicate if t else None,
            "representative": self.representative,
            "resemblance": self.resemblance,
            "members": [{"id": i, "resemblance": r} for i, r in self.members],
            "too_short": self.too_short,
        }


@dataclass
class DeleteReport:
    deleted: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    retagged: list[str] = field(default_factory=list)  # documents whose tags changed

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class NearDup:
    """One index (on an engine) with the settings it was built with."""

    def __init__(self, engine: Engine, config: Config):
        self.engine = engine
        self.config = config
        self._signer: Signer | None = None  # made on first use: reading loads no signing
        self._rule: CandidateRule | None = None  # made once per signer (:attr:`rule`)
        self._rule_signer: Signer | None = None

    def _made_signer(self) -> Signer | None:
        """This index's signer, made on first use; None for a new index whose signatures
        need collection statistics first."""
        if self._signer is None:
            from .signing.signatures import ContextError
            from .signing.signer import Signer

            try:
                self._signer = Signer(self.config, self.engine.get_meta("context") or {})
            except ContextError:
                return None
            self.engine.use_signer(self._signer)
        return self._signer

    @property
    def _context_pending(self) -> bool:
        return self._made_signer() is None

    @property
    def signer(self) -> Signer:
        signer = self._made_signer()
        if signer is None:
            from .signing.signatures import ContextError

            raise ContextError(
                f"{self.engine.location} has no collection statistics yet for "
                f"{', '.join(self.config.signatures)}: index documents first"
            )
        return signer

    @property
    def rule(self) -> CandidateRule:
        """The candidate rule of this index (:mod:`neardup.matching.candidates`), made once
        (again only when the index's signer is made: extended signatures add their keys)."""
        from .matching.candidates import CandidateRule, extra_min_match

        from .keys.builtin import BUILTIN

        extended = any(s not in BUILTIN for s in self.config.signatures)
        signer = self._made_signer() if extended else None
        if self._rule is None or signer is not self._rule_signer:
            self._rule = CandidateRule(self.config, extra_min_match(signer))
            self._rule_signer = signer
        return self._rule

    @property
    def tagger(self) -> Tagger:
        from .matching.tagging import Tagger

        return Tagger(self.engine, self.rule)

    @classmethod
    def open(
        cls,
        target: str | None = None,
        config: Config | None = None,
        *,
        create: bool = True,
        **engine_opts: Any,
    ) -> "NearDup":
        """Open (or create) the index at ``target``: a SQLite path or an
        Elasticsearch/OpenSearch URL."""
        engine = open_engine(target, **engine_opts)
        cfg = engine.open(config, create=create)
        return cls(engine, cfg)

    def close(self) -> None:
        self.engine.close()

    def __enter__(self) -> "NearDup":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def count(self) -> int:
        return self.engine.count()

    def candidate_query(
        self,
        keys: Mapping[str, np.ndarray],
        n_shingles: int,
        mode: str = "resemblance",
        threshold: float | None = None,
        exclude_id: str | None = None,
        limit: int = 1000,
    ) -> CandidateQuery:
        """The engine query for one document (:meth:`CandidateRule.query`)."""
        return self.rule.query(
            keys, n_shingles, mode=mode, threshold=threshold, exclude_id=exclude_id, limit=limit
        )

    def expected_recall(self, threshold: float) -> float:
        """Share of pairs of resemblance ``threshold`` the index's band keys propose
        (:func:`neardup.matching.clustering.expected_recall`); below the index's threshold it
        drops."""
        from .matching import clustering

        return clustering.expected_recall(self.rule, threshold)

    # -- writing ------------------------------------------------------------------------------
    def index(
        self,
        docs: Iterable[Document],
        *,
        batch_size: int = 500,
        tag: bool = True,
        progress: Callable[[int], None] | None = None,
        workers: int = 0,
        checked: bool = False,
        stop: Callable[[], bool] | None = None,
    ) -> IndexReport:
        """Sign, tag and store documents, batch by batch (see :mod:`neardup.indexing.ingest`);
        ``checked``: every document passed :func:`~neardup.signing.validate.check_document` already
        (those of :func:`~neardup.io.reading.read_documents` have), so signing does not check it
        again. ``stop``: asked after each stored batch; true ends the run there
        (see :func:`neardup.indexing.ingest.run`).

        Unchanged documents keep their place and tags, changed ones are updated in place
        and what depended on them re-tagged, new ones are tagged by the cluster rule
        (:mod:`neardup.matching.tagging`). If reading ``docs`` fails midway, the documents read so
        far are stored before the error propagates. Signatures that need collection
        statistics get them from the first collection indexed (read in full before signing).
        """
        from .indexing import ingest

        if self._context_pending:
            docs = list(docs)
            self.build_context(docs)
        store = ingest.Ingest(self.engine, self.tagger if tag else None)
        return ingest.run(
            store,
            self.signer,
            docs,
            batch_size=batch_size,
            progress=progress,
            workers=workers,
            checked=checked,
            stop=stop,
        )

    def build_context(self, docs: Sequence[Document]) -> dict[str, Any]:
        """Collection statistics for the signatures that need them (I-Match lexicon, idf),
        from ``docs``; stored with the index and used for every later document."""
        from .canonical import Canonicalizer
        from .signing.signer import Signer

        from .signing.signatures import build_context

        canonicalizer = Canonicalizer(self.config)
        ctx = build_context(canonicalizer, ((d.text, d.lang) for d in docs))
        self.engine.put_meta("context", ctx)
        self._signer = Signer(self.config, ctx, canonicalizer=canonicalizer)
        self.engine.use_signer(self._signer)
        return ctx

    def delete(self, ids: Iterable[str], *, delete_source_documents: bool = False) -> DeleteReport:
        """Remove documents and re-tag exactly the ones whose tags depended on them: the
        members of a deleted representative, and what follows from their new tags.

        On an index neardup attached in place the documents are the user's own: deleting
        them is refused unless ``delete_source_documents``."""
        ids = list(dict.fromkeys(ids))
        if self.engine.adopted and not delete_source_documents:
            self._refuse_deleting_source_documents(len(ids))
        report = DeleteReport()
        with self.engine.writer():
            found = self.engine.get(ids, shingles=False)
            report.missing = [i for i in ids if i not in found]
            report.deleted = [i for i in ids if i in found]
            members = self._members_left(found, report.deleted)
            self.engine.delete(report.deleted)
            report.retagged = sorted(self.tagger.repair(members))
        self.engine.refresh()
        return report

    def _refuse_deleting_source_documents(self, n: int) -> None:
        """An EngineError: deleting ``n`` documents of an index attached in place."""
        from .engines.base import EngineError

        raise EngineError(
            f"{self.engine.location} is an index neardup attached in place: its documents "
            f"are your own, and deleting {n} of them would remove them from it for "
            "good, with all their fields (not only neardup's). Give "
            "--yes-delete-source-documents (delete_source_documents=True) to delete them"
        )

    def _members_left(self, found: Mapping[str, StoredDoc], deleted: list[str]) -> set[str]:
        """The members of the deleted representatives among ``found`` that are not deleted
        themselves: the documents whose tags must be made again."""
        from .matching.tagging import is_representative

        reps = [i for i in deleted if is_representative(found[i].tags)]
        return {m for ms in self.engine.members(reps).values() for m in ms} - set(deleted)

    def retag(self, *, batch_size: int = 500, progress: Callable[[int], None] | None = None) -> int:
        """Recompute every document's tags in arrival order, as a fresh index would; returns
        the number of duplicates. Needed only after ``index --no-tag``."""
        dups = 0
        tagger = self.tagger
        with self.engine.writer():
            docs = iter(self.engine.scan(batch_size=batch_size))
            while batch := list(itertools.islice(docs, max(1, batch_size))):
                dups += self._retag_batch(tagger, batch)
                if progress:
                    progress(len(batch))
        self.engine.refresh()
        return dups

    def _retag_batch(self, tagger: Tagger, batch: list[StoredDoc]) -> int:
        """The tags of ``batch`` made again in arrival order, stored where they changed;
        returns the number of duplicates among them."""
        tags = tagger.tag_ordered(batch, [x.seq for x in batch])
        self.engine.update_tags({x.id: tags[x.id] for x in batch if x.tags != tags[x.id]})
        return sum(t.is_duplicate for t in tags.values())

    # -- 1-to-N ------------------------------------------------------------------------------
    def query(
        self,
        text: str | Document | Signed | None = None,
        *,
        id: str | None = None,
        lang: str | None = None,
        mode: str = "resemblance",
        threshold: float | None = None,
        top_k: int = 10,
    ) -> list[Match]:
        """Verified near-duplicates of a text (or of a stored document by ``id``), best first.
        ``text`` may come signed already (:meth:`Signer.sign` of this index's ``signer``).

        mode="resemblance" keeps r(A,B) >= threshold; mode="containment" keeps c(A,B) >= threshold
        (how much of the query is inside each match). Below the index's threshold the band
        keys find fewer pairs: :meth:`expected_recall` says how many.
        """
        from .matching.candidates import engine_fetch
        from .sketches.verify import Mode

        measure = Mode.of(mode).measure
        t = self.rule.at(threshold)
        keys, n, shingles, simhash_value = self._query_signature(text, id, lang)
        rule = self.rule
        q = rule.query(keys, n, mode=mode, threshold=t, exclude_id=id, limit=max(200, 20 * top_k))
        out = []
        read: dict[str, str | None] = {}  # titles the engine read with the hits
        for c, sim in rule.verify(
            shingles, simhash_value, self.engine.candidates([q])[0], engine_fetch(self.engine)
        ):
            if measure(sim) >= t:
                out.append(
                    Match(
                        id=c.id,
                        resemblance=sim.resemblance,
                        containment=sim.containment,
                        containment_ba=sim.containment_ba,
                        intersection=sim.intersection,
                        n_shingles=sim.size_b,
                        cluster_id=c.cluster_id,
                    )
                )
                if c.title_read:
                    read[c.id] = c.title
        out.sort(key=lambda m: (-measure(m), m.id))
        out = out[:top_k]
        self._add_titles(out, read)
        return out

    def _query_signature(
        self, text: str | Document | Signed | None, doc_id: str | None, lang: str | None
    ) -> tuple[Any, int, Any, Any]:
        """The keys, shingle count, shingles and SimHash of a query: those stored for
        ``doc_id``, else those of ``text`` (signed here unless it comes signed)."""
        if doc_id is not None:
            stored = self.engine.get([doc_id]).get(doc_id)
            if stored is None:
                raise DocumentNotFound(f"no document with id {doc_id!r} in {self.engine.location}")
            return stored.keys, stored.n_shingles, stored.shingles, stored.simhash
        if text is None:
            raise ValueError("give a text or an id")
        if isinstance(text, Signed):
            s = text
        else:
            doc = text if isinstance(text, Document) else Document("", text, lang=lang)
            s = self.signer.sign(doc)
        return s.keys, s.n_shingles, s.shingles, s.simhash

    def _add_titles(self, matches: list[Match], read: Mapping[str, str | None]) -> None:
        """Each match's stored title, where it has one: from ``read`` (id -> the title the
        engine read with the hit), else read by id."""
        unread = [m.id for m in matches if m.id not in read]
        stored = self.engine.get(unread, shingles=False) if unread else {}
        for m in matches:
            if m.id in read:
                m.title = read[m.id]
            elif m.id in stored:
                m.title = stored[m.id].title

    def compare(self, a: str | Document, b: str | Document, *, ids: bool = False) -> Comparison:
        """Explain one pair (:func:`neardup.comparison.explain.compare`): exact similarities,
        shared shingles and the raw passages behind them, which signatures collide. ``ids``:
        ``a`` and ``b`` are ids of stored documents, else texts or documents."""
        from .comparison import explain

        da, db = (
            (self._doc_by_id(a), self._doc_by_id(b)) if ids else (_as_doc(a, "a"), _as_doc(b, "b"))
        )
        return explain.compare(self.signer, da, db)

    def _doc_by_id(self, doc_id: str) -> Document:
        d = self.engine.get([doc_id], text=True, shingles=False).get(doc_id)
        if d is None:
            raise DocumentNotFound(f"no document with id {doc_id!r} in {self.engine.location}")
        return Document(id=d.id, text=d.text or "", title=d.title, lang=d.lang, fields=d.fields)

    # -- a document's tags and the collection ------------------------------------------------
    def show(self, doc_id: str) -> DocumentTags:
        """A document's tags, its representative and resemblance to it, or, for a
        representative, its members."""
        d = self.engine.get([doc_id], shingles=False).get(doc_id)
        if d is None:
            raise DocumentNotFound(f"no document with id {doc_id!r} in {self.engine.location}")
        t = d.tags
        if t is None:
            return DocumentTags(
                id=d.id,
                seq=d.seq,
                title=d.title,
                tags=None,
                representative=None,
                resemblance=None,
                too_short=d.too_short,
            )
        if t.is_duplicate:
            return DocumentTags(
                id=d.id,
                seq=d.seq,
                title=d.title,
                tags=t,
                representative=t.dup_of,
                resemblance=t.max_resemblance,
                too_short=d.too_short,
            )
        members = self.engine.members([d.id]).get(d.id, [])
        got = self.engine.get(members, shingles=False) if members else {}
        return DocumentTags(
            id=d.id,
            seq=d.seq,
            title=d.title,
            tags=t,
            representative=d.id,
            resemblance=None,
            members=[
                (m, got[m].tags.max_resemblance if m in got and got[m].tags else 0.0)
                for m in members
            ],
            too_short=d.too_short,
        )

    def similar_ids(self, doc_id: str, limit: int = 5, cutoff: float = 60.0) -> list[str]:
        """Stored ids that look like ``doc_id`` (an id mistyped, or typed as another path),
        best first: :func:`rapidfuzz.fuzz.WRatio` >= ``cutoff`` over every stored id.

        >>> nd = NearDup.open(":memory:")
        >>> _ = nd.index([Document("news/2024/a.txt", "one text of words"),
        ...               Document("b", "another text here")])
        >>> nd.similar_ids("news/2024/a.tx")
        ['news/2024/a.txt']
        """
        from rapidfuzz import fuzz, process

        ids = [row.id for row in self.engine.scan_tags()]
        return [
            m
            for m, _score, _ in process.extract(
                doc_id, ids, scorer=fuzz.WRatio, limit=limit, score_cutoff=cutoff
            )
        ]

    def export(self, which: str = "all", *, batch_size: int = 1000) -> Iterator[dict[str, Any]]:
        """Stored documents in arrival order as records: ``id``, ``title``, ``text``,
        ``lang``, the document's own fields, and its tags under ``neardup``. ``which``:
        ``all``, ``unique`` (representatives only: the deduplicated collection, in which
        every dropped document has a kept one with resemblance >= t) or ``duplicates``."""
        from .io.records import export_record
        from .matching.tagging import Selection

        selection = Selection.of(which)
        for d in self.engine.scan(text=True, batch_size=batch_size):
            if selection.keeps(d.tags):
                yield export_record(d)

    # -- N-to-N ------------------------------------------------------------------------------
    def pairs(
        self,
        threshold: float | None = None,
        *,
        fields: Sequence[str] | None = None,
        max_group: int = 1000,
    ) -> list[Pair]:
        """Every verified pair with resemblance >= threshold, from key collisions in the engine
        (:func:`neardup.matching.clustering.verified_pairs`)."""
        from .matching import clustering

        t = self.rule.at(threshold)
        return clustering.verified_pairs(
            self.engine, self.rule, t, fields=fields, max_group=max_group
        )[0]

    def resemblance_histogram(
        self, low: float | None = None, width: float = 0.05
    ) -> list[dict[str, Any]]:
        """How the documents' best resemblances to an earlier document spread, from ``low``
        (default t - 0.3, :func:`~neardup.matching.clustering.tuning_low`) to 1, in bins of
        ``width``: where to put the threshold
        (:func:`~neardup.matching.clustering.resemblance_histogram`). Below the index's threshold
        the keys propose a pair with the probability each bin's ``expected_recall`` says, so those
        bins are lower bounds."""
        from .matching import clustering

        low = clustering.tuning_low(self.config.threshold) if low is None else low
        best = clustering.best_earlier_resemblances(self.engine, self.rule, low)
        dups = [r.id for r in self.engine.scan_tags() if r.tags is not None and r.tags.is_duplicate]
        return clustering.resemblance_histogram(
            best, dups, self.config.threshold, low, self.rule, width
        )

    def clusters(
        self,
        threshold: float | None = None,
        *,
        write: bool = False,
        min_size: int = 2,
        connected: bool = False,
    ) -> list[ClusterRecord]:
        """Clusters of the whole index, largest first.

        At the index's threshold these are the tags' clusters (a representative and its
        members). At another threshold the same rule runs over the verified pairs at that
        threshold. ``connected``: connected components of the verified pairs instead
        (transitive closure: members may resemble each other only through a chain).
        ``write`` stores the records where dashboards and reports read them.
        """
        from .matching import clustering

        t = self.rule.at(threshold)
        out = clustering.cluster_records(
            self.engine, self.rule, t, connected=connected, min_size=min_size
        )
        if write:
            self.engine.write_clusters(out)
        return out

    # -- search --------------------------------------------------------------------------------
    def search(
        self,
        query: str | dict,
        *,
        size: int = 10,
        dedupe: bool = False,
        threshold: float | None = None,
        pool: int | None = None,
    ) -> list[Hit]:
        """Full-text search of words, or (engines that take one) of a query in the engine's
        own language given as a dict (Elasticsearch's and OpenSearch's query DSL); with
        ``dedupe`` near-duplicates among the top hits fold under the best one.

        A tagged index folds by ``cluster_id`` (the engine's ``collapse`` where it has one):
        the clusters of the cluster rule. With an explicit ``threshold`` (or untagged hits),
        copies are found on the fly among the top ``pool`` hits by the candidate rule and
        exact verification.
        """
        from .engines.base import NativeQuery
        from .matching import clustering

        if isinstance(query, dict):
            query = NativeQuery(query)
        if not dedupe:
            return self.engine.search(query, size)
        if threshold is None and self.engine.collapses_search:
            return self.engine.search_collapsed(query, size)
        hits = self.engine.search(query, pool or max(50, 5 * size))
        if threshold is None and hits and all(h.cluster_id for h in hits):
            return clustering.fold_hits(hits, lambda h: h.cluster_id)[:size]
        return self._fold_copies(hits, threshold)[:size]

    def _fold_copies(self, hits: list[Hit], threshold: float | None) -> list[Hit]:
        """``hits`` with the copies among them (the candidate rule and exact verification at
        ``threshold``, the index's by default) folded under the best of each."""
        from .matching import clustering

        t = self.rule.at(threshold)
        docs = self.engine.get([h.id for h in hits])
        return clustering.fold_hits(hits, clustering.copies_among(hits, docs, self.rule, t))


def _as_doc(x: str | Document, name: str) -> Document:
    return x if isinstance(x, Document) else Document(name, x)
