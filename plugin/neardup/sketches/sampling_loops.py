"""The loop of :mod:`neardup.sketches.sampling`: winnowing
(:func:`neardup.sketches.sampling.winnow_many`, Schleimer et al. 2003), checked against the plain
form in tests/test_batch.py.

This module is their interpreted form, the statement of each loop; the C module ``_sampling_loops``
beside it is their compiled form, built at install (:mod:`neardup.sketches.loops` chooses).
All arithmetic is on uint64 (wrapping) or int64, so both give the same values, bit for bit.
"""

from __future__ import annotations

import numpy as np


def winnow(seq, offsets, window):
    """Per document of ``seq`` (ragged): the positions of the rightmost minimum of every
    window of ``min(window, n)`` consecutive values, each recorded once; (positions, counts).
    The minimum of the window before stands while it is inside (the new value takes its
    place where it is not larger: it is further right); only a window whose minimum has just
    left is scanned (Schleimer, Wilkerson and Aiken 2003): about n + n/w * w steps, not n * w."""
    pos = np.empty(len(seq), dtype=np.int64)
    counts = np.zeros(len(offsets) - 1, dtype=np.int64)
    k = 0
    for d in range(len(offsets) - 1):
        lo, hi = offsets[d], offsets[d + 1]
        w = min(window, hi - lo)
        first, m = k, lo - 1
        for i in range(lo, hi - w + 1 if hi > lo else lo):
            e = i + w - 1  # the window's new value
            if m < i:  # its minimum left: the window scanned
                m = i
                for j in range(i + 1, i + w):
                    m = j if seq[j] <= seq[m] else m
            elif seq[e] <= seq[m]:
                m = e
            else:
                continue  # the same minimum, recorded
            pos[k] = m
            k += 1
        counts[d] = k - first
    return pos[:k].copy(), counts
