"""Exact similarity of shingle sets: what neardup reports, never an estimate.

For S(A) and S(B), the sorted distinct shingle hashes of two documents:

* resemblance  r(A, B) = |S(A) n S(B)| / |S(A) u S(B)|   (Jaccard; Broder 1997)
* containment  c(A, B) = |S(A) n S(B)| / |S(A)|          (how much of A is inside B)

and the length filter that follows from r >= t:  t*|A| <= |B| <= |A|/t.

A document without shingles (no canonical token: ``!!!``, ``<p></p>``) resembles nothing
and is contained in nothing: every similarity with an empty set is 0, so two empty
documents are never near-duplicates of each other (0/0 is not "identical").
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

#: A bound no shingle count or arrival number reaches: "no upper bound" where a query needs a
#: number (below 2**63, so SQLite's signed integers and numpy's int64 hold it).
UNBOUNDED = 2**62


def intersection_size(a: np.ndarray, b: np.ndarray) -> int:
    """|A n B| of two sorted arrays of distinct values, O(|a| log |b|)."""
    if len(a) == 0 or len(b) == 0:
        return 0
    if len(a) > len(b):
        a, b = b, a
    idx = np.searchsorted(b, a)
    idx[idx == len(b)] = len(b) - 1
    return int(np.count_nonzero(b[idx] == a))


@dataclass(frozen=True)
class Similarity:
    """Exact overlap of two shingle sets."""

    intersection: int
    size_a: int
    size_b: int

    @property
    def union(self) -> int:
        return self.size_a + self.size_b - self.intersection

    @property
    def resemblance(self) -> float:
        return self.intersection / self.union if self.union else 0.0

    @property
    def containment(self) -> float:
        """c(A, B): share of A's shingles found in B."""
        return self.intersection / self.size_a if self.size_a else 0.0

    @property
    def containment_ba(self) -> float:
        return self.intersection / self.size_b if self.size_b else 0.0


def similarity(a: np.ndarray, b: np.ndarray) -> Similarity:
    """Exact overlap of two sorted arrays of distinct shingle hashes.

    >>> s = similarity(np.array([1, 2, 3, 5]), np.array([2, 3, 5, 8, 13]))
    >>> s.intersection, s.union, s.resemblance, s.containment, s.containment_ba
    (3, 6, 0.5, 0.75, 0.6)
    """
    return Similarity(intersection_size(a, b), len(a), len(b))


def resemblance(a: np.ndarray, b: np.ndarray) -> float:
    return similarity(a, b).resemblance


def containment(a: np.ndarray, b: np.ndarray) -> float:
    return similarity(a, b).containment


class _Measured(Protocol):
    resemblance: float
    containment: float


class Mode(str, enum.Enum):
    """What a query keeps: r(A, B) >= t (resemblance) or c(A, B) >= t (containment).

    >>> Mode.of("containment").measure(Similarity(2, 4, 2))  # |A n B| / |A|, |A| = 4
    0.5
    >>> Mode.of("jaccard")
    Traceback (most recent call last):
    ValueError: mode must be resemblance or containment, not 'jaccard'
    """

    RESEMBLANCE = "resemblance"
    CONTAINMENT = "containment"

    @classmethod
    def of(cls, mode: str) -> Mode:
        if isinstance(mode, cls):  # (a mode already: no lookup by value)
            return mode
        try:
            return cls(mode)
        except ValueError:
            raise ValueError(f"mode must be resemblance or containment, not {mode!r}") from None

    def measure(self, sim: _Measured) -> float:
        """The similarity this mode keeps, of a :class:`Similarity` (or a match)."""
        return sim.resemblance if self is Mode.RESEMBLANCE else sim.containment


def length_bounds(n: int, threshold: float, mode: str = Mode.RESEMBLANCE) -> tuple[int, int]:
    """Shingle counts |B| that can reach ``threshold`` against |A| = n.

    resemblance: ceil(t*n) <= |B| <= floor(n/t); containment c(A,B) >= t needs |B| >= ceil(t*n).

    >>> length_bounds(10, 0.8)
    (8, 12)
    """
    whole = Mode.of(mode) is Mode.RESEMBLANCE
    if n == 0:
        return 0, 0 if whole else UNBOUNDED
    lo = math.ceil(threshold * n - 1e-9)
    hi = math.floor(n / threshold + 1e-9) if whole else UNBOUNDED
    return lo, hi


def passes_length_filter(na: int, nb: int, threshold: float) -> bool:
    """t*|A| <= |B| <= |A|/t."""
    lo, hi = length_bounds(na, threshold)
    return lo <= nb <= hi


def passes_length_filter_many(na: np.ndarray, nb: np.ndarray, threshold: float) -> np.ndarray:
    """:func:`passes_length_filter` of many pairs at once (the same float operations, so the
    same answers).

    >>> passes_length_filter_many(np.array([10, 10, 10, 0]), np.array([8, 12, 13, 0]), 0.8).tolist()
    [True, True, False, True]
    """
    na = np.asarray(na, dtype=np.int64)
    nb = np.asarray(nb, dtype=np.int64)
    lo = np.where(na == 0, 0, np.ceil(threshold * na - 1e-9))
    hi = np.where(na == 0, 0, np.floor(na / threshold + 1e-9))
    return (lo <= nb) & (nb <= hi)
