"""Compiled loop of :mod:`neardup.canonical.scripts`: letters counted by script
(:func:`.scripts.detect_languages`), checked against :func:`.scripts.detect_language` in
tests/test_kernels.py.

All arithmetic is on uint64 (wrapping, as numpy's) or int64, so the results are the same, bit
for bit, as the formulas they compute. Loaded on first use (:func:`neardup.sketches.loops.loops`),
in the compiled or the interpreted form.
"""

from __future__ import annotations

import numpy as np

from ..sketches.loops import njit_for

#: numba's ``njit``, or in this module's interpreted twin one that leaves each function as
#: written (:func:`neardup.sketches.loops.njit_for`).
njit = njit_for(globals())


@njit(cache=True, nogil=True)
def script_counts(cps, bounds, letter, script, sample, codes):
    """(D, codes): per text ``cps[bounds[d] : bounds[d + 1]]``, its first ``sample`` code
    points with ``letter`` set, counted by their ``script`` code (0 .. codes - 1)."""
    out = np.zeros((len(bounds) - 1, codes), dtype=np.int64)
    for d in range(len(bounds) - 1):
        if bounds[d + 1] - bounds[d] <= sample:  # every letter counts: no branch on letters
            for i in range(bounds[d], bounds[d + 1]):
                c = cps[i]
                out[d, script[c]] += np.int64(letter[c])
            continue
        need = sample
        for i in range(bounds[d], bounds[d + 1]):
            c = cps[i]
            if letter[c]:
                out[d, script[c]] += 1
                need -= 1
                if need == 0:
                    break
    return out
