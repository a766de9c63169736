"""The Python API: index, query, compare, cluster and search, on any engine.

>>> from neardup import NearDup, Document
>>> nd = NearDup.open(":memory:")
>>> nd.index([Document("a", "the quick brown fox jumps over the lazy dog again and again"),
...           Document("b", "the quick brown fox jumps over the lazy dog again and again!")], progress=None).duplicates
1

Engines match keys; everything here is engine-agnostic: building candidate queries,
filtering SimHash candidates by Hamming distance, exact verification of shingle sets,
index-time tagging, N-to-N clustering with union-find, and folding search results.
"""

from __future__ import annotations

import itertools
from collections import Counter
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from .config import Config
from .engines import Engine, open_engine
from .engines.base import Candidate, CandidateQuery, ClusterRecord, Failure, Hit, KeyGroup, StoredDoc, Tags
from .minhash import MinHash
from .shingles import shingle_strings
from .signer import Document, Signed, Signer
from .simhash import hamming
from .verify import intersection_size, length_bounds, passes_length_filter, similarity

#: Signature fields that propose candidates for resemblance.
RESEMBLANCE_FIELDS = ("exact", "minhash", "simhash")


@dataclass
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


@dataclass
class Pair:
    a: str
    b: str
    resemblance: float
    containment: float  # c(a, b)
    containment_ba: float  # c(b, a)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class IndexReport:
    indexed: int = 0
    duplicates: int = 0
    failed: list[Failure] = field(default_factory=list)
    skipped: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"indexed": self.indexed, "duplicates": self.duplicates, "skipped": self.skipped,
                "failed": [f.__dict__ for f in self.failed]}


