"""The loops of :mod:`neardup.sketches.minhash`: one-permutation hashing, the minimum of each
bin and the densification of empty bins (:func:`neardup.sketches.minhash.oph_many`; Shrivastava
2017), checked against the reference in tests/test_batch.py.

This module is their interpreted form, the statement of each loop; the C module ``_minhash_loops``
beside it is their compiled form, built at install (:mod:`neardup.sketches.loops` chooses).
All arithmetic is on uint64 (wrapping) or int64, so both give the same values, bit for bit.
"""

from __future__ import annotations

import numpy as np

from .mixing import fmix64_inplace

#: :func:`neardup.sketches.hashing.fmix64` of one uint64 (numpy's wrapping arithmetic).
_fmix64 = fmix64_inplace


@np.errstate(over="ignore")  # uint64 products wrap, as in C
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


@np.errstate(over="ignore")  # uint64 products wrap, as in C
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
