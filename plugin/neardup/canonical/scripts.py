"""Scripts and languages: the language of a letter, a token, a text, and the script runs
of a mixed-language text (Arabic script -> fa, Cyrillic -> ru, Latin -> en)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence

import numpy as np

from ..hashing import code_points
from ..ragged import offsets_of
from ..tablecache import cached_table
from .letters import code_point_table

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
    return _majority(*_script_counts(text, sample), default)


def detect_languages(texts: Sequence[str], default: str = "en", sample: int = 4000) -> list[str]:
    """:func:`detect_language` of each text. The letters of the non-ASCII ones are counted in
    one compiled pass (:func:`neardup.kernels.script_counts`) over their first ``2 * sample``
    characters; a text with fewer letters there and more characters after them is counted
    alone.

    >>> detect_languages(["Привет, мир", "سلام دنیا", "hello", "123", "Привет, hello world"])
    ['ru', 'fa', 'en', 'en', 'en']
    """
    out: list = [detect_language(t, default, sample) if t.isascii() else None for t in texts]
    rest = [i for i, lang in enumerate(out) if lang is None]
    if not rest:
        return out
    from ..loops import loops

    kernels = loops()

    cap = 2 * sample
    heads = [texts[i][:cap] for i in rest]
    letter, script = _code_point_tables()
    counts = kernels.script_counts(code_points("".join(heads)), offsets_of([len(h) for h in heads]), letter, script, sample,
                                   len(_LANG_CODES) + 1)
    for i, head, c in zip(rest, heads, counts.tolist(), strict=True):
        out[i] = detect_language(texts[i], default, sample) if sum(c) < sample and len(texts[i]) > len(head) else _majority(*c[1:], default)
    return out


def _majority(fa: int, ru: int, en: int, default: str) -> str:
    """The script with the most letters (ties: fa, then ru, then en), or ``default`` if none."""
    counts = {"fa": fa, "ru": ru, "en": en}
    best = max(counts, key=counts.__getitem__)
    return best if counts[best] else default


_LANG_CODES = {"fa": 1, "ru": 2, "en": 3}


@lru_cache(maxsize=1)
def _code_point_tables() -> tuple[np.ndarray, np.ndarray]:
    """Per code point: is it a letter (``str.isalpha``), and its script code (0 none, then
    ``_LANG_CODES``) when it is a letter :func:`script_of` assigns."""
    letter = code_point_table(str.isalpha)

    def make() -> np.ndarray:
        script = np.zeros(0x110000, dtype=np.uint8)
        for lo, hi in _SCRIPT_RANGES:
            for cp in range(lo, hi + 1):
                s = script_of(chr(cp)) if letter[cp] else None
                if s:
                    script[cp] = _LANG_CODES[s]
        return script

    return letter, cached_table("scripts", make, __file__)


def _script_counts(text: str, sample: int) -> tuple[int, int, int]:
    """Letters of fa, ru and en among the first ``sample`` letters (``str.isalpha``) of
    ``text``, all of them if it has fewer: counted over code points with numpy, chunk by
    chunk (a chunk twice as long as the letters still needed; the last one is cut right
    after the last letter needed)."""
    letter, script = _code_point_tables()
    if len(text) <= sample:  # every letter counts (a script code is 0 but on letters)
        counts = np.bincount(script[np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")], minlength=4)
        return int(counts[1]), int(counts[2]), int(counts[3])
    counts = np.zeros(4, dtype=np.int64)
    pos, need = 0, sample
    while need > 0 and pos < len(text):
        chunk = text[pos : pos + max(2 * need, 4096)]  # (letters are most of a text: one chunk, most often)
        pos += len(chunk)
        cps = np.frombuffer(chunk.encode("utf-32-le", "surrogatepass"), dtype="<u4")
        is_letter = letter[cps]
        cum = np.cumsum(is_letter)
        if cum[-1] >= need:  # the chunk holds the last letter needed: stop right after it
            end = int(np.searchsorted(cum, need)) + 1
            cps, is_letter = cps[:end], is_letter[:end]
        counts += np.bincount(script[cps[is_letter]], minlength=4)
        need -= int(is_letter.sum())
    return int(counts[1]), int(counts[2]), int(counts[3])


#: The code points :func:`script_of` can assign a script to (it returns None elsewhere).
_SCRIPT_RANGES = ((0x41, 0x7A), (0xC0, 0x24F), (0x400, 0x52F), (0x600, 0x6FF), (0x750, 0x77F), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF))

