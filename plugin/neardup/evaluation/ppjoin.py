"""Exact all-pairs set-similarity join: every pair with Jaccard >= t (Xiao, Wang, Lin &
Yu 2008, "PP-join"; surveyed in 000). Used for ground truth and small collections.

* Global token order: rarest token first (ties by value); every set is rewritten as the
  sorted ranks of its tokens.
* Prefix filtering: if J(x, y) >= t, the prefixes of length |x| - ceil(t|x|) + 1 of x
  and y share a token. Sets are processed in increasing size; each set probes the
  inverted index with its probe prefix and indexes only its shorter index prefix
  |x| - ceil(2t/(1+t) |x|) + 1 (enough when every later set is at least as long).
* Size filter: |y| >= t|x|.
* Positional filter: with alpha = ceil(t/(1+t) (|x| + |y|)) the overlap needed, a
  candidate whose overlap so far plus 1 + min(|x| - i - 1, |y| - j - 1) (the most the
  rest can add, for a shared token at positions i, j) is below alpha is pruned.
* Verification: exact overlap of the two rank arrays; J = o / (|x| + |y| - o).

Empty sets join nothing.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Sequence

import numpy as np


def _ceil(x: float) -> int:
    return math.ceil(x - 1e-9)


def token_ranks(sets: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Each set as the sorted ranks of its tokens in the global rare-first order."""
    arrays = [np.unique(np.asarray(s)) for s in sets]
    if not arrays or not any(len(a) for a in arrays):
        return [np.empty(0, dtype=np.int64) for _ in arrays]
    allv = np.concatenate(arrays)
    uniq, inverse, counts = np.unique(allv, return_inverse=True, return_counts=True)
    order = np.lexsort((uniq, counts))  # by frequency, then value
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[order] = np.arange(len(uniq))
    out, start = [], 0
    for a in arrays:
        out.append(np.sort(rank[inverse[start : start + len(a)]]))
        start += len(a)
    return out


def overlap(x: np.ndarray, y: np.ndarray) -> int:
    """|x n y| of two sorted arrays of distinct values."""
    if len(x) > len(y):
        x, y = y, x
    if len(x) == 0:
        return 0
    idx = np.searchsorted(y, x)
    idx[idx == len(y)] = len(y) - 1
    return int(np.count_nonzero(y[idx] == x))


def ppjoin(sets: Sequence[np.ndarray], threshold: float) -> list[tuple[int, int, float]]:
    """All pairs (i, j, J), i < j, of ``sets`` with Jaccard J >= ``threshold``."""
    t = float(threshold)
    if not 0.0 < t <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], not {threshold}")
    ranks = token_ranks(sets)
    order = sorted((i for i in range(len(ranks)) if len(ranks[i])), key=lambda i: len(ranks[i]))
    index: dict[int, list[tuple[int, int]]] = defaultdict(list)
    lists = [r.tolist() for r in ranks]
    out = []
    for x in order:
        xs = lists[x]
        nx = len(xs)
        seen = _prefix_overlaps(xs, lists, index, t)
        for y, a in seen.items():
            if a > 0:
                o = overlap(ranks[x], ranks[y])
                jac = o / (nx + len(lists[y]) - o)
                if jac >= t - 1e-12:
                    out.append((min(x, y), max(x, y), jac))
        for i in range(nx - _ceil(2.0 * t / (1.0 + t) * nx) + 1):
            index[xs[i]].append((x, i))
    return sorted(out)


def _prefix_overlaps(
    xs: list[int], lists: list[list[int]], index: dict[int, list[tuple[int, int]]], t: float
) -> dict[int, int]:
    """Candidate -> the overlap of its indexed prefix with the probing prefix of record
    ``xs`` (-1: pruned by the positional filter, which bounds the overlap the rest can add
    below alpha = ceil(t / (1 + t) * (|x| + |y|)); candidates shorter than t * |x| are
    skipped)."""
    nx = len(xs)
    min_size = t * nx - 1e-9
    seen: dict[int, int] = {}
    for i in range(nx - _ceil(t * nx) + 1):
        for y, j in index.get(xs[i], ()):
            ny = len(lists[y])
            if ny < min_size:
                continue
            a = seen.get(y, 0)
            if a < 0:
                continue  # pruned
            alpha = _ceil(t / (1.0 + t) * (nx + ny))
            seen[y] = a + 1 if a + 1 + min(nx - i - 1, ny - j - 1) >= alpha else -1
    return seen


def brute_force(sets: Sequence[np.ndarray], threshold: float) -> list[tuple[int, int, float]]:
    """The same result by comparing every pair (for tests and tiny inputs)."""
    arrays = [np.unique(np.asarray(s)) for s in sets]
    out = []
    for i in range(len(arrays)):
        for j in range(i + 1, len(arrays)):
            a, b = arrays[i], arrays[j]
            if len(a) == 0 or len(b) == 0:
                continue
            o = overlap(a, b)
            jac = o / (len(a) + len(b) - o)
            if jac >= threshold - 1e-12:
                out.append((i, j, jac))
    return out
