"""Fixed-size min-hash sketches of the source documents: 84 functions (002, after
Zelenkov & Segalovich) and 70 functions (004), K independent permutations (``kperm``).

Keys are the K sketch values, each mixed with its function number (one LSH band of one
row), so two documents share key i iff min-hash i agrees. The share of agreeing
functions estimates resemblance J with standard error sigma = sqrt(J(1-J)/K).

Matching rule, for the index threshold t (``Config.threshold``):

* ``equality_min_match = ceil(t*K)``: the documents' rule ("share of equal values >= t"),
  used when the sketch alone decides;
* ``min_match = ceil((t - 2 sigma_t) K)``, sigma_t = sqrt(t(1-t)/K): for engine candidates
  that are verified exactly afterwards. A pair with J = t then reaches it with
  probability about 0.98 (normal approximation) instead of about 0.5.
"""

from __future__ import annotations

import math

import numpy as np

from ...sketches.hashing import U64
from ...sketches.lsh import band_keys
from ...sketches.minhash import kperm_sketch
from ...keys.signature import Signature


def sketch_keys(shingles: np.ndarray, k: int, seed: int) -> np.ndarray:
    """K keys: min-hash i mixed with i (xxh64 seeded with i); none for an empty set."""
    if len(shingles) == 0:
        return np.empty(0, dtype=U64)
    return band_keys(kperm_sketch(np.asarray(shingles, dtype=U64), k, seed), k, 1)


def min_matches(threshold: float, k: int) -> tuple[int, int]:
    """(engine min_match, equality min_match) for threshold t and K functions."""
    eq = max(1, math.ceil(threshold * k - 1e-9))
    sigma = math.sqrt(threshold * (1.0 - threshold) / k)
    return max(1, math.ceil((threshold - 2.0 * sigma) * k - 1e-9)), eq


class Sketch(Signature):
    size = 84

    def __init__(self, canonicalizer, context=None):
        config = canonicalizer.config
        self.seed = config.seed
        self.name = f"minhash{self.size}"
        self.components = (self.name,)
        self.min_match, self.equality_min_match = min_matches(config.threshold, self.size)
        self.component_min_match = {self.name: self.equality_min_match}

    def parts(self, p) -> dict[str, np.ndarray]:
        return {self.name: sketch_keys(p.shingles.set, self.size, self.seed)}


class Sketch84(Sketch):
    size = 84


class Sketch70(Sketch):
    size = 70
