"""Samples of shingle hashes that estimate containment (Broder 1997; Schleimer, Wilkerson
& Aiken 2003).

* MOD_m: keep the hashes = 0 (mod m). |L(A) n L(B)| / |L(A)| is an unbiased estimate of
  containment c(A, B); |L(A) n L(B)| / |L(A) u L(B)| of resemblance.
* MIN_s: keep the s smallest hashes (resemblance only).
* Winnowing: in every window of ``window`` consecutive hashes keep the rightmost minimum,
  each position once. Any run shared by two documents of at least
  t = window + noise - 1 hashes yields a shared fingerprint (the guarantee), and the
  density is at most 2 / (window + 1).
"""

from __future__ import annotations

import numpy as np

from .hashing import U64
from .ragged import offsets_of


def mod_sample(hashes: np.ndarray, m: int) -> np.ndarray:
    """MOD_m: the hashes divisible by m.

    >>> mod_sample(np.arange(10), 4).tolist()
    [0, 4, 8]
    """
    hashes = np.asarray(hashes, dtype=U64)
    return hashes[hashes % np.uint64(m) == 0]


def min_sample(hashes: np.ndarray, s: int) -> np.ndarray:
    """MIN_s: the s smallest distinct hashes, sorted.

    >>> min_sample(np.array([9, 3, 7, 3, 1]), 2).tolist()
    [1, 3]
    """
    return np.sort(np.unique(np.asarray(hashes, dtype=U64)))[:s]


def winnow(sequence: np.ndarray, window: int) -> np.ndarray:
    """Winnowing fingerprints (Schleimer, Wilkerson & Aiken 2003) in document order: the
    rightmost minimum of every window of ``window`` consecutive hashes, each position
    recorded once (a sequence shorter than the window keeps its rightmost minimum).

    Their example: the 5-gram hashes of "adorunrunrunadorunrun", window 4.

    >>> h = [77, 74, 42, 17, 98, 50, 17, 98, 8, 88, 67, 39, 77, 74, 42, 17, 98]
    >>> winnow(np.array(h), 4).tolist()
    [17, 17, 8, 39, 17]
    """
    seq = np.asarray(sequence)
    return winnow_many(seq, np.array([0, len(seq)], dtype=np.int64), window)[0]


def winnow_many(
    sequence: np.ndarray, offsets: np.ndarray, window: int
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`winnow` of many documents at once (ragged): fingerprints and their offsets, in
    one compiled pass (:func:`neardup.sketches.sampling_loops.winnow`).

    >>> h = [77, 74, 42, 17, 98, 50, 17, 98, 8, 88, 67, 39, 77, 74, 42, 17, 98]
    >>> values, offsets = winnow_many(np.array(h + [5, 3, 9]), np.array([0, 17, 20]), 4)
    >>> values.tolist(), offsets.tolist()
    ([17, 17, 8, 39, 17, 3], [0, 5, 6])
    """
    from .loops import loops

    sampling_loops = loops("neardup.sketches.sampling_loops")

    if window < 1:
        raise ValueError(f"the winnowing window must be >= 1, not {window}")
    seq = np.asarray(sequence)
    pos, counts = sampling_loops.winnow(seq, np.asarray(offsets, dtype=np.int64), int(window))
    return seq[pos], offsets_of(counts)
