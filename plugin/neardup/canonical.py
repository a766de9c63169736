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
# Speed notes for the patterns below. Python's regex engine skips quickly to candidate
# positions only when a pattern starts with a literal or a character class (not a repeat
# or a lookbehind), and rules out an alternative cheaply by its first character when that
# alternative starts with a single character; hence "XX*" where "X+" would read better.
# A hyphen at a line end with a word character on either side (see rejoin_hyphenation).
_HYPHEN_BREAK = re.compile(r"[-\u00ad\u2010](?<=\w[-\u00ad\u2010])\s*\n\s*(?=\w)")
_ASCII_HYPHEN_BREAK = re.compile(r"-(?<=\w-)\s*\n\s*(?=\w)")  # the same on ASCII text
# A line holding only a page number ("- 12 -", "Page 3", "стр. 4", "صفحه ۱۲"), with the
# newline before it; the newline after it stays for the next line. The indentation is
# taken possessively ([ \t]*+): nothing after it can start with a space or tab, so giving
# it back could not make a match, and trying to is slow on indented text.
_PAGE_NUMBER_LINE = re.compile(r"\n[ \t]*+(?:[-\u2013\u2014]\s*)?(?:page|стр\.?|страница|صفحه)?[ \t]*\d{1,4}(?:[ \t]*[-\u2013\u2014])?[ \t]*(?=\r?\n)", re.I)
_TOKEN = re.compile(r"[^\W_]+")
# On ASCII text, where [^\W_] is [A-Za-z0-9], tokens are what splitting at the other
# characters leaves (and str.translate is fast on ASCII).
_ASCII_SEPARATORS = {cp: " " for cp in range(128) if not chr(cp).isalnum()}
_MARKS = re.compile(r"[\u0300-\u036f\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640\u200d\u200e\u200f\u00ad\ufeff]")
# The runs of whitespace that are not a single space (two or more characters, or one other
# than a space): replacing them by a space turns every run of whitespace into one.
_SPACE = re.compile(r"\s(?:\s+|(?<=[^\S ]))")
# Runs of non-word characters, of underscores, and of ZWNJ not between two Arabic-script
# letters: "[^\w\u200c]+|_+|(?<![\u0600-\u06ff])\u200c+|\u200c+(?![\u0600-\u06ff])", written
# with every alternative starting with a single character, and leaving out runs that are
# a single space (each run is replaced by a space).
_PUNCT = re.compile(r"[^\w\u200c][^\w\u200c]+|[^\w\u200c ]|__*|\u200c(?<![\u0600-\u06ff]\u200c)\u200c*|\u200c\u200c*(?![\u0600-\u06ff])")
_NON_WORD = re.compile(r"[^\w\u200c][^\w\u200c]+|[^\w\u200c ]")  # _PUNCT for texts without ZWNJ and underscores
# The letter ranges of :func:`script_of`, as character classes.
_FA_CLASS = "\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff"
_RU_CLASS = "\u0400-\u052f"
_EN_CLASS = "A-Za-z\u00c0-\u024f"
_SCRIPT_RES = {"fa": re.compile(f"[{_FA_CLASS}]"), "ru": re.compile(f"[{_RU_CLASS}]"), "en": re.compile(f"[{_EN_CLASS}]")}
_ASCII_LETTER = re.compile("[A-Za-z]")
_ARABIC_SCRIPT = re.compile("[\u0600-\u06ff\ufb50-\ufeff]")
# Characters for which drop_punctuation can change the tokens, and not only put spaces
# where tokenizing splits anyway (see Canonicalizer._text_for_tokens): Arabic script (a
# ZWNJ between its letters is kept, and hazm sees the spacing) and U+0345 COMBINING GREEK
# YPOGEGRAMMENI, the one non-word character that casefolds to a letter ("ι"; checked over
# all of Unicode in tests/test_canonical_fast.py; drop_marks removes it before, but this
# condition does not rely on that).
_PUNCTUATION_MATTERS = re.compile("[\u0600-\u06ff\ufb50-\ufeff\u0345]")

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


@lru_cache(maxsize=1)
def _letter_codepoints() -> list[int]:
    return [cp for cp in range(0x110000) if chr(cp).isalpha()]