@dataclass
class Comparison:
    """Why two documents are (or are not) near-duplicates."""

    a: str
    b: str
    resemblance: float
    containment_ab: float
    containment_ba: float
    intersection: int
    shingles_a: int
    shingles_b: int
    passes_length_filter: bool
    minhash_estimate: float
    simhash_hamming: int
    exact_equal: bool
    collisions: dict[str, dict[str, int]]  # field -> {"shared": n, "of": total in a}
    shared_shingles: list[str]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class NearDup:
    """One index (on an engine) with the settings it was built with."""

    def __init__(self, engine: Engine, config: Config):
        self.engine = engine
        self.config = config
        self._signer: Signer | None = None
        self._context_pending = False
        try:
            self._signer = Signer(config, engine.get_meta("context") or {})
        except Exception as e:  # a new index whose signatures need collection statistics first
            from .signatures import ContextError

            if not isinstance(e, ContextError):
                raise
            self._context_pending = True

    @property
    def signer(self) -> Signer:
        if self._signer is None:
            from .signatures import ContextError

            raise ContextError(f"{self.engine.location} has no collection statistics yet for "
                               f"{', '.join(self.config.signatures)}: index documents first")
        return self._signer

    @classmethod
    def open(cls, target: str | None = None, config: Config | None = None, *, create: bool = True, **engine_opts: Any) -> "NearDup":
        """Open (or create) the index at ``target``: a SQLite path or an Elasticsearch/OpenSearch URL."""
        engine = open_engine(target, **engine_opts)
        cfg = engine.open(config, create=create)
        return cls(engine, cfg)

    def close(self) -> None:
        self.engine.close()

    def __enter__(self) -> "NearDup":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- candidates and verification ----------------------------------------------------------
    def candidate_query(self, keys: Mapping[str, np.ndarray], n_shingles: int, mode: str = "resemblance",
                        threshold: float | None = None, exclude_id: str | None = None, limit: int = 1000) -> CandidateQuery:
        """Key groups and length range for one query document.

        resemblance: any shared exact key or SimHash block, at least m = ``Config.min_match``
        shared LSH band keys, or ``min_match`` keys of a signature of the extended family;
        t*|A| <= |B| <= |A|/t.
        containment: at least ceil(f * t * |L(A)|) shared keys of a sample L (winnowing
        fingerprints, MOD_m; f = ``containment_fraction``), m shared band keys or the exact
        key; |B| >= t*|A|.
        """
        t = self.config.threshold if threshold is None else threshold
        need = {"minhash": max(1, int(self.config.min_match))}  # LSH bands vote: >= m of b (neardup.lsh)
        groups = [KeyGroup(f, tuple(int(k) for k in keys[f]), need.get(f, 1)) for f in RESEMBLANCE_FIELDS if f in keys and len(keys[f])]
        groups += [KeyGroup(f, tuple(int(k) for k in keys[f]), max(1, int(sig.min_match)))
                   for f, sig in self.signer.extra_signatures.items() if f in keys and len(keys[f])]
        if mode == "containment":
            groups = [g for g in groups if g.field != "simhash"]
            for f in ("winnow", "modm"):
                sample = keys.get(f)
                if sample is not None and len(sample):
                    need = max(1, math.ceil(self.config.containment_fraction * t * len(sample)))
                    groups.append(KeyGroup(f, tuple(int(k) for k in sample), need))
        elif mode != "resemblance":
            raise ValueError(f"mode must be resemblance or containment, not {mode!r}")
        lo, hi = length_bounds(n_shingles, t, mode)
        return CandidateQuery(tuple(groups), lo, hi, exclude_id, limit)

    def _plausible(self, cand: Candidate, simhash_value: int) -> bool:
        """Drop candidates proposed only by a SimHash block whose full Hamming distance is > k."""
        if cand.matched is not None and cand.matched == frozenset({"simhash"}):
            return hamming(cand.simhash, simhash_value) <= self.config.simhash_k
        return True

    def _shingles_of(self, cands: Iterable[Candidate]) -> dict[str, np.ndarray]:
        out = {c.id: c.shingles for c in cands if c.shingles is not None}
        missing = [c.id for c in cands if c.shingles is None]
        if missing:
            out.update({i: d.shingles for i, d in self.engine.get(missing).items()})
        return out

    def _verify(self, shingles: np.ndarray, simhash_value: int, cands: list[Candidate]) -> list[tuple[Candidate, Any]]:
        cands = [c for c in cands if self._plausible(c, simhash_value)]
        sh = self._shingles_of(cands)
        return [(c, similarity(shingles, sh[c.id])) for c in cands if c.id in sh]

    # -- indexing ------------------------------------------------------------------------------
    def index(self, docs: Iterable[Document], *, batch_size: int = 500, tag: bool = True,
              progress: Callable[[int], None] | None = None, workers: int = 1) -> IndexReport:
        """Sign, tag and store documents, one transaction per batch.

        Tags: a document whose best verified match among earlier documents has resemblance
        >= threshold gets ``dup_of`` = that document and joins its ``cluster_id``; others
        start a cluster of their own. If reading ``docs`` fails midway, the documents read so
        far are stored before the error propagates. Signatures that need collection
        statistics get them from the first collection indexed (read in full before signing).
        ``workers`` > 1 canonicalizes and signs batches in that many processes while this one
        tags and stores, in input order (the result is the same as with one).
        """
        report = IndexReport()
        if self._needs_context():
            docs = list(docs)
            self.build_context(docs)
        for batch, signed, failures in self._signed_batches(_batches(docs, batch_size), workers):
            report.failed.extend(failures)
            self._store(signed, tag, report)
            if progress:
                progress(len(batch))
        return report

    def _signed_batches(self, batches: Iterator[list[Document]], workers: int) -> Iterator[tuple[list[Document], list[Signed], list[Failure]]]:
        if workers <= 1:
            for b in batches:
                yield (b, *_sign_batch(self.signer, b))
            return
        import multiprocessing
        from collections import deque
        from concurrent.futures import ProcessPoolExecutor

        pending: deque = deque()
        error: BaseException | None = None
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_init_worker,
                                 initargs=(self.config, self.signer.context)) as pool:
            try:
                for b in batches:
                    pending.append((b, pool.submit(_sign_in_worker, b)))
                    while len(pending) > 2 * workers:
                        b0, fut = pending.popleft()
                        yield (b0, *_reattach(b0, *fut.result()))
            except GeneratorExit:
                raise
            except BaseException as e:  # reading failed: what was read is still stored, then it is raised
                error = e
            while pending:
                b0, fut = pending.popleft()
                yield (b0, *_reattach(b0, *fut.result()))
        if error is not None:
            raise error

    def _store(self, signed: list[Signed], tag: bool, report: IndexReport) -> None:
        tags = self.tag_batch(signed) if tag else {}
        failures = self.engine.put(signed, tags)
        failed_ids = {f.id for f in failures}
        report.failed.extend(failures)
        report.indexed += len(signed) - len(failed_ids)
        report.duplicates += sum(1 for i, t in tags.items() if t.is_duplicate and i not in failed_ids)

    def _needs_context(self) -> bool:
        return self._context_pending

    def build_context(self, docs: Sequence[Document]) -> dict[str, Any]:
        """Collection statistics for the signatures that need them (I-Match lexicon, idf),
        from ``docs``; stored with the index and used for every later document."""
        from .signatures import build_context

        ctx = build_context(self.config, ((d.text, d.lang) for d in docs))
        self.engine.put_meta("context", ctx)
        self._signer = Signer(self.config, ctx)
        self._context_pending = False
        return ctx

    def tag_batch(self, batch: Sequence[Signed]) -> dict[str, Tags]:
        """Tags for a batch: best verified match among stored documents and earlier batch members."""
        t = self.config.threshold
        queries = [self.candidate_query(s.keys, s.n_shingles, "resemblance", t, exclude_id=s.id, limit=200) for s in batch]
        results = self.engine.candidates(queries)
        posting: dict[tuple[str, int], list[int]] = {}
        tags: dict[str, Tags] = {}
        for i, s in enumerate(batch):
            best: tuple[float, str, str] | None = None  # (r, id, cluster)
            for c, sim in self._verify(s.shingles, s.simhash, results[i]):
                if best is None or sim.resemblance > best[0]:
                    best = (sim.resemblance, c.id, c.cluster_id or c.id)
            earlier = {j for f in RESEMBLANCE_FIELDS for k in s.keys.get(f, ()) for j in posting.get((f, int(k)), ())}
            for j in sorted(earlier):
                o = batch[j]
                if o.id == s.id or not passes_length_filter(s.n_shingles, o.n_shingles, t):
                    continue
                if "simhash" in s.keys and not _shares(s, o, ("exact", "minhash")) and hamming(s.simhash, o.simhash) > self.config.simhash_k:
                    continue
                r = similarity(s.shingles, o.shingles).resemblance
                if best is None or r > best[0]:
                    best = (r, o.id, tags[o.id].cluster_id)
            if best is not None and best[0] >= t:
                tags[s.id] = Tags(best[2], best[1], best[0], True)
            else:
                tags[s.id] = Tags(s.id, None, best[0] if best else 0.0, False)
            for f in RESEMBLANCE_FIELDS:
                for k in s.keys.get(f, ()):
                    posting.setdefault((f, int(k)), []).append(i)
        return tags

    def retag(self, *, batch_size: int = 500, progress: Callable[[int], None] | None = None) -> int:
        """Recompute every document's tags in arrival order (as if indexed again); returns duplicates."""
        t = self.config.threshold
        seq: dict[str, int] = {}
        cluster: dict[str, str] = {}
        dups = 0
        pending: list[StoredDoc] = []

        def run(docs: list[StoredDoc]) -> None:
            nonlocal dups
            queries = [self.candidate_query(d.keys, d.n_shingles, "resemblance", t, exclude_id=d.id, limit=200) for d in docs]
            new: dict[str, Tags] = {}
            for d, cands in zip(docs, self.engine.candidates(queries)):
                earlier = [c for c in cands if seq.get(c.id, 1 << 62) < d.seq]
                best = None
                for c, sim in self._verify(d.shingles, d.simhash, earlier):
                    if best is None or sim.resemblance > best[0]:
                        best = (sim.resemblance, c.id)
                if best is not None and best[0] >= t:
                    cluster[d.id] = cluster[best[1]]
                    new[d.id] = Tags(cluster[d.id], best[1], best[0], True)
                    dups += 1
                else:
                    cluster[d.id] = d.id
                    new[d.id] = Tags(d.id, None, best[0] if best else 0.0, False)
            self.engine.update_tags(new)
            if progress:
                progress(len(docs))

        for d in self.engine.scan(batch_size=batch_size):
            seq[d.id] = d.seq
            pending.append(d)
            if len(pending) >= batch_size:
                run(pending)
                pending = []
        if pending:
            run(pending)
        self.engine.refresh()
        return dups

    # -- 1-to-N ------------------------------------------------------------------------------
    def query(self, text: str | Document | None = None, *, id: str | None = None, lang: str | None = None,
              mode: str = "resemblance", threshold: float | None = None, top_k: int = 10) -> list[Match]:
        """Verified near-duplicates of a text (or of a stored document by ``id``), best first.

        mode="resemblance" keeps r(A,B) >= threshold; mode="containment" keeps c(A,B) >= threshold
        (how much of the query is inside each match).
        """
        t = self.config.threshold if threshold is None else threshold
        if id is not None:
            stored = self.engine.get([id]).get(id)
            if stored is None:
                raise KeyError(f"no document with id {id!r} in {self.engine.location}")
            keys, n, shingles, simhash_value = stored.keys, stored.n_shingles, stored.shingles, stored.simhash
        elif text is not None:
            doc = text if isinstance(text, Document) else Document("", text, lang=lang)
            s = self.signer.sign(doc)
            keys, n, shingles, simhash_value = s.keys, s.n_shingles, s.shingles, s.simhash
        else:
            raise ValueError("give a text or an id")
        q = self.candidate_query(keys, n, mode, t, exclude_id=id, limit=max(200, 20 * top_k))
        out = []
        for c, sim in self._verify(shingles, simhash_value, self.engine.candidates([q])[0]):
            score = sim.resemblance if mode == "resemblance" else sim.containment
            if score >= t:
                out.append(Match(c.id, sim.resemblance, sim.containment, sim.containment_ba, sim.intersection, sim.size_b, None, c.cluster_id))
        out.sort(key=lambda m: (-(m.resemblance if mode == "resemblance" else m.containment), m.id))
        out = out[:top_k]
        if out:
            stored = self.engine.get([m.id for m in out])
            for m in out:
                if m.id in stored:
                    m.title = stored[m.id].title
        return out

    def compare(self, a: str | Document, b: str | Document, *, ids: bool = False) -> Comparison:
        """Explain one pair: exact similarities, shared shingles, which signatures collide."""
        da, db = (self._doc_by_id(a), self._doc_by_id(b)) if ids else (_as_doc(a, "a"), _as_doc(b, "b"))
        sa, sb = self.signer.sign(da), self.signer.sign(db)
        sim = similarity(sa.shingles, sb.shingles)
        c = self.config
        mha = MinHash.from_shingles(sa.shingles, c.num_perm, c.seed, c.minhash_scheme)
        mhb = MinHash.from_shingles(sb.shingles, c.num_perm, c.seed, c.minhash_scheme)
        collisions = {}
        for f in sa.keys:
            ka, kb = sa.keys[f], sb.keys.get(f, np.empty(0, dtype=np.uint64))
            shared = int(np.count_nonzero(ka == kb[: len(ka)])) if f in ("minhash", "simhash") and len(ka) == len(kb) else \
                intersection_size(np.unique(ka), np.unique(kb))
            collisions[f] = {"shared": shared, "of": int(len(ka))}
        w = c.shingle_size_for(sa.lang)
        ta = self.signer.canonicalizer.tokens(da.text, da.lang or sa.lang)
        tb = self.signer.canonicalizer.tokens(db.text, db.lang or sb.lang)
        shared_strings = sorted(set(shingle_strings(ta, w)) & set(shingle_strings(tb, w))) if c.shingle == "word" else []
        return Comparison(da.id, db.id, sim.resemblance, sim.containment, sim.containment_ba, sim.intersection,
                          sim.size_a, sim.size_b, passes_length_filter(sim.size_a, sim.size_b, c.threshold),
                          mha.jaccard(mhb), hamming(sa.simhash, sb.simhash), sa.exact == sb.exact, collisions, shared_strings)

    def _doc_by_id(self, doc_id: str) -> Document:
        d = self.engine.get([doc_id], text=True).get(doc_id)
        if d is None:
            raise KeyError(f"no document with id {doc_id!r} in {self.engine.location}")
        return Document(d.id, d.text or "", d.title, d.lang, d.fields)

    # -- N-to-N ------------------------------------------------------------------------------
    def pairs(self, threshold: float | None = None, *, fields: Sequence[str] = RESEMBLANCE_FIELDS,
              max_group: int = 1000) -> list[Pair]:
        """Every verified pair with resemblance >= threshold, from key collisions in the engine.

        A collision group larger than ``max_group`` (boilerplate shared by very many documents)
        is verified as a star around its first member instead of all pairs.
        """
        return self._pairs(threshold, fields, max_group)[0]

    def _pairs(self, threshold: float | None, fields: Sequence[str], max_group: int) -> tuple[list[Pair], dict[str, StoredDoc]]:
        t = self.config.threshold if threshold is None else threshold
        todo: set[tuple[str, str]] = set()
        by_simhash_only: set[tuple[str, str]] = set()  # proposed only by a SimHash block: check Hamming first
        for f in fields:
            need = self.config.min_match if f == "minhash" else 1  # the query's rule: pairs sharing >= m bands
            shared: Counter[tuple[str, str]] = Counter()
            for group in self.engine.collisions([f]):
                g = sorted(set(group))
                shared.update(itertools.combinations(g, 2) if len(g) <= max_group else ((g[0], x) for x in g[1:]))
            new = {p for p, n in shared.items() if n >= need}
            if new:
                if f == "simhash":
                    by_simhash_only |= new - todo
                else:
                    by_simhash_only -= new
                todo |= new
        ids = sorted({i for p in todo for i in p})
        store: dict[str, StoredDoc] = {}
        for i in range(0, len(ids), 2000):
            store.update(self.engine.get(ids[i : i + 2000]))
        out = []
        k = self.config.simhash_k
        for a, b in sorted(todo):
            da, db = store.get(a), store.get(b)
            if da is None or db is None or not passes_length_filter(da.n_shingles, db.n_shingles, t):
                continue
            if (a, b) in by_simhash_only and hamming(da.simhash, db.simhash) > k:
                continue
            sim = similarity(da.shingles, db.shingles)
            if sim.resemblance >= t:
                out.append(Pair(a, b, sim.resemblance, sim.containment, sim.containment_ba))
        return out, store

    def clusters(self, threshold: float | None = None, *, write: bool = True, min_size: int = 2) -> list[ClusterRecord]:
        """N-to-N: connected components of verified pairs (union-find), largest first."""
        pairs, store = self._pairs(threshold, RESEMBLANCE_FIELDS, 1000)
        uf = UnionFind()
        for p in pairs:
            uf.union(p.a, p.b)
        edges: dict[str, list[float]] = {}
        for p in pairs:
            edges.setdefault(uf.find(p.a), []).append(p.resemblance)
        out = []
        for members in uf.groups():
            if len(members) < min_size:
                continue
            docs = [store[m] for m in members if m in store]
            docs.sort(key=lambda d: d.seq)
            rep = docs[0]
            rs = edges[uf.find(rep.id)]
            seen = [d.indexed_at for d in docs if d.indexed_at]
            out.append(ClusterRecord(rep.id, len(docs), rep.id, rep.title, [d.id for d in docs], min(rs), float(np.mean(rs)), max(rs),
                                     sorted({d.lang for d in docs if d.lang}), min(seen) if seen else None, max(seen) if seen else None))
        out.sort(key=lambda c: (-c.size, c.cluster_id))
        untitled = [c for c in out if not c.representative_title]
        if untitled:
            texts = self.engine.get([c.representative_id for c in untitled], text=True)
            for c in untitled:
                d = texts.get(c.representative_id)
                c.representative_title = first_line(d.text) if d and d.text else None
        if write:
            self.engine.write_clusters(out)
        return out

    # -- search --------------------------------------------------------------------------------
    def search(self, query: str | dict, *, size: int = 10, dedupe: bool = False, threshold: float | None = None,
               pool: int | None = None) -> list[Hit]:
        """Full-text search; with ``dedupe`` near-duplicates among the top hits fold under the best one.

        A tagged index folds by ``cluster_id`` (the engine's ``collapse`` where it has one);
        otherwise, or with an explicit ``threshold``, copies are found on the fly among the top
        ``pool`` hits: shared signature keys, then exact verification.
        """
        if not dedupe:
            return self.engine.search(query, size)
        collapse = getattr(self.engine, "search_collapsed", None)
        if threshold is None and collapse is not None:
            return collapse(query, size)
        hits = self.engine.search(query, pool or max(50, 5 * size))
        if threshold is None and hits and all(h.cluster_id for h in hits):
            return _fold(hits, lambda h: h.cluster_id)[:size]
        t = self.config.threshold if threshold is None else threshold
        docs = self.engine.get([h.id for h in hits])
        uf = UnionFind()
        present = [h for h in hits if h.id in docs]
        for x, y in itertools.combinations(present, 2):
            a, b = docs[x.id], docs[y.id]
            if (_shares(a, b, RESEMBLANCE_FIELDS) and passes_length_filter(a.n_shingles, b.n_shingles, t)
                    and similarity(a.shingles, b.shingles).resemblance >= t):
                uf.union(x.id, y.id)
        return _fold(hits, lambda h: uf.find(h.id))[:size]

    def count(self) -> int:
        return self.engine.count()


