"""Stop words from maintained lists: hazm's for Persian, the stop-words package for ru/en."""

from __future__ import annotations

from ..config import LANGUAGES
from . import persian
from .scripts import SCRIPT_RES


def raw_stopwords(lang: str) -> list[str]:
    """The maintained stop list of ``lang`` as published (:func:`~.canonicalizer.stopwords_for`
    passes it through the canonical steps)."""
    if lang == "fa":
        return list(persian.import_hazm("Persian stop words").stopwords_list())
    from stop_words import get_stop_words

    return list(get_stop_words({"ru": "russian", "en": "english"}[lang]))


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
    if stop_languages_read_text(fa_segmentation) and not canon.isascii() and SCRIPT_RES["fa"].search(canon):
        return frozenset(LANGUAGES)
    return frozenset({"en", "ru", doc_lang})


def stop_languages_read_text(fa_segmentation: str = "anchors") -> bool:
    """Whether :func:`stop_languages` reads the text (else its answer is one per language)."""
    return persian_stop_words(fa_segmentation)
