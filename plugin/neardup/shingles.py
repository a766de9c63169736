"""w-shingles (Broder 1997): the SET of contiguous runs of w tokens, each hashed to 64 bits.

Shingle hashes are combined from per-token xxh64 hashes with numpy (no string joins):

    h_i = fmix64(... fmix64(fmix64(t_i * C + t_{i+1}) * C + t_{i+2}) ...)

which depends on the order of the w tokens. Short documents: a document with
1 <= n < w tokens has one shingle, the hash of all its n tokens (so it still has a
signature and still matches its exact copies); an empty document has no shingles.
Character n-grams (``shingle="char"``) run the same combination over code points of the
canonical tokens joined by single spaces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .hashing import U64, _fmix64_inplace, fmix64, hash_strings

_C = np.uint64(0x9E3779B97F4A7C15)


@dataclass(frozen=True)
class Shingles:
    """``sequence``: shingle hashes in document order (for winnowing);
    ``set``: the sorted distinct hashes, S(A, w)."""

    sequence: np.ndarray
    set: np.ndarray

    def __len__(self) -> int:
        return len(self.set)


def combine(units: np.ndarray, w: int) -> np.ndarray:
    """Hashes of all windows of ``w`` consecutive unit hashes (one if len < w, none if empty)."""
    n = len(units)
    if n == 0:
        return np.empty(0, dtype=U64)
    w = min(w, n)
    m = n - w + 1
    acc = units[:m].astype(U64)  # a copy, mixed in place below
    for j in range(1, w):
        acc *= _C
        acc += units[j : j + m]
        _fmix64_inplace(acc)
    acc ^= np.uint64(w)
    return _fmix64_inplace(acc)


def from_units(units: np.ndarray, w: int) -> Shingles:
    """Shingles of w consecutive unit hashes (token hashes or code-point hashes)."""
    seq = combine(units, w)
    return Shingles(seq, np.unique(seq))


def word_shingles(tokens: list[str], w: int, seed: int) -> Shingles:
    return from_units(hash_strings(tokens, seed), w)


def char_shingles(tokens: list[str], n: int, seed: int) -> Shingles:
    cps = np.frombuffer(" ".join(tokens).encode("utf-32-le"), dtype=np.uint32).astype(U64)
    return from_units(fmix64(cps ^ np.uint64(seed)), n)


def shingle(tokens: list[str], w: int, seed: int, kind: str = "word") -> Shingles:
    """S(A, w) of canonical tokens, word or character shingles."""
    return word_shingles(tokens, w, seed) if kind == "word" else char_shingles(tokens, w, seed)


def shingle_strings(tokens: list[str], w: int) -> list[str]:
    """The shingles themselves, for explanations (``neardup compare``)."""
    if not tokens:
        return []
    w = min(w, len(tokens))
    return [" ".join(tokens[i : i + w]) for i in range(len(tokens) - w + 1)]