def first_line(text: str, width: int = 80) -> str:
    """A display title for a document without one: its first non-empty line, shortened."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def _fold(hits: list[Hit], group_of: Callable[[Hit], str]) -> list[Hit]:
    heads: dict[str, Hit] = {}
    for h in hits:  # hits arrive best first
        g = group_of(h)
        if g in heads:
            heads[g].folded.append(h.id)
        else:
            heads[g] = h
    return list(heads.values())


def _shares(a: Any, b: Any, fields: Sequence[str]) -> bool:
    for f in fields:
        ka, kb = a.keys.get(f), b.keys.get(f)
        if ka is not None and kb is not None and len(ka) and len(kb) and np.intersect1d(ka, kb).size:
            return True
    return False


def _as_doc(x: str | Document, name: str) -> Document:
    return x if isinstance(x, Document) else Document(name, x)


class UnionFind:
    """Disjoint sets with path halving and union by size."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}
        self.size: dict[str, int] = {}

    def find(self, x: str) -> str:
        p = self.parent
        if x not in p:
            p[x] = x
            self.size[x] = 1
            return x
        while p[x] != x:
            p[x] = p[p[x]]
            x = p[x]
        return x

    def union(self, a: str, b: str) -> str:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return ra
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]
        return ra

    def groups(self) -> Iterator[list[str]]:
        out: dict[str, list[str]] = {}
        for x in self.parent:
            out.setdefault(self.find(x), []).append(x)
        return iter(out.values())


