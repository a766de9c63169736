"""Canonical tokens with the raw character spans they come from.

Canonicalization is not a character map (NFKC, hazm, rejoined hyphenation and compounds,
dropped tags and stop words), so offsets are recovered by alignment: the raw text is cut
into whitespace-separated pieces with their spans, each piece is canonicalized on its own
(without stop words), and each of the document's real tokens, in order, is found in the
concatenated piece tokens: where the previous token ended (Persian anchor pieces, compounds
written apart, words broken across lines), else at the nearest piece token ahead that starts
with it. It takes the span of the pieces it covers. Characters passed over are the dropped
ones (stop words, tags).
"""

from __future__ import annotations

import bisect
import re
from array import array
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..config import Config
from ..sketches.hashing import code_points
from ..sketches.loops import compiled
from ..sketches.ragged import offsets_of, row_positions
from .letters import code_point_table

if TYPE_CHECKING:
    from .canonicalizer import Canonical, Canonicalizer

_PIECE = re.compile(r"\S+")
#: How far ahead (in characters of the piece tokens) a token is looked for.
WINDOW = 400


class Token(NamedTuple):
    text: str
    start: int  # raw character offsets, end exclusive
    end: int


@lru_cache(maxsize=8)
def _piece_canonicalizer(config: Config):
    from .canonicalizer import Canonicalizer

    return Canonicalizer(config.replace(stopwords=False))


def tokens_with_offsets(
    text: str, canonicalizer: Canonicalizer, lang: str | None = None
) -> tuple[list[Token], str]:
    """The canonical tokens of ``text`` (those of ``canonicalizer.canonicalize``) with their
    raw spans, and the document language."""
    words, starts, ends, doc_lang = token_spans(text, canonicalizer, lang)
    return [Token(w, s, e) for w, s, e in zip(words, starts, ends, strict=True)], doc_lang


def token_spans(
    text: str,
    canonicalizer: Canonicalizer,
    lang: str | None = None,
    canonical: Canonical | None = None,
) -> tuple[list[str], array, array, str]:
    """:func:`tokens_with_offsets` as the tokens, their raw starts and their raw ends (two
    ``array('q')``), and the document language: a few bytes per token beyond its text, so
    long documents are explained in memory proportional to their words. ``canonical``: the
    text's canonical tokens and language (``canonicalizer``'s), where the caller made them."""
    words, pieces, doc_lang = tokens_and_pieces(text, canonicalizer, lang, canonical)
    starts, ends = align(words, pieces, len(text))
    return words, starts, ends, doc_lang


def tokens_and_pieces(
    text: str,
    canonicalizer: Canonicalizer,
    lang: str | None = None,
    canonical: Canonical | None = None,
) -> tuple[list[str], Pieces, str]:
    """The canonical tokens of ``text`` (``canonical``'s, where given, else
    ``canonicalizer``'s), its piece tokens (:func:`piece_tokens`, under the canonicalizer's
    config) and the document language: what :func:`align` aligns."""
    canon = canonical or canonicalizer.canonicalize(text, lang)
    return (
        list(canon.tokens),
        piece_tokens(text, canonicalizer.config, canon.lang),
        canon.lang,
    )


def piece_tokens_reference(text: str, config: Config, lang: str) -> Pieces:
    """The piece tokens of ``text`` (a document of ``lang``): each of its
    whitespace-separated pieces canonicalized on its own, without stop words, a piece at a
    time; a piece's tokens take its raw span. :func:`piece_tokens` is the same, faster."""
    canon = _piece_canonicalizer(config)
    parts: list[str] = []
    at, start, end = array("q"), array("q"), array("q")
    stream_at = 0  # where the next piece token starts in the stream
    for m in _PIECE.finditer(text):
        for t in canon.tokens(m[0], lang):
            if t:
                parts.append(t)
                at.append(stream_at)
                start.append(m.start())
                end.append(m.end())
                stream_at += len(t)
    return Pieces("".join(parts), at, start, end)


