"""Canonicalization: raw text -> canonical tokens.

One pipeline object, :class:`Canonicalizer`, built from :class:`neardup.config.Config` (so
indexing and querying run the same steps) and a ``backend`` ("compiled" or "reference",
:data:`Backend`): the named text steps (``Canonicalizer.text_steps``: NFKC, HTML, hyphenation,
page numbers, marks, punctuation, the Persian step, casefold, ё, digits) on the string, then
numbers, stop words and stems on the tokens. Each step's reference form is a plain function in
its module (the rule, documented and doctested); "compiled" runs the same rule as a loop over
code points (the ``*_loops`` modules, compiled: :mod:`neardup.sketches.loops`), tested equal.
Language is decided per token by script (Arabic script -> fa, Cyrillic -> ru, Latin -> en), so
mixed text gets each word's own stop words and stemmer, and Persian rules apply to its Persian
runs only
(:func:`~.scripts.map_persian_runs`); the document language is the majority script unless
given.

Modules: :mod:`.html` (tags, entities), :mod:`.letters` (marks, punctuation, digits,
hyphenation), :mod:`.scripts` (languages and script runs), :mod:`.persian` (hazm, ZWNJ and
compounds), :mod:`.stopwords`, :mod:`.stemming`, :mod:`.search` (text for full-text search)
and :mod:`.offsets` (canonical tokens with their raw character spans).
"""

from __future__ import annotations

from .canonicalizer import Canonical, Canonicalizer, stopwords_for
from .html import strip_html
from .letters import Backend
from .offsets import tokens_with_offsets
from .scripts import detect_language
from .search import search_text

__all__ = [
    "Backend",
    "Canonical",
    "Canonicalizer",
    "detect_language",
    "search_text",
    "stopwords_for",
    "strip_html",
    "tokens_with_offsets",
]
