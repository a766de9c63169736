"""Compiled loops of the embedded engine's storage: :func:`neardup.encoding.pack_keys_many`
(the keys column), checked against the plain form in tests/test_embedded.py.

The compiled loops of the signing steps live beside the rules they speed up, each module with
an interpreted twin (:mod:`neardup.loops`): :mod:`neardup.hashing_compiled` (the fmix64 chain of
runs and of shingle windows), :mod:`neardup.simhash_compiled`, :mod:`neardup.minhash_compiled`,
:mod:`neardup.sampling_compiled`, :mod:`neardup.ragged_compiled`,
:mod:`neardup.canonical.letters_compiled` (token hashes, stop words, per-code-point maps and
flags), :mod:`neardup.canonical.scripts_compiled` and :mod:`neardup.canonical.persian_compiled`
(the Persian pass). Loaded on first use, so commands that sign nothing never load numba.
"""

from __future__ import annotations

import numpy as np

from .loops import njit_for

#: numba's ``njit``, or in this module's interpreted twin one that leaves each function as
#: written (:func:`neardup.loops.njit_for`).
njit = njit_for(globals())


@njit(cache=True, nogil=True)
def pack_keys(values, offsets, shingles, shingle_offsets, exact, has_exact):
    """The keys column of each document d (:func:`neardup.encoding.pack_keys`): per field f
    (its keys ``values[offsets[f, d] : offsets[f, d + 1]]``) a tag byte, then nothing for
    the one key that is the exact digest's (``exact[d]``, where ``has_exact[d]``); a
    little-endian bitmap over the document's sorted shingles
    (``shingles[shingle_offsets[d] : shingle_offsets[d + 1]]``) for strictly increasing keys
    that are all shingles, when shorter than 8 bytes a key; else a varint count and the keys
    as little-endian uint64. Returns (bytes, bounds of each document's)."""
    n_fields, n_docs = offsets.shape[0], len(shingle_offsets) - 1
    cap = n_fields * n_docs * 11 + 8 * len(values) + n_fields * (len(shingles) // 8 + n_docs)
    out = np.zeros(cap, dtype=np.uint8)
    bounds = np.empty(n_docs + 1, dtype=np.int64)
    at = np.empty(len(values) + 1, dtype=np.int64)
    pos = 0
    for d in range(n_docs):
        bounds[d] = pos
        s_lo = shingle_offsets[d]
        n = shingle_offsets[d + 1] - s_lo
        for f in range(n_fields):
            lo, hi = offsets[f, d], offsets[f, d + 1]
            m = hi - lo
            if m == 1 and has_exact[d] and values[lo] == exact[d]:
                out[pos] = 2  # the tags of neardup.encoding: 0 raw, 1 subset, 2 exact
                pos += 1
                continue
            subset = m > 0 and (n + 7) // 8 < 8 * m
            i = 0
            for j in range(m):  # a merge walk: where each key stands among the shingles
                if not subset:
                    break
                v = values[lo + j]
                if j and v <= values[lo + j - 1]:
                    subset = False
                    break
                while i < n and shingles[s_lo + i] < v:
                    i += 1
                if i == n or shingles[s_lo + i] != v:
                    subset = False
                    break
                at[j] = i
            if subset:
                out[pos] = 1
                pos += 1
                for j in range(m):
                    out[pos + at[j] // 8] |= np.uint8(1 << (at[j] % 8))
                pos += (n + 7) // 8
                continue
            out[pos] = 0
            pos += 1
            c = m
            while True:  # varint
                b = c & 0x7F
                c >>= 7
                if c:
                    out[pos] = b | 0x80
                    pos += 1
                else:
                    out[pos] = b
                    pos += 1
                    break
            for j in range(lo, hi):
                v = values[j]
                for byte in range(8):
                    out[pos] = np.uint8((v >> np.uint64(8 * byte)) & np.uint64(0xFF))
                    pos += 1
    bounds[n_docs] = pos
    return out[:pos].copy(), bounds
