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
import xxhash

from .hashing import U64

BITS = 64


def simhash(hashes: np.ndarray, weights: np.ndarray | None = None) -> int:
    """64-bit SimHash of feature hashes with optional weights (default 1)."""
    hashes = np.asarray(hashes, dtype=U64)
    if len(hashes) == 0:
        return 0
    bits = np.unpackbits(hashes.astype(">u8").view(np.uint8).reshape(-1, 8), axis=1)  # (n, 64), MSB first
    w = np.ones(len(hashes)) if weights is None else np.asarray(weights, dtype=np.float64)
    v = w @ (bits.astype(np.float64) * 2.0 - 1.0)
    return int.from_bytes(np.packbits(v > 0).tobytes(), "big")


def token_simhash(token_hashes: np.ndarray) -> int:
    """SimHash of tokens weighted by 1 + ln(tf)."""
    uniq, tf = np.unique(np.asarray(token_hashes, dtype=U64), return_counts=True)
    return simhash(uniq, 1.0 + np.log(tf))


def hamming(a: int, b: int) -> int:
    return (a ^ b).bit_count()


def block_bounds(k: int, bits: int = BITS) -> list[tuple[int, int]]:
    """k+1 contiguous bit ranges [lo, hi) covering ``bits``, sizes differing by at most 1."""
    n = k + 1
    sizes = [bits // n + (1 if i < bits % n else 0) for i in range(n)]
    out, lo = [], 0
    for s in sizes:
        out.append((lo, lo + s))
        lo += s
    return out


def block_keys(fingerprint: int, k: int) -> np.ndarray:
    """One key per block: xxh64 of the block's bits, seeded with the block number."""
    keys = []
    for i, (lo, hi) in enumerate(block_bounds(k)):
        value = (fingerprint >> (BITS - hi)) & ((1 << (hi - lo)) - 1)
        keys.append(xxhash.xxh64_intdigest(value.to_bytes(8, "little"), seed=i))
    return np.array(keys, dtype=U64)
