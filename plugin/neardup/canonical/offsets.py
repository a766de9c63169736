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

    def piece_of(pos: int) -> int:  # the piece token holding stream position ``pos``
        return bisect.bisect_right(part_at, pos) - 1

    words = list(canon.tokens)
    starts, ends = array("q"), array("q")
    cursor = 0
    for t in words:
        a = _find(stream, t, cursor, part_at)
        if a < 0:  # no piece gives it: zero width at the next piece
            pos = part_start[piece_of(cursor)] if cursor < len(stream) else len(text)
            starts.append(pos)
            ends.append(pos)
            continue
        starts.append(part_start[piece_of(a)])
        ends.append(part_end[piece_of(a + len(t) - 1)])
        cursor = a + len(t)
    return words, starts, ends, canon.lang


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
