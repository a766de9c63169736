"""The loops of :mod:`neardup.sketches.simhash`: the weighted bit votes of each document's
features (:func:`neardup.sketches.simhash.simhash_many`), checked against the numpy formula in
tests/test_batch.py.

This module is their interpreted form, the statement of each loop; the C module ``_simhash_loops``
beside it is their compiled form, built at install (:mod:`neardup.sketches.loops` chooses).
All arithmetic is on uint64 (wrapping) or int64, so both give the same values, bit for bit.
"""

from __future__ import annotations

import numpy as np


_BYTE_LSBS = np.uint64(0x0101010101010101)


def _votes(hashes, weights, lo, hi, sums, lanes):
    """The SimHash of ``hashes[lo:hi]``: bit b is set iff 2 * sum_i w_i * bit_b(h_i) > sum_i
    w_i (integer weights, so the sums are exact); ``sums`` is scratch space for 64 sums,
    ``lanes`` for 8 counters. The values of the first one's weight (tf = 1: most) are
    counted 8 bits at a time: ``lanes[j]`` holds in its byte k how many have bit 8k + j set
    (added to the sums, times the weight, before a byte can pass 255); the others bit by bit."""
    sums[:] = 0
    lanes[:] = 0
    total = 0
    common, counted = weights[lo], 0
    for i in range(lo, hi):
        w, h = weights[i], hashes[i]
        total += w
        if w != common:
            for b in range(64):
                sums[b] += w * np.int64((h >> np.uint64(b)) & np.uint64(1))
            continue
        for j in range(8):
            lanes[j] += (h >> np.uint64(j)) & _BYTE_LSBS
        counted += 1
        if counted == 255:
            _lanes_to_sums(lanes, common, sums)
            counted = 0
    _lanes_to_sums(lanes, common, sums)
    fp = np.uint64(0)
    for b in range(64):
        if 2 * sums[b] > total:
            fp |= np.uint64(1) << np.uint64(b)
    return fp


def _lanes_to_sums(lanes, weight, sums):
    """Byte k of ``lanes[j]`` times ``weight`` onto ``sums[8k + j]``; the lanes emptied."""
    for j in range(8):
        for k in range(8):
            sums[8 * k + j] += weight * np.int64((lanes[j] >> np.uint64(8 * k)) & np.uint64(0xFF))
    lanes[:] = 0


def simhash_votes(hashes, weights, offsets):
    """Per document: :func:`_votes` of its hashes and weights (0 for an empty document)."""
    d = len(offsets) - 1
    out = np.zeros(d, dtype=np.uint64)
    sums = np.zeros(64, dtype=np.int64)
    lanes = np.zeros(8, dtype=np.uint64)
    for doc in range(d):
        if offsets[doc + 1] > offsets[doc]:
            out[doc] = _votes(hashes, weights, offsets[doc], offsets[doc + 1], sums, lanes)
    return out


def _table_size(offsets):
    """The slots of :func:`tf_simhash`'s table: a power of two, at least 16 and twice the
    longest document."""
    longest = 0
    for doc in range(len(offsets) - 1):
        longest = max(longest, offsets[doc + 1] - offsets[doc])
    size = 16
    while size < 2 * longest:
        size *= 2
    return size


def tf_simhash(hashes, offsets, weight_of_tf):
    """:func:`simhash_votes` of each document's distinct values, the one seen tf times
    weighted ``weight_of_tf[tf]``: the counts come from an open-addressing table per
    document (slot = the hash's low bits, linear probing), so nothing is sorted."""
    d = len(offsets) - 1
    out = np.zeros(d, dtype=np.uint64)
    size = _table_size(offsets)
    keys = np.zeros(size, dtype=np.uint64)
    counts = np.zeros(size, dtype=np.int64)
    used = np.empty(size, dtype=np.int64)
    distinct = np.empty(size, dtype=np.uint64)
    weights = np.empty(size, dtype=np.int64)
    sums = np.zeros(64, dtype=np.int64)
    lanes = np.zeros(8, dtype=np.uint64)
    for doc in range(d):
        lo, hi = offsets[doc], offsets[doc + 1]
        if lo == hi:
            continue
        mask = np.uint64(16 - 1)
        while mask + np.uint64(1) < np.uint64(2 * (hi - lo)):
            mask = (mask << np.uint64(1)) | np.uint64(1)
        n_used = 0
        for i in range(lo, hi):
            h = hashes[i]
            slot = np.int64(h & mask)
            while counts[slot] != 0 and keys[slot] != h:
                slot = np.int64((np.uint64(slot) + np.uint64(1)) & mask)
            if counts[slot] == 0:
                keys[slot] = h
                used[n_used] = slot
                n_used += 1
            counts[slot] += 1
        for j in range(n_used):
            slot = used[j]
            distinct[j] = keys[slot]
            weights[j] = weight_of_tf[counts[slot]]
            counts[slot] = 0
        out[doc] = _votes(distinct, weights, 0, n_used, sums, lanes)
    return out
