"""MinHash sketches of shingle sets (Broder 1997), numpy underneath.

For a random permutation pi of the hash space, Pr[min pi(A) = min pi(B)] = |A n B| / |A u B|,
so the share of equal components of two K-component sketches estimates resemblance with
standard error sqrt(J(1-J)/K).

Two schemes, both seeded and identical on every machine:

* ``kperm``: K independent permutations pi_k(x) = fmix64(x XOR s_k); O(n*K) per document.
  This is the textbook sketch of the source documents (84 functions, 70 functions, ...).
* ``oph`` (default): one-permutation hashing (Li, Owen & Zhang 2012) with optimal
  densification (Shrivastava 2017): one permutation, its range cut into K bins, the
  minimum per bin; an empty bin copies the value of the first non-empty bin on its own
  fixed pseudo-random probe sequence. O(n log n + K) per document, the same collision
  probability J for every component, and the scheme Elasticsearch's ``min_hash`` token
  filter uses.
"""

from __future__ import annotations

import numpy as np

from .hashing import MAX64, U64, derived_seeds, fmix64

_CHUNK = 4096


class MinHash:
    """A K-component MinHash sketch.

    >>> a = MinHash.from_shingles(np.arange(1000, dtype=np.uint64), 128, seed=1)
    >>> a.jaccard(a)
    1.0

    The share of equal components estimates J = |A n B| / |A u B| (here 1/3) within two
    standard errors sqrt(J(1-J)/K), under either scheme:

    >>> b = MinHash.from_shingles(np.arange(500, 1500, dtype=np.uint64), 128, seed=1)
    >>> abs(a.jaccard(b) - 1 / 3) <= 2 * (1 / 3 * 2 / 3 / 128) ** 0.5
    True
    >>> sets = [np.arange(lo, lo + 1000, dtype=np.uint64) for lo in (0, 500)]
    >>> k = [MinHash.from_shingles(s, 128, 1, "kperm") for s in sets]
    >>> abs(k[0].jaccard(k[1]) - 1 / 3) <= 2 * (1 / 3 * 2 / 3 / 128) ** 0.5
    True
    """

    __slots__ = ("hashvalues", "seed", "scheme")

    def __init__(self, hashvalues: np.ndarray, seed: int, scheme: str):
        self.hashvalues = np.asarray(hashvalues, dtype=U64)
        self.seed = seed
        self.scheme = scheme

    @classmethod
    def from_shingles(
        cls, shingles: np.ndarray, num_perm: int = 128, seed: int = 1, scheme: str = "oph"
    ) -> "MinHash":
        fn = oph_sketch if scheme == "oph" else kperm_sketch
        return cls(fn(np.asarray(shingles, dtype=U64), num_perm, seed), seed, scheme)

    def __len__(self) -> int:
        return len(self.hashvalues)

    def jaccard(self, other: "MinHash") -> float:
        """Share of equal components: an unbiased estimate of resemblance."""
        if (self.seed, self.scheme, len(self)) != (other.seed, other.scheme, len(other)):
            raise ValueError("sketches were made with different seeds, schemes or sizes")
        return float(np.count_nonzero(self.hashvalues == other.hashvalues)) / len(self)


def kperm_sketch(shingles: np.ndarray, num_perm: int, seed: int) -> np.ndarray:
    """min_x fmix64(x XOR s_k) for k < K, in chunks to bound memory."""
    out = np.full(num_perm, MAX64, dtype=U64)
    seeds = derived_seeds(seed, num_perm, b"perm")
    for i in range(0, len(shingles), _CHUNK):
        block = fmix64(shingles[i : i + _CHUNK, None] ^ seeds[None, :])
        np.minimum(out, block.min(axis=0), out=out)
    return out


def oph_sketch(shingles: np.ndarray, num_perm: int, seed: int) -> np.ndarray:
    """One-permutation hashing with optimal densification."""
    shingles = np.asarray(shingles, dtype=U64)
    return oph_many(shingles, np.array([0, len(shingles)], dtype=np.int64), num_perm, seed)[0]


def oph_many(shingles: np.ndarray, offsets: np.ndarray, num_perm: int, seed: int) -> np.ndarray:
    """:func:`oph_sketch` of many documents at once (ragged input), as a (D, K) array, in two
    compiled passes: the minimum of each bin (:func:`neardup.sketches.minhash_loops.oph_bins`;
    bin = floor(h * K / 2^64) from the high 32 bits, Lemire's range reduction), then optimal
    densification of each document with a shingle
    (:func:`neardup.sketches.minhash_loops.oph_densify`): empty bin e takes the value of the
    first bin filled among its probes bin(fmix64(((e << 20) + a) XOR base)), a = 1, 2, ..., base =
    seed XOR 0xD1B54A32D192ED03.

    >>> m = oph_many(np.arange(6, dtype=np.uint64), np.array([0, 2, 2, 6]), 8, seed=1)
    >>> m.shape, bool((m[1] == MAX64).all()), bool((m[[0, 2]] != MAX64).all())
    ((3, 8), True, True)
    """
    from .loops import loops

    minhash_loops = loops("neardup.sketches.minhash_loops")

    offsets = np.asarray(offsets, dtype=np.int64)
    out = minhash_loops.oph_bins(
        np.asarray(shingles, dtype=U64), offsets, int(num_perm), np.uint64(seed)
    )
    minhash_loops.oph_densify(out, np.uint64(seed) ^ _DENSIFY_SALT)
    return out


#: XOR-ed into the seed for the densification probes (a fixed odd constant).
_DENSIFY_SALT = np.uint64(0xD1B54A32D192ED03)
