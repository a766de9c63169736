"""Super-shingles and mega-shingles (Broder 2000; Zelenkov & Segalovich 2007; 001, 000).

84 min-hashes (K = k*s independent permutations of the shingle set, ``kperm``) are cut
into k = 6 groups of s = 14; each group's values hash to one super-shingle. Two documents
match when at least r = 2 of their k super-shingles agree (same group). For resemblance
rho a group agrees with probability rho^s, so a pair matches with probability

    p_{k,s,r}(rho) = sum_{i=r..k} C(k,i) rho^(s*i) (1 - rho^s)^(k-i).

Mega-shingles are the C(k,2) = 15 pairs of super-shingles, one key each: two documents
share a mega-shingle iff at least 2 super-shingles agree, so one shared key (min_match 1)
replaces the "2 of 6" rule.

Settings (``Config.extra``): ``super_k`` (6), ``super_s`` (14), ``super_r`` (2).
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np
import xxhash

from ...sketches.hashing import U64
from ...sketches.lsh import band_keys
from ...sketches.minhash import kperm_sketch
from ...keys.signature import Signature
from .common import setting


def match_probability(rho: float | np.ndarray, k: int = 6, s: int = 14, r: int = 2) -> np.ndarray:
    """p_{k,s,r}(rho) = sum_{i=r..k} C(k,i) rho^(s i) (1 - rho^s)^(k-i)."""
    rho = np.asarray(rho, dtype=np.float64)
    q = rho**s
    return sum(comb(k, i) * q**i * (1.0 - q) ** (k - i) for i in range(r, k + 1))


def match_curve(k: int = 6, s: int = 14, r: int = 2, n: int = 101) -> tuple[np.ndarray, np.ndarray]:
    """Plot-ready (rho, p) arrays of :func:`match_probability` on [0, 1]."""
    rho = np.linspace(0.0, 1.0, n)
    return rho, match_probability(rho, k, s, r)


def super_shingles(shingles: np.ndarray, k: int, s: int, seed: int) -> np.ndarray:
    """k super-shingles: group g = xxh64 of min-hashes g*s .. g*s+s-1, seeded with g."""
    if len(shingles) == 0:
        return np.empty(0, dtype=U64)
    return band_keys(kperm_sketch(np.asarray(shingles, dtype=U64), k * s, seed), k, s)


def mega_shingles(supers: np.ndarray) -> np.ndarray:
    """One key per pair (i, j), i < j, of super-shingles: xxh64(i, j, S_i, S_j)."""
    out = [
        xxhash.xxh64_intdigest(np.array([i, j, supers[i], supers[j]], dtype="<u8").tobytes())
        for i, j in combinations(range(len(supers)), 2)
    ]
    return np.array(out, dtype=U64)


class SuperShingles(Signature):
    name = "super"
    components = ("super",)

    def __init__(self, canonicalizer, context=None):
        config = canonicalizer.config
        self.k = setting(config, "super_k", 6)
        self.s = setting(config, "super_s", 14)
        self.r = setting(config, "super_r", 2)
        if not 1 <= self.r <= self.k or self.s < 1:
            raise ValueError(
                "super-shingles need 1 <= super_r <= super_k and super_s >= 1, "
                f"got k={self.k}, s={self.s}, r={self.r}"
            )
        self.seed = config.seed
        self.min_match = self.equality_min_match = self.r
        self.component_min_match = {"super": self.r}

    def parts(self, p) -> dict[str, np.ndarray]:
        return {"super": super_shingles(p.shingles.set, self.k, self.s, self.seed)}


class MegaShingles(SuperShingles):
    name = "mega"
    components = ("mega",)

    def __init__(self, canonicalizer, context=None):
        super().__init__(canonicalizer, context)
        self.min_match = self.equality_min_match = 1
        self.component_min_match = {}

    def parts(self, p) -> dict[str, np.ndarray]:
        sup = super_shingles(p.shingles.set, self.k, self.s, self.seed)
        return {"mega": mega_shingles(sup) if len(sup) else sup}
