"""Canonical.search_words: when canonicalization reports the words full-text search would
find, the full-text text made from them is search_text's own (the embedded engine indexes it)."""

from __future__ import annotations

import json
import random

import pytest

from neardup.canonical import Canonicalizer
from neardup.canonical.search import search_text, search_text_of_words
from neardup.config import Config

from .conftest import CORPORA

PIECES = ["a", "Б", "1", "١", " ", ".", "-\n", "\n", "<p>", "&lt;", "_", "\u200c", "ё", "ß", "\u0345", "ک", "²", "é", "\u0301", "İ"]
FIXED = ["<b>Hello</b> world &amp; more", "inter-\nnational co-\noperation", "line\n 12 \nnext", "Ёлка ёж 12 ١٢", "a_b c__d",
         "Straße ǅ ﬁ", "e\u200cf", "x ² y ½", "word\u00adbreak", "\ufeffbom", "İstanbul", "plain words only", "Просто слова 2024"]


def _texts() -> list[str]:
    rng = random.Random(3)
    out = FIXED + ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30))) for _ in range(1500)]
    for name in ("en", "ru", "fa"):
        path = CORPORA / f"{name}.jsonl"
        if path.exists():
            with path.open(encoding="utf-8") as f:
                out += [json.loads(line)["text"] for _, line in zip(range(200), f, strict=False)]
    return out


@pytest.mark.parametrize("config", [Config(), Config(strip_html=False), Config(digits="keep"), Config(stopwords=False),
                                    Config(stem="snowball")], ids=["default", "no-html", "digits-keep", "no-stop", "stem"])
def test_search_words_give_search_text(config):
    c = Canonicalizer(config)
    reused = 0
    for t in _texts():
        k = c.canonicalize(t)
        if k.search_words is not None:
            reused += 1
            assert search_text_of_words(k.search_words) == search_text(t), t[:80]
    assert reused or config.digits != "unify"


def test_punctuated_text_without_arabic_script_reuses_its_words():
    """Punctuation that matters (an apostrophe, a dot inside a word) is dropped the same way by
    both; only Persian runs are split differently, so only they need search_text's own pass."""
    c = Canonicalizer(Config())
    assert c.canonicalize("It's a U.S. rule, isn't it? Ёлки-палки!").search_words is not None
    assert c.canonicalize("It's کتاب, isn't it?").search_words is None
