"""The code-point ranges the canonical rules name, defined once: the regular expressions take
their character classes from :func:`char_class`, the compiled loops compare with the bounds
(:func:`within`), and the class tables are made from the same tuples.

>>> char_class(ARABIC_BLOCK, PERSIAN_DIGITS)
'\\\\u0600-\\\\u06ff\\\\u06f0-\\\\u06f9'
>>> within(0x06F3, PERSIAN_DIGITS), within(ord("a"), *EN_LETTERS), within(ord("-"), *EN_LETTERS)
(True, True, False)
"""

from __future__ import annotations

Range = tuple[int, int]

#: The Arabic block: a ZWNJ between two of its characters is kept (the punctuation step and
#: the Persian steps), any other is a space.
ARABIC_BLOCK: Range = (0x0600, 0x06FF)
#: Arabic presentation forms A and B.
ARABIC_FORMS: Range = (0xFB50, 0xFEFF)
#: The Arabic-script word characters the punctuation step leaves (its lookahead for Persian).
ARABIC_SCRIPT: tuple[Range, ...] = (ARABIC_BLOCK, ARABIC_FORMS)
#: Persian letters (hamza .. ae): spaces between two are dropped, runs of three cut to two.
PERSIAN_LETTERS: Range = (0x0621, 0x06D5)
#: Extended Arabic-Indic (Persian) digits, set apart from the letters around them.
PERSIAN_DIGITS: Range = (0x06F0, 0x06F9)
#: The Arabic script of a Persian run (:data:`.scripts.SCRIPT_RES` "fa").
FA_SCRIPT: tuple[Range, ...] = (
    ARABIC_BLOCK,
    (0x0750, 0x077F),
    (0xFB50, 0xFDFF),
    (0xFE70, 0xFEFF),
)
#: Cyrillic and Cyrillic Supplement ("ru").
RU_LETTERS: tuple[Range, ...] = ((0x0400, 0x052F),)
#: Basic Latin letters, Latin-1 Supplement and Latin Extended-A and -B ("en").
EN_LETTERS: tuple[Range, ...] = ((0x41, 0x5A), (0x61, 0x7A), (0x00C0, 0x024F))
#: The letters that end a Persian run.
OTHER_LETTERS: tuple[Range, ...] = RU_LETTERS + EN_LETTERS
#: Letters of scripts written without spaces between words: Thai, Lao, Tibetan, Myanmar,
#: Khmer, kana, Han (with its extensions and compatibility forms), halfwidth katakana
#: (Hangul is written with spaces).
UNSPACED: tuple[Range, ...] = (
    (0x0E00, 0x0E7F),
    (0x0E80, 0x0EFF),
    (0x0F00, 0x0FFF),
    (0x1000, 0x109F),
    (0x1780, 0x17FF),
    (0x3040, 0x30FF),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0x20000, 0x3134F),
)


def char_class(*ranges: Range) -> str:
    """The ranges as the inside of a regular expression's character class (``\\uXXXX``
    escapes, ``\\UXXXXXXXX`` beyond the BMP, for a pattern).

    >>> char_class((0x4E00, 0x9FFF), (0x20000, 0x3134F))
    '\\\\u4e00-\\\\u9fff\\\\U00020000-\\\\U0003134f'
    """
    return "".join(f"{_escape(lo)}-{_escape(hi)}" for lo, hi in ranges)


def _escape(c: int) -> str:
    return f"\\u{c:04x}" if c <= 0xFFFF else f"\\U{c:08x}"


def within(c: int, *ranges: Range) -> bool:
    """Whether the code point ``c`` lies in one of ``ranges``."""
    return any(lo <= c <= hi for lo, hi in ranges)
