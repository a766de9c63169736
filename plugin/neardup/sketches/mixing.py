"""neardup's 64-bit mixing, shared by the numpy formulas (:mod:`neardup.sketches.hashing`) and the
loops (the ``*_loops`` modules, whose interpreted form runs :func:`fmix64_inplace` on one uint64;
their compiled form is its C translation).

``fmix64`` is MurmurHash3's 64-bit finalizer (Appleby 2011): x ^= x >> 33; x *= C1;
x ^= x >> 33; x *= C2; x ^= x >> 33. ``GOLDEN`` = 2^64 / golden ratio (odd), the multiplier
of the chain of :func:`neardup.sketches.hashing.hash_runs`.

>>> hex(int(GOLDEN)), int(S33)
('0x9e3779b97f4a7c15', 33)
"""

import numpy as np

C1 = np.uint64(0xFF51AFD7ED558CCD)
C2 = np.uint64(0xC4CEB9FE1A85EC53)
S33 = np.uint64(33)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def fmix64_inplace(x):
    """fmix64 overwriting ``x`` (a uint64 array the caller owns; or one uint64, in the
    ``*_loops`` modules); returns ``x``."""
    x ^= x >> S33
    x *= C1
    x ^= x >> S33
    x *= C2
    x ^= x >> S33
    return x
