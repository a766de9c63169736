"""SimHash (Charikar 2002): a 64-bit fingerprint whose Hamming distance tracks cosine distance.

For weighted features (x_i, w_i) with 64-bit hashes h(x_i), bit j of the fingerprint is
1 iff sum_i w_i * (2*bit_j(h(x_i)) - 1) > 0. Features here are the canonical tokens with
weight 1 + ln(tf).

Near-duplicates differ in at most k bits (Manku, Jain & Das Sarma 2007: 64 bits, k = 3).
Cutting the 64 bits into k + j blocks, two fingerprints within distance k differ in at most k
blocks, so they agree on at least j whole blocks (pigeonhole), and one exact term match per
j-subset of the blocks finds every such pair: C(k + j, j) keys of about 64 j / (k + j) bits
each. j = 1 (k + 1 = 4 blocks of 16 bits, signature versions up to 5) is Manku's first
table; at 100,000 documents a 16-bit key is shared by chance by about 1.5 other documents
each, and far more where fingerprints cluster (documents of one language and subject), so
those keys proposed most of the candidates, to be dropped by the full distance test.
Signature version 6 keys pairs of blocks (j = 2): 5 blocks of 13 or 12 bits, 10 keys of 25 or
26 bits (:func:`agreeing_blocks`).
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from .hashing import U64, fmix64

BITS = 64
_SCALE = float(1 << 20)


def simhash(hashes: np.ndarray, weights: np.ndarray | None = None) -> int:
    """64-bit SimHash of feature hashes with optional weights (default 1): bit j is the
    weighted majority vote of the features' bit j.

    >>> bin(simhash(np.array([0b1100, 0b1010, 0b1001], dtype=np.uint64)))
    '0b1000'
    >>> bin(simhash(np.array([0b1100, 0b1010, 0b1001], dtype=np.uint64), np.array([1.0, 3.0, 1.0])))
    '0b1010'
    """
    hashes = np.asarray(hashes, dtype=U64)
    w = np.ones(len(hashes)) if weights is None else np.asarray(weights, dtype=np.float64)
    return int(simhash_many(hashes, w, np.array([0, len(hashes)], dtype=np.int64))[0])


def simhash_many(hashes: np.ndarray, weights: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """SimHash of many documents at once (ragged features): uint64 array, one per document.

    Bit j is set iff 2 * sum_i w_i * bit_j(h_i) > W with W = sum_i w_i, the sign rule above.
    Weights are rounded to multiples of 2^-20 and summed as integers, so every sum is exact
    whatever the order, and a tie (bit 0) never depends on the batch a document is signed
    in. One compiled pass over the features
    (:func:`neardup.sketches.simhash_loops.simhash_votes`).
    """
    from .loops import loops

    simhash_loops = loops("neardup.sketches.simhash_loops")

    return simhash_loops.simhash_votes(
        np.asarray(hashes, dtype=U64),
        _integer_weights(weights),
        np.asarray(offsets, dtype=np.int64),
    )


def _integer_weights(weights) -> np.ndarray:
    """Weights as integer multiples of 2^-20 (``rint(w * 2^20)``), the units the votes sum."""
    return np.rint(np.asarray(weights, dtype=np.float64) * _SCALE).astype(np.int64)


def token_simhash(token_hashes: np.ndarray) -> int:
    """SimHash of tokens weighted by 1 + ln(tf)."""
    th = np.asarray(token_hashes, dtype=U64)
    return int(token_simhash_many(th, np.array([0, len(th)], dtype=np.int64))[0])


def token_simhash_many(token_hashes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """:func:`token_simhash` of many documents at once (ragged token hashes): the distinct
    tokens and their counts tf of each document, weighted 1 + ln(tf) rounded as in
    :func:`simhash_many`, in one compiled pass
    (:func:`neardup.sketches.simhash_loops.tf_simhash`)."""
    from .loops import loops

    simhash_loops = loops("neardup.sketches.simhash_loops")

    offsets = np.asarray(offsets, dtype=np.int64)
    longest = int(np.diff(offsets).max()) if len(offsets) > 1 else 0
    weight_of_tf = np.zeros(longest + 1, dtype=np.int64)
    weight_of_tf[1:] = _integer_weights(1.0 + np.log(np.arange(1, longest + 1, dtype=np.int64)))
    return simhash_loops.tf_simhash(np.asarray(token_hashes, dtype=U64), offsets, weight_of_tf)


def hamming(a: int, b: int) -> int:
    """Number of differing bits.

    >>> hamming(0b1011, 0b0110)
    3
    """
    return (a ^ b).bit_count()


def hamming_many(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`hamming` of many pairs of 64-bit values: the bits of ``a ^ b`` counted 16 at a time.

    >>> a = np.array([0b1011, 2**64 - 1], dtype=np.uint64)
    >>> hamming_many(a, np.array([0b0110, 0], dtype=np.uint64)).tolist()
    [3, 64]
    """
    x = np.asarray(a, dtype=U64) ^ np.asarray(b, dtype=U64)
    return _popcount16()[x.view(np.uint16).reshape(-1, 4)].sum(axis=1, dtype=np.int64)


