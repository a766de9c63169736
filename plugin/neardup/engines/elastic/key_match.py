"""Candidate queries answered in memory, by the rule of the engine's candidate query.

An HTTP engine finds candidates with :func:`~neardup.engines.elastic.dsl.candidate_query`: a stored
document matches a :class:`~neardup.engines.base.CandidateQuery` when, for at least one key
group, it holds at least ``min_match`` of the group's distinct keywords (for positional fields,
``minhash`` and ``simhash``, a keyword is the pair (position, key): ``"i:hex"``), passes the
length range and the arrival-order and representative filters, and is not ``exclude_id``.
Its score is the number of keywords it shares within the groups it matches; hits come most
keys first, then by arrival. :class:`KeyMatcher` applies that rule to documents it holds:

* the documents a run stored itself, so that the engine is asked only about what was stored
  before (no refresh is needed between batches for the next batch's candidates); and
* the keys of the documents one request over a whole batch's keys returned, matched to each
  document of the batch here.

Postings are kept per (field, position) as sorted key arrays, one segment per :meth:`add`,
merged into one when there are more than :data:`MAX_SEGMENTS`; a query's keys are looked up
with :func:`numpy.searchsorted` in each. The postings of tagged representatives are kept
apart from the others', so a query for representatives alone (the cluster rule's) never reads
a member's: any number of copies of one text cost it the postings of one document.

>>> import numpy as np
>>> from neardup.engines.base import CandidateQuery, KeyGroup
>>> m = KeyMatcher()
>>> keys = lambda *k: {"minhash": np.array(k, dtype=np.uint64)}
>>> m.add([Entry(id="a", seq=1, n_shingles=10, simhash=0, keys=keys(1, 2, 3)),
...        Entry(id="b", seq=2, n_shingles=10, simhash=0, keys=keys(1, 9, 3))])
>>> q = CandidateQuery(groups=(KeyGroup("minhash", np.array([1, 2, 7], dtype=np.uint64), 2),))
>>> [(c.id, c.score, sorted(c.matched)) for c in m.candidates([q])[0]]
[('a', 2.0, ['minhash'])]
>>> q = CandidateQuery(groups=(KeyGroup("minhash", np.array([1, 9, 3], dtype=np.uint64), 1),))
>>> [(c.id, c.score) for c in m.candidates([q])[0]]  # most keys first, then by arrival
[('b', 3.0), ('a', 2.0)]
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Hashable, Mapping, Sequence

import numpy as np

from ...keys.encoding import POSITIONAL
from ..base import Candidate, CandidateQuery, Tags

#: Segments of one (field, position) before they are merged into one.
MAX_SEGMENTS = 8
#: Where a keyword matches: (field, position) for positional fields, (field, -1) for others.
Space = tuple[str, int]


@dataclass(kw_only=True)
class Entry:
    """What the matcher keeps of one document: its keys and what a candidate carries;
    ``shingle_key``: what a cache of shingle sets holds its set by, when one may (its
    candidates then carry no shingles, and the holder looks them up there)."""

    id: str
    seq: int
    n_shingles: int
    simhash: int
    keys: Mapping[str, np.ndarray]
    tags: Tags | None = None
    shingles: np.ndarray | None = None
    shingle_key: Hashable | None = None


@dataclass
class _Segment:
    keys: np.ndarray  # sorted uint64
    rows: np.ndarray  # int64, the row of each key


@dataclass
class KeyMatcher:
    """Documents by their signature keys; :meth:`candidates` answers candidate queries over
    them as the engine would (see the module docstring). A document added again replaces
    the one held (its old row no longer matches); :meth:`remove` drops one."""

    entries: list[Entry | None] = field(default_factory=list)
    _row_of: dict[str, int] = field(default_factory=dict)
    #: (representative?, (field, position)) -> segments
    _postings: dict[tuple[bool, Space], list[_Segment]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self._row_of)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._row_of

    def get(self, doc_id: str) -> Entry | None:
        row = self._row_of.get(doc_id)
        return None if row is None else self.entries[row]

    def add(self, entries: Sequence[Entry]) -> None:
        """Hold ``entries`` (a document held already is replaced)."""
        if not entries:
            return
        first = len(self.entries)
        for e in entries:
            self.remove(e.id)
            self._row_of[e.id] = len(self.entries)
            self.entries.append(e)
        for part, (keys, rows) in self._postings_from(first).items():
            self._insert(part, keys, rows)

    def _postings_from(self, first: int) -> dict[tuple[bool, Space], tuple[np.ndarray, np.ndarray]]:
        """The (keys, rows) of each (representative?, key space) of the entries held from row
        ``first`` on (:func:`by_space`)."""
        held = [
            (row, e)
            for row, e in enumerate(self.entries[first:], start=first)
            if e is not None and self._row_of.get(e.id) == row
        ]  # (an id given twice: the last one is held)
        out: dict[tuple[bool, Space], tuple[np.ndarray, np.ndarray]] = {}
        for rep in (True, False):
            per_field: dict[str, tuple[list[np.ndarray], list[int]]] = {}
            for row, e in held:
                if _representative(e) != rep:
                    continue
                for f, ks in e.keys.items():
                    keys, rows = per_field.setdefault(f, ([], []))
                    keys.append(np.asarray(ks, dtype=np.uint64).ravel())
                    rows.append(row)
            for f, (keys, rows) in per_field.items():
                for space, found in by_space(f, keys, rows).items():
                    out[(rep, space)] = found
        return out

    def _insert(self, part: tuple[bool, Space], k: np.ndarray, r: np.ndarray) -> None:
        """Add the postings (keys ``k``, rows ``r``) of ``part`` as a sorted segment; past
        :data:`MAX_SEGMENTS` segments, merged into one."""
        order = np.lexsort((r, k))
        segs = self._postings.setdefault(part, [])
        segs.append(_Segment(k[order], r[order]))
        if len(segs) > MAX_SEGMENTS:
            k = np.concatenate([s.keys for s in segs])
            r = np.concatenate([s.rows for s in segs])
            order = np.lexsort((r, k))
            self._postings[part] = [_Segment(k[order], r[order])]

    def remove(self, doc_id: str) -> None:
        """Stop matching ``doc_id`` (its postings stay, and are skipped)."""
        row = self._row_of.pop(doc_id, None)
        if row is not None:
            self.entries[row] = None

    def set_tags(self, doc_id: str, tags: Tags | None) -> None:
        """New tags of a held document; one that becomes or stops being a representative is
        held again, its postings with those of its new role."""
        e = self.get(doc_id)
        if e is None:
            return
        was = _representative(e)
        e.tags = tags
        if _representative(e) != was:
            self.add([dataclasses.replace(e)])

    def candidates(self, queries: Sequence[CandidateQuery]) -> list[list[Candidate]]:
        """The held documents each query matches, most keys first, then by ``seq``, at most
        ``limit`` of them."""
        out: list[list[Candidate]] = [[] for _ in queries]
        if not self._row_of or not queries:
            return out
        fields, needs, asked = _asked(queries)
        nf, nrows = len(fields), len(self.entries)
        code = self._shared(fields, asked, nrows, all(q.representatives for q in queries))
        if code is None:
            return out
        found = _matched(code, nf, nrows, needs)
        names = list(fields)
        for (qi, row), (score, matched) in found.items():
            e = self.entries[row]
            if e is not None and _passes(e, queries[qi]):
                out[qi].append(_candidate(e, score, frozenset(names[f] for f in matched)))
        for qi, hits in enumerate(out):
            hits.sort(key=lambda c: (-c.score, c.seq))
            del hits[queries[qi].limit :]
        return out

    def _shared(
        self,
        fields: dict[str, int],
        asked: dict[Space, tuple[np.ndarray, np.ndarray]],
        nrows: int,
        representatives: bool,
    ) -> np.ndarray | None:
        """One code ``(query * nrows + row) * fields + field`` per keyword a query shares with
        a held document (None: none shared); only with representatives when the queries ask
        for them alone."""
        codes = []
        nf = len(fields)
        for space, (k, qv) in asked.items():
            fid = fields[space[0]]
            parts = [(True, space)] if representatives else [(True, space), (False, space)]
            for s in (s for part in parts for s in self._postings.get(part, ())):
                lo = np.searchsorted(s.keys, k, "left")
                n = np.searchsorted(s.keys, k, "right") - lo
                total = int(n.sum())
                if total:
                    at = np.repeat(lo - np.cumsum(n) + n, n) + np.arange(total)
                    codes.append((np.repeat(qv, n) * nrows + s.rows[at]) * nf + fid)
        return np.concatenate(codes) if codes else None


def _matched(
    code: np.ndarray, nf: int, nrows: int, needs: dict[tuple[int, int], int]
) -> dict[tuple[int, int], tuple[float, set[int]]]:
    """For each (query, row) whose shared keywords (``code``, of :meth:`KeyMatcher._shared`)
    reach what some field needs: the keywords shared in those fields, and the fields."""
    codes, counts = np.unique(code, return_counts=True)
    found: dict[tuple[int, int], tuple[float, set[int]]] = {}
    pairs, fids = (codes // nf).tolist(), (codes % nf).tolist()
    for p, fi, c in zip(pairs, fids, counts.tolist(), strict=True):
        qi, row = divmod(p, nrows)
        if c >= needs[(qi, fi)]:
            score, matched = found.get((qi, row), (0.0, set()))
            matched.add(fi)
            found[(qi, row)] = (score + c, matched)
    return found


def _asked(
    queries: Sequence[CandidateQuery],
) -> tuple[dict[str, int], dict[tuple[int, int], int], dict[Space, tuple[np.ndarray, np.ndarray]]]:
    """The fields the queries name (numbered), what each (query, field) needs, and the
    distinct keys asked in each space with the query asking each (:func:`by_space`)."""
    fields: dict[str, int] = {}
    needs: dict[tuple[int, int], int] = {}
    per_field: dict[str, tuple[list[np.ndarray], list[int]]] = {}
    for qi, q in enumerate(queries):
        for g in q.groups:
            ks = np.asarray(g.keys, dtype=np.uint64).ravel()
            if not len(ks):
                continue
            fid = fields.setdefault(g.field, len(fields))
            needs[(qi, fid)] = int(g.min_match)
            keys, qs = per_field.setdefault(g.field, ([], []))
            keys.append(ks)
            qs.append(qi)
    asked: dict[Space, tuple[np.ndarray, np.ndarray]] = {}
    for f, (keys, qs) in per_field.items():
        asked.update(by_space(f, keys, qs))
    return fields, needs, asked


def _candidate(e: Entry, score: float, matched: frozenset[str]) -> Candidate:
    return Candidate(
        id=e.id,
        n_shingles=e.n_shingles,
        simhash=e.simhash,
        score=score,
        shingles=e.shingles,
        cluster_id=e.tags.cluster_id if e.tags is not None else None,
        matched=matched,
        seq=e.seq,
    )


def _spaces(field_name: str, keys: np.ndarray) -> list[tuple[Space, np.ndarray]]:
    """The keys of a field by the space they match in: one per position for positional
    fields (a keyword there is (position, key)), one for the others (distinct keys).

    >>> [(s, k.tolist()) for s, k in _spaces("minhash", np.array([7, 7], dtype=np.uint64))]
    [(('minhash', 0), [7]), (('minhash', 1), [7])]
    >>> [(s, k.tolist()) for s, k in _spaces("exact", np.array([7, 3, 7], dtype=np.uint64))]
    [(('exact', -1), [3, 7])]
    """
    if field_name in POSITIONAL:
        return [((field_name, i), keys[i : i + 1]) for i in range(len(keys))]
    return [((field_name, -1), np.unique(keys))]


def by_space_reference(
    field_name: str, keys: Sequence[np.ndarray], owners: Sequence[int]
) -> dict[Space, tuple[np.ndarray, np.ndarray]]:
    """The keys of field ``field_name`` of many documents (or queries), ``keys[j]`` owned
    by ``owners[j]``, by space (:func:`_spaces` of each in turn), each key with its owner:
    the readable form of :func:`by_space`.

    >>> got = by_space_reference("minhash", [np.array([5, 6], dtype=np.uint64),
    ...                                      np.array([5, 9], dtype=np.uint64)], [3, 8])
    >>> {s: (k.tolist(), o.tolist()) for s, (k, o) in got.items()}
    {('minhash', 0): ([5, 5], [3, 8]), ('minhash', 1): ([6, 9], [3, 8])}
    """
    out: dict[Space, tuple[list[np.ndarray], list[np.ndarray]]] = {}
    for ks, owner in zip(keys, owners, strict=True):
        if not len(ks):
            continue  # (no keys: no space)
        for space, kk in _spaces(field_name, ks):
            found, whose = out.setdefault(space, ([], []))
            found.append(kk)
            whose.append(np.full(len(kk), owner, dtype=np.int64))
    return {s: (np.concatenate(k), np.concatenate(o)) for s, (k, o) in out.items()}


def by_space(
    field_name: str, keys: Sequence[np.ndarray], owners: Sequence[int]
) -> dict[Space, tuple[np.ndarray, np.ndarray]]:
    """:func:`by_space_reference` in a few array operations over all the keys at once (the
    same arrays, in the same order): a positional field's keys grouped by their position
    (a stable sort keeps the owners' order), another field's made distinct within each
    owner's array (sorted by array, then key).

    >>> got = by_space("exact", [np.array([7, 3, 7], dtype=np.uint64),
    ...                          np.array([3], dtype=np.uint64)], [0, 4])
    >>> {s: (k.tolist(), o.tolist()) for s, (k, o) in got.items()}
    {('exact', -1): ([3, 7, 3], [0, 0, 4])}
    """
    lens = np.fromiter(map(len, keys), dtype=np.int64, count=len(keys))
    if not lens.sum():
        return {}
    k = np.concatenate(keys).astype(np.uint64, copy=False)
    whose = np.repeat(np.asarray(owners, dtype=np.int64), lens)
    if field_name not in POSITIONAL:
        array = np.repeat(np.arange(len(keys)), lens)
        order = np.lexsort((k, array))
        k, whose, array = k[order], whose[order], array[order]
        first = np.r_[True, (k[1:] != k[:-1]) | (array[1:] != array[:-1])]
        return {(field_name, -1): (k[first], whose[first])}
    at = np.arange(len(k)) - np.repeat(np.cumsum(lens) - lens, lens)
    order = np.argsort(at, kind="stable")
    k, whose, at = k[order], whose[order], at[order]
    bounds = np.r_[0, np.flatnonzero(at[1:] != at[:-1]) + 1, len(k)].tolist()
    return {
        (field_name, int(at[a])): (k[a:b], whose[a:b])
        for a, b in zip(bounds[:-1], bounds[1:], strict=True)
    }


def _representative(e: Entry) -> bool:
    """Whether a held document is a tagged representative."""
    return e.tags is not None and not e.tags.is_duplicate


def _passes(e: Entry, q: CandidateQuery) -> bool:
    """The filters of :func:`~neardup.engines.elastic.dsl.candidate_query` on one document."""
    if not (q.min_shingles <= e.n_shingles <= q.max_shingles):
        return False
    if q.exclude_id is not None and e.id == q.exclude_id:
        return False
    if q.before_seq is not None and not e.seq < q.before_seq:
        return False
    if q.after_seq is not None and not e.seq > q.after_seq:
        return False
    return not q.representatives or _representative(e)


def merged(local: Sequence[Candidate], remote: Sequence[Candidate], limit: int) -> list[Candidate]:
    """Hits from memory and from the engine as one answer: a document held in memory is
    taken from there (the engine may hold an older version of it), most keys first, then
    by ``seq``, at most ``limit``.

    >>> c = lambda i, s, q: Candidate(id=i, n_shingles=1, simhash=0, score=s, seq=q)
    >>> [x.id for x in merged([c("a", 2, 5)], [c("a", 9, 5), c("b", 2, 1)], 5)]
    ['b', 'a']
    """
    held = {c.id for c in local}
    out = list(local) + [c for c in remote if c.id not in held]
    out.sort(key=lambda c: (-c.score, c.seq))
    return out[:limit]
