"""Ragged arrays: the values of many documents concatenated in one numpy array, with
``offsets`` (length D + 1) marking where each document's values start and end.

Signing a batch this way runs every stage as a handful of numpy calls over all documents
instead of a handful per document, which is what makes batch signing cheap.

>>> values, offsets = np.array([3, 1, 3, 2, 2, 7], dtype=np.uint64), offsets_of([3, 3])
>>> [v.tolist() for v in split(values, offsets)]
[[3, 1, 3], [2, 2, 7]]
>>> distinct, new_offsets = segment_unique(values, offsets)
>>> [v.tolist() for v in split(distinct, new_offsets)]
[[1, 3], [2, 7]]
"""

from __future__ import annotations

import itertools

import numpy as np

from .hashing import U64


def offsets_of(lengths) -> np.ndarray:
    """[0, l0, l0+l1, ...] as int64.

    >>> offsets_of([2, 0, 3]).tolist()
    [0, 2, 2, 5]
    """
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def segment_ids(offsets: np.ndarray) -> np.ndarray:
    """The document number of every value.

    >>> segment_ids(np.array([0, 2, 2, 5])).tolist()
    [0, 0, 2, 2, 2]
    """
    return np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets))


def row_positions(offsets: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Where the values of ``rows`` (in that order, repeats allowed) lie: ``values[out]`` is
    their concatenation.

    >>> row_positions(np.array([0, 2, 2, 5]), np.array([2, 0, 1, 2])).tolist()
    [2, 3, 4, 0, 1, 2, 3, 4]
    """
    rows = np.asarray(rows, dtype=np.int64)
    size = offsets[rows + 1] - offsets[rows]
    first = np.cumsum(size) - size  # where each row's values start in the output
    return np.repeat(offsets[rows] - first, size) + np.arange(int(size.sum()), dtype=np.int64)


def split(values: np.ndarray, offsets: np.ndarray) -> list[np.ndarray]:
    """One view per document."""
    return [values[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]


def join(arrays, dtype=U64) -> tuple[np.ndarray, np.ndarray]:
    """The inverse of :func:`split`: one array per document (each flattened) as ``(values,
    offsets)``.

    >>> values, offsets = join([[3, 1], [], [2]])
    >>> values.tolist(), offsets.tolist()
    ([3, 1, 2], [0, 2, 2, 3])
    """
    arrays = [np.asarray(a, dtype=dtype).ravel() for a in arrays]
    return (np.concatenate(arrays) if arrays else np.empty(0, dtype=dtype)), offsets_of(
        [len(a) for a in arrays]
    )


def segment_sort(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """uint64 values sorted within each document (documents stay in order).

    Documents of 64 values or more on average are sorted one by one, in place in a copy
    (small sorts stay in cache). Otherwise one argsort of ``doc << (64 - b) | value >> b``
    (b bits for the document number) orders every document by the top 64 - b bits of its
    values; the rare documents holding two values that agree on those bits are re-sorted on
    their own.

    >>> segment_sort(np.array([3, 1, 2, 9, 7], dtype=np.uint64), np.array([0, 3, 5])).tolist()
    [1, 2, 3, 7, 9]
    """
    values = np.asarray(values, dtype=U64)
    d = len(offsets) - 1
    if d <= 1:
        return np.sort(values)
    if len(values) >= 64 * d:
        out = values.copy()
        bounds = np.asarray(offsets).tolist()
        for lo, hi in itertools.pairwise(bounds):
            out[lo:hi].sort()
        return out
    b = np.uint64(max(1, int(d - 1).bit_length()))
    key = (segment_ids(offsets).astype(U64) << (np.uint64(64) - b)) | (values >> b)
    order = np.argsort(key, kind="stable")
    out = values[order]
    ks = key[order]
    ties = np.flatnonzero(ks[1:] == ks[:-1])
    if len(ties):
        for doc in np.unique(np.searchsorted(offsets, ties, side="right") - 1):
            lo, hi = offsets[doc], offsets[doc + 1]
            out[lo:hi] = np.sort(out[lo:hi])
    return out


def segment_unique(
    values: np.ndarray, offsets: np.ndarray, return_counts: bool = False, compiled: bool = False
):
    """Sorted distinct values of each document: ``(values, offsets[, counts])``.
    ``compiled``: by one compiled pass over all documents, where the compiled loops run
    (:func:`neardup.sketches.loops.compiled`; :func:`neardup.sketches.ragged_loops.segment_unique`,
    without counts), about four times as fast on shingle hashes as the sorts here (which are
    faster than the loop interpreted).

    >>> v, o = np.array([3, 1, 3, 9, 2], dtype=np.uint64), offsets_of([3, 0, 2])
    >>> plain = [x.tolist() for x in segment_unique(v, o)]
    >>> fast = [x.tolist() for x in segment_unique(v, o, compiled=True)]
    >>> plain == fast == [[1, 3, 2, 9], [0, 2, 2, 4]]
    True
    """
    from .loops import compiled as compiled_loops

    ragged_loops = compiled_loops("neardup.sketches.ragged_loops") if compiled else None
    if ragged_loops is not None and not return_counts:
        return ragged_loops.segment_unique(
            np.asarray(values, dtype=U64), np.asarray(offsets, dtype=np.int64)
        )
    s = segment_sort(values, offsets)
    n = len(s)
    keep = np.ones(n, dtype=bool)
    if n:
        np.not_equal(s[1:], s[:-1], out=keep[1:])
        starts = offsets[:-1][np.diff(offsets) > 0]
        keep[starts] = (
            True  # a document's first value even if it equals the previous document's last
        )
    idx = np.flatnonzero(keep)
    new_off = np.searchsorted(idx, offsets).astype(np.int64)
    if not return_counts:
        return s[idx], new_off
    counts = np.diff(np.append(idx, n))
    return s[idx], new_off, counts


def pairs_sharing(
    values: np.ndarray, offsets: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair of documents ``i < j`` that share a value, and how many distinct values
    they share: ``(i, j, shared)``, sorted by (i, j). Each group of documents holding one
    value gives its g(g-1)/2 pairs (see :func:`pair_count` for the total before they are made).

    >>> i, j, n = pairs_sharing(np.array([5, 6, 7, 6, 5, 5, 9, 6, 6]), offsets_of([3, 3, 3]))
    >>> list(zip(i.tolist(), j.tolist(), n.tolist()))
    [(0, 1, 2), (0, 2, 1), (1, 2, 1)]
    """
    val, doc = _value_groups(values, offsets)
    size, first = _group_sizes(val)
    # same-value entries after each one
    after = np.repeat(first + size, size) - np.arange(len(val)) - 1
    left = np.repeat(np.arange(len(val)), after)
    right = left + 1 + np.arange(len(left)) - np.repeat(np.cumsum(after) - after, after)
    n = len(offsets) - 1
    codes, shared = np.unique(doc[left] * n + doc[right], return_counts=True)
    return codes // n, codes % n, shared


def pair_count(values: np.ndarray, offsets: np.ndarray) -> tuple[int, int]:
    """The pairs :func:`pairs_sharing` makes before counting them (sum of g(g-1)/2 over the
    values' groups), and the largest group."""
    size, _ = _group_sizes(_value_groups(values, offsets)[0])
    return int((size * (size - 1) // 2).sum()), int(size.max(initial=0))


def _value_groups(values: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (value, document) entries, sorted by value, then document."""
    val, off = segment_unique(np.asarray(values), np.asarray(offsets, dtype=np.int64))
    doc = segment_ids(off)
    order = np.argsort(val, kind="stable")  # documents stay in order within a value
    return val[order], doc[order]


def _group_sizes(sorted_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sizes and first positions of the runs of equal values."""
    starts = (
        np.flatnonzero(np.concatenate(([True], sorted_values[1:] != sorted_values[:-1])))
        if len(sorted_values)
        else np.empty(0, dtype=np.int64)
    )
    return np.diff(np.append(starts, len(sorted_values))), starts
