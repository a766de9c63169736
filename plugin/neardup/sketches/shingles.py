"""w-shingles (Broder 1997): the SET of contiguous runs of w tokens, each hashed to 64 bits.

Shingle hashes are combined from per-token hashes with numpy (no string joins), by
:func:`~neardup.sketches.hashing.hash_runs` over each window of w token hashes:

    h_i = fmix64(fmix64(... fmix64(t_i * C + t_{i+1}) * C + ... + t_{i+w-1}) xor w)

which depends on the order of the w tokens. Short documents: a document with
1 <= n < w tokens has one shingle, the hash of all its n tokens (so it still has a
signature and still matches its exact copies); an empty document has no shingles.
Character n-grams (``shingle="char"``) run the same combination over code points of the
canonical tokens joined by single spaces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .hashing import U64, fmix64, hash_strings


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
    units = np.asarray(units, dtype=U64)
    return combine_many(units, np.array([0, len(units)], dtype=np.int64), w)[0]


def combine_many(units: np.ndarray, offsets: np.ndarray, w) -> tuple[np.ndarray, np.ndarray]:
    """:func:`combine` for many documents at once (ragged: ``units`` of all documents
    concatenated, ``offsets`` their bounds; ``w`` one size or one per document); returns
    the shingle hashes and their offsets: :func:`~neardup.sketches.hashing.hash_runs` of each
    window, in one compiled pass (:func:`neardup.sketches.hashing_loops.window_hashes`).

    >>> from neardup.sketches.hashing import hash_runs
    >>> u = np.array([5, 6, 7, 8, 9], dtype=np.uint64)
    >>> h, off = combine_many(u, np.array([0, 3, 3, 5]), [2, 4, 3])
    >>> off.tolist(), h.tolist() == hash_runs(u, np.array([0, 1, 3]), np.array([2, 2, 2])).tolist()
    ([0, 2, 2, 3], True)
    """
    from .loops import loops

    hashing_loops = loops("neardup.sketches.hashing_loops")

    offsets = np.asarray(offsets, dtype=np.int64)
    widths = np.broadcast_to(np.asarray(w, dtype=np.int64), (len(offsets) - 1,))
    if len(widths) and int(widths.min()) < 1:
        raise ValueError("the shingle size must be at least 1")
    return hashing_loops.window_hashes(
        np.asarray(units, dtype=U64), offsets, np.ascontiguousarray(widths)
    )


def from_units(units: np.ndarray, w: int) -> Shingles:
    """Shingles of w consecutive unit hashes (token hashes or code-point hashes)."""
    seq = combine(units, w)
    return Shingles(seq, np.unique(seq))


def word_shingles(tokens: list[str], w: int, seed: int) -> Shingles:
    return from_units(hash_strings(tokens, seed), w)


def char_units(tokens: list[str], seed: int) -> np.ndarray:
    """Hashes of the code points of the tokens joined by single spaces."""
    cps = np.frombuffer(" ".join(tokens).encode("utf-32-le"), dtype=np.uint32).astype(U64)
    return fmix64(cps ^ np.uint64(seed))


def char_shingles(tokens: list[str], n: int, seed: int) -> Shingles:
    return from_units(char_units(tokens, seed), n)


def shingle(tokens: list[str], w: int, seed: int, kind: str = "word") -> Shingles:
    """S(A, w) of canonical tokens, word or character shingles.

    Broder's example (000): A = "a rose is a rose is a rose", B = "a rose is a flower
    which is a rose" have resemblance r_1 = 0.6, r_2 = 0.5, r_3 = 3/7; A has 5 shingles
    of 4 words, 3 of them distinct.

    >>> from neardup.sketches.verify import resemblance
    >>> a = "a rose is a rose is a rose".split()
    >>> b = "a rose is a flower which is a rose".split()
    >>> [round(resemblance(shingle(a, w, 1).set, shingle(b, w, 1).set), 4) for w in (1, 2, 3)]
    [0.6, 0.5, 0.4286]
    >>> s = shingle(a, 4, seed=1)
    >>> len(s.sequence), len(s.set)
    (5, 3)
    """
    return word_shingles(tokens, w, seed) if kind == "word" else char_shingles(tokens, w, seed)


def shingle_strings(tokens: list[str], w: int) -> list[str]:
    """The shingles themselves, for explanations (``neardup compare``): overlapping runs
    of ``w`` tokens, words - w + 1 of them (one if there are fewer than w words).

    >>> shingle_strings("чтобы иметь стройную фигуру нужно".split(), 3)
    ['чтобы иметь стройную', 'иметь стройную фигуру', 'стройную фигуру нужно']
    >>> shingle_strings(["rose"], 3)
    ['rose']
    """
    if not tokens:
        return []
    w = min(w, len(tokens))
    return [" ".join(tokens[i : i + w]) for i in range(len(tokens) - w + 1)]
