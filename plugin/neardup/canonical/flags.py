"""Which kinds of characters a text holds, as bits read from one table per code point:
characters NFKC may change, marks it only moves or composes, the rare characters the text
steps act on, lone surrogates, letters of scripts written without spaces. A text without a
kind passes the steps that act on it unchanged, so the canonicalizer skips them; each bit is
checked against its step over all of Unicode in tests/test_canonical_fast.py."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Sequence

import numpy as np

from ..runtime.tablecache import cached_table
from . import letters
from .letters import (
    Backend,
    compiled_loops,
    composing_marks,
    composing_pairs,
    dropped_marks,
    nfkc_table,
    nfkc_words,
    rare_characters,
)
from .ranges import UNSPACED as UNSPACED_RANGES
from .ranges import char_class
from .spans import grouped_code_points


def has_rare_characters(text: str) -> bool:
    """Whether ``text`` holds a character that :func:`.letters.drop_marks`,
    :func:`.letters.unify_digits` or :func:`.letters.punctuation_matters` acts on (a mark, a
    decimal digit other than ASCII, Arabic script, U+0345): a text without one passes those
    steps, and the Persian step, unchanged, and so does its casefold (checked over all of
    Unicode in tests/test_canonical_fast.py). One scan instead of one per step: the
    characters :func:`.letters.rare_characters` matches, read from a table
    (:func:`text_flags`).

    >>> [has_rare_characters(t) for t in ("Ёж и дом", "дом\u0301", "۱۲")]
    [False, True, True]
    """
    return bool(text_flags(text) & RARE)


#: Bits of :func:`text_flags`: a character NFKC may change (:func:`.letters.nfkc_unstable`)
#: other than the marks it only moves and drop_marks drops (:func:`.letters.dropped_marks`)
#: and the marks it only composes with the character before or moves
#: (:func:`.letters.composing_marks`), one of the first of those marks, and one of
#: :func:`has_rare_characters`.
NFKC_MAY_CHANGE, RARE, DROPPED_MARK = 1, 2, 4
#: Bit of :func:`text_flags`: a lone surrogate (U+D800..U+DFFF: a text with one is no valid
#: Unicode, :func:`neardup.signing.validate.check_document`).
SURROGATE = 8
#: Bit of :func:`text_flags`: one of :func:`.letters.composing_marks` (the hamza above
#: U+0654, the acute accent U+0301) that NFKC may compose with the character before it or
#: move (where the loops are compiled, only a text where one follows a character with a
#: nonzero combining class, or one it composes with, keeps the bit: :func:`_or_flags`).
COMPOSING_MARK = 16
#: Bit of :func:`text_flags`: a letter of a script written without spaces
#: (:data:`.ranges.UNSPACED`, :func:`~.scripts.split_unspaced`), or a character NFKC makes
#: one of (:func:`_becomes_unspaced`).
UNSPACED = 64
#: A bit of :func:`flag_table` only (not of :func:`text_flags`): a nonzero combining class or
#: a canonical decomposition (a mark after such a character may be moved, or composed past
#: it: À followed by U+0323).
_UNSETTLED = 32


def text_flags(text: str, backend: Backend = "reference") -> int:
    """Which of :data:`NFKC_MAY_CHANGE`, :data:`DROPPED_MARK`, :data:`COMPOSING_MARK`,
    :data:`RARE`, :data:`SURROGATE` and :data:`UNSPACED` characters ``text`` holds
    (:func:`text_flags_many` of one text): ``not flags & (NFKC_MAY_CHANGE | DROPPED_MARK |
    COMPOSING_MARK)`` means ``nfkc(text) == text``, ``not flags & (NFKC_MAY_CHANGE |
    COMPOSING_MARK)`` that ``drop_marks(nfkc(text)) == drop_marks(text)``, ``bool(flags &
    RARE)`` is :func:`has_rare_characters` (Arabic script among them: ``not flags & RARE``
    means no :func:`.letters.has_arabic_script`) and ``not flags & UNSPACED`` that
    :func:`~.scripts.split_unspaced` leaves the text as it is.

    >>> [text_flags(t) for t in ("ab", "дом", "ﬁ дом", "дом ۱", "cafe\u0301", "کَتاب", "猫")]
    [0, 0, 1, 2, 18, 6, 64]
    """
    if text.isascii():
        return 0
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    return int(_or_flags(cps, np.array([0, len(cps)], dtype=np.int64), backend)[0])


def text_flags_many(texts: Sequence[str], backend: Backend = "reference") -> np.ndarray:
    """:func:`text_flags` of each text (uint8), the texts that are not all ASCII read
    together: their code points in one array, each looked up in one table of the bits
    (:func:`flag_table`) and or-ed per text in one compiled pass
    (:func:`.letters_loops.or_flags`). ``unicodedata.is_normalized`` and the regular
    expression of the rare characters read such a text at 4 to 10 ns a character; this
    reads it at under 1 ns.

    >>> text_flags_many(["ab", "ﬁ", "", "дом ۱"]).tolist()
    [0, 1, 0, 2]
    """
    out = np.zeros(len(texts), dtype=np.uint8)
    for group, cps, bounds in grouped_code_points(
        texts, [i for i, t in enumerate(texts) if not t.isascii()]
    ):
        out[group] = _or_flags(cps, bounds, backend)
    return out


def _or_flags(cps: np.ndarray, bounds: np.ndarray, backend: Backend = "reference") -> np.ndarray:
    """The or of the :func:`flag_table` bits of each text ``cps[bounds[d] : bounds[d + 1]]``
    (none empty), with numpy or compiled (``backend``). The :data:`COMPOSING_MARK` bit stays
    only where such a mark follows a character with a nonzero combining class or a canonical
    decomposition (it may be moved, or composed past it) or one it composes with
    (:func:`_marks_may_compose`): otherwise each follows a starter NFKC keeps, that
    decomposes to nothing and that it does not compose with (UAX #15), and NFKC moves and
    composes nothing."""
    table, letters_loops = flag_table(), compiled_loops(backend)
    flags = (
        letters_loops.or_flags(cps, bounds, table)
        if letters_loops
        else np.bitwise_or.reduceat(table[cps], bounds[:-1])
    )
    marked = np.flatnonzero(flags & np.uint8(COMPOSING_MARK))
    if len(marked):
        starts, ends = bounds[marked], bounds[marked + 1]
        if letters_loops:
            keep = letters_loops.marks_may_compose(
                cps, starts, ends, table, COMPOSING_MARK, _UNSETTLED, composing_pairs()
            )
        else:
            keep = _marks_may_compose(cps, starts, ends, table)
        flags[marked[~keep]] &= np.uint8(~COMPOSING_MARK & 0xFF)
    return flags & np.uint8(~_UNSETTLED & 0xFF)


def _marks_may_compose(
    cps: np.ndarray, starts: np.ndarray, ends: np.ndarray, table: np.ndarray
) -> np.ndarray:
    """Per text ``cps[starts[d] : ends[d]]``: whether one of :data:`COMPOSING_MARK` follows a
    character with the bit ``_UNSETTLED`` or one it composes with (``prev << 21 | mark`` in
    :func:`.letters.composing_pairs`). The reference of :func:`.letters_loops.marks_may_compose`.

    >>> cps = np.frombuffer("\u0627\u0654 \u0647\u0654".encode("utf-32-le"), dtype="<u4")
    >>> _marks_may_compose(cps, np.array([0, 3]), np.array([2, 5]), flag_table()).tolist()
    [True, False]
    """
    out = np.zeros(len(starts), dtype=np.bool_)
    pairs = composing_pairs()
    for d, (start, end) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        text = cps[start:end]
        at = np.flatnonzero(table[text[1:]] & np.uint8(COMPOSING_MARK)) + 1
        prev = text[at - 1]
        keys = prev.astype(np.uint64) << np.uint64(21) | text[at].astype(np.uint64)
        out[d] = bool((table[prev] & np.uint8(_UNSETTLED)).any()) or bool(
            np.isin(keys, pairs).any()
        )
    return out


def nfkc_flagged(text: str, flags: int, backend: Backend = "reference") -> str:
    """:func:`.letters.nfkc` of a text whose :func:`text_flags` are ``flags``: the text itself where
    it has no character NFKC may change, else its words normalized (:func:`.letters.nfkc_words`,
    without ``unicodedata.is_normalized`` first: that check normalizes the whole text
    where it meets a character that may compose, as Persian texts' hamza above), and the
    same object where that changes nothing.

    >>> t = "ﬁle дом"; nfkc_flagged(t, text_flags(t)), nfkc_flagged("дом", 0)
    ('file дом', 'дом')
    """
    if not flags & (NFKC_MAY_CHANGE | DROPPED_MARK | COMPOSING_MARK):
        return text
    out = nfkc_words(text, backend)
    return text if out == text else out


def _becomes_unspaced() -> np.ndarray:
    """The code points that are, or whose NFKD or NFKC holds, a letter of a script written
    without spaces (:data:`.ranges.UNSPACED`): U+2F00 KANGXI RADICAL ONE -> U+4E00. NFKC of
    a text composes no such letter from characters outside those scripts (a composite
    there decomposes to a letter there: tests/test_canonical_fast.py), so NFKC of a text
    without one of these holds none."""
    unspaced = re.compile(f"[{char_class(*UNSPACED_RANGES)}]")
    found = [np.arange(lo, hi + 1) for lo, hi in UNSPACED_RANGES]
    found.append(
        np.array(
            [
                c
                for c in np.flatnonzero(nfkc_table()).tolist()
                if unspaced.search(
                    unicodedata.normalize("NFKD", chr(c)) + unicodedata.normalize("NFKC", chr(c))
                )
            ],
            dtype=np.int64,
        )
    )
    return np.concatenate(found)


@lru_cache(maxsize=1)
def flag_table() -> np.ndarray:
    """Per code point (uint8): the bits of :func:`text_flags` (kept on disk:
    :mod:`neardup.runtime.tablecache`, made anew when this module or :mod:`.letters` changes);
    the rare characters are those :func:`.letters.rare_characters` matches, found by running
    it over every code point."""

    def make() -> np.ndarray:
        table = nfkc_table().astype(np.uint8) * np.uint8(NFKC_MAY_CHANGE)
        table[[ord(ch) for ch in dropped_marks()]] = DROPPED_MARK
        table[[ord(ch) for ch in composing_marks()]] = COMPOSING_MARK
        table[
            [
                cp
                for cp in range(0x30000)
                if unicodedata.combining(chr(cp))
                or unicodedata.decomposition(chr(cp))[:1] not in ("", "<")
            ]
        ] |= np.uint8(_UNSETTLED)
        table[0xD800:0xE000] |= np.uint8(SURROGATE)
        table[_becomes_unspaced()] |= np.uint8(UNSPACED)
        every = np.arange(0x110000, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")
        table[[m.start() for m in rare_characters().finditer(every)]] |= np.uint8(RARE)
        return table

    return cached_table("text-flags", make, __file__, letters.__file__)
