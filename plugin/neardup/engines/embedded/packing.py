"""The compiled loop that writes the embedded engine's keys column, a batch at a time
(:func:`neardup.engines.embedded.keycolumn.pack_keys_many`, the format stated there).

Its interpreted form (this module, the statement of the loop) and its compiled one (the C
module ``_packing`` beside it, built at install) run through
:func:`neardup.sketches.loops.loops`. Tags: 0 raw, 1 subset, 2 exact.
"""

from __future__ import annotations

import numpy as np


#: The tags of :mod:`~neardup.engines.embedded.keycolumn` (this module imports nothing of it).
RAW, SUBSET, EXACT = 0, 1, 2


def _subset_positions(values, lo, m, shingles, s_lo, n, at):
    """Whether ``values[lo : lo + m]`` is strictly increasing and all among the sorted
    ``shingles[s_lo : s_lo + n]``; their positions there into ``at`` (a merge walk)."""
    i = 0
    for j in range(m):
        v = values[lo + j]
        if j and v <= values[lo + j - 1]:
            return False
        while i < n and shingles[s_lo + i] < v:
            i += 1
        if i == n or shingles[s_lo + i] != v:
            return False
        at[j] = i
    return True


def _put_bitmap(out, pos, at, m, n):
    """The little-endian bitmap of the positions ``at[:m]`` among ``n`` shingles; the end."""
    for j in range(m):
        out[pos + at[j] // 8] |= np.uint8(1 << (at[j] % 8))
    return pos + (n + 7) // 8


def _put_raw(out, pos, values, lo, hi):
    """A varint count, then ``values[lo:hi]`` as little-endian uint64; the end."""
    c = hi - lo
    while c > 0x7F:
        out[pos] = (c & 0x7F) | 0x80
        c >>= 7
        pos += 1
    out[pos] = c
    pos += 1
    for j in range(lo, hi):
        v = values[j]
        for byte in range(8):
            out[pos] = np.uint8((v >> np.uint64(8 * byte)) & np.uint64(0xFF))
            pos += 1
    return pos


def pack_keys(values, offsets, shingles, shingle_offsets, exact, has_exact):
    """The keys column of each document d: per field f (its keys
    ``values[offsets[f, d] : offsets[f, d + 1]]``) a tag byte, then nothing for the one key
    that is the exact digest's (``exact[d]``, where ``has_exact[d]``); a little-endian bitmap
    over the document's sorted shingles (``shingles[shingle_offsets[d] :
    shingle_offsets[d + 1]]``) for strictly increasing keys that are all shingles, when
    shorter than 8 bytes a key; else a varint count and the keys as little-endian uint64.
    Returns (bytes, bounds of each document's)."""
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
                out[pos] = EXACT
                pos += 1
            elif (
                m > 0
                and (n + 7) // 8 < 8 * m
                and _subset_positions(values, lo, m, shingles, s_lo, n, at)
            ):
                out[pos] = SUBSET
                pos = _put_bitmap(out, pos + 1, at, m, n)
            else:
                out[pos] = RAW
                pos = _put_raw(out, pos + 1, values, lo, hi)
    bounds[n_docs] = pos
    return out[:pos].copy(), bounds
