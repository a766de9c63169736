"""Text for full-text search: documents and queries analyzed the same way.

:func:`search_text` gives the words a full-text index should hold for ``text`` and the
words a query should look for: Unicode compatibility forms, marks and diacritics out,
Persian letter unification and affix spacing (hazm), every ZWNJ a word boundary (so a
query word finds the compounds it is part of, :func:`~.persian.split_persian`), case folded, ё -> е, digits to ASCII, and (``stem``) each word's Snowball
stem for Russian and English words (so "файлами" finds "файл", "файлы", "файлов"). Stop
words are kept: a query may need them. The Elasticsearch/OpenSearch counterpart is the
engine's persian, russian and english analyzers on per-language subfields.
"""

from __future__ import annotations

from .letters import drop_marks, drop_punctuation, has_arabic_script, nfkc, split_tokens, unify_digits, yo_to_ye
from .persian import split_persian
from .scripts import map_persian_runs, token_language
from .stemming import stemmer


def search_text(text: str | None, lang: str | None = None, stem: bool = True) -> str:
    """The normalized words of ``text`` separated by spaces (see the module docstring);
    ``lang`` is the language of words in no script (digits), default en."""
    if not text:
        return ""
    t = drop_punctuation(drop_marks(nfkc(text)))
    if has_arabic_script(t):
        t = map_persian_runs(t, split_persian)
    words = split_tokens(unify_digits(yo_to_ye(t.casefold())))
    if stem:
        out = []
        for w in words:
            st = stemmer(token_language(w) or lang or "en", "snowball")
            out.append(st(w) if st is not None and token_language(w) != "fa" else w)
        words = out
    return " ".join(words)
