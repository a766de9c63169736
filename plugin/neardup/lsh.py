"""LSH banding for MinHash signatures (Indyk & Motwani 1998; Leskovec, Rajaraman & Ullman,
*Mining of Massive Datasets*, ch. 3.4).

K min-hash values are cut into ``b`` bands of ``r`` rows. Two documents with resemblance
``s`` share at least one band with probability

    P(s) = 1 - (1 - s^r)^b                                      (the S-curve)

For a target threshold ``t`` the pair (b, r), b*r <= K, minimises

    w_fp * integral_0^t P(s) ds  +  w_fn * integral_t^1 (1 - P(s)) ds,

the weighted false-positive and false-negative areas under the curve.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import xxhash


def collision_probability(s: float | np.ndarray, bands: int, rows: int) -> np.ndarray:
    """P(s) = 1 - (1 - s^r)^b."""
    s = np.asarray(s, dtype=np.float64)
    return 1.0 - (1.0 - s**rows) ** bands


def _areas(threshold: float, bands: int, rows: int, n: int = 512) -> tuple[float, float]:
    lo = np.linspace(0.0, threshold, n)
    hi = np.linspace(threshold, 1.0, n)
    fp = np.trapz(collision_probability(lo, bands, rows), lo)
    fn = np.trapz(1.0 - collision_probability(hi, bands, rows), hi)
    return float(fp), float(fn)


@lru_cache(maxsize=256)
def optimal_bands(threshold: float, num_perm: int, fp_weight: float = 0.5, fn_weight: float = 0.5) -> tuple[int, int]:
    """(b, r) with b*r <= num_perm minimising the weighted error areas of the S-curve."""
    best, best_err = (1, num_perm), float("inf")
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            fp, fn = _areas(threshold, b, r)
            err = fp_weight * fp + fn_weight * fn
            if err < best_err - 1e-12:
                best, best_err = (b, r), err
    return best


def band_keys(hashvalues: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """One 64-bit key per band: xxh64 of the band's r values, seeded with the band number.

    Band ``i`` covers ``hashvalues[i*r:(i+1)*r]``. Seeding with ``i`` keeps equal values in
    different bands from colliding, so keys of all bands can share one inverted index.
    """
    hv = np.ascontiguousarray(hashvalues[: bands * rows], dtype="<u8").reshape(bands, rows)
    return np.fromiter((xxhash.xxh64_intdigest(hv[i].tobytes(), seed=i) for i in range(bands)), dtype=np.uint64, count=bands)
