"""SimHash (Charikar 2002): a 64-bit fingerprint whose Hamming distance tracks cosine distance.

For weighted features (x_i, w_i) with 64-bit hashes h(x_i), bit j of the fingerprint is
1 iff sum_i w_i * (2*bit_j(h(x_i)) - 1) > 0. Features here are the canonical tokens with
weight 1 + ln(tf).

Near-duplicates differ in at most k bits (Manku, Jain & Das Sarma 2007: 64 bits, k = 3).
Cutting the 64 bits into k+1 blocks, two fingerprints within distance k agree on at least
one whole block (pigeonhole), so one exact term match per block finds every such pair.
"""

from __future__ import annotations

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
    in. One compiled pass over the features (:func:`neardup.simhash_compiled.simhash_votes`).
    """
    from .loops import loops

    kernels = loops("neardup.simhash_compiled")

    return kernels.simhash_votes(
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
    :func:`simhash_many`, in one compiled pass (:func:`neardup.simhash_compiled.tf_simhash`)."""
    from .loops import loops

    kernels = loops("neardup.simhash_compiled")

    offsets = np.asarray(offsets, dtype=np.int64)
    longest = int(np.diff(offsets).max()) if len(offsets) > 1 else 0
    weight_of_tf = np.zeros(longest + 1, dtype=np.int64)
    weight_of_tf[1:] = _integer_weights(1.0 + np.log(np.arange(1, longest + 1, dtype=np.int64)))
    return kernels.tf_simhash(np.asarray(token_hashes, dtype=U64), offsets, weight_of_tf)


def hamming(a: int, b: int) -> int:
    """Number of differing bits.

    >>> hamming(0b1011, 0b0110)
    3
    """
    return (a ^ b).bit_count()


def hamming_many(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`hamming` of many pairs of 64-bit values: the bits of ``a ^ b`` counted 16 at a time.

    >>> hamming_many(np.array([0b1011, 2**64 - 1], dtype=np.uint64), np.array([0b0110, 0], dtype=np.uint64)).tolist()
    [3, 64]
    """
    x = np.asarray(a, dtype=U64) ^ np.asarray(b, dtype=U64)
    return _POPCOUNT16[x.view(np.uint16).reshape(-1, 4)].sum(axis=1, dtype=np.int64)


_POPCOUNT16 = (
    np.unpackbits(np.arange(1 << 16, dtype=np.uint16).view(np.uint8).reshape(-1, 2), axis=1)
    .sum(axis=1)
    .astype(np.uint8)
)


def block_bounds(k: int, bits: int = BITS) -> list[tuple[int, int]]:
    """k+1 contiguous bit ranges [lo, hi) covering ``bits``, sizes differing by at most 1.

    >>> block_bounds(3)
    [(0, 16), (16, 32), (32, 48), (48, 64)]
    """
    n = k + 1
    sizes = [bits // n + (1 if i < bits % n else 0) for i in range(n)]
    out, lo = [], 0
    for s in sizes:
        out.append((lo, lo + s))
        lo += s
    return out


def block_keys(fingerprint: int, k: int) -> np.ndarray:
    """One key per block: fmix64 of the block's bits tagged with the block number (a
    bijection, so distinct (block, bits) pairs never share a key). Fingerprints that differ
    in at most k bits share at least one key (pigeonhole):

    >>> (block_keys(0xFFFF_0000_0000_0000, 3) == block_keys(0xFFFF_0000_0000_0007, 3)).tolist()
    [True, True, True, False]
    """
    return block_keys_many(np.array([fingerprint], dtype=U64), k)[0]


def block_keys_many(fingerprints: np.ndarray, k: int) -> np.ndarray:
    """:func:`block_keys` of many fingerprints: a (D, k + 1) array."""
    fps = np.asarray(fingerprints, dtype=U64)
    out = np.empty((len(fps), k + 1), dtype=U64)
    for i, (lo, hi) in enumerate(block_bounds(k)):
        bits = (fps >> np.uint64(BITS - hi)) & np.uint64((1 << (hi - lo)) - 1)
        out[:, i] = fmix64(bits ^ np.uint64((i + 1) << 56))
    return out
