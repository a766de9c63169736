"""Canonicalization: raw text -> canonical tokens.

A pipeline of small named steps (``Canonicalizer.text_steps`` on the string, then
``token_steps`` on the token list), driven by :class:`neardup.config.Config` so indexing
and querying run the same steps. Language is decided per token by script (Arabic script ->
fa, Cyrillic -> ru, Latin -> en), so mixed text gets each word's own stop words and stemmer;
the document language is the majority script unless given.

Persian goes through hazm's ``Normalizer`` (Arabic letter variants, digits, diacritics,
tatweel, spacing of affixes such as the prefix "می"), after which ZWNJ is removed so that
"می‌خواهم", "میخواهم" and "می خواهم" give one token.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable

from .config import LANGUAGES, Config

ZWNJ = "\u200c"
_TAG = re.compile(r"<(script|style)\b.*?</\1\s*>|<!--.*?-->|<[A-Za-z/!?][^<>]{0,2000}>", re.S | re.I)
_HYPHEN_BREAK = re.compile(r"(\w)[-\u00ad\u2010]\s*\n\s*(\w)")
_PAGE_NUMBER_LINE = re.compile(r"(?<=\n)[ \t]*(?:[-\u2013\u2014]\s*)?(?:page|стр\.?|страница|صفحه)?[ \t]*\d{1,4}(?:[ \t]*[-\u2013\u2014])?[ \t]*(?=\r?\n)", re.I)
_TOKEN = re.compile(r"[^\W_]+")
_MARKS = re.compile(r"[\u0300-\u036f\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640\u200d\u200e\u200f\u00ad\ufeff]")
_SPACE = re.compile(r"\s+")
_PUNCT = re.compile(r"[^\w\u200c]+|_+|(?<![\u0600-\u06ff])\u200c+|\u200c+(?![\u0600-\u06ff])")
_NON_WORD = re.compile(r"[^\w\u200c]+")  # _PUNCT for texts without ZWNJ and underscores
# Cheap necessary conditions checked before the costlier substitutions above.
_HYPHEN_GUARD = re.compile(r"[-\u00ad\u2010]\s*\n")
_PAGE_NUMBER_GUARD = re.compile(r"\d(?:[ \t]*[-\u2013\u2014])?[ \t]*\r?\n")
# The letter ranges of :func:`script_of`, as character classes.
_FA_CLASS = "\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff"
_RU_CLASS = "\u0400-\u052f"
_EN_CLASS = "A-Za-z\u00c0-\u024f"
_SCRIPT_RES = {"fa": re.compile(f"[{_FA_CLASS}]"), "ru": re.compile(f"[{_RU_CLASS}]"), "en": re.compile(f"[{_EN_CLASS}]")}
_ARABIC_SCRIPT = re.compile("[\u0600-\u06ff\ufb50-\ufeff]")

# Letter variants hazm may leave, mapped to the Persian forms.
_FA_LETTERS = str.maketrans({"ي": "ی", "ى": "ی", "ئ": "ی", "ك": "ک", "ة": "ه", "ۀ": "ه", "ؤ": "و", "أ": "ا", "إ": "ا", "ٱ": "ا", "ٲ": "ا"})


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


def detect_language(text: str, default: str = "en", sample: int = 4000) -> str:
    """Majority script among the first ``sample`` letters: fa, ru or en."""
    letter_res = _script_letter_res()
    present = [(lang, m) for lang in ("fa", "ru", "en") if (m := letter_res[lang].search(text))]
    if not present:
        return default
    if len(present) == 1 and present[0][1].start() < sample:
        return present[0][0]  # one script, and its first letter is among the first `sample` letters
    prefix = _letters_prefix(text, sample)
    counts = {lang: len(letter_res[lang].findall(prefix)) for lang in ("fa", "ru", "en")}
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


@lru_cache(maxsize=1)
def _letter_codepoints() -> list[int]:
    return [cp for cp in range(0x110000) if chr(cp).isalpha()]


@lru_cache(maxsize=1)
def _script_letter_res() -> dict[str, re.Pattern]:
    """Per script, the letters (``str.isalpha``) that :func:`script_of` assigns to it."""
    by: dict[str, list[int]] = {"fa": [], "ru": [], "en": []}
    for cp in _letter_codepoints():
        s = script_of(chr(cp))
        if s:
            by[s].append(cp)
    return {lang: re.compile(f"[{_char_class(cps)}]") for lang, cps in by.items()}


@lru_cache(maxsize=4)
def _first_letters_re(sample: int) -> re.Pattern:
    a = _char_class(_letter_codepoints())
    return re.compile(f"(?>(?:[^{a}]*+[{a}]){{{sample}}})")


def _letters_prefix(text: str, sample: int) -> str:
    """The shortest prefix of ``text`` holding its first ``sample`` letters (all of it if fewer)."""
    if len(text) <= sample:
        return text
    m = _first_letters_re(sample).match(text)
    return text[: m.end()] if m else text


def token_language(token: str) -> str | None:
    for ch in token:
        s = script_of(ch)
        if s:
            return s
    return None


@lru_cache(maxsize=1)
def _hazm_normalizer():
    from hazm import Normalizer  # imported lazily: hazm takes about a second to import

    return Normalizer()


_ZWNJ_INSIDE = re.compile(r"(?<=[\u0600-\u06ff])\u200c+(?=[\u0600-\u06ff])")


def normalize_persian(text: str) -> str:
    """hazm normalization, the remaining Arabic letter variants, then ZWNJ: removed between
    Arabic-script letters (one word), a space elsewhere (hazm may attach a prefix to a
    word of another script)."""
    text = _hazm_normalizer().normalize(_SPACE.sub(" ", text))
    return _ZWNJ_INSIDE.sub("", text.translate(_FA_LETTERS)).replace(ZWNJ, " ")


@lru_cache(maxsize=1)
def _digit_table() -> dict[int, str]:
    return {cp: str(unicodedata.decimal(chr(cp))) for cp in range(128, 0x10000) if unicodedata.decimal(chr(cp), None) is not None}


@lru_cache(maxsize=1)
def _digit_class() -> re.Pattern:
    return re.compile("[" + "".join(re.escape(chr(cp)) for cp in _digit_table()) + "]")


def unify_digits(text: str) -> str:
    """Every decimal digit (Arabic-Indic, Persian, Devanagari, ...) to ASCII."""
    if text.isascii() or not _digit_class().search(text):
        return text
    return text.translate(_digit_table())


@lru_cache(maxsize=8)
def stopwords_for(lang: str) -> frozenset[str]:
    """Stop words from maintained lists: hazm's for Persian, stop-words for ru/en.

    The list is passed through the same canonical steps as documents, so the words match
    the tokens they are meant to remove.
    """
    if lang == "fa":
        from hazm import stopwords_list

        words: Iterable[str] = stopwords_list()
    else:
        from stop_words import get_stop_words

        words = get_stop_words({"ru": "russian", "en": "english"}[lang])
    out: set[str] = set()
    plain = Canonicalizer(Config(stopwords=False, stem="none", default_lang=lang))
    for w in words:
        out.update(plain.tokens(w, lang))
    return frozenset(out)


@lru_cache(maxsize=8)
def _stemmer(lang: str, kind: str) -> Callable[[str], str] | None:
    if kind == "snowball" and lang in ("ru", "en"):
        import snowballstemmer

        st = snowballstemmer.stemmer({"ru": "russian", "en": "english"}[lang])
        return st.stemWord
    if kind == "lemma" and lang == "ru":
        import pymorphy3

        morph = pymorphy3.MorphAnalyzer()
        return lambda w: morph.parse(w)[0].normal_form.replace("ё", "е")
    if kind in ("snowball", "lemma") and lang == "fa":
        from hazm import Stemmer

        return Stemmer().stem
    return None


@dataclass(frozen=True)
class Canonical:
    """Canonical tokens of one document and its language."""

    tokens: list[str]
    lang: str


class Canonicalizer:
    """Text -> canonical tokens, as configured.

    >>> Canonicalizer(Config(stopwords=False)).tokens("<b>A rose</b> is a ROSE!")
    ['a', 'rose', 'is', 'a', 'rose']
    """

    def __init__(self, config: Config):
        self.config = config
        c = config
        steps: list[tuple[str, Callable[[str], str]]] = [("nfkc", lambda t: unicodedata.normalize("NFKC", t))]
        if c.strip_html:
            steps.append(("strip_html", strip_html))
        steps += [
            ("rejoin_hyphenation", lambda t: _HYPHEN_BREAK.sub(r"\1\2", t) if _HYPHEN_GUARD.search(t) else t),
            ("drop_page_numbers", lambda t: _PAGE_NUMBER_LINE.sub(" ", t) if _PAGE_NUMBER_GUARD.search(t) else t),
            ("drop_marks", lambda t: _MARKS.sub("", t)),
            ("drop_punctuation", drop_punctuation),
            ("persian", lambda t: normalize_persian(t) if _has_arabic_script(t) else t),
            ("casefold", str.casefold),
            ("yo_to_ye", lambda t: t.replace("ё", "е")),
        ]
        if c.digits == "unify":
            steps.append(("unify_digits", unify_digits))
        self.text_steps = steps

    def text(self, text: str) -> str:
        """The text after all string-level steps (before tokenizing)."""
        for _, step in self.text_steps:
            text = step(text)
        return text

    def tokens(self, text: str, lang: str | None = None) -> list[str]:
        return self.canonicalize(text, lang).tokens

    def canonicalize(self, text: str, lang: str | None = None) -> Canonical:
        if lang is not None and lang not in LANGUAGES:
            raise ValueError(f"unknown language code {lang!r}; use one of {', '.join(LANGUAGES)} or leave it out to detect")
        c = self.config
        doc_lang = lang or (c.default_lang if c.default_lang != "auto" else None) or detect_language(text)
        canon = self.text(text)
        toks = _TOKEN.findall(canon)
        if c.digits == "drop":
            toks = [t for t in toks if not t.isdigit()]
        if c.stopwords and c.stem == "none":
            # Only tokens found in some stop list of a script present in the text (or of
            # the document language, for tokens without a script) need the per-token check.
            langs = frozenset(lang for lang, rx in _SCRIPT_RES.items() if rx.search(canon)) | {doc_lang}
            drop = _stopwords_to_drop(langs, doc_lang)
            toks = [t for t in toks if t not in drop]
        elif c.stopwords or c.stem != "none":
            out = []
            for t in toks:
                tl = token_language(t) or doc_lang
                if c.stopwords and t in stopwords_for(tl):
                    continue
                if c.stem != "none":
                    st = _stemmer(tl, c.stem)
                    if st is not None:
                        t = st(t)
                out.append(t)
            toks = out
        return Canonical(toks, doc_lang)


def strip_html(text: str) -> str:
    """Remove tags, comments, script and style blocks, then decode entities."""
    if "<" in text:
        text = _TAG.sub(" ", text)
    if "&" in text:
        text = html.unescape(text)
    return text


def drop_punctuation(text: str) -> str:
    """Runs of non-word characters, of underscores, and ZWNJ not between two Arabic-script
    letters, each to a space."""
    if "\u200c" not in text and "_" not in text:
        return _NON_WORD.sub(" ", text)  # the other alternatives of _PUNCT cannot match
    return _PUNCT.sub(" ", text)


def _has_arabic_script(text: str) -> bool:
    return _ARABIC_SCRIPT.search(text) is not None


@lru_cache(maxsize=64)
def _stopwords_to_drop(langs: frozenset[str], doc_lang: str) -> frozenset[str]:
    """Stop words of the scripts in ``langs`` that the per-token rule removes: a word is
    dropped when it is a stop word of its own script, or of ``doc_lang`` if it has none."""
    union = frozenset().union(*(stopwords_for(lang) for lang in langs))
    return frozenset(t for t in union if t in stopwords_for(token_language(t) or doc_lang))