@lru_cache(maxsize=1)
def _script_letter_res() -> dict[str, re.Pattern]:
    """Per script, runs of the letters (``str.isalpha``) that :func:`script_of` assigns to it."""
    by: dict[str, list[int]] = {"fa": [], "ru": [], "en": []}
    for cp in _letter_codepoints():
        s = script_of(chr(cp))
        if s:
            by[s].append(cp)
    classes = {lang: _char_class(cps) for lang, cps in by.items()}
    return {lang: re.compile(f"[{cc}][{cc}]*") for lang, cc in classes.items()}


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


class _CharMap:
    """``text.translate(table)``, translating only the runs of characters in the table.

    ``str.translate`` looks every character of a non-ASCII text up in the table, which
    costs about as much as the rest of a step; a regex finds the (few) runs to translate.
    """

    def __init__(self, table: dict[int, str]):
        self.table = table
        chars = "".join(re.escape(chr(cp)) for cp in sorted(table))
        self._runs = re.compile(f"[{chars}][{chars}]*")

    def __call__(self, text: str) -> str:
        return self._runs.sub(self._translate, text)

    def _translate(self, m: re.Match) -> str:
        return m[0].translate(self.table)


_FA_LETTER_MAP = _CharMap(_FA_LETTERS)


@lru_cache(maxsize=1)
def _hazm_normalizer():
    from importlib.metadata import version

    from hazm import Normalizer, maketrans  # imported lazily: hazm takes about a second to import

    if not version("hazm").startswith("0.10."):
        return Normalizer()

    class PrebuiltNormalizer(Normalizer):
        """hazm's ``Normalizer`` with its translation tables built once.

        hazm 0.10's ``normalize`` builds its letter and digit tables (``hazm.maketrans``)
        on every call and applies them to every character; here they are built at
        construction and applied to the runs they change. ``normalize`` runs the same
        public steps in the same order as hazm 0.10.0's, and skips
        ``decrease_repeated_chars`` where no letter repeats three times (its pattern,
        ``repeated_chars_pattern``, contains ``more_than_two_repeat_pattern``). Checked
        against the stock ``Normalizer`` in tests/test_canonical_fast.py.
        """

        def __init__(self) -> None:
            super().__init__()
            self._letters = _CharMap(maketrans(self.translation_src, self.translation_dst))
            self._numbers = _CharMap(maketrans(self.number_translation_src, self.number_translation_dst))
            self._repeat = re.compile(self.more_than_two_repeat_pattern)

        def normalize(self, text: str) -> str:
            text = self._letters(text)
            steps = (self.persian_style, self.persian_number, self.remove_diacritics, self.correct_spacing)
            steps += (self.unicodes_replacement, self.remove_specials_chars, self.decrease_repeated_chars, self.seperate_mi)
            for step in steps:  # all of them: the default settings
                text = step(text)
            return text

        def persian_number(self, text: str) -> str:
            return self._numbers(text)

        def decrease_repeated_chars(self, text: str) -> str:
            return super().decrease_repeated_chars(text) if self._repeat.search(text) else text

    return PrebuiltNormalizer()


# ZWNJ runs between Arabic-script letters ("(?<=[\u0600-\u06ff])\u200c+(?=[\u0600-\u06ff])",
# starting at the ZWNJ).
_ZWNJ_INSIDE = re.compile(r"\u200c(?<=[\u0600-\u06ff]\u200c)\u200c*(?=[\u0600-\u06ff])")


def normalize_persian(text: str) -> str:
    """hazm normalization, the remaining Arabic letter variants, then ZWNJ: removed between
    Arabic-script letters (one word), a space elsewhere (hazm may attach a prefix to a
    word of another script)."""
    text = _hazm_normalizer().normalize(_SPACE.sub(" ", text))
    return _ZWNJ_INSIDE.sub("", _FA_LETTER_MAP(text)).replace(ZWNJ, " ")


@lru_cache(maxsize=1)
def _digit_table() -> dict[int, str]:
    return {cp: str(unicodedata.decimal(chr(cp))) for cp in range(128, 0x10000) if unicodedata.decimal(chr(cp), None) is not None}


@lru_cache(maxsize=1)
def _digit_map() -> _CharMap:
    return _CharMap(_digit_table())


