"""Stop words from maintained lists: hazm's for Persian, the stop-words package for ru/en."""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable

from ..config import LANGUAGES, Config
from .scripts import SCRIPT_RES, token_language


@lru_cache(maxsize=8)
def stopwords_for(lang: str) -> frozenset[str]:
    """Stop words of ``lang``, passed through the same canonical steps as documents, so the
    words match the tokens they are meant to remove."""
    from . import Canonicalizer, persian

    if lang == "fa" and persian.SEGMENTATION == "anchors":
        return frozenset()  # Persian tokens are content-defined pieces, not words
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


def stop_languages(canon: str, doc_lang: str) -> frozenset[str]:
    """Languages whose stop lists :func:`stopwords_to_drop` needs for the tokens of
    ``canon``: the document's and those of the scripts in it. More do no harm: en and ru are
    always taken (no scan); fa only when there is Arabic script (its list needs hazm)."""
    if not canon.isascii() and SCRIPT_RES["fa"].search(canon):
        return frozenset(LANGUAGES)
    return frozenset({"en", "ru", doc_lang})


@lru_cache(maxsize=64)
def stopwords_to_drop(langs: frozenset[str], doc_lang: str) -> frozenset[str]:
    """Stop words of the scripts in ``langs`` that the per-token rule removes: a word is
    dropped when it is a stop word of its own script, or of ``doc_lang`` if it has none."""
    union = frozenset().union(*(stopwords_for(lang) for lang in langs))
    return frozenset(t for t in union if t in stopwords_for(token_language(t) or doc_lang))
