"""Stop words: closed-class function words only (articles, prepositions, conjunctions,
pronouns, auxiliaries), one small list per language in ``data/stopwords_LANG.txt``, each
naming its source in its header. No negation, number, direction, comparative, quantifier or
modal is a stop word: texts that differ in one of them must not canonicalize alike (source
004: stop words are "prepositions, conjunctions, particles, punctuation"). Languages other
than fa, ru and en have no stop list: none of their words is dropped."""

from __future__ import annotations

import pkgutil
from functools import lru_cache

from ..config import LANGUAGES
from .scripts import SCRIPT_RES


@lru_cache(maxsize=8)
def raw_stopwords(lang: str) -> tuple[str, ...]:
    """The stop list of ``lang`` as written in its data file (:func:`~.canonicalizer.stopwords_for`
    passes it through the canonical steps); empty for a language without one.

    >>> "the" in raw_stopwords("en"), "not" in raw_stopwords("en"), raw_stopwords("de")
    (True, False, ())
    """
    if lang not in LANGUAGES:
        return ()
    # (pkgutil's package data reader: importlib.resources would load zipfile and tempfile,
    # 5 ms of every process that signs a text)
    data = pkgutil.get_data(__package__, f"data/stopwords_{lang}.txt")
    if data is None:  # (a loader that reads no package data: not one pip installs with)
        raise FileNotFoundError(f"neardup's stop list of {lang!r} cannot be read")
    text = data.decode("utf-8")
    return tuple(
        w for w in (line.strip() for line in text.splitlines()) if w and not w.startswith("#")
    )


def persian_stop_words(fa_segmentation: str = "anchors") -> bool:
    """Whether Persian has stop words to drop: not when its tokens are anchor pieces
    (``fa_segmentation`` "anchors": content-defined, not words; :mod:`.persian`)."""
    return fa_segmentation != "anchors"


def stop_languages(canon: str, doc_lang: str, fa_segmentation: str = "anchors") -> frozenset[str]:
    """Languages whose stop lists :func:`stopwords_to_drop` needs for the tokens of
    ``canon``: the document's and those of the scripts in it. More do no harm: en and ru are
    always taken (no scan); fa only when there is Arabic script (its list needs hazm), and
    only where Persian has stop words (:func:`persian_stop_words`; else no scan: the
    languages are those of ``doc_lang`` alone, :func:`stop_languages_read_text`)."""
    if (
        stop_languages_read_text(fa_segmentation)
        and not canon.isascii()
        and SCRIPT_RES["fa"].search(canon)
    ):
        return frozenset(LANGUAGES)
    return frozenset({"en", "ru", doc_lang})


def stop_languages_read_text(fa_segmentation: str = "anchors") -> bool:
    """Whether :func:`stop_languages` reads the text (else its answer is one per language)."""
    return persian_stop_words(fa_segmentation)
