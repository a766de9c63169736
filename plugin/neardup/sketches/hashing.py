"""64-bit hashing primitives shared by tokens, shingles and sketches, vectorized with numpy.

Every hash is built from MurmurHash3's 64-bit finalizer ``fmix64``, a bijection of the
64-bit space with full avalanche (Appleby 2011), chained over runs of units
(:func:`hash_runs`): a string is the run of its code points, a shingle the run of its
token hashes. A batch of strings is hashed with a handful of numpy calls over all their code
points, never one call per string. Results are identical across processes, machines and
Python versions: no ``hash()``, no random module.
"""

from __future__ import annotations

import numpy as np
import xxhash

from .mixing import fmix64_inplace as _fmix64_inplace

U64 = np.uint64
MAX64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def fmix64(x: np.ndarray) -> np.ndarray:
    """MurmurHash3 fmix64 on a uint64 array (returns a new array).

    >>> [hex(v) for v in fmix64(np.array([0, 1], dtype=np.uint64)).tolist()]
    ['0x0', '0xb456bcfc34c2cb2c']
    """
    return _fmix64_inplace(np.array(x, dtype=U64))  # (a copy)


def hash_runs(
    units: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    seed: int = 0,
    sizes: np.ndarray | None = None,
) -> np.ndarray:
    """The hash of each run ``units[s : s + n]`` (``starts`` s, ``lengths`` n >= 1), as uint64:

        a_1 = u_0 xor seed,   a_{j+1} = fmix64(a_j * C + u_j),   h = fmix64(a_n xor size)

    with C = :data:`neardup.sketches.mixing.GOLDEN` and size = n unless ``sizes`` gives it; the hash
    depends on the order of the units and on the size. One compiled pass over the runs
    (:func:`neardup.sketches.hashing_loops.hash_runs`): about 4 ns a unit.

    >>> u = np.array([7, 8, 9], dtype=np.uint64)
    >>> h = hash_runs(u, np.array([0, 1, 0]), np.array([2, 2, 3]))
    >>> len(set(h.tolist())), bool(h[0] == hash_runs(u[:2], np.array([0]), np.array([2]))[0])
    (3, True)
    """
    from .loops import loops

    hashing_loops = loops("neardup.sketches.hashing_loops")

    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    size = lengths if sizes is None else np.asarray(sizes, dtype=np.int64)
    if len(starts) and (
        int(lengths.min()) < 1
        or int(starts.min()) < 0
        or int((starts + lengths).max()) > len(units)
    ):
        raise ValueError("every run must hold at least one unit and lie within the units")
    return hashing_loops.hash_runs(np.asarray(units), starts, lengths, size, np.uint64(seed))


def code_points(text: str) -> np.ndarray:
    """The code points of ``text`` as uint32 (one C-level encode; lone surrogates kept).

    >>> code_points("a\u00e9").tolist()
    [97, 233]
    """
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")


def string_seed(seed: int) -> int:
    """The value a string hash starts from: ``fmix64(seed + 1)`` (never 0, spread over 64 bits)."""
    return int(fmix64(np.array([seed + 1], dtype=U64))[0])


def hash_code_point_runs(
    cps: np.ndarray, starts: np.ndarray, lengths: np.ndarray, seed: int
) -> np.ndarray:
    """The string hash of each run ``cps[s : s + n]`` of code points (n >= 1):
    :func:`hash_runs` over the code points from :func:`string_seed`. A token of a text
    hashes here straight from the text's code points, the same as :func:`hash_strings` of
    the token as a string.

    >>> cps = code_points("a rose is")
    >>> h = hash_code_point_runs(cps, np.array([2, 7]), np.array([4, 2]), 1)
    >>> h.tolist() == hash_strings(["rose", "is"], 1).tolist()
    True
    """
    return hash_runs(cps, starts, lengths, string_seed(seed))


def hash_strings(strings, seed: int) -> np.ndarray:
    """The hash of each string: :func:`hash_code_point_runs` over its code points (an empty
    string hashes to ``fmix64(string_seed(seed))``, the empty run of size 0).

    >>> h = hash_strings(["rose", "is", "rose", ""], seed=1)
    >>> bool(h[0] == h[2] != h[1]), len(set(h.tolist()))
    (True, 3)
    """
    if not isinstance(strings, list):
        strings = list(strings)
    lengths = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    out = np.empty(len(strings), dtype=U64)
    full = lengths > 0
    if full.any():
        starts = np.zeros(len(strings), dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        out[full] = hash_code_point_runs(
            code_points("".join(strings)), starts[full], lengths[full], seed
        )
    if not full.all():
        out[~full] = fmix64(np.array([string_seed(seed)], dtype=U64))[0]
    return out


def derived_seeds(seed: int, n: int, salt: bytes = b"") -> np.ndarray:
    """n independent 64-bit seeds derived from ``seed``: xxh64(salt + k, seed).

    >>> s = derived_seeds(1, 3, b"perm")
    >>> third = xxhash.xxh64_intdigest(b"perm" + (2).to_bytes(4, "little"), 1)
    >>> len(set(s.tolist())), int(s[2]) == third
    (3, True)
    """
    return np.fromiter(
        (xxhash.xxh64_intdigest(salt + k.to_bytes(4, "little"), seed) for k in range(n)),
        dtype=U64,
        count=n,
    )


class KeySet:
    """A fixed set of uint64 hashes: its sorted members, searched by :meth:`contains`, and
    the same members in an open-addressing table with linear probing (Knuth, TAOCP 6.4,
    Algorithm L) for compiled lookups (:attr:`probing`, read by
    :func:`neardup.canonical.letters_loops.kept_tokens`): 2^b >= 4n slots, each member at the
    first free slot from ``h & (2^b - 1)``, the free ones holding ``empty``, the least value that
    is not a member. A few KB for a stop list, so lookups stay in the CPU cache.

    >>> s = KeySet(np.array([5, 2**63, 8], dtype=np.uint64))
    >>> s.contains(np.array([8, 6, 0, 2**63], dtype=np.uint64)).tolist()
    [True, False, False, True]
    >>> table, empty = s.probing
    >>> len(table), empty, table[5].tolist(), table[8].tolist()
    (16, 0, 5, 8)
    """

    def __init__(self, keys: np.ndarray):
        members = set(np.asarray(keys, dtype=U64).tolist())
        # the sorted distinct members, made without np.unique: its first call imports
        # numpy.ma (~10 ms), which a query that only drops stop words never needs
        self.keys = np.array(sorted(members), dtype=U64)
        empty = 0
        while empty in members:
            empty += 1
        table = np.full(1 << max(2, (4 * len(members)).bit_length()), empty, dtype=U64)
        mask = len(table) - 1
        for h in self.keys.tolist():
            j = h & mask
            while int(table[j]) != empty:
                j = (j + 1) & mask
            table[j] = h
        self.probing: tuple[np.ndarray, int] = (table, empty)

    def __len__(self) -> int:
        return len(self.keys)

    def contains(self, values: np.ndarray) -> np.ndarray:
        """For each value: is it a member (bool array)."""
        values = np.asarray(values, dtype=U64)
        if not len(self.keys):
            return np.zeros(len(values), dtype=bool)
        at = np.minimum(np.searchsorted(self.keys, values), len(self.keys) - 1)
        return self.keys[at] == values
