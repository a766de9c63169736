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

import re
from functools import lru_cache
from typing import NamedTuple

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


@lru_cache(maxsize=200_000)
def _piece_tokens(config: Config, piece: str, lang: str) -> tuple[str, ...]:
    return tuple(_piece_canonicalizer(config).tokens(piece, lang))


def tokens_with_offsets(text: str, config: Config, lang: str | None = None) -> tuple[list[Token], str]:
    """The canonical tokens of ``text`` (those of ``Canonicalizer(config).canonicalize``)
    with their raw spans, and the document language."""
    from .canonicalizer import Canonicalizer

    canon = Canonicalizer(config).canonicalize(text, lang)
    parts: list[str] = []
    starts: set[int] = set()  # stream positions where a piece token starts
    span_start: list[int] = []  # per stream character: the raw span of its piece
    span_end: list[int] = []
    at = 0
    for m in _PIECE.finditer(text):
        for t in _piece_tokens(config, m[0], canon.lang):
            parts.append(t)
            starts.add(at)
            at += len(t)
            span_start.extend([m.start()] * len(t))
            span_end.extend([m.end()] * len(t))
    stream = "".join(parts)
    out: list[Token] = []
    cursor = 0
    for t in canon.tokens:
        a = _find(stream, t, cursor, starts)
        if a < 0:  # no piece gives it: zero width at the next piece
            pos = span_start[cursor] if cursor < len(stream) else len(text)
            out.append(Token(t, pos, pos))
            continue
        out.append(Token(t, span_start[a], span_end[a + len(t) - 1]))
        cursor = a + len(t)
    return out, canon.lang


def _find(stream: str, token: str, cursor: int, starts: set[int]) -> int:
    """Where ``token`` continues the stream at ``cursor``, else its nearest occurrence within
    ``WINDOW`` characters that starts a piece token, else its nearest occurrence there; -1."""
    if not token:
        return -1
    if stream.startswith(token, cursor):
        return cursor
    end = min(len(stream), cursor + WINDOW + len(token))
    first = a = stream.find(token, cursor, end)
    while a >= 0:
        if a in starts:
            return a
        a = stream.find(token, a + 1, end)
    return first
