"""Scripts and languages: the language of a letter, a token, a text, and the script runs
of a mixed-language text (Arabic script -> fa, Cyrillic -> ru, Latin -> en)."""

from __future__ import annotations

import re
from functools import lru_cache

_FA_CLASS = "\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff"
_RU_CLASS = "\u0400-\u052f"
_EN_CLASS = "A-Za-z\u00c0-\u024f"
SCRIPT_RES = {"fa": re.compile(f"[{_FA_CLASS}]"), "ru": re.compile(f"[{_RU_CLASS}]"), "en": re.compile(f"[{_EN_CLASS}]")}
_ASCII_LETTER = re.compile("[A-Za-z]")
# A Persian run: from an Arabic-script character to the last one before a Cyrillic or Latin
# letter (spaces, digits and punctuation between Persian words stay inside the run).
_FA_RUN = re.compile(f"[{_FA_CLASS}](?:[^{_RU_CLASS}{_EN_CLASS}]*[{_FA_CLASS}])?")
_OTHER_LETTER = re.compile(f"[{_RU_CLASS}{_EN_CLASS}]")


def script_of(ch: str) -> str | None:
    """fa / ru / en for a letter of Arabic, Cyrillic or Latin script, else None."""
    o = ord(ch)
    if 0x0600 <= o <= 0x06FF or 0x0750 <= o <= 0x077F or 0xFB50 <= o <= 0xFDFF or 0xFE70 <= o <= 0xFEFF:
        return "fa"
    if 0x0400 <= o <= 0x052F:
        return "ru"
    if ch.isascii() and ch.isalpha() or 0x00C0 <= o <= 0x024F:
        return "en"
    return None


def token_language(token: str) -> str | None:
    for ch in token:
        s = script_of(ch)
        if s:
            return s
    return None


def map_persian_runs(text: str, fn) -> str:
    """``fn`` applied to each Persian run of ``text`` (all of it when it has no Cyrillic or
    Latin letter), the rest left as it is: mixed text gets Persian rules only where it is
    Persian."""
    if not _OTHER_LETTER.search(text):
        return fn(text)
    return _FA_RUN.sub(lambda m: fn(m[0]), text)


def detect_language(text: str, default: str = "en", sample: int = 4000) -> str:
    """Majority script among the first ``sample`` letters: fa, ru or en."""
    if text.isascii():  # its letters, if any, are Latin
        return "en" if _ASCII_LETTER.search(text) else default
    letter_res = _script_letter_res()
    present = [(lang, m) for lang in ("fa", "ru", "en") if (m := letter_res[lang].search(text))]
    if not present:
        return default
    if len(present) == 1 and present[0][1].start() < sample:
        return present[0][0]  # one script, and its first letter is among the first `sample` letters
    prefix = _letters_prefix(text, sample)
    counts = {lang: sum(map(len, letter_res[lang].findall(prefix))) for lang in ("fa", "ru", "en")}
    best = max(counts, key=counts.__getitem__)
    return best if counts[best] else default


def _char_class(codepoints: list[int]) -> str:
    """A regex character class body for the given sorted code points, as ranges."""
    parts, i = [], 0
    while i < len(codepoints):
        j = i
        while j + 1 < len(codepoints) and codepoints[j + 1] == codepoints[j] + 1:
            j += 1
        parts.append(f"\\U{codepoints[i]:08x}-\\U{codepoints[j]:08x}")
        i = j + 1
    return "".join(parts)


#: The code points :func:`script_of` can assign a script to (it returns None elsewhere).
_SCRIPT_RANGES = ((0x41, 0x7A), (0xC0, 0x24F), (0x400, 0x52F), (0x600, 0x6FF), (0x750, 0x77F), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF))


@lru_cache(maxsize=1)
def _letter_codepoints() -> list[int]:
    return list(map(ord, filter(str.isalpha, map(chr, range(0x110000)))))


@lru_cache(maxsize=1)
def _script_letter_res() -> dict[str, re.Pattern]:
    """Per script, runs of the letters (``str.isalpha``) that :func:`script_of` assigns to it."""
    by: dict[str, list[int]] = {"fa": [], "ru": [], "en": []}
    for lo, hi in _SCRIPT_RANGES:
        for cp in range(lo, hi + 1):
            s = script_of(chr(cp)) if chr(cp).isalpha() else None
            if s:
                by[s].append(cp)
    classes = {lang: _char_class(cps) for lang, cps in by.items()}
    return {lang: re.compile(f"[{cc}][{cc}]*") for lang, cc in classes.items()}


@lru_cache(maxsize=4)
def _first_letters_re(sample: int) -> re.Pattern:
    a = _char_class(_letter_codepoints())
    return re.compile(f"(?>(?:[^{a}]*+[{a}]){{{sample}}})")


def _letters_prefix(text: str, sample: int) -> str:
    """The shortest prefix of ``text`` holding its first ``sample`` letters (all of it if fewer).

    Chunk by chunk: a chunk as long as the letters still needed holds at most that many, so
    the prefix never overshoots; when a chunk is all letters, its last one is the last needed.
    (The same as ``_first_letters_re(sample).match``, without a regex step per character.)"""
    if len(text) <= sample:
        return text
    pos, need = 0, sample
    while need > 0 and pos < len(text):
        chunk = text[pos : pos + need]
        need -= sum(map(str.isalpha, chunk))
        pos += len(chunk)
    return text[:pos] if need == 0 else text
