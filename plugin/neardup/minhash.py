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

from functools import lru_cache

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
    >>> k = [MinHash.from_shingles(np.arange(lo, lo + 1000, dtype=np.uint64), 128, 1, "kperm") for lo in (0, 500)]
    >>> abs(k[0].jaccard(k[1]) - 1 / 3) <= 2 * (1 / 3 * 2 / 3 / 128) ** 0.5
    True
    """

    __slots__ = ("hashvalues", "seed", "scheme")

    def __init__(self, hashvalues: np.ndarray, seed: int, scheme: str):
        self.hashvalues = np.asarray(hashvalues, dtype=U64)
        self.seed = seed
        self.scheme = scheme

    @classmethod
    def from_shingles(cls, shingles: np.ndarray, num_perm: int = 128, seed: int = 1, scheme: str = "oph") -> "MinHash":
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
    """:func:`oph_sketch` of many documents at once (ragged input), as a (D, K) array: the
    minimum of each bin in one compiled pass (:func:`neardup.kernels.oph_bins`; bin =
    floor(h * K / 2^64) from the high 32 bits, Lemire's range reduction), then the empty
    bins of non-empty documents densified."""
    from . import kernels

    offsets = np.asarray(offsets, dtype=np.int64)
    out = kernels.oph_bins(np.asarray(shingles, dtype=U64), offsets, int(num_perm), np.uint64(seed))
    if len(shingles) == 0:
        return out
    return _densify_many(out, np.diff(offsets) > 0, seed)


def _densify_many(sketches: np.ndarray, nonempty: np.ndarray, seed: int) -> np.ndarray:
    """:func:`_densify` of every non-empty row: the first probes of all empty bins are looked
    up in one go; the few rows still holding an empty bin after them are densified alone."""
    filled = sketches != MAX64
    rows, bins = np.nonzero(~filled & nonempty[:, None])
    if len(rows) == 0:
        return sketches
    k = sketches.shape[1]
    table = _probe_table(k, seed)
    src = sketches.ravel().copy()
    out, full = sketches.ravel(), filled.ravel()  # flat views: one-dimensional gathers are cheaper
    base, cell = rows * k, rows * k + bins
    a = 0
    while len(cell) and a < _TABLE_PROBES:
        # many empty bins: one probe at a time (each fills a share filled/K of them); few: all probes at once
        width = 1 if len(cell) > 2048 else _TABLE_PROBES - a
        src_cell = base[:, None] + table[bins, a : a + width]
        hit = full[src_cell]
        first = hit.argmax(axis=1)
        ok = hit[np.arange(len(cell)), first]
        out[cell[ok]] = src[src_cell[ok, first[ok]]]
        keep = ~ok
        base, cell, bins, rows = base[keep], cell[keep], bins[keep], rows[keep]
        a += width
    for r in np.unique(rows):
        sketches[r] = _densify(src[r * k : (r + 1) * k].copy(), seed)
    return sketches


#: Probes per empty bin looked up in the precomputed table before probing further.
_TABLE_PROBES = 64


@lru_cache(maxsize=32)
def _probe_table(k: int, seed: int) -> np.ndarray:
    """Bins of probes 1.._TABLE_PROBES of every bin, (k, _TABLE_PROBES): they depend only on
    (k, seed), so each sketch only looks them up."""
    return _probe_bins(np.arange(k), 1, _TABLE_PROBES, k, seed).astype(np.int32)


def _probe_bins(bins: np.ndarray, first_attempt: int, n: int, k: int, seed: int) -> np.ndarray:
    """bin(fmix64(((e << 20) + a) XOR base)) for each bin e and a in [first_attempt, first_attempt + n)."""
    base = np.uint64(seed) ^ np.uint64(0xD1B54A32D192ED03)
    attempts = np.arange(first_attempt, first_attempt + n, dtype=U64)
    probe = fmix64(((bins.astype(U64) << np.uint64(20))[:, None] + attempts[None, :]) ^ base)
    return (((probe >> np.uint64(32)) * np.uint64(k)) >> np.uint64(32)).astype(np.intp)


def _densify(sketch: np.ndarray, seed: int) -> np.ndarray:
    """Fill each empty bin from the first filled bin on its probe sequence.

    Probe ``a`` (a = 1, 2, ...) of empty bin ``e`` is bin(fmix64(((e << 20) + a) XOR base)).
    The first probes come from a table per (K, seed), later ones are computed a block at a
    time; the result is the same as probing one attempt at a time.
    """
    k = len(sketch)
    filled = sketch != MAX64
    empty = np.flatnonzero(~filled)
    if len(empty) == 0:
        return sketch
    src = sketch.copy()
    j = _probe_table(k, seed)[empty]
    hit = filled[j]
    first = hit.argmax(axis=1)
    rows = np.arange(len(empty))
    any_hit = hit[rows, first]
    sketch[empty[any_hit]] = src[j[rows[any_hit], first[any_hit]]]
    empty = empty[~any_hit]
    n_filled = k - int(np.count_nonzero(~filled))
    # a probe hits a filled bin with probability n_filled / k: about 8 expected hits per row
    # per block, so one block nearly always fills every remaining bin
    block = int(min(256, max(8, 8 * k // n_filled)))
    first_attempt = _TABLE_PROBES + 1
    while len(empty):
        j = _probe_bins(empty, first_attempt, block, k, seed)
        hit = filled[j]
        any_hit = hit.any(axis=1)
        first = hit.argmax(axis=1)
        rows = np.flatnonzero(any_hit)
        sketch[empty[rows]] = src[j[rows, first[rows]]]
        empty = empty[~any_hit]
        first_attempt += block
    return sketch
