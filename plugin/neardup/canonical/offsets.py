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
from typing import Callable, NamedTuple

from ..config import Config

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


@lru_cache(maxsize=8)
def _piece_tokenizer(config: Config) -> Callable[[str, str], tuple[str, ...]]:
    """``tokens(piece, lang)``: a piece's canonical tokens under ``config``, remembered per
    piece (the config is bound once: hashing it for every piece cost a tenth of the time)."""
    canon = _piece_canonicalizer(config)

    @lru_cache(maxsize=200_000)
    def tokens(piece: str, lang: str) -> tuple[str, ...]:
        return tuple(canon.tokens(piece, lang))

    return tokens


def tokens_with_offsets(
    text: str, config: Config, lang: str | None = None
) -> tuple[list[Token], str]:
    """The canonical tokens of ``text`` (those of ``Canonicalizer(config).canonicalize``)
    with their raw spans, and the document language."""
    words, starts, ends, doc_lang = token_spans(text, config, lang)
    return [Token(w, s, e) for w, s, e in zip(words, starts, ends, strict=True)], doc_lang


def token_spans(
    text: str, config: Config, lang: str | None = None
) -> tuple[list[str], array, array, str]:
    """:func:`tokens_with_offsets` as the tokens, their raw starts and their raw ends (two
    ``array('q')``), and the document language: a few bytes per token beyond its text, so
    long documents are explained in memory proportional to their words."""
    words, pieces, doc_lang = tokens_and_pieces(text, config, lang)
    starts, ends = align(words, pieces, len(text))
    return words, starts, ends, doc_lang


def tokens_and_pieces(
    text: str, config: Config, lang: str | None = None
) -> tuple[list[str], Pieces, str]:
    """The canonical tokens of ``text``, its piece tokens (:class:`Pieces`) and the document
    language: what :func:`align` aligns."""
    from .canonicalizer import Canonicalizer

    canon = Canonicalizer(config).canonicalize(text, lang)
    parts: list[str] = []
    # per piece token, in stream order: where it starts in the stream, and its piece's raw
    # span (one entry per token, not per character)
    part_at, part_start, part_end = array("q"), array("q"), array("q")
    at = 0
    piece_tokens = _piece_tokenizer(config)
    for m in _PIECE.finditer(text):
        for t in piece_tokens(m[0], canon.lang):
            if not t:
                continue
            parts.append(t)
            part_at.append(at)
            part_start.append(m.start())
            part_end.append(m.end())
            at += len(t)
    stream = "".join(parts)
    del parts

    return list(canon.tokens), Pieces(stream, part_at, part_start, part_end), canon.lang


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
    """:func:`align_reference`, with the usual case first: a token that is exactly the piece
    token at the cursor takes that piece's span without a search (tests/test_languages.py
    checks that both give the same spans).

    >>> p = Pieces("ab", array("q", [0, 1]), array("q", [0, 2]), array("q", [1, 3]))
    >>> [list(x) for x in align(["a", "b", "z"], p, 3)]
    [[0, 2, 3], [1, 3, 3]]
    """
    stream, at, n_parts = p.stream, p.at, len(p.at)
    starts, ends = array("q"), array("q")
    cursor = k = 0  # k: the first piece token starting at or after the cursor
    for t in words:
        n = len(t)
        if k < n_parts and at[k] == cursor and stream.startswith(t, cursor):
            following = at[k + 1] if k + 1 < n_parts else len(stream)
            if following == cursor + n:  # t is the piece token at the cursor, whole
                starts.append(p.start[k])
                ends.append(p.end[k])
                cursor, k = cursor + n, k + 1
                continue
        a = _find(stream, t, cursor, at)
        if a < 0:
            pos = p.start[p.of(cursor)] if cursor < len(stream) else text_len
            starts.append(pos)
            ends.append(pos)
            continue
        starts.append(p.start[p.of(a)])
        ends.append(p.end[p.of(a + n - 1)])
        cursor = a + n
        k = bisect.bisect_left(at, cursor)
    return starts, ends


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