def piece_tokens(text: str, config: Config, lang: str) -> Pieces:
    """:func:`piece_tokens_reference`, with each distinct piece canonicalized once and all of
    them in one call (:meth:`~.canonicalizer.Canonicalizer.tokens_many`); the pieces' spans
    and their tokens' places in the stream laid out with numpy (tests/test_languages.py
    checks that both give the same pieces).

    >>> p = piece_tokens("Ёлка, ёлка! co-op", Config(), "ru")
    >>> p.stream, list(p.at), list(p.start), list(p.end)
    ('елкаелкаcoop', [0, 4, 8, 10], [0, 6, 12, 12], [5, 11, 17, 17])
    """
    pieces = text.split()  # the runs of \S+: Python's \s is what str.isspace accepts
    if not pieces:
        return Pieces("", array("q"), array("q"), array("q"))
    ink = ~code_point_table(str.isspace)[code_points(text)]  # not whitespace
    edges = np.flatnonzero(np.diff(ink, prepend=False, append=False))
    del ink
    number = {p: i for i, p in enumerate(dict.fromkeys(pieces))}  # distinct piece -> number
    piece_of = np.fromiter(map(number.__getitem__, pieces), dtype=np.int64, count=len(pieces))
    del pieces
    made = [
        [t for t in tokens if t]
        for tokens in _piece_canonicalizer(config).tokens_many(list(number), [lang] * len(number))
    ]
    del number
    joined = ["".join(tokens) for tokens in made]
    lengths = np.fromiter((len(t) for tokens in made for t in tokens), dtype=np.int64)
    own = offsets_of([len(tokens) for tokens in made])  # each distinct piece's tokens
    del made
    count = own[piece_of + 1] - own[piece_of]  # tokens of each piece in the text
    length = lengths[row_positions(own, piece_of)]  # of each piece token, in stream order
    return Pieces(
        "".join(map(joined.__getitem__, piece_of.tolist())),
        _q(np.cumsum(length) - length),
        _q(np.repeat(edges[0::2], count)),
        _q(np.repeat(edges[1::2], count)),
    )


def _q(values: np.ndarray) -> array:
    """``values`` as an ``array('q')`` (what :class:`Pieces` holds: :func:`bisect` reads it
    fast)."""
    out = array("q")
    out.frombytes(values.astype(np.int64).tobytes())
    return out


class Pieces(NamedTuple):
    """The piece tokens of a text in stream order: their concatenation (``stream``), where
    each starts in it (``at``, strictly increasing) and the raw span of its piece."""

    stream: str
    at: array
    start: array
    end: array

    def of(self, pos: int) -> int:
        """The piece token holding stream position ``pos``."""
        return bisect.bisect_right(self.at, pos) - 1


def align_reference(words: list[str], p: Pieces, text_len: int) -> tuple[array, array]:
    """The raw start and end of each of ``words``, found in turn in ``p.stream`` (the rule of
    the module docstring, a token at a time): it spans the pieces of the piece tokens it
    covers; a token no piece gives is zero-width at the next piece (the text's end after the
    last). :func:`align` is the same, faster."""
    starts, ends = array("q"), array("q")
    cursor = 0
    for t in words:
        a = _find(p.stream, t, cursor, p.at)
        if a < 0:  # no piece gives it: zero width at the next piece
            pos = p.start[p.of(cursor)] if cursor < len(p.stream) else text_len
            starts.append(pos)
            ends.append(pos)
            continue
        starts.append(p.start[p.of(a)])
        ends.append(p.end[p.of(a + len(t) - 1)])
        cursor = a + len(t)
    return starts, ends


