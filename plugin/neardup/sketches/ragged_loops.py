"""The loop of :mod:`neardup.sketches.ragged`: each document's sorted distinct values
(:func:`neardup.sketches.ragged.segment_unique` with ``compiled``), checked against the sorts there.

This module is their interpreted form, the statement of each loop; the C module ``_ragged_loops``
beside it is their compiled form, built at install (:mod:`neardup.sketches.loops` chooses).
All arithmetic is on uint64 (wrapping) or int64, so both give the same values, bit for bit.
"""

from __future__ import annotations

import numpy as np


def segment_unique(values, offsets):
    """The sorted distinct values of each document ``values[offsets[d] : offsets[d + 1]]``
    (uint64; :func:`neardup.sketches.ragged.segment_unique`): (values, offsets). Each document's
    values are spread over 2^b buckets by their top b bits (2^b >= n: a counting sort), which
    leaves each at most its bucket away from its place, so an insertion sort finishes in
    about n steps for hashes (uniform: a bucket holds one value on average); a document
    whose values crowd into a bucket of more than 32 is sorted by comparisons. Then the
    repeats out."""
    n_docs = len(offsets) - 1
    out = np.empty(len(values), dtype=np.uint64)
    new_off = np.zeros(n_docs + 1, dtype=np.int64)
    longest = 0
    for d in range(n_docs):
        longest = max(longest, offsets[d + 1] - offsets[d])
    starts = np.empty(2 * longest + 2, dtype=np.int64)  # (2^b < 2n)
    k = 0
    for d in range(n_docs):
        lo, hi = offsets[d], offsets[d + 1]
        n = hi - lo
        seg = out[k : k + n]
        seg[:] = values[lo:hi]
        if n > 16:
            _bucketed(values[lo:hi], seg, starts)
        for i in range(1, n):  # insertion sort
            v = seg[i]
            j = i - 1
            while j >= 0 and seg[j] > v:
                seg[j + 1] = seg[j]
                j -= 1
            seg[j + 1] = v
        m = 0
        for i in range(n):
            seg[m] = seg[i]
            m += np.int64(i == 0 or seg[i] != seg[m - 1])
        k += m
        new_off[d + 1] = k
    return out[:k], new_off


def _bucketed(values, seg, starts):
    """``values`` into ``seg`` by their top b bits (2^b >= n; counts and starts in
    ``starts``), or sorted there where a bucket would hold more than 32."""
    n = len(values)
    b = 1
    while (1 << b) < n:
        b += 1
    shift = np.uint64(64 - b)
    starts[: (1 << b) + 1] = 0
    for i in range(n):
        starts[int(values[i] >> shift) + 1] += 1  # (int: uint64 + int is float in numpy 1)
    most = 0
    for j in range(1 << b):
        most = max(most, starts[j + 1])
        starts[j + 1] += starts[j]
    if most > 32:  # not hashes: a comparison sort
        seg.sort()
        return
    for i in range(n):
        j = values[i] >> shift
        seg[starts[j]] = values[i]
        starts[j] += 1
