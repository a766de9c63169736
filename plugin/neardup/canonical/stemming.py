"""Stemmers and lemmatizers per language: Snowball (ru, en), pymorphy3 lemmas (ru), hazm (fa)."""

from __future__ import annotations

from functools import lru_cache
from typing import Callable


@lru_cache(maxsize=8)
def stemmer(lang: str, kind: str) -> Callable[[str], str] | None:
    """The stemmer of ``kind`` (snowball | lemma) for ``lang``, or None when there is none."""
    if kind == "snowball" and lang in ("ru", "en"):
        import snowballstemmer

        st = snowballstemmer.stemmer({"ru": "russian", "en": "english"}[lang])
        return lru_cache(maxsize=200_000)(st.stemWord)
    if kind == "lemma" and lang == "ru":
        import pymorphy3

        morph = pymorphy3.MorphAnalyzer()
        return lambda w: morph.parse(w)[0].normal_form.replace("ё", "е")
    if kind in ("snowball", "lemma") and lang == "fa":
        from hazm import Stemmer

        return Stemmer().stem
    return None
