"""neardup's MinHash estimate against datasketch's (the design's MinHash library) on the same
shingle hashes: both estimate J = |A n B| / |A u B| with standard error sqrt(J(1-J)/K), so
on pairs of known resemblance each lies near J and near the other, and neither is biased."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neardup.sketches.minhash import MinHash

datasketch = pytest.importorskip("datasketch")

K = 128


def _pair(rng: np.random.Generator, j: float, union: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """Two sets of distinct uint64 shingle hashes whose resemblance is exactly ``j``."""
    drawn = np.unique(rng.integers(0, 2**64, size=union + 64, dtype=np.uint64))
    values = rng.permutation(drawn)[:union]
    common = round(j * union)
    a_only = (union - common) // 2
    a = np.concatenate([values[:common], values[common : common + a_only]])
    b = np.concatenate([values[:common], values[common + a_only :]])
    return a, b


def _datasketch_estimate(a: np.ndarray, b: np.ndarray, seed: int) -> float:
    """datasketch's MinHash of each set, its ``hashfunc`` given the shingle hash itself (the
    low 32 bits: datasketch permutes 32-bit values)."""
    sketches = []
    for values in (a, b):
        m = datasketch.MinHash(num_perm=K, seed=seed, hashfunc=lambda v: v & 0xFFFFFFFF)
        m.update_batch([int(v) for v in values])
        sketches.append(m)
    return sketches[0].jaccard(sketches[1])


@pytest.mark.parametrize("scheme", ["oph", "kperm"])
def test_minhash_estimate_agrees_with_datasketch(scheme: str) -> None:
    rng = np.random.default_rng(20261127)
    diffs, errors = [], []
    for trial, j in enumerate([0.1, 0.3, 0.5, 0.7, 0.9] * 6):
        a, b = _pair(rng, j)
        ours = MinHash.from_shingles(a, K, seed=trial, scheme=scheme).jaccard(
            MinHash.from_shingles(b, K, seed=trial, scheme=scheme)
        )
        theirs = _datasketch_estimate(a, b, seed=trial)
        se = math.sqrt(j * (1 - j) / K)
        assert abs(ours - j) <= 4 * se, (scheme, j, ours)
        assert abs(theirs - j) <= 4 * se, (j, theirs)
        assert abs(ours - theirs) <= 4 * math.sqrt(2) * se, (scheme, j, ours, theirs)
        diffs.append(ours - theirs)
        errors.append((ours - j) ** 2)
    # no bias against datasketch: the mean difference of 30 pairs within 4 standard errors
    spread = math.sqrt(2 * sum(j * (1 - j) / K for j in [0.1, 0.3, 0.5, 0.7, 0.9] * 6)) / 30
    assert abs(sum(diffs) / len(diffs)) <= 4 * spread
    # and the error of neardup's estimate is that of a K-permutation MinHash
    expected = sum(j * (1 - j) / K for j in [0.1, 0.3, 0.5, 0.7, 0.9] * 6) / 30
    assert sum(errors) / len(errors) <= 2 * expected


def test_disjoint_and_identical_sets_agree_exactly() -> None:
    rng = np.random.default_rng(7)
    a, b = _pair(rng, 0.0)
    assert MinHash.from_shingles(a, K, seed=1).jaccard(MinHash.from_shingles(b, K, seed=1)) == 0
    assert _datasketch_estimate(a, b, seed=1) == 0
    assert MinHash.from_shingles(a, K, seed=1).jaccard(MinHash.from_shingles(a, K, seed=1)) == 1
    assert _datasketch_estimate(a, a, seed=1) == 1