def align(words: list[str], p: Pieces, text_len: int) -> tuple[array, array]:
    """:func:`align_reference`, faster: the tokens found by the compiled loop
    (:func:`.offsets_loops.find_tokens`) and their spans laid out with numpy, where the
    compiled loops run, else :func:`align_python` (tests/test_languages.py checks that each
    gives the reference spans).

    >>> p = Pieces("ab", array("q", [0, 1]), array("q", [0, 2]), array("q", [1, 3]))
    >>> [list(x) for x in align(["a", "b", "z"], p, 3)]
    [[0, 2, 3], [1, 3, 3]]
    """
    fast = compiled("neardup.canonical.offsets_loops")
    if fast is None or not words or not p.at:
        return align_python(words, p, text_len)
    at = np.frombuffer(p.at, dtype=np.int64)
    start, end = np.frombuffer(p.start, dtype=np.int64), np.frombuffer(p.end, dtype=np.int64)
    length = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    found, cursor = fast.find_tokens(
        code_points(p.stream), at, code_points("".join(words)), offsets_of(length), WINDOW
    )
    ok = found >= 0
    # a token found takes its pieces' span; one not found is zero-width at the next piece
    # (the text's end after the last)
    first = np.where(ok, found, np.minimum(cursor, max(len(p.stream) - 1, 0)))
    last = np.where(ok, found + length - 1, first)
    past = ~ok & (cursor >= len(p.stream))
    starts = np.where(past, text_len, start[np.searchsorted(at, first, side="right") - 1])
    ends = np.where(ok, end[np.searchsorted(at, last, side="right") - 1], starts)
    return _q(starts), _q(ends)


def align_python(words: list[str], p: Pieces, text_len: int) -> tuple[array, array]:
    """:func:`align_reference`, with the usual cases first: a token that continues the
    stream at the cursor, or that begins one of the next three piece tokens (after stop
    words), is found without a search, and takes the span of its piece token where it ends
    inside it.

    >>> p = Pieces("ab", array("q", [0, 1]), array("q", [0, 2]), array("q", [1, 3]))
    >>> [list(x) for x in align_python(["a", "b", "z"], p, 3)]
    [[0, 2, 3], [1, 3, 3]]
    """
    stream, at = p.stream, p.at
    following = array("q", at[1:])  # following[j]: where piece token j ends
    following.append(len(stream))
    starts, ends = array("q"), array("q")
    cursor = k = 0  # k: the first piece token starting at or after the cursor
    for t in words:
        n = len(t)
        # j: the piece token t is found at the start of, or in
        a, j = _found_ahead(stream, t, at, k, cursor) if n else (-1, -1)
        if j < 0:
            a = _find(stream, t, cursor, at)
            if a < 0:
                pos = p.start[p.of(cursor)] if cursor < len(stream) else text_len
                starts.append(pos)
                ends.append(pos)
                continue
            j = p.of(a)
        cursor = a + n
        starts.append(p.start[j])
        if following[j] >= cursor:  # t ends inside piece token j
            ends.append(p.end[j])
            k = j + 1
        else:
            ends.append(p.end[p.of(cursor - 1)])
            k = bisect.bisect_left(at, cursor)
    return starts, ends


def _found_ahead(stream: str, t: str, at: array, k: int, cursor: int) -> tuple[int, int]:
    """(where, piece token) of a token ``t`` that continues the stream at ``cursor`` (piece
    token ``k`` the first at or after it), or that begins one of the next three piece tokens
    (the first ahead that starts with it: none between them does); ``j`` -1 where neither
    (:func:`align_python` searches then)."""
    n_parts = len(at)
    if stream.startswith(t, cursor):
        return cursor, (k if k < n_parts and at[k] == cursor else k - 1)
    for i in range(k, min(k + 3, n_parts)):
        if at[i] > cursor + WINDOW:
            break
        if stream.startswith(t, at[i]):
            return at[i], i
    return -1, -1


def _find(stream: str, token: str, cursor: int, starts: array) -> int:
    """Where ``token`` continues the stream at ``cursor``, else its nearest occurrence within
    ``WINDOW`` characters that starts a piece token (``starts``: where each begins, sorted),
    else its nearest occurrence there; -1."""
    if not token:
        return -1
    if stream.startswith(token, cursor):
        return cursor
    end = min(len(stream), cursor + WINDOW + len(token))
    first = a = stream.find(token, cursor, end)
    while a >= 0:
        i = bisect.bisect_left(starts, a)
        if i < len(starts) and starts[i] == a:
            return a
        a = stream.find(token, a + 1, end)
    return first