@functools.lru_cache(maxsize=1)
def _popcount16() -> np.ndarray:
    """The bits set in each 16-bit value (64 KB), made on first use (a few ms), so a process
    that compares no fingerprints never makes it."""
    table = (
        np.unpackbits(np.arange(1 << 16, dtype=np.uint16).view(np.uint8).reshape(-1, 2), axis=1)
        .sum(axis=1)
        .astype(np.uint8)
    )
    table.flags.writeable = False
    return table


def agreeing_blocks(version: int) -> int:
    """j, the blocks two fingerprints within distance k are sure to share, whose j-subsets
    the keys of signature ``version`` are: one block up to version 5, pairs from 6 on.

    >>> agreeing_blocks(5), agreeing_blocks(6)
    (1, 2)
    """
    return 1 if version <= 5 else 2


def block_bounds(k: int, bits: int = BITS, j: int = 1) -> list[tuple[int, int]]:
    """k + j contiguous bit ranges [lo, hi) covering ``bits``, sizes differing by at most 1.

    >>> block_bounds(3)
    [(0, 16), (16, 32), (32, 48), (48, 64)]
    >>> block_bounds(3, j=2)
    [(0, 13), (13, 26), (26, 39), (39, 52), (52, 64)]
    """
    n = k + j
    sizes = [bits // n + (1 if i < bits % n else 0) for i in range(n)]
    out, lo = [], 0
    for s in sizes:
        out.append((lo, lo + s))
        lo += s
    return out


def block_keys(fingerprint: int, k: int, j: int = 1) -> np.ndarray:
    """The C(k + j, j) keys of a fingerprint, one per j-subset of its k + j blocks
    (:func:`block_bounds`), subsets in lexicographic order. A key is fmix64 of the subset's
    bits side by side, tagged with the subset's number in the top byte (a bijection, so
    distinct (subset, bits) pairs never share a key; for k = 0 the one subset is the whole
    fingerprint, untagged). Fingerprints that differ in at most k bits differ in at most k
    blocks, so they agree on at least j blocks and share the key of those j (pigeonhole):

    >>> a, b = 0xFFFF_0000_0000_0000, 0xFFFF_0000_0000_0007
    >>> (block_keys(a, 3) == block_keys(b, 3)).tolist()
    [True, True, True, False]
    >>> (block_keys(a, 3, 2) == block_keys(b, 3, 2)).tolist()
    [True, True, True, False, True, True, False, True, False, False]
    >>> c = a ^ (1 << 0) ^ (1 << 20) ^ (1 << 40) ^ (1 << 60)  # 4 of the 5 blocks differ
    >>> bool((block_keys(a, 3, 2) == block_keys(c, 3, 2)).any())
    False
    """
    return block_keys_many(np.array([fingerprint], dtype=U64), k, j)[0]


def block_keys_many(fingerprints: np.ndarray, k: int, j: int = 1) -> np.ndarray:
    """:func:`block_keys` of many fingerprints: a (D, C(k + j, j)) array."""
    fps = np.asarray(fingerprints, dtype=U64)
    bounds = block_bounds(k, j=j)
    blocks = [(fps >> np.uint64(BITS - hi)) & np.uint64((1 << (hi - lo)) - 1) for lo, hi in bounds]
    subsets = list(itertools.combinations(range(len(bounds)), j))
    out = np.empty((len(fps), math.comb(k + j, j)), dtype=U64)
    for p, subset in enumerate(subsets):
        bits, width = np.zeros(len(fps), dtype=U64), 0
        for b in subset:
            lo, hi = bounds[b]
            bits = (bits << np.uint64(hi - lo)) | blocks[b]
            width += hi - lo
        tag = np.uint64((p + 1) << 56) if width <= 56 else np.uint64(0)
        out[:, p] = fmix64(bits ^ tag)
    return out
