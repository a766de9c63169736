"""Canonicalization: Persian orthography, Russian ё, HTML, hyphenation, page numbers, stop words."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.canonical import Canonicalizer, detect_language, stopwords_for
from neardup.config import Config

PLAIN = Canonicalizer(Config(stopwords=False))
FULL = Canonicalizer(Config())


@pytest.mark.parametrize("variant", ["می‌خواهم بروم", "میخواهم بروم", "می خواهم بروم"])
def test_persian_zwnj_variants_give_the_same_tokens(variant):
    assert PLAIN.tokens(variant) == ["میخواهم", "بروم"]


def test_arabic_letter_variants_and_digits_become_persian_and_ascii():
    assert PLAIN.tokens("كتاب علي ١٢٣ ۴۵۶ 789") == PLAIN.tokens("کتاب علی ۱۲۳ 456 ۷۸۹") == ["کتاب", "علی", "123", "456", "789"]


def test_persian_diacritics_and_tatweel_removed():
    assert PLAIN.tokens("سلامـــــ دُنیا") == PLAIN.tokens("سلام دنیا")


def test_russian_yo_and_case():
    assert PLAIN.tokens("Ёлка и ЁЖИК") == ["елка", "и", "ежик"]


def test_html_tags_entities_scripts_removed():
    html = "<html><script>var x = 1;</script><p>A&nbsp;rose &amp; a <b>ROSE</b></p><!-- note --></html>"
    assert PLAIN.tokens(html) == ["a", "rose", "a", "rose"]


def test_hyphenation_rejoined_and_page_numbers_dropped():
    text = "the docu-\nment continues\n\n  12  \n\nafter the page break"
    assert PLAIN.tokens(text) == ["the", "document", "continues", "after", "the", "page", "break"]


def test_stop_words_from_maintained_lists_per_token_language():
    toks = FULL.tokens("the cat and the hat; кот и шляпа; گربه و کلاه")
    assert "the" not in toks and "and" not in toks and "и" not in toks and "و" not in toks
    assert {"cat", "hat", "кот", "шляпа", "گربه", "کلاه"} <= set(toks)
    assert len(stopwords_for("fa")) > 100 and len(stopwords_for("ru")) > 100


def test_language_detection_by_script_and_mixed_text():
    assert detect_language("Привет, как дела? hello") == "ru"
    assert detect_language("این یک متن فارسی است with English") == "fa"
    assert detect_language("plain English text") == "en"
    assert FULL.canonicalize("mixed текст متن").lang in ("en", "ru", "fa")


def test_unknown_language_code_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown language code 'xx'"):
        FULL.canonicalize("text", "xx")


def test_russian_stemming_and_lemmatization():
    snow = Canonicalizer(Config(stem="snowball", stopwords=False))
    lemma = Canonicalizer(Config(stem="lemma", stopwords=False))
    assert snow.tokens("красивыми домами") == snow.tokens("красивые дома")
    assert lemma.tokens("домами") == ["дом"]


words = st.sampled_from(["rose", "Rose", "ROSE", "дом", "Ёж", "کتاب", "كتاب", "می", "خواهم", "12", "۱۲", "the", "a", "is"])
seps = st.sampled_from([" ", "  ", "\n", ", ", ". ", "!", " - ", "\u200c", "<b>", "</b>", "&amp;"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(words, seps), max_size=30), st.sampled_from([PLAIN, FULL]))
def test_canonicalization_is_idempotent(parts, canon):
    text = "".join(w + s for w, s in parts)
    first = canon.tokens(text)
    assert canon.tokens(" ".join(first)) == first


persian_words = st.sampled_from(["کتاب", "علی", "یک", "میخواهم", "خانه", "کودکی", "۱۲۳", "دانشگاه"])


def _variant(word: str, data) -> str:
    swaps = {"ی": ["ی", "ي", "ى"], "ک": ["ک", "ك"], "۱": ["۱", "١", "1"], "۲": ["۲", "٢", "2"], "۳": ["۳", "٣", "3"]}
    out = "".join(data.draw(st.sampled_from(swaps.get(ch, [ch]))) for ch in word)
    if out.startswith("می") and len(out) > 2:
        out = "می" + data.draw(st.sampled_from(["", "\u200c", " "])) + out[2:]
    return out


@settings(max_examples=100, deadline=None)
@given(st.lists(persian_words, min_size=1, max_size=12), st.data())
def test_persian_orthographic_variants_canonicalize_equal(words, data):
    variant = " ".join(_variant(w, data) for w in words)
    assert PLAIN.tokens(variant) == PLAIN.tokens(" ".join(words))
