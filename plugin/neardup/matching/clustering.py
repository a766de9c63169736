"""N-to-N: clusters of a whole index.

At the index's threshold the clusters *are* the tags (:mod:`neardup.matching.tagging`): one cluster
per representative with its members, read without verifying anything again. At another threshold
the same rule runs over the verified pairs at that threshold (:func:`leader_clusters`), so a
cluster still means "a representative and the later documents that resemble it most".
Transitive closure (connected components of the pair graph, :func:`connected_components`) is
available for those who want chains; it is labelled as such.

>>> def pair(a, b, r):
...     return Pair(a=a, b=b, resemblance=r, containment=r, containment_ba=r)
>>> pairs = [pair("a", "b", 0.9), pair("b", "c", 0.85)]
>>> seq = {"a": 1, "b": 2, "c": 3}
>>> leader_clusters(pairs, seq, 0.8)  # c resembles b (a member), not a: c is a representative
{'b': ('a', 0.9)}
>>> sorted(sorted(g) for g in connected_components(pairs))
[['a', 'b', 'c']]
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from .candidates import CandidateRule
from ..engines.base import ClusterRecord, Engine, Hit, StoredDoc, TagRow
from ..sketches.lsh import collision_probability
from .tagging import choose
from ..sketches.verify import passes_length_filter_many, similarity


@dataclass(kw_only=True)
class Pair:
    """A verified pair with its exact similarities."""

    a: str
    b: str
    resemblance: float
    containment: float  # c(a, b)
    containment_ba: float  # c(b, a)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


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


# -- the rule over pairs ---------------------------------------------------------------------------
def leader_clusters(
    pairs: Iterable[Pair], seq: Mapping[str, int], threshold: float
) -> dict[str, tuple[str, float]]:
    """The cluster rule over verified pairs: member -> (representative, resemblance).

    Documents are taken in ``seq`` order; each joins the earlier representative it
    resembles most (>= ``threshold``, ties to the earlier), else it is a representative.
    """
    earlier: dict[str, list[tuple[float, int, str]]] = {}
    for p in pairs:
        if p.resemblance < threshold:
            continue
        first, later = (p.a, p.b) if seq[p.a] < seq[p.b] else (p.b, p.a)
        earlier.setdefault(later, []).append((p.resemblance, seq[first], first))
    out: dict[str, tuple[str, float]] = {}
    for doc in sorted(earlier, key=seq.__getitem__):
        best = choose(((r, s, i) for r, s, i in earlier[doc] if i not in out), threshold)
        if best is not None:
            out[doc] = (best[2], best[0])
    return out


def connected_components(pairs: Iterable[Pair]) -> list[list[str]]:
    """Transitive closure: groups of documents linked by chains of pairs."""
    uf = UnionFind()
    for p in pairs:
        uf.union(p.a, p.b)
    return list(uf.groups())


def expected_recall(rule: CandidateRule, threshold: float) -> float:
    """P(a pair of resemblance ``threshold`` shares >= m of the index's b band keys):
    P[Binomial(b, s^r) >= m] at s = ``threshold``. Pairs found by another signature (exact,
    SimHash) come on top, so this is a lower bound for what N-to-N and queries find."""
    c = rule.config
    return float(collision_probability(threshold, c.bands, c.rows, c.min_match))


# -- verified pairs from key collisions in the engine ---------------------------------------------
def verified_pairs(
    engine: Engine,
    rule: CandidateRule,
    threshold: float,
    *,
    fields: Sequence[str] | None = None,
    max_group: int = 1000,
) -> tuple[list[Pair], dict[str, StoredDoc]]:
    """Every pair that the candidate rule proposes and whose resemblance is >= ``threshold``.

    Pairs come from the engine's key collisions, field by field (all of the rule's fields,
    or ``fields``), counted against the same ``min_match`` as candidate queries. A collision
    group larger than ``max_group`` (boilerplate shared by very many documents) is taken as a
    star around its first member. A document proposed by SimHash blocks alone has its shingles
    read only if a pair of it passes :meth:`CandidateRule.plausible_many` (read with its
    SimHash first). Returns the pairs and the documents read with their shingles (those of
    the pairs among them).
    """
    needs = rule.needs()
    if fields is not None:
        needs = {f: needs.get(f, 1) for f in fields}
    bit = {f: 1 << k for k, f in enumerate(needs)}
    matched = _matched_pairs(engine, needs, bit, max_group)
    ids = sorted({i for p in matched for i in p})
    simhash_bit = bit.get("simhash", 0)
    # the shingles of a document proposed by SimHash blocks alone are read only once its
    # pair passes the rule (the distance test needs its SimHash, not its shingles)
    store = _stored(engine, sorted({i for p, m in matched.items() if m != simhash_bit for i in p}))
    heads = _stored(engine, [i for i in ids if i not in store], shingles=False)
    kept = _proposed(matched, simhash_bit, ids, {**heads, **store}, rule, threshold)
    store.update(_stored(engine, sorted({i for p in kept for i in p if i in heads})))
    out = []
    for a, b in kept:
        if a not in store or b not in store:  # (deleted between the reads)
            continue
        sim = similarity(store[a].shingles, store[b].shingles)
        if sim.resemblance >= threshold:
            out.append(
                Pair(
                    a=a,
                    b=b,
                    resemblance=sim.resemblance,
                    containment=sim.containment,
                    containment_ba=sim.containment_ba,
                )
            )
    return out, store


def _matched_pairs(
    engine: Engine, needs: Mapping[str, int], bit: Mapping[str, int], max_group: int
) -> dict[tuple[str, str], int]:
    """Pair -> the bits of the fields whose key collisions match it (at least the field's
    ``min_match`` keys shared)."""
    matched: dict[tuple[str, str], int] = {}
    for f, need in needs.items():
        for p, n in _shared_keys(engine.collisions([f]), max_group).items():
            if n >= need:
                matched[p] = matched.get(p, 0) | bit[f]
    return matched


def _stored(engine: Engine, ids: list[str], *, shingles: bool = True) -> dict[str, StoredDoc]:
    """The stored documents of ``ids`` without their keys (and without their shingles when
    not ``shingles``), read 2,000 at a time."""
    store: dict[str, StoredDoc] = {}
    for i in range(0, len(ids), 2000):
        store.update(engine.get(ids[i : i + 2000], keys=False, shingles=shingles))
    return store


def _shared_keys(groups: Iterable[list[str]], max_group: int) -> dict[tuple[str, str], int]:
    """(a, b) with a < b -> keys they share, from collision groups; a group larger than
    ``max_group`` is a star around its first member (in id order)."""
    shared: dict[tuple[str, str], int] = {}
    for group in groups:
        if len(group) == 2:  # most groups
            a, b = group
            if a != b:
                p = (a, b) if a < b else (b, a)
                shared[p] = shared.get(p, 0) + 1
            continue
        g = sorted(set(group))
        for p in (
            itertools.combinations(g, 2) if len(g) <= max_group else ((g[0], x) for x in g[1:])
        ):
            shared[p] = shared.get(p, 0) + 1
    return shared


def _proposed(
    matched: Mapping[tuple[str, str], int],
    simhash_bit: int,
    ids: Sequence[str],
    store: Mapping[str, StoredDoc],
    rule: CandidateRule,
    threshold: float,
) -> list[tuple[str, str]]:
    """The pairs the candidate rule keeps, sorted, decided all at once: both documents
    stored, the length filter, and the SimHash distance for pairs proposed by SimHash blocks
    alone (``matched[p] == simhash_bit``)."""
    pairs = list(matched)
    n = len(pairs)
    at = {i: k for k, i in enumerate(ids)}
    size = np.fromiter(
        (store[i].n_shingles if i in store else -1 for i in ids), dtype=np.int64, count=len(ids)
    )
    sim = np.fromiter(
        (store[i].simhash if i in store else 0 for i in ids), dtype=np.uint64, count=len(ids)
    )
    ia = np.fromiter((at[a] for a, _ in pairs), dtype=np.int64, count=n)
    ib = np.fromiter((at[b] for _, b in pairs), dtype=np.int64, count=n)
    bits = np.fromiter(matched.values(), dtype=np.int64, count=n)
    na, nb = size[ia], size[ib]
    keep = (na >= 0) & (nb >= 0) & passes_length_filter_many(na, nb, threshold)
    keep &= rule.plausible_many(bits == simhash_bit, sim[ia], sim[ib])
    return sorted(pairs[k] for k in np.flatnonzero(keep).tolist())


# -- cluster records ------------------------------------------------------------------------------
def records(
    groups: Mapping[str, Sequence[tuple[str, float]]], rows: Mapping[str, TagRow], min_size: int = 2
) -> list[ClusterRecord]:
    """Cluster records from representative -> [(member, resemblance), ...], largest first.
    The members list starts with the representative, then arrival order."""
    out = [
        _record(rep, members, rows)
        for rep, members in groups.items()
        if len(members) + 1 >= min_size
    ]
    out.sort(key=lambda c: (-c.size, c.cluster_id))
    return out


def _record(
    rep: str, members: Sequence[tuple[str, float]], rows: Mapping[str, TagRow]
) -> ClusterRecord:
    """The record of the cluster of representative ``rep``: its members in arrival order
    after it, their resemblances, languages and when they were first and last seen."""
    ids = [rep] + _in_arrival_order([m for m, _ in members], rows)
    rs = [r for _, r in members] or [1.0]
    info = [rows[i] for i in ids if i in rows]
    first_seen, last_seen = _seen(info)
    return ClusterRecord(
        cluster_id=rep,
        size=len(ids),
        representative_id=rep,
        representative_title=rows[rep].title if rep in rows else None,
        members=ids,
        min_resemblance=float(min(rs)),
        mean_resemblance=math.fsum(rs) / len(rs),
        max_resemblance=float(max(rs)),
        languages=sorted({r.lang for r in info if r.lang}),
        first_seen=first_seen,
        last_seen=last_seen,
    )


def _in_arrival_order(ids: list[str], rows: Mapping[str, TagRow]) -> list[str]:
    """``ids`` by their arrival numbers (those without a row first, in their order)."""
    return sorted(ids, key=lambda i: rows[i].seq if i in rows else 0)


def _seen(info: Sequence[TagRow]) -> tuple[Any, Any]:
    """When the first and the last of these documents were indexed (None, None where none
    says)."""
    seen = [r.indexed_at for r in info if r.indexed_at]
    return (min(seen), max(seen)) if seen else (None, None)


def groups_from_tags(rows: Iterable[TagRow]) -> dict[str, list[tuple[str, float]]]:
    """Representative -> [(member, resemblance)] as the tags say."""
    out: dict[str, list[tuple[str, float]]] = {}
    for r in rows:
        if r.tags is None:
            continue
        if r.tags.is_duplicate:
            out.setdefault(r.tags.cluster_id, []).append((r.id, r.tags.max_resemblance))
        else:
            out.setdefault(r.id, [])
    return out


def groups_from_leaders(
    leaders: Mapping[str, tuple[str, float]],
) -> dict[str, list[tuple[str, float]]]:
    out: dict[str, list[tuple[str, float]]] = {}
    for m, (rep, r) in leaders.items():
        out.setdefault(rep, []).append((m, r))
    return out


def groups_from_components(
    components: Iterable[list[str]], pairs: Sequence[Pair], seq: Mapping[str, int]
) -> dict[str, list[tuple[str, float]]]:
    """Connected components as groups: the earliest document first; each member's value is
    its best resemblance to any document of the component (edges, not the representative)."""
    best: dict[str, float] = {}
    for p in pairs:
        best[p.a] = max(best.get(p.a, 0.0), p.resemblance)
        best[p.b] = max(best.get(p.b, 0.0), p.resemblance)
    out = {}
    for comp in components:
        comp = sorted(comp, key=seq.__getitem__)
        out[comp[0]] = [(m, best.get(m, 0.0)) for m in comp[1:]]
    return out


def tuning_low(threshold: float) -> float:
    """The lowest resemblance the tuning histogram shows: t - 0.3 (at least 0), down to a
    multiple of 0.05.

    >>> tuning_low(0.8), tuning_low(0.33), tuning_low(0.2)
    (0.5, 0.0, 0.0)
    """
    return max(0.0, math.floor((threshold - 0.3) * 20 + 1e-9) / 20)


def tuning_fields(rule: CandidateRule, signatures: Sequence[str]) -> list[str]:
    """The key fields whose collisions propose the pairs of the tuning histogram: the
    candidate rule's, and the winnowing samples where the index has them (a pair that shares
    a run of ``winnow_window`` shingles always shares one: pairs well below the threshold
    show, which band keys tuned for the threshold mostly miss)."""
    return list(rule.needs()) + (["winnow"] if "winnow" in signatures else [])


def best_earlier_resemblances(
    engine: Engine, rule: CandidateRule, low: float, *, max_group: int = 1000
) -> dict[str, float]:
    """Each document's highest resemblance to an earlier document (by arrival), among the
    pairs the keys of :func:`tuning_fields` propose and verification finds at >= ``low``;
    documents with none are left out."""
    fields = tuning_fields(rule, engine.config.signatures)
    pairs, store = verified_pairs(engine, rule, max(low, 1e-9), fields=fields, max_group=max_group)
    best: dict[str, float] = {}
    for p in pairs:
        later = p.b if store[p.a].seq < store[p.b].seq else p.a
        best[later] = max(best.get(later, 0.0), p.resemblance)
    return best


def resemblance_histogram(
    best: Mapping[str, float],
    duplicates: Iterable[str],
    threshold: float,
    low: float,
    rule: CandidateRule | None = None,
    width: float = 0.05,
) -> list[dict[str, Any]]:
    """Bins of ``width`` from ``low`` to 1 (the last one holds 1.0): documents whose best
    resemblance (``best``) falls in each, of them the tagged ``duplicates``, and, with
    ``rule``, the share of pairs at the bin's lower edge the rule's keys propose for
    candidate queries (:func:`expected_recall`; the histogram's pairs come from more keys).

    >>> best = {"a": 0.62, "b": 0.97, "c": 1.0}
    >>> bins = resemblance_histogram(best, ["b", "c"], 0.8, 0.5, width=0.25)
    >>> [(b["from"], b["documents"], b["duplicates"]) for b in bins]
    [(0.5, 1, 0), (0.75, 2, 2)]
    """
    dup = set(duplicates)
    n = max(1, math.ceil((1 - low) / width - 1e-9))
    bins = [
        {
            "from": round(low + k * width, 6),
            "to": round(min(1.0, low + (k + 1) * width), 6),
            "documents": 0,
            "duplicates": 0,
            "below_threshold": low + (k + 1) * width <= threshold + 1e-9,
        }
        for k in range(n)
    ]
    for doc, r in best.items():
        if r < low:
            continue
        b = bins[min(n - 1, int((r - low) / width + 1e-9))]
        b["documents"] += 1
        b["duplicates"] += doc in dup
    if rule is not None:
        for b in bins:
            b["expected_recall"] = round(expected_recall(rule, max(b["from"], 1e-9)), 4)
    return bins


# -- search results ----------------------------------------------------------------------------
def fold_hits(hits: Sequence[Hit], group_of: Callable[[Hit], str]) -> list[Hit]:
    """Search hits (best first) with each group's later hits folded under its first: their ids
    go to the first hit's ``folded``.

    >>> hits = [Hit(id=i, score=1.0, title=None, snippet="") for i in "abc"]
    >>> [(h.id, h.folded) for h in fold_hits(hits, lambda h: "x" if h.id in "ac" else h.id)]
    [('a', ['c']), ('b', [])]
    """
    heads: dict[str, Hit] = {}
    for h in hits:
        g = group_of(h)
        if g in heads:
            heads[g].folded.append(h.id)
        else:
            heads[g] = h
    return list(heads.values())


def copies_among(
    hits: Sequence[Hit], docs: Mapping[str, StoredDoc], rule: CandidateRule, threshold: float
) -> Callable[[Hit], str]:
    """The group of each hit when near-duplicates among ``hits`` go together: connected
    components (:class:`UnionFind`) of the pairs the candidate rule proposes whose resemblance
    is >= ``threshold`` (``docs``: the stored documents of the hits, by id)."""
    uf = UnionFind()
    present = [h for h in hits if h.id in docs]
    for x, y in itertools.combinations(present, 2):
        sim = rule.verified(docs[x.id], docs[y.id], threshold)
        if sim is not None and sim.resemblance >= threshold:
            uf.union(x.id, y.id)
    return lambda h: uf.find(h.id)


# -- cluster records -----------------------------------------------------------------------------
def cluster_records(
    engine: Engine,
    rule: CandidateRule,
    threshold: float,
    *,
    connected: bool = False,
    min_size: int = 2,
) -> list[ClusterRecord]:
    """The clusters of the whole index at ``threshold``, largest first: the tags' clusters at
    the index's threshold (every document tagged), else the cluster rule over the verified
    pairs at ``threshold``, or with ``connected`` their connected components. A
    representative without a title takes the first line of its text (:func:`first_line`)."""
    rows = {r.id: r for r in engine.scan_tags()}
    out = records(_groups_at(engine, rule, rows, threshold, connected), rows, min_size)
    _title_from_text(engine, [c for c in out if not c.representative_title])
    return out


def _groups_at(
    engine: Engine,
    rule: CandidateRule,
    rows: Mapping[str, TagRow],
    threshold: float,
    connected: bool,
) -> dict[str, list[tuple[str, float]]]:
    """The groups of :func:`cluster_records` (``rows``: every document's tags, by id)."""
    untagged = any(r.tags is None for r in rows.values())
    if threshold == rule.config.threshold and not connected and not untagged:
        return groups_from_tags(rows.values())
    pairs, _ = verified_pairs(engine, rule, threshold)
    seq = {i: r.seq for i, r in rows.items()}
    pairs = [p for p in pairs if p.a in seq and p.b in seq]
    if connected:
        return groups_from_components(connected_components(pairs), pairs, seq)
    return groups_from_leaders(leader_clusters(pairs, seq, threshold))


def _title_from_text(engine: Engine, untitled: Sequence[ClusterRecord]) -> None:
    """Each of ``untitled`` takes the first line of its representative's text as its title."""
    if not untitled:
        return
    texts = engine.texts([c.representative_id for c in untitled])
    for c in untitled:
        text = texts.get(c.representative_id)
        c.representative_title = first_line(text) if text else None


def first_line(text: str, width: int = 80) -> str:
    """A display title for a document without one: its first non-empty line, shortened.

    >>> first_line("\\n  Apache License\\n Version 2.0")
    'Apache License'
    """
    head = text[:4096]  # most often the line is there: no need to split the whole text
    lines = head.splitlines()[: None if len(head) == len(text) else -1]  # (the last line may go on)
    line = next((ln.strip() for ln in lines if ln.strip()), None)
    if line is None:
        line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"