def _batches(docs: Iterable[Document], size: int) -> Iterator[list[Document]]:
    """Batches of ``size`` documents (a later document with the same id replaces the
    earlier one); if reading fails, the documents read so far come out before the error."""
    batch: dict[str, Document] = {}
    try:
        for d in docs:
            batch.pop(d.id, None)
            batch[d.id] = d
            if len(batch) >= size:
                yield list(batch.values())
                batch = {}
    except GeneratorExit:
        raise
    except BaseException:
        if batch:
            yield list(batch.values())
        raise
    if batch:
        yield list(batch.values())


def _sign_batch(signer: Signer, docs: list[Document]) -> tuple[list[Signed], list[Failure]]:
    failures: list[Failure] = []
    signed = signer.sign_batch(docs, on_error=lambda d, e: failures.append(Failure(d.id, str(e))))
    return signed, failures


_worker_signer: Signer | None = None


def _init_worker(config: Config, context: dict[str, Any]) -> None:
    global _worker_signer
    _worker_signer = Signer(config, context)


def _sign_in_worker(docs: list[Document]) -> tuple[list[Signed], list[Failure]]:
    """Sign in a worker process; the documents are not sent back (the parent has them)."""
    assert _worker_signer is not None
    signed, failures = _sign_batch(_worker_signer, docs)
    for s in signed:
        s.doc = None  # type: ignore[assignment]
    return signed, failures


def _reattach(docs: list[Document], signed: list[Signed], failures: list[Failure]) -> tuple[list[Signed], list[Failure]]:
    failed = {f.id for f in failures}
    for d, s in zip((d for d in docs if d.id not in failed), signed):
        s.doc = d
    return signed, failures
