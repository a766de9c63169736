"""Texts as spans of code points: many texts' code points joined in one array (one encode),
cut into groups a pass reads at once, and the texts a compiled pass writes end to end in its
output read where they lie (:data:`Span`) instead of decoded and encoded again."""

from __future__ import annotations

import itertools
from typing import Sequence, Union

import numpy as np

#: Code points joined at most for one pass of :func:`.flags.text_flags_many` and
#: :func:`.letters.late_steps_spans` (a text longer goes alone): buffers of a few hundred
#: KB, which the allocator hands out again, where a whole batch's would be new memory every
#: time (on some machines its first touch costs more than the pass).
_GROUP_CHARS = 1 << 16


def groups(indices: list[int], texts: Sequence[str]) -> list[list[int]]:
    """``indices`` cut into runs whose texts hold at most :data:`_GROUP_CHARS` characters
    together (or one text)."""
    out: list[list[int]] = []
    size = 0
    for i in indices:
        n = len(texts[i])
        if not out or size + n > _GROUP_CHARS:
            out.append([])
            size = 0
        out[-1].append(i)
        size += n
    return out


def grouped_code_points(texts: Sequence[str], indices: list[int], separated: bool = False):
    """For each of :func:`groups` of ``indices``: (the group, its texts'
    :func:`joined_code_points`)."""
    for group in groups(indices, texts):
        yield (group, *joined_code_points([texts[i] for i in group], separated))


def joined_code_points(
    texts: Sequence[str], separated: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """The code points of the texts in one array (one encode), each followed by a space
    where ``separated`` (:func:`spans_of` are then their spans), and where each starts (and
    the last ends)."""
    bounds = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(
        np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + int(separated),
        out=bounds[1:],
    )
    joined = " ".join(texts) + " " if separated and texts else "".join(texts)
    return np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype="<u4"), bounds


#: A text as a span of code points: (buffer, lo, hi), the text ``buffer[lo:hi]``, followed
#: in the buffer by a space (the texts a compiled pass makes lie end to end in its output,
#: each followed by a space: a batch's are read from there, not decoded and encoded again).
Span = tuple[np.ndarray, int, int]
#: A text as a ``str`` or as a :data:`Span`.
TextOrSpan = Union[str, Span]


def spans_of(cps: np.ndarray, bounds: np.ndarray) -> list[Span]:
    """The :data:`Span` of each text ``cps[bounds[d] : bounds[d + 1] - 1]`` of a separated
    output (each followed by a space)."""
    at = np.asarray(bounds).tolist()
    return [(cps, a, b - 1) for a, b in itertools.pairwise(at)]


def decoded(texts: Sequence[TextOrSpan]) -> list[str]:
    """Each text as a ``str`` (a :data:`Span`'s buffer decoded once, its texts cut from it).

    >>> cps, bounds = joined_code_points(["ab", "дом"], True)
    >>> decoded(["x", *spans_of(cps, bounds)])
    ['x', 'ab', 'дом']
    """
    buffers: dict[int, str] = {}
    out = []
    for t in texts:
        if type(t) is str:
            out.append(t)
            continue
        buf, lo, hi = t
        if id(buf) not in buffers:
            buffers[id(buf)] = (
                np.asarray(buf)
                .astype("<u4", copy=False)
                .tobytes()
                .decode("utf-32-le", "surrogatepass")
            )
        out.append(buffers[id(buf)][lo:hi])
    return out


def joined_spans(texts: Sequence[TextOrSpan]) -> tuple[np.ndarray, np.ndarray]:
    """The code points of the texts each followed by a space, in one array, and where each
    starts (and the last ends): :func:`joined_code_points` of their :func:`decoded` with
    ``separated``, the spans that lie end to end in one buffer copied as one, the ``str``
    ones next to each other encoded at once.

    >>> cps, bounds = joined_code_points(["ab", "дом"], True)
    >>> a, b = joined_spans(["x", "", *spans_of(cps, bounds), "y"])
    >>> decoded(spans_of(a, b)), b.tolist()
    (['x', '', 'ab', 'дом', 'y'], [0, 2, 3, 6, 10, 12])
    """
    chunks: list[np.ndarray] = []
    words: list[str] = []
    view: list = []  # [buffer, lo, hi] of spans end to end, each with its space
    lengths = []
    for t in texts:
        if type(t) is str:
            lengths.append(len(t))
            if view:
                chunks.append(view[0][view[1] : view[2]])
                view = []
            words.append(t)
            continue
        buf, lo, hi = t
        lengths.append(hi - lo)
        if words:
            chunks.append(joined_code_points(words, True)[0])
            words = []
        if _goes_on(view, buf, lo):
            view[2] = hi + 1
        else:
            if view:
                chunks.append(view[0][view[1] : view[2]])
            view = [buf, lo, hi + 1]
    if view:
        chunks.append(view[0][view[1] : view[2]])
    if words:
        chunks.append(joined_code_points(words, True)[0])
    cps = _concatenated(chunks)
    bounds = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(np.asarray(lengths, dtype=np.int64) + 1, out=bounds[1:])
    return cps, bounds


def _goes_on(view: list, buf: np.ndarray, lo: int) -> bool:
    """Whether a span of ``buf`` from ``lo`` starts where ``view`` ([buffer, lo, hi] of
    spans end to end) ends, in the same buffer."""
    return bool(view) and view[0] is buf and view[2] == lo


def _concatenated(chunks: list[np.ndarray]) -> np.ndarray:
    """The chunks of code points in one uint32 array."""
    if not chunks:
        return np.zeros(0, dtype=np.uint32)
    return np.concatenate(chunks).astype(np.uint32, copy=False)