def unify_digits(text: str) -> str:
    """Every decimal digit (Arabic-Indic, Persian, Devanagari, ...) to ASCII."""
    return text if text.isascii() else _digit_map()(text)


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
            ("rejoin_hyphenation", rejoin_hyphenation),
            ("drop_page_numbers", lambda t: _PAGE_NUMBER_LINE.sub("\n ", t)),
            ("drop_marks", lambda t: t if t.isascii() else _MARKS.sub("", t)),
            ("drop_punctuation", drop_punctuation),
            ("persian", lambda t: normalize_persian(t) if _has_arabic_script(t) else t),
            ("casefold", str.casefold),
            ("yo_to_ye", lambda t: t.replace("ё", "е")),
        ]
        if c.digits == "unify":
            steps.append(("unify_digits", unify_digits))
        self.text_steps = steps

    def language_of(self, text: str) -> str:
        """The configured default language, or the one detected in ``text`` when it is "auto"."""
        return self.config.default_lang if self.config.default_lang != "auto" else detect_language(text)

    def text(self, text: str) -> str:
        """The text after all string-level steps (before tokenizing)."""
        for _, step in self.text_steps:
            text = step(text)
        return text

    def _text_for_tokens(self, text: str) -> str:
        """:meth:`text`, or a text with the same tokens: where drop_punctuation only turns
        separators into spaces, it is skipped, and so is persian (no Arabic script).

        drop_punctuation replaces what is not in ``[^\\W_]`` by spaces. Without the
        characters of ``_PUNCTUATION_MATTERS`` the steps after it map each character on its
        own and never a separator to a word character, so tokenizing splits at the same
        places with or without it.
        """
        plain = False
        for name, step in self.text_steps:
            if name == "drop_punctuation":
                plain = not _punctuation_matters(text)
            if plain and name in ("drop_punctuation", "persian"):
                continue
            text = step(text)
        return text

    def tokens(self, text: str, lang: str | None = None) -> list[str]:
        return self.canonicalize(text, lang).tokens

    def canonicalize(self, text: str, lang: str | None = None) -> Canonical:
        if lang is not None and lang not in LANGUAGES:
            raise ValueError(f"unknown language code {lang!r}; use one of {', '.join(LANGUAGES)} or leave it out to detect")
        c = self.config
        doc_lang = lang or self.language_of(text)
        canon = self._text_for_tokens(text)
        toks = canon.translate(_ASCII_SEPARATORS).split() if canon.isascii() else _TOKEN.findall(canon)
        if c.digits == "drop":
            toks = [t for t in toks if not t.isdigit()]
        if c.stopwords and c.stem == "none":
            drop = _stopwords_to_drop(_stop_languages(canon, doc_lang), doc_lang)
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


def rejoin_hyphenation(text: str) -> str:
    r"""Join words broken by a hyphen at a line end: "inter-\nnational" -> "international".

    The result is that of ``re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", text)``, found from the
    (rare) hyphens: joins are made left to right, and a break whose first word character
    is the second one of the previous join is left as it is ("a-\nb-\nc" -> "ab-\nc").
    """
    if "\n" not in text:
        return text
    parts, start, joined_at = [], 0, -1
    for m in (_ASCII_HYPHEN_BREAK if text.isascii() else _HYPHEN_BREAK).finditer(text):
        if m.start() - 1 != joined_at:  # joined_at: the second word character of the last join
            parts.append(text[start : m.start()])
            start = joined_at = m.end()
    if not parts:
        return text
    parts.append(text[start:])
    return "".join(parts)


def _has_arabic_script(text: str) -> bool:
    return not text.isascii() and _ARABIC_SCRIPT.search(text) is not None


def _punctuation_matters(text: str) -> bool:
    return not text.isascii() and _PUNCTUATION_MATTERS.search(text) is not None


def _stop_languages(canon: str, doc_lang: str) -> frozenset[str]:
    """Languages whose stop lists :func:`_stopwords_to_drop` needs for the tokens of
    ``canon``: the document's and those of the scripts in it. More do no harm: en and ru are
    always taken (no scan); fa only when there is Arabic script (its list needs hazm)."""
    if not canon.isascii() and _SCRIPT_RES["fa"].search(canon):
        return frozenset(LANGUAGES)
    return frozenset({"en", "ru", doc_lang})


@lru_cache(maxsize=64)
def _stopwords_to_drop(langs: frozenset[str], doc_lang: str) -> frozenset[str]:
    """Stop words of the scripts in ``langs`` that the per-token rule removes: a word is
    dropped when it is a stop word of its own script, or of ``doc_lang`` if it has none."""
    union = frozenset().union(*(stopwords_for(lang) for lang in langs))
    return frozenset(t for t in union if t in stopwords_for(token_language(t) or doc_lang))
