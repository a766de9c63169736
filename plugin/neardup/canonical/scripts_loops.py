"""The loop of :mod:`neardup.canonical.scripts`: letters counted by script
(:func:`.scripts.detect_languages`), checked against :func:`.scripts.detect_language` in
tests/test_loops.py.

This module is their interpreted form, the statement of each loop; the C module ``_scripts_loops``
beside it is their compiled form, built at install (:mod:`neardup.sketches.loops` chooses).
All arithmetic is on uint64 (wrapping) or int64, so both give the same values, bit for bit.
"""

from __future__ import annotations

import numpy as np


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
