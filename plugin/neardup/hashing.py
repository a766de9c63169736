"""64-bit hashing primitives shared by shingles and sketches, vectorized with numpy.

Strings are hashed once with xxHash64 (seeded); everything derived from them (shingles,
permutations, probes) is mixed with MurmurHash3's 64-bit finalizer ``fmix64``, a bijection
of the 64-bit space with full avalanche (Appleby 2011). Results are identical across
processes, machines and Python versions: no ``hash()``, no random module.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import xxhash

U64 = np.uint64
MAX64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_C1 = np.uint64(0xFF51AFD7ED558CCD)
_C2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)


def fmix64(x: np.ndarray) -> np.ndarray:
    """MurmurHash3 fmix64 on a uint64 array (returns a new array).

    >>> [hex(v) for v in fmix64(np.array([0, 1], dtype=np.uint64)).tolist()]
    ['0x0', '0xb456bcfc34c2cb2c']
    """
    x = np.asarray(x, dtype=U64)
    x = x ^ (x >> _S33)
    x = x * _C1
    x ^= x >> _S33
    x *= _C2
    x ^= x >> _S33
    return x


def _fmix64_inplace(x: np.ndarray) -> np.ndarray:
    """fmix64 overwriting ``x`` (a uint64 array the caller owns); returns ``x``."""
    x ^= x >> _S33
    x *= _C1
    x ^= x >> _S33
    x *= _C2
    x ^= x >> _S33
    return x


def hash_strings(strings, seed: int) -> np.ndarray:
    """xxh64 of each string (UTF-8), as uint64; each distinct string is hashed once.

    >>> h = hash_strings(["rose", "is", "rose"], seed=1)
    >>> bool(h[0] == h[2] != h[1]), int(h[0]) == xxhash.xxh64_intdigest("rose".encode(), 1)
    (True, True)
    """
    if not isinstance(strings, list):
        strings = list(strings)
    table = _string_hashes(seed)
    if len(table) > _CACHE_LIMIT:
        table.clear()
    return np.fromiter(map(table.__getitem__, strings), dtype=U64, count=len(strings))


class _StringHashes(dict):
    """string -> xxh64(string, seed), filled on first use."""

    def __init__(self, seed: int):
        super().__init__()
        self.seed = seed

    def __missing__(self, s: str) -> int:
        v = self[s] = xxhash.xxh64_intdigest(s.encode(), self.seed)
        return v


#: Distinct strings remembered per seed before the memo starts over.
_CACHE_LIMIT = 1 << 20


@lru_cache(maxsize=8)
def _string_hashes(seed: int) -> _StringHashes:
    return _StringHashes(seed)


def derived_seeds(seed: int, n: int, salt: bytes = b"") -> np.ndarray:
    """n independent 64-bit seeds derived from ``seed``: xxh64(salt + k, seed).

    >>> s = derived_seeds(1, 3, b"perm")
    >>> len(set(s.tolist())), int(s[2]) == xxhash.xxh64_intdigest(b"perm" + (2).to_bytes(4, "little"), 1)
    (3, True)
    """
    return np.fromiter((xxhash.xxh64_intdigest(salt + k.to_bytes(4, "little"), seed) for k in range(n)), dtype=U64, count=n)
