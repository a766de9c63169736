"""LSH banding for MinHash signatures (Indyk & Motwani 1998; Leskovec, Rajaraman & Ullman,
*Mining of Massive Datasets*, ch. 3.4).

K min-hash values are cut into ``b`` bands of ``r`` rows. Two documents with resemblance
``s`` agree on one band with probability ``s^r``; the bands are (nearly) independent trials,
so they agree on at least ``m`` of the ``b`` bands with probability

    P(s) = P[Binomial(b, s^r) >= m] = sum_{k=m..b} C(b, k) s^(rk) (1 - s^r)^(b-k)   (the S-curve)

A pair is a candidate when it shares at least ``m`` band keys (``min_match``). ``m = 1`` is
the classic scheme, P(s) = 1 - (1 - s^r)^b; ``m > 1`` lets the bands vote, which makes the
curve steeper for the same number of bands (fewer false candidates below ``t``, fewer
misses above it) at the price of shorter bands.

For a target threshold ``t`` the triple (b, r, m), b*r <= K, b <= ``max_bands``, minimises

    w_fp * integral_0^t P(s) ds  +  w_fn * integral_t^1 (1 - P(s)) ds,

the weighted false-positive and false-negative areas under the curve. Each band is one key
(one posting) per document, so ``max_bands`` bounds the index size and the postings a query
reads (with m free, the optimum in practice uses all the bands it is allowed).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from .hashing import _fmix64_inplace, fmix64
from ..runtime.tablecache import cached_table

#: Default bound on the bands per document (:attr:`neardup.config.Config.max_bands`): each band
#: is one posting per document (about 26 bytes in the embedded engine).
MAX_BANDS = 20

_trapezoid = getattr(np, "trapezoid", None) or np.trapz  # NumPy >= 2.0 renamed trapz to trapezoid


class Banding(NamedTuple):
    """An LSH banding: ``bands`` keys of ``rows`` min-hash values; a candidate shares >=
    ``min_match``."""

    bands: int
    rows: int
    min_match: int


def _match_tails(s: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """(len(s), bands + 1): column m is P[Binomial(bands, s^rows) >= m], m = 0..bands."""
    p = np.asarray(s, dtype=np.float64).ravel() ** rows
    n = len(p)
    pk, qk = np.ones((n, bands + 1)), np.ones((n, bands + 1))  # p^k and (1-p)^k, k = 0..bands
    pk[:, 1:] = np.cumprod(np.broadcast_to(p[:, None], (n, bands)), axis=1)
    qk[:, 1:] = np.cumprod(np.broadcast_to((1.0 - p)[:, None], (n, bands)), axis=1)
    pmf = _binomials(bands) * pk * qk[:, ::-1]
    return np.minimum(np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1], 1.0)


@lru_cache(maxsize=None)
def _binomials(n: int) -> np.ndarray:
    return np.array([math.comb(n, k) for k in range(n + 1)], dtype=np.float64)


def collision_probability(
    s: float | np.ndarray, bands: int, rows: int, min_match: int = 1
) -> np.ndarray:
    """P(s) = P[Binomial(b, s^r) >= m]: probability that two documents of resemblance ``s``
    share at least ``min_match`` of ``bands`` band keys; m = 1 gives 1 - (1 - s^r)^b.

    >>> round(float(collision_probability(0.8, 20, 5)), 4), round(1 - (1 - 0.8**5) ** 20, 4)
    (0.9996, 0.9996)
    >>> [round(float(collision_probability(s, 20, 5, min_match=4)), 3) for s in (0.5, 0.8, 0.9)]
    [0.003, 0.933, 1.0]
    """
    if not 1 <= min_match <= bands:
        raise ValueError(f"min_match must be in 1..bands ({bands}), not {min_match}")
    s = np.asarray(s, dtype=np.float64)
    if min_match == 1:
        return 1.0 - (1.0 - s**rows) ** bands
    return _match_tails(s.ravel(), bands, rows)[:, min_match].reshape(s.shape)


def _area_table(
    threshold: float, bands: int, rows: int, n: int = 512
) -> tuple[np.ndarray, np.ndarray]:
    """False-positive and false-negative areas of the S-curve for every min_match m = 0..bands."""
    lo = np.linspace(0.0, threshold, n)
    hi = np.linspace(threshold, 1.0, n)
    fp = _trapezoid(_match_tails(lo, bands, rows), lo, axis=0)
    fn = _trapezoid(1.0 - _match_tails(hi, bands, rows), hi, axis=0)
    return fp, fn


def _areas(
    threshold: float, bands: int, rows: int, n: int = 512, min_match: int = 1
) -> tuple[float, float]:
    lo = np.linspace(0.0, threshold, n)
    hi = np.linspace(threshold, 1.0, n)
    fp = _trapezoid(collision_probability(lo, bands, rows, min_match), lo)
    fn = _trapezoid(1.0 - collision_probability(hi, bands, rows, min_match), hi)
    return float(fp), float(fn)


@lru_cache(maxsize=256)
def optimal_lsh(
    threshold: float,
    num_perm: int,
    fp_weight: float = 0.5,
    fn_weight: float = 0.5,
    max_bands: int = MAX_BANDS,
    min_match: int = 0,
) -> Banding:
    """(b, r, m) with b*r <= num_perm and b <= max_bands minimising the weighted error areas
    of P(s) = P[Binomial(b, s^r) >= m]; ``min_match`` > 0 fixes m. Ties go to fewer bands,
    then fewer rows, then smaller m. The search (about 0.1 s) runs once per machine and
    arguments: its answer is kept on disk (:mod:`neardup.runtime.tablecache`).

    >>> optimal_lsh(0.8, 128, fp_weight=0.05, fn_weight=0.95, max_bands=20)
    Banding(bands=20, rows=5, min_match=4)
    """
    if max_bands < 1 or num_perm < 1:
        raise ValueError("max_bands and num_perm must be >= 1")
    name = (
        f"lsh-{float(threshold)!r}-{int(num_perm)}-{float(fp_weight)!r}-{float(fn_weight)!r}"
        f"-{int(max_bands)}-{int(min_match)}"
    )
    found = cached_table(
        name,
        lambda: np.array(
            search_lsh(threshold, num_perm, fp_weight, fn_weight, max_bands, min_match)
        ),
        __file__,
    )
    return Banding(*(int(x) for x in found))


def search_lsh(
    threshold: float,
    num_perm: int,
    fp_weight: float,
    fn_weight: float,
    max_bands: int,
    min_match: int,
) -> Banding:
    """The search :func:`optimal_lsh` keeps on disk: every b <= max_bands, r <= num_perm / b,
    and m (or the given ``min_match``), by the areas of :func:`_area_table`."""
    best, best_err = None, float("inf")
    for b in range(max(1, min_match), min(max_bands, num_perm) + 1):
        for r in range(1, num_perm // b + 1):
            fp, fn = _area_table(threshold, b, r)
            err = fp_weight * fp + fn_weight * fn
            ms = range(1, b + 1) if min_match <= 0 else (min_match,)
            m = min(ms, key=lambda m: err[m])
            if err[m] < best_err - 1e-12:
                best, best_err = Banding(b, r, m), float(err[m])
    if best is None:
        raise ValueError(
            f"no banding with min_match {min_match} fits max_bands {max_bands}, num_perm {num_perm}"
        )
    return best


@lru_cache(maxsize=256)
def optimal_bands(
    threshold: float, num_perm: int, fp_weight: float = 0.5, fn_weight: float = 0.5
) -> tuple[int, int]:
    """(b, r) with b*r <= num_perm minimising the weighted error areas of the classic S-curve
    1 - (1 - s^r)^b (any number of bands, m = 1); see :func:`optimal_lsh` for (b, r, m)."""
    best, best_err = (1, num_perm), float("inf")
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            fp, fn = _areas(threshold, b, r)
            err = fp_weight * fp + fn_weight * fn
            if err < best_err - 1e-12:
                best, best_err = (b, r), err
    return best


def band_keys(hashvalues: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """One 64-bit key per band: the band's r values chained through fmix64, starting from a
    value derived from the band number.

    Band ``i`` covers ``hashvalues[i*r:(i+1)*r]``. Starting each chain from the band number
    keeps equal values in different bands from colliding, so keys of all bands can share
    one inverted index.

    >>> hv = np.array([7, 7, 7, 7, 1, 2], dtype=np.uint64)
    >>> k = band_keys(hv, 3, 2)
    >>> other = band_keys(np.array([7, 7, 0, 0, 1, 2], dtype=np.uint64), 3, 2)
    >>> len(k), bool(k[0] == k[1]), (k == other).tolist()
    (3, False, [True, False, True])
    """
    return band_keys_many(np.asarray(hashvalues)[None, :], bands, rows)[0]


def band_keys_many(hashvalues: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """:func:`band_keys` of many sketches, a (D, K) array: a (D, bands) array."""
    hv = np.asarray(hashvalues, dtype=np.uint64)[:, : bands * rows].reshape(
        len(hashvalues), bands, rows
    )
    acc = np.broadcast_to(
        fmix64(np.arange(1, bands + 1, dtype=np.uint64) * _BAND_SALT), hv.shape[:2]
    ).copy()
    for j in range(rows):
        acc *= _C
        acc += hv[:, :, j]
        _fmix64_inplace(acc)
    return acc


_BAND_SALT = np.uint64(0xA0761D6478BD642F)
_C = np.uint64(0x9E3779B97F4A7C15)
