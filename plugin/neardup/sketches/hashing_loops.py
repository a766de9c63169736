"""The loops of :mod:`neardup.sketches.hashing` and :mod:`neardup.sketches.shingles`: the
fmix64 chain of each run of units (:func:`neardup.sketches.hashing.hash_runs`) and of every window
of token hashes (:func:`neardup.sketches.shingles.combine_many`), checked against the formulas in
tests/test_loops.py and tests/test_batch.py.

This module is their interpreted form, the statement of each loop; the C module ``_hashing_loops``
beside it is their compiled form, built at install (:mod:`neardup.sketches.loops` chooses).
All arithmetic is on uint64 (wrapping) or int64, so both give the same values, bit for bit.
"""

from __future__ import annotations

import numpy as np

from .mixing import GOLDEN, fmix64_inplace

#: :func:`neardup.sketches.hashing.fmix64` of one uint64 (numpy's wrapping arithmetic).
_fmix64 = fmix64_inplace


def _run_hash(units, s, n, seed, size):
    """h = fmix64(a_n xor size), a_1 = u_0 xor seed, a_{j+1} = fmix64(a_j * C + u_j), of
    the run ``units[s : s + n]`` (n >= 1)."""
    acc = np.uint64(units[s]) ^ seed
    for j in range(s + 1, s + n):
        acc = _fmix64(acc * GOLDEN + np.uint64(units[j]))
    return _fmix64(acc ^ size)


@np.errstate(over="ignore")  # uint64 products wrap, as in C
def hash_runs(units, starts, lengths, sizes, seed):
    """:func:`_run_hash` of each run ``units[s : s + n]`` (n >= 1)."""
    out = np.empty(len(starts), dtype=np.uint64)
    for r in range(len(starts)):
        out[r] = _run_hash(units, starts[r], lengths[r], seed, np.uint64(sizes[r]))
    return out


@np.errstate(over="ignore")  # uint64 products wrap, as in C
def window_hashes(units, offsets, widths):
    """:func:`hash_runs` (seed 0, size = length) of every window of ``widths[d]`` consecutive
    units of each document ``units[offsets[d] : offsets[d + 1]]`` (one window of all its n
    units where n < widths[d], none where n = 0): (hashes, their offsets)."""
    n_docs = len(offsets) - 1
    out_off = np.zeros(n_docs + 1, dtype=np.int64)
    for d in range(n_docs):
        n = offsets[d + 1] - offsets[d]
        out_off[d + 1] = out_off[d] + (n - min(n, widths[d]) + 1 if n > 0 else 0)
    out = np.empty(out_off[n_docs], dtype=np.uint64)
    for d in range(n_docs):
        width = min(offsets[d + 1] - offsets[d], widths[d])
        size = np.uint64(width)
        m = out_off[d + 1] - out_off[d]
        r = 0
        while r + 4 <= m:  # four windows at a time: their chains interleave
            s = offsets[d] + r
            a0, a1, a2, a3 = (
                np.uint64(units[s]),
                np.uint64(units[s + 1]),
                np.uint64(units[s + 2]),
                np.uint64(units[s + 3]),
            )
            for j in range(s + 1, s + width):
                a0 = _fmix64(a0 * GOLDEN + np.uint64(units[j]))
                a1 = _fmix64(a1 * GOLDEN + np.uint64(units[j + 1]))
                a2 = _fmix64(a2 * GOLDEN + np.uint64(units[j + 2]))
                a3 = _fmix64(a3 * GOLDEN + np.uint64(units[j + 3]))
            o = out_off[d] + r
            out[o], out[o + 1], out[o + 2], out[o + 3] = (
                _fmix64(a0 ^ size),
                _fmix64(a1 ^ size),
                _fmix64(a2 ^ size),
                _fmix64(a3 ^ size),
            )
            r += 4
        for q in range(r, m):  # the rest one at a time
            out[out_off[d] + q] = _run_hash(units, offsets[d] + q, width, np.uint64(0), size)
    return out, out_off
