"""Stop words from maintained lists: hazm's for Persian, the stop-words package's for ru/en.

The ru and en lists of stop-words 2025.11.4 ship with neardup (``data/stop-words``, with their
source and BSD license): that release needs Python 3.11, and the lists of the release Python
3.10 gets are other lists, which would give other signatures.
"""

from __future__ import annotations

from pathlib import Path

from ..config import LANGUAGES
from . import persian
from .scripts import SCRIPT_RES

#: The shipped lists of the stop-words package (one word a line), by language.
STOP_WORDS_DIR = Path(__file__).resolve().parent / "data" / "stop-words"
STOP_WORDS_FILES = {"en": "english.txt", "ru": "russian.txt"}


def raw_stopwords(lang: str) -> list[str]:
    """The maintained stop list of ``lang`` as published (:func:`~.canonicalizer.stopwords_for`
    passes it through the canonical steps): for ru and en the lines of the shipped file, read
    as the stop-words package reads them (stripped, blank lines out).

    >>> "the" in raw_stopwords("en") and "и" in raw_stopwords("ru")
    True
    """
    if lang == "fa":
        return list(persian.import_hazm("Persian stop words").stopwords_list())
    text = (STOP_WORDS_DIR / STOP_WORDS_FILES[lang]).read_text(encoding="utf-8")
    return [w.strip() for w in text.split("\n") if w.strip()]


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
