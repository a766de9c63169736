"""PyStemmer (C) and snowballstemmer (pure Python) give the same stems, so full-text indexes
do not depend on which one is installed (canonical/stemming.py uses PyStemmer when present)."""

from __future__ import annotations

import json
import re

import pytest

from .conftest import CORPORA

Stemmer = pytest.importorskip("Stemmer")
snowballstemmer = pytest.importorskip("snowballstemmer")

WORDS = [
    "running",
    "generously",
    "nationalization",
    "файлами",
    "файлов",
    "бежавшими",
    "ёлками",
    "connection",
    "іван",
    "cafés",
]


def _corpus_words(limit: int = 400) -> list[str]:
    words: set[str] = set()
    for name in ("en", "ru", "en_licenses"):
        path = CORPORA / f"{name}.jsonl"
        if not path.exists():
            continue
        with path.open(encoding="utf-8") as f:
            for n, line in enumerate(f):
                if n >= limit:
                    break
                words.update(re.findall(r"[^\W_]+", json.loads(line)["text"].casefold()))
    return sorted(words)


@pytest.mark.parametrize("algorithm", ["english", "russian"])
def test_same_stems(algorithm):
    c, py = Stemmer.Stemmer(algorithm), snowballstemmer.stemmer(algorithm)
    if type(py).__module__.startswith(
        "Stemmer"
    ):  # snowballstemmer hands out PyStemmer when it is installed
        from snowballstemmer import english_stemmer, russian_stemmer

        py = {"english": english_stemmer.EnglishStemmer, "russian": russian_stemmer.RussianStemmer}[
            algorithm
        ]()
    words = WORDS + _corpus_words()
    assert c.stemWords(words) == [py.stemWord(w) for w in words]
