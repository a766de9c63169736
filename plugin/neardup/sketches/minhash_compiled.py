"""Compiled loops of :mod:`neardup.sketches.minhash`: one-permutation hashing, the minimum of each
bin and the densification of empty bins (:func:`neardup.sketches.minhash.oph_many`; Shrivastava
2017), checked against the numpy formula in tests/test_kernels.py.

All arithmetic is on uint64 (wrapping, as numpy's) or int64, so the results are the same, bit
for bit, as the formulas they compute. Loaded on first use (:func:`neardup.sketches.loops.loops`),
in the compiled or the interpreted form.
"""

from __future__ import annotations

import numpy as np

from .loops import njit_for
from .mixing import fmix64_inplace

#: numba's ``njit``, or in this module's interpreted twin one that leaves each function as
#: written (:func:`neardup.sketches.loops.njit_for`).
njit = njit_for(globals())

#: :func:`neardup.sketches.hashing.fmix64` of one uint64: the numpy formula's own source, compiled.
_fmix64 = njit(cache=True, nogil=True, inline="always")(fmix64_inplace)


@njit(cache=True, nogil=True)
def oph_bins(shingles, offsets, num_perm, seed):
    """Per document: the minimum of h = fmix64(x xor seed) over its shingles x in each of the
    ``num_perm`` bins floor(h * K / 2^64) (taken from the high 32 bits); 2^64 - 1 where a
    bin is empty."""
    d = len(offsets) - 1
    out = np.full((d, num_perm), np.uint64(0xFFFFFFFFFFFFFFFF), dtype=np.uint64)
    k = np.uint64(num_perm)
    for doc in range(d):
        for i in range(offsets[doc], offsets[doc + 1]):
            h = _fmix64(shingles[i] ^ seed)
            b = ((h >> np.uint64(32)) * k) >> np.uint64(32)
            if h < out[doc, b]:
                out[doc, b] = h
    return out


@njit(cache=True, nogil=True)
def oph_densify(sketches, base):
    """Optimal densification (Shrivastava 2017) of each row of :func:`oph_bins` holding a
    filled bin, in place: empty bin e (2^64 - 1) takes the value of the first bin filled
    before densification among its probes bin(fmix64(((e << 20) + a) xor base)), a = 1, 2, ...
    (bin as in :func:`oph_bins`)."""
    empty = np.uint64(0xFFFFFFFFFFFFFFFF)
    d, num_perm = sketches.shape
    k = np.uint64(num_perm)
    src = np.empty(num_perm, dtype=np.uint64)
    for r in range(d):
        row = sketches[r]
        n_filled = 0
        for e in range(num_perm):
            src[e] = row[e]
            n_filled += row[e] != empty
        if n_filled == 0 or n_filled == num_perm:
            continue
        for e in range(num_perm):
            if src[e] != empty:
                continue
            a = np.uint64(1)
            while True:
                p = _fmix64(((np.uint64(e) << np.uint64(20)) + a) ^ base)
                b = ((p >> np.uint64(32)) * k) >> np.uint64(32)
                if src[b] != empty:
                    row[e] = src[b]
                    break
                a += np.uint64(1)
