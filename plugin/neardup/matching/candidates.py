"""Candidates and their verification: the one rule every path uses.

A stored document B is a *candidate* for a document A at threshold t when

* its shingle count passes the length filter ``t*|A| <= |B| <= |A|/t`` (a necessary
  condition for r(A, B) >= t, since r <= min(|A|,|B|) / max(|A|,|B|)), and
* it shares a key with A by one of the signatures: the exact key, at least m =
  ``Config.min_match`` of the b MinHash band keys (P(s) = P[Binomial(b, s^r) >= m],
  :func:`neardup.sketches.lsh.collision_probability`), a SimHash block key, or ``min_match`` keys of
  an extended signature; and
* when the only shared keys are SimHash blocks, the full Hamming distance of the two
  SimHash values is at most ``simhash_k`` (Manku et al., 2007: the block keys are the
  pigeonhole filter, the distance is the test).

The engine applies the first two inside its index (:class:`CandidateQuery`); the third is
applied here to what it returns. The relation is symmetric, so "B is a candidate of A" and
"A is a candidate of B" agree, which is what lets tagging, its repairs and N-to-N clustering
reach the same clusters. A candidate is only a proposal: :meth:`CandidateRule.verify`
computes the exact resemblance and containment of the full shingle sets.

>>> import numpy as np
>>> from neardup.config import Config
>>> rule = CandidateRule(Config(threshold=0.8, bands=16, rows=8, min_match=2))
>>> a = {"minhash": np.array([1, 2, 3], dtype=np.uint64), "exact": np.array([9], dtype=np.uint64)}
>>> sorted(rule.matched(a, {"minhash": np.array([1, 2, 7], dtype=np.uint64)}))
['minhash']
>>> sorted(rule.matched(a, {"minhash": np.array([1, 5, 7], dtype=np.uint64)}))  # 1 of m = 2 bands
[]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence

import numpy as np

from ..config import Config
from ..engines.base import Candidate, CandidateQuery, Engine, KeyGroup
from ..keys.builtin import BUILTIN, SimHashBlocks
from ..sketches.simhash import hamming, hamming_many
from ..sketches.verify import Mode, Similarity, length_bounds, passes_length_filter, similarity

if TYPE_CHECKING:
    from ..signing.records import Signed
    from ..signing.signer import Signer

#: Signature fields that propose candidates for resemblance.
RESEMBLANCE_FIELDS = tuple(name for name, sig in BUILTIN.items() if sig.resemblance)
#: Fields whose shared keys bound the Hamming distance of the SimHash fingerprints.
_SIMHASH_ONLY = frozenset({SimHashBlocks.name})


class SignedLike(Protocol):
    """What the rule reads of a document: a :class:`~neardup.signing.records.Signed` or a
    :class:`~neardup.engines.base.StoredDoc`."""

    id: str
    keys: dict[str, np.ndarray]
    shingles: np.ndarray
    simhash: int

    @property
    def n_shingles(self) -> int: ...


@dataclass(frozen=True)
class CandidateRule:
    """The candidate relation of one index: which keys must be shared, how many, and the
    SimHash distance test. ``extra`` maps the fields of extended signatures to their
    ``min_match``."""

    config: Config
    extra: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra", dict(self.extra))
        builtin = [sig(self.config) for sig in BUILTIN.values() if sig.resemblance]
        need = {sig.name: least_match(sig.min_match) for sig in builtin}
        need.update({f: least_match(m) for f, m in self.extra.items()})
        object.__setattr__(self, "_needs", need)
        whole = frozenset(sig.name for sig in builtin if not sig.containment)
        object.__setattr__(self, "_whole_document", whole)

    @property
    def threshold(self) -> float:
        """The index's threshold t (``Config.threshold``): the verifier's, unless asked another."""
        return self.config.threshold

    def at(self, threshold: float | None) -> float:
        """``threshold``, or the index's when None: the one place the default is taken.

        >>> rule = CandidateRule(Config(threshold=0.8))
        >>> rule.at(None), rule.at(0.5)
        (0.8, 0.5)
        """
        return self.threshold if threshold is None else threshold

    # -- what must be shared ---------------------------------------------------------------------
    def needs(self) -> dict[str, int]:
        """Field -> keys a candidate must share (resemblance mode)."""
        return dict(self._needs)

    def query(
        self,
        keys: Mapping[str, np.ndarray],
        n_shingles: int,
        *,
        mode: str = Mode.RESEMBLANCE,
        threshold: float | None = None,
        exclude_id: str | None = None,
        limit: int = 1000,
        before_seq: int | None = None,
        after_seq: int | None = None,
        representatives: bool = False,
    ) -> CandidateQuery:
        """The engine query for one document.

        resemblance: the groups of :meth:`needs`; ``t*|A| <= |B| <= |A|/t``.
        containment: SimHash is dropped (it measures the whole document); the samples L
        (winnowing fingerprints, MOD_m) are added with ``ceil(f * t * |L(A)|)`` shared keys,
        f = ``containment_fraction``; ``|B| >= t*|A|``.
        """
        t = self.at(threshold)
        kind = Mode.of(mode)
        whole = self._whole_document if kind is Mode.CONTAINMENT else frozenset()
        groups = [
            KeyGroup(f, _keys(keys[f]), m)
            for f, m in self._needs.items()
            if len(keys.get(f, ())) and f not in whole
        ]
        if kind is Mode.CONTAINMENT:
            groups += self._sample_groups(keys, t)
        lo, hi = length_bounds(n_shingles, t, kind)
        return CandidateQuery(
            groups=tuple(groups),
            min_shingles=lo,
            max_shingles=hi,
            exclude_id=exclude_id,
            limit=limit,
            before_seq=before_seq,
            after_seq=after_seq,
            representatives=representatives,
        )

    def _sample_groups(self, keys: Mapping[str, np.ndarray], t: float) -> list[KeyGroup]:
        """The containment groups of the samples of the shingle set: ``ceil(f * t * |L(A)|)``
        shared keys of each sample L the document has."""
        f = self.config.containment_fraction
        return [
            KeyGroup(name, _keys(keys[name]), least_match(math.ceil(f * t * len(keys[name]))))
            for name, sig in BUILTIN.items()
            if sig.sample and len(keys.get(name, ()))
        ]

    # -- the same test on two documents in memory ----------------------------------------------
    def matched(self, a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray]) -> frozenset[str]:
        """The fields by which ``b`` is a candidate of ``a`` (resemblance mode, keys only)."""
        shared = {}
        for f in self._needs:
            ka, kb = a.get(f), b.get(f)
            if ka is not None and kb is not None and len(ka) and len(kb):
                shared[f] = int(np.intersect1d(ka, kb).size)
        return self.matched_counts(shared)

    def matched_counts(self, shared: Mapping[str, int]) -> frozenset[str]:
        """The fields whose count of shared distinct keys reaches what the rule needs."""
        needs = self._needs
        return frozenset(f for f, n in shared.items() if f in needs and n >= needs[f])

    def plausible(self, matched: frozenset[str] | None, simhash_a: int, simhash_b: int) -> bool:
        """False for a candidate proposed by SimHash blocks alone whose distance is > k."""
        if matched is not None and matched == _SIMHASH_ONLY:
            return hamming(simhash_a, simhash_b) <= self.config.simhash_k
        return True

    def plausible_many(
        self, simhash_only: np.ndarray, simhash_a: np.ndarray, simhash_b: np.ndarray
    ) -> np.ndarray:
        """:meth:`plausible` of many pairs; ``simhash_only`` marks those proposed by SimHash
        blocks alone."""
        return ~np.asarray(simhash_only, dtype=bool) | (
            hamming_many(simhash_a, simhash_b) <= self.config.simhash_k
        )

    def is_candidate(self, a: SignedLike, b: SignedLike, threshold: float | None = None) -> bool:
        """What the engine query and :meth:`plausible` decide together, for two documents
        in memory (documents of one batch, not stored yet)."""
        t = self.at(threshold)
        if not passes_length_filter(a.n_shingles, b.n_shingles, t):
            return False
        m = self.matched(a.keys, b.keys)
        return bool(m) and self.plausible(m, a.simhash, b.simhash)

    # -- verification ----------------------------------------------------------------------------
    def verified(
        self, a: SignedLike, b: SignedLike, threshold: float | None = None
    ) -> Similarity | None:
        """The exact similarity of ``b`` to ``a`` when ``b`` is a candidate of ``a``
        (:meth:`is_candidate`), else None: :meth:`verify` of two documents in memory."""
        if not self.is_candidate(a, b, threshold):
            return None
        cand = Candidate(id=b.id, n_shingles=b.n_shingles, simhash=b.simhash, shingles=b.shingles)
        return self.verify(a.shingles, a.simhash, [cand], dict)[0][1]

    def verify(
        self,
        shingles: np.ndarray,
        simhash_value: int,
        cands: Sequence[Candidate],
        fetch: Callable[[list[str]], Mapping[str, np.ndarray]],
    ) -> list[tuple[Candidate, Similarity]]:
        """Exact similarity of the plausible candidates. Shingles an engine did not return
        with the hit are read with ``fetch(ids) -> {id: shingles}``."""
        cands = [c for c in cands if self.plausible(c.matched, simhash_value, c.simhash)]
        have = {c.id: c.shingles for c in cands if c.shingles is not None}
        missing = [c.id for c in cands if c.shingles is None]
        if missing:
            have.update(fetch(missing))
        return [(c, similarity(shingles, have[c.id])) for c in cands if c.id in have]


def least_match(m: int) -> int:
    """The keys a group needs: ``m``, and at least one (a group that needs none would propose
    every document). The one place the rule clamps it.

    >>> least_match(0), least_match(3)
    (1, 3)
    """
    return max(1, int(m))


@dataclass(frozen=True)
class SimilarEarlier:
    """What :func:`similar_earlier` found in a batch: by document id, ``pairs``, its earlier
    documents it resembles by the rule with the resemblance, copies left out; ``copies``, each
    copy left out and the earlier document it copies (listed in its place)."""

    pairs: dict[str, list[tuple[str, float]]]
    copies: dict[str, str]


class HeldRepresentatives:
    """The rule translated to memory: the representatives of a batch so far, by their keys,
    and the candidates of a document among them (the keys it must share, the length filter;
    documents that are not representatives are never held, so a text copied n times is held
    once). Candidates carry their shingles for :meth:`CandidateRule.verify`.

    >>> import numpy as np
    >>> from neardup.config import Config
    >>> from neardup.engines.base import StoredDoc
    >>> doc = lambda i, k: StoredDoc(id=i, lang="en", n_shingles=4, shingles=np.arange(4),
    ...     simhash=0, exact=i, keys={"minhash": np.array(k, dtype=np.uint64)})
    >>> config = Config(threshold=0.8, bands=16, rows=8, min_match=2)
    >>> held = HeldRepresentatives(CandidateRule(config))
    >>> held.add(doc("a", [1, 2, 3]), seq=1)
    >>> [(c.id, sorted(c.matched)) for c in held.candidates(doc("b", [1, 2, 9]))]
    [('a', ['minhash'])]
    >>> held.candidates(doc("c", [1, 8, 9]))  # 1 of the 2 keys it needs
    []
    """

    def __init__(self, rule: CandidateRule) -> None:
        self.rule = rule
        self._docs: list[tuple[SignedLike, int]] = []
        # field -> key -> the held docs that have it
        self._holding: dict[str, dict[int, list[int]]] = {f: {} for f in rule.needs()}

    def add(self, doc: SignedLike, seq: int) -> None:
        """Hold representative ``doc`` (``seq``: its place in arrival order)."""
        at = len(self._docs)
        self._docs.append((doc, seq))
        for f, holding in self._holding.items():
            for k in _distinct(doc.keys.get(f)):
                holding.setdefault(k, []).append(at)

    def candidates(self, doc: SignedLike, threshold: float | None = None) -> list[Candidate]:
        """The held documents that are candidates of ``doc``: as :meth:`CandidateRule.query`
        would find them in an engine (before :meth:`CandidateRule.plausible`)."""
        t = self.rule.at(threshold)
        shared: dict[int, dict[str, int]] = {}
        for f, holding in self._holding.items():
            for k in _distinct(doc.keys.get(f)):
                for at in holding.get(k, ()):
                    counts = shared.setdefault(at, {})
                    counts[f] = counts.get(f, 0) + 1
        out = []
        for at, counts in shared.items():
            b, seq = self._docs[at]
            matched = self.rule.matched_counts(counts)
            if matched and passes_length_filter(doc.n_shingles, b.n_shingles, t):
                out.append(
                    Candidate(
                        id=b.id,
                        n_shingles=b.n_shingles,
                        simhash=b.simhash,
                        score=float(sum(counts[f] for f in matched)),
                        shingles=b.shingles,
                        matched=matched,
                        seq=seq,
                    )
                )
        return out


def similar_earlier(rule: CandidateRule, docs: Sequence[Signed]) -> SimilarEarlier:
    """Each document's earlier documents of ``docs`` that are candidates of it and pass
    :meth:`CandidateRule.plausible`, with their exact resemblance: :meth:`CandidateRule.verified`
    of each (the reference, one pair at a time), found as :class:`HeldRepresentatives`
    holding them finds them. Tagging a batch keeps those that are representatives
    (:meth:`~neardup.matching.tagging.Tagger.tag_ordered`), so this can be made where the batch
    is signed, before any of its tags are known. A copy of an earlier document (the same
    tokens in the same language: the same shingles, keys and candidates) that resembles it at
    >= t is not held: it is in ``copies``, and the earlier one in ``pairs`` stands for it (it
    resembles the same documents as much), so a text copied n times costs n, not n**2.

    >>> from neardup.config import Config
    >>> from neardup.signing.signer import Signer
    >>> from neardup.signing.records import Document
    >>> text = "the river flows past the old mill and the bridge into the quiet valley"
    >>> docs = Signer(Config()).sign_batch(
    ...     [Document("a", text), Document("b", text + " below"), Document("c", text)]
    ... )
    >>> found = similar_earlier(CandidateRule(Config()), docs)
    >>> found.pairs, found.copies
    ({'a': [], 'b': [('a', 0.8)], 'c': [('a', 1.0), ('b', 0.8)]}, {'c': 'a'})
    """
    held = HeldRepresentatives(rule)
    first: dict[tuple[str, str | None], str] = {}  # (exact, lang) -> its first document
    out = SimilarEarlier(pairs={}, copies={})
    for i, d in enumerate(docs):
        found = rule.verify(d.shingles, d.simhash, held.candidates(d), dict)
        out.pairs[d.id] = [(c.id, sim.resemblance) for c, sim in found]
        original = first.setdefault((d.exact, d.lang), d.id)
        if original != d.id and any(
            j == original and r >= rule.threshold for j, r in out.pairs[d.id]
        ):
            out.copies[d.id] = original  # (not held: its original stands for it)
            continue
        held.add(d, i)
    return out


def _distinct(keys: Any) -> set[int]:
    """The distinct keys of a field (none when the document has not the field), as ints.

    >>> sorted(_distinct(np.array([3, 1, 3], dtype=np.uint64))), _distinct(None)
    ([1, 3], set())
    """
    return set() if keys is None else set(_keys(keys).tolist())


def _keys(keys: Any) -> np.ndarray:
    """Keys as a flat uint64 array (no copy when they are one)."""
    return np.asarray(keys, dtype=np.uint64).ravel()


def engine_fetch(engine: Engine) -> Callable[[list[str]], dict[str, np.ndarray]]:
    """``fetch`` for :meth:`CandidateRule.verify`: shingles of stored documents."""
    return lambda ids: {i: d.shingles for i, d in engine.get(ids, keys=False).items()}


def all_candidates(
    engine: Engine, queries: Sequence[CandidateQuery], grow: int = 8
) -> list[list[Candidate]]:
    """Run ``queries``; a query that came back full (``limit`` hits) runs again with a
    ``grow`` times larger limit until it is not, so no candidate is cut off."""
    queries = list(queries)
    results = engine.candidates(queries)
    todo = [i for i, r in enumerate(results) if len(r) >= queries[i].limit]
    while todo:
        for i in todo:
            queries[i] = replace(queries[i], limit=queries[i].limit * grow)
        for i, r in zip(todo, engine.candidates([queries[i] for i in todo]), strict=True):
            results[i] = r
        todo = [i for i in todo if len(results[i]) >= queries[i].limit]
    return results


def extra_min_match(signer: Signer | None) -> dict[str, int]:
    """Field -> ``min_match`` of a signer's extended signatures (none without a signer: an
    index whose collection statistics are not made yet)."""
    if signer is None:
        return {}
    return {f: int(s.min_match) for f, s in signer.extra_signatures.items()}
