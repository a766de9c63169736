"""Canonicalization: raw text -> canonical tokens.

A pipeline of small named steps (``Canonicalizer.text_steps`` on the string, then
``token_steps`` on the token list), driven by :class:`neardup.config.Config` so indexing
and querying run the same steps. Language is decided per token by script (Arabic script ->
fa, Cyrillic -> ru, Latin -> en), so mixed text gets each word's own stop words and stemmer,
and Persian rules apply to its Persian runs only (:func:`~.scripts.map_persian_runs`); the
document language is the majority script unless given.

Modules: :mod:`.html` (tags, entities), :mod:`.letters` (marks, punctuation, digits,
hyphenation), :mod:`.scripts` (languages and script runs), :mod:`.persian` (hazm, ZWNJ and
compounds), :mod:`.stopwords`, :mod:`.stemming`, :mod:`.search` (text for full-text search)
and :mod:`.offsets` (canonical tokens with their raw character spans).
"""

from __future__ import annotations

from .canonicalizer import Canonical, Canonicalizer, stopwords_for
from .html import strip_html
from .letters import ZWNJ, drop_punctuation, rejoin_hyphenation, unify_digits
from .persian import normalize_persian
from .offsets import tokens_with_offsets
from .scripts import detect_language, script_of, token_language
from .search import search_text

__all__ = [
    "Canonical",
    "Canonicalizer",
    "ZWNJ",
    "detect_language",
    "drop_punctuation",
    "normalize_persian",
    "rejoin_hyphenation",
    "script_of",
    "search_text",
    "stopwords_for",
    "strip_html",
    "token_language",
    "tokens_with_offsets",
    "unify_digits",
]
