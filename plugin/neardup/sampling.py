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
from .ragged import segment_ids


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


def winnow_positions(sequence: np.ndarray, window: int) -> np.ndarray:
    """Positions selected by winnowing (rightmost minimum per window, each recorded once).

    Schleimer et al.'s example: the 5-gram hashes of "adorunrunrunadorunrun", window 4.

    >>> h = [77, 74, 42, 17, 98, 50, 17, 98, 8, 88, 67, 39, 77, 74, 42, 17, 98]
    >>> winnow_positions(np.array(h), 4).tolist()
    [3, 6, 8, 11, 15]
    """
    seq = np.asarray(sequence)
    n = len(seq)
    if n == 0:
        return np.empty(0, dtype=np.intp)
    window = min(window, n)
    m = n - window + 1
    # windows reversed, as a strided view: row i holds seq[i + window - 1], ..., seq[i];
    # argmin takes the first minimum of each row, i.e. the rightmost one of the window
    st = seq.strides[0]
    rev = np.lib.stride_tricks.as_strided(seq[window - 1 :], shape=(m, window), strides=(st, -st), writeable=False)
    pos = np.arange(window - 1, n) - np.argmin(rev, axis=1)
    keep = np.empty(m, dtype=bool)
    keep[0] = True
    np.not_equal(pos[1:], pos[:-1], out=keep[1:])
    return pos[keep]


def winnow(sequence: np.ndarray, window: int) -> np.ndarray:
    """Winnowing fingerprints (values) in document order.

    >>> h = [77, 74, 42, 17, 98, 50, 17, 98, 8, 88, 67, 39, 77, 74, 42, 17, 98]
    >>> winnow(np.array(h), 4).tolist()
    [17, 17, 8, 39, 17]
    """
    seq = np.asarray(sequence)
    return seq[winnow_positions(seq, window)]


def winnow_many(sequence: np.ndarray, offsets: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`winnow` of many documents at once (ragged): fingerprints and their offsets.

    A document shorter than the window keeps its rightmost minimum.

    >>> h = [77, 74, 42, 17, 98, 50, 17, 98, 8, 88, 67, 39, 77, 74, 42, 17, 98]
    >>> values, offsets = winnow_many(np.array(h + [5, 3, 9]), np.array([0, 17, 20]), 4)
    >>> values.tolist(), offsets.tolist()
    ([17, 17, 8, 39, 17, 3], [0, 5, 6])
    """
    seq = np.asarray(sequence)
    n = np.diff(offsets)
    parts = []
    if len(seq) >= window:
        # every window of the concatenation, then only those inside one document
        st = seq.strides[0]
        rev = np.lib.stride_tricks.as_strided(seq[window - 1 :], shape=(len(seq) - window + 1, window), strides=(st, -st), writeable=False)
        end = np.arange(window - 1, len(seq))
        pos = end - np.argmin(rev, axis=1)
        pos = pos[end - (window - 1) >= offsets[:-1][segment_ids(offsets)[end]]]
        keep = np.empty(len(pos), dtype=bool)
        if len(pos):
            keep[0] = True
            np.not_equal(pos[1:], pos[:-1], out=keep[1:])  # windows of two documents never share a position
        parts.append(pos[keep])
    for d in np.flatnonzero((n > 0) & (n < window)):  # shorter than a window: its rightmost minimum
        lo = offsets[d]
        parts.append(lo + winnow_positions(seq[lo : offsets[d + 1]], window))
    pos = np.sort(np.concatenate(parts)) if parts else np.empty(0, dtype=np.intp)
    return seq[pos], np.searchsorted(pos, offsets).astype(np.int64)
