"""Text for full-text search: documents and queries analyzed the same way.

:func:`search_text` gives the words a full-text index should hold for ``text`` and the words a query
should look for: Unicode compatibility forms, marks and diacritics out, Persian letter unification
and affix spacing (hazm), every ZWNJ a word boundary (so a query word finds the compounds it is part
of, :func:`~.persian.split_persian`), case folded, ё -> е, digits to ASCII, and (``stem``) each
word's Snowball stem for Russian and English words (so "файлами" finds "файл", "файлы", "файлов").
Stop words are kept: a query may need them. The Elasticsearch/OpenSearch counterpart is the engine's
persian, russian and english analyzers on per-language subfields.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .letters import (
    FA_LETTER_MAP,
    ZWNJ,
    drop_marks,
    drop_punctuation,
    has_arabic_script,
    nfkc,
    punctuation_matters,
    split_tokens,
    unify_digits,
    yo_to_ye,
)
from .persian import split_persian
from .scripts import map_persian_runs, token_language
from .stemming import stemmer


def search_text(text: str | None, lang: str | None = None, stem: bool = True) -> str:
    """The normalized words of ``text`` separated by spaces (see the module docstring);
    ``lang`` is the language of words in no script (digits), default en."""
    if not text:
        return ""
    t = drop_marks(nfkc(text))
    # (where punctuation does not matter, drop_punctuation would only put spaces where
    # split_tokens splits anyway)
    if punctuation_matters(t):
        t = drop_punctuation(t)
        if has_arabic_script(t):
            t = map_persian_runs(t, split_persian)
    words = split_tokens(unify_digits(yo_to_ye(t.casefold())))
    return " ".join(search_text_words(words, lang) if stem else words)


def search_text_words(words: list[str], lang: str | None = None) -> list[str]:
    """Each Russian or English word's Snowball stem (others as they are): :func:`_term` of
    each word, remembered per default language.

    >>> search_text_words(["файлами", "files", "سلام", "42"])
    ['файл', 'file', 'سلام', '42']
    """
    memo = _terms_memo(lang or "en")
    try:  # (once the memo is warm most texts hold no new word: one lookup per word)
        return list(map(memo.__getitem__, words))
    except KeyError:
        pass
    miss = set(words).difference(memo)
    # the memo is full: words it does not hold are analyzed each time
    if len(memo) + len(miss) > _MEMO_WORDS:
        return [memo[w] if w in memo else _term(w, lang) for w in words]
    for w in miss:
        memo[w] = _term(w, lang)
    return list(map(memo.__getitem__, words))


def _term(word: str, lang: str | None) -> str:
    wl = token_language(word) or lang or "en"
    st = stemmer(wl, "snowball") if wl != "fa" else None
    return st(word) if st is not None else word


#: Distinct words whose terms are remembered, per default language.
_MEMO_WORDS = 500_000


@lru_cache(maxsize=8)
def _terms_memo(lang: str) -> dict[str, str]:
    """word -> its term (:func:`_term`) for texts of default language ``lang``."""
    return {}


_WORD = re.compile(r"\S+")


@lru_cache(maxsize=100_000)
def _word_terms(word: str) -> frozenset[str]:
    """The terms :func:`search_text` gives one raw word, lightly: letters mapped without
    hazm's spacing rules (enough to find the word again in a snippet)."""
    t = drop_punctuation(drop_marks(nfkc(word)))
    if has_arabic_script(t):
        t = FA_LETTER_MAP(t).replace(ZWNJ, " ")
    return frozenset(search_text_words(split_tokens(unify_digits(yo_to_ye(t.casefold())))))


def snippet(text: str | None, terms: list[str], words: int = 16) -> str:
    """About ``words`` words of the raw ``text`` around the densest run of words whose terms
    are among ``terms`` (query terms from :func:`search_text`), those words in [brackets],
    cuts marked " … " (the form of FTS5's ``snippet``)."""
    if not text:
        return ""
    found = list(_WORD.finditer(text))
    wanted = set(terms)
    hit = [bool(_word_terms(m[0]) & wanted) for m in found]
    best, start, run = 0, 0, sum(hit[:words])
    best = run
    for i in range(1, max(1, len(found) - words + 1)):
        run += hit[i + words - 1] - hit[i - 1]
        if run > best:
            best, start = run, i
    shown = [
        f"[{m[0]}]" if hit[start + k] else m[0] for k, m in enumerate(found[start : start + words])
    ]
    return ("… " if start else "") + " ".join(shown) + (" …" if start + words < len(found) else "")


# -- long queries ------------------------------------------------------------------------------
#: Query terms every engine looks for at most: a longer query (a pasted paragraph) keeps its
#: first distinct words up to this many (an HTTP engine's clause limit may cut further, see
#: :func:`neardup.engines.elastic.dsl.fulltext_body`).
MAX_QUERY_TERMS = 100
#: A query of up to this many distinct terms needs every one of them in a hit.
ALL_TERMS_UP_TO = 8
#: A longer query needs this share (percent, rounded down) of its distinct terms in a hit.
MOST_TERMS_PERCENT = 60
#: The rule of :func:`required_terms` in the query DSL's ``minimum_should_match`` syntax.
MINIMUM_SHOULD_MATCH = f"{ALL_TERMS_UP_TO}<{MOST_TERMS_PERCENT}%"


def required_terms(n: int) -> int:
    """Distinct query terms a hit must contain, of ``n``: all of them up to
    :data:`ALL_TERMS_UP_TO`, else :data:`MOST_TERMS_PERCENT` percent rounded down (the query
    DSL's ``minimum_should_match`` of :data:`MINIMUM_SHOULD_MATCH`). Hits rank by BM25 over the
    terms they contain, so the documents holding most of a long query's words come first.

    >>> [required_terms(n) for n in (0, 1, 8, 9, 10, 100)]
    [0, 1, 8, 5, 6, 60]
    """
    return n if n <= ALL_TERMS_UP_TO else n * MOST_TERMS_PERCENT // 100


def query_words(text: str, limit: int = MAX_QUERY_TERMS) -> str:
    """The query ``text`` cut to its first raw words that bring at most ``limit`` distinct
    terms (:func:`search_text` terms); a word repeating only terms already kept is dropped, so
    every engine counts each query term once.

    >>> query_words("the cat, the dog and the cats", 3)
    'the cat, dog'
    >>> query_words("ايران ایران", 5)
    'ايران'
    """
    kept: list[str] = []
    seen: set[str] = set()
    for m in _WORD.finditer(text):
        new = _word_terms(m[0]) - seen
        if not new:
            continue
        if len(seen) + len(new) > limit:
            break
        seen |= new
        kept.append(m[0])
    return " ".join(kept)
