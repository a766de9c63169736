"""Canonicalization: Persian orthography, Russian ё, HTML, hyphenation, page numbers, stop words."""

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from neardup.canonical import Canonicalizer, detect_language, stopwords_for
from neardup.config import Config

PLAIN = Canonicalizer(Config(stopwords=False))
FULL = Canonicalizer(Config())


@pytest.mark.parametrize("variant", ["می‌خواهم بروم", "میخواهم بروم", "می خواهم بروم"])
def test_persian_zwnj_variants_give_the_same_tokens(variant):
    assert PLAIN.tokens(variant) == PLAIN.tokens("می‌خواهم بروم")
    assert "".join(PLAIN.tokens(variant)) == "میخواهمبروم"  # the letters, cut at anchors


@pytest.mark.parametrize(
    "variant",
    ["دانش آموزان و سرمایه گذاری", "دانشآموزان و سرمایهگذاری", "دانش‌آموزان و سرمایه‌گذاری"],
)
def test_persian_compounds_written_apart_or_joined_give_the_same_tokens(variant):
    assert FULL.tokens(variant) == FULL.tokens("دانش‌آموزان و سرمایه‌گذاری")


def test_persian_pieces_are_content_defined_and_local():
    a = PLAIN.tokens("این یک متن فارسی درباره دانشگاه تهران است")
    b = PLAIN.tokens("این یک متن فارسی درباره دانشگاه شیراز است")
    assert (
        a != b and len(set(a) & set(b)) >= len(a) - 4
    )  # a changed word changes the pieces around it only
    assert 3 <= sum(map(len, a)) / len(a) <= 7  # pieces are about a word long


def test_arabic_letter_variants_and_digits_become_persian_and_ascii():
    """In Persian text (given as fa, or with letters only Persian writes) Arabic letter forms
    become Persian; a text of Arabic forms alone reads as Arabic, and keeps them."""
    assert PLAIN.tokens("كتاب علي ١٢٣ ۴۵۶ 789", "fa") == PLAIN.tokens("کتاب علی ۱۲۳ 456 ۷۸۹")
    assert PLAIN.tokens("كتاب علي ١٢٣ ۴۵۶ 789", "fa")[-3:] == ["123", "456", "789"]
    assert PLAIN.tokens("كتاب علي پدر") == PLAIN.tokens("کتاب علی پدر")  # پ: Persian
    assert PLAIN.canonicalize("كتاب علي ١٢٣").lang == "ar" and PLAIN.tokens("كتاب علي ١٢٣") == [
        "كتاب",
        "علي",
        "123",
    ]


def test_persian_diacritics_and_tatweel_removed():
    assert PLAIN.tokens("سلامـــــ دُنیا") == PLAIN.tokens("سلام دنیا")


def test_russian_yo_and_case():
    assert PLAIN.tokens("Ёлка и ЁЖИК") == ["елка", "и", "ежик"]


def test_html_tags_entities_scripts_removed():
    html = (
        "<html><script>var x = 1;</script><p>A&nbsp;rose &amp; a <b>ROSE</b></p>"
        "<!-- note --></html>"
    )
    assert PLAIN.tokens(html) == ["a", "rose", "a", "rose"]


def test_hyphenation_rejoined_and_page_numbers_dropped():
    text = "the docu-\nment continues\n\n  12  \n\nafter the page break"
    assert PLAIN.tokens(text) == ["the", "document", "continues", "after", "the", "page", "break"]


def test_stop_words_from_the_function_word_lists_per_token_language():
    toks = FULL.tokens("the cat and the hat; кот и шляпа; گربه و کلاه")
    assert "the" not in toks and "and" not in toks and "и" not in toks
    assert {"cat", "hat", "кот", "шляпа"} <= set(toks)
    assert (
        "".join(t for t in toks if "\u0600" <= t[0] <= "\u06ff") == "گربهوکلاه"
    )  # Persian: pieces of the run, "و" kept
    assert 50 < len(stopwords_for("ru")) < 150 and not stopwords_for(
        "fa"
    )  # Persian tokens are anchor pieces, not words


def test_mixed_text_gets_persian_rules_on_its_persian_runs_only():
    mixed = PLAIN.tokens("Файлами and files: دانش آموزان ۱۲")
    assert mixed[:3] == ["файлами", "and", "files"] and mixed[-1] == "12"
    assert mixed[3:-1] == PLAIN.tokens("دانشآموزان")


def test_language_detection_by_script_and_mixed_text():
    assert detect_language("Привет, как дела? hello") == "ru"
    assert detect_language("این یک متن فارسی است with English") == "fa"
    assert detect_language("plain English text") == "en"
    assert FULL.canonicalize("mixed текст متن").lang in ("en", "ru", "fa")


def test_unknown_language_code_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown language code 'english'"):
        FULL.canonicalize("text", "english")
    assert (
        FULL.canonicalize("the text", "xx").lang == "xx"
    )  # a code of no language neardup knows: the generic rules


def test_russian_stemming_and_lemmatization():
    snow = Canonicalizer(Config(stem="snowball", stopwords=False))
    lemma = Canonicalizer(Config(stem="lemma", stopwords=False))
    assert snow.tokens("красивыми домами") == snow.tokens("красивые дома")
    assert lemma.tokens("домами") == ["дом"]


words = st.sampled_from(
    [
        "rose",
        "Rose",
        "ROSE",
        "дом",
        "Ёж",
        "کتاب",
        "كتاب",
        "می",
        "خواهم",
        "12",
        "۱۲",
        "the",
        "a",
        "is",
    ]
)
seps = st.sampled_from([" ", "  ", "\n", ", ", ". ", "!", " - ", "\u200c", "<b>", "</b>", "&amp;"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(words, seps), max_size=30), st.sampled_from([PLAIN, FULL]))
def test_canonicalization_is_idempotent(parts, canon):
    text = "".join(w + s for w, s in parts)
    first = canon.tokens(text)
    if (
        canon is FULL
    ):  # a dropped stop word between two Persian runs joins them into one run when re-canonicalized
        assume(not any("\u0600" <= ch <= "\u06ff" for ch in text))
    assert canon.tokens(" ".join(first)) == first


persian_words = st.sampled_from(
    ["کتاب", "علی", "یک", "میخواهم", "خانه", "کودکی", "۱۲۳", "دانشگاه", "دانش‌آموز", "سرمایه‌گذاری"]
)


def _variant(word: str, data) -> str:
    swaps = {
        "ی": ["ی", "ي", "ى"],
        "ک": ["ک", "ك"],
        "۱": ["۱", "١", "1"],
        "۲": ["۲", "٢", "2"],
        "۳": ["۳", "٣", "3"],
    }
    out = "".join(data.draw(st.sampled_from(swaps.get(ch, [ch]))) for ch in word)
    if out.startswith("می") and len(out) > 2:
        out = "می" + data.draw(st.sampled_from(["", "\u200c", " "])) + out[2:]
    return out.replace("\u200c", data.draw(st.sampled_from(["", "\u200c", " "])))


@settings(max_examples=100, deadline=None)
@given(st.lists(persian_words, min_size=1, max_size=12), st.data())
def test_persian_orthographic_variants_canonicalize_equal(words, data):
    variant = " ".join(_variant(w, data) for w in words)
    assert PLAIN.tokens(variant, "fa") == PLAIN.tokens(
        " ".join(words)
    )  # (Arabic forms alone, without lang, read as Arabic)


@pytest.mark.parametrize("lang", ["en", "ru", "fa"])
def test_stop_words_are_each_word_canonicalized_alone(lang):
    """The stop lists, canonicalized together, are the tokens of each word on its own."""
    from neardup.canonical.canonicalizer import raw_stopwords, stopwords_for
    from neardup.canonical.stopwords import persian_stop_words

    plain = Canonicalizer(Config(stopwords=False, stem="none", default_lang=lang, bands=1, rows=1))
    want = set()
    if lang != "fa" or persian_stop_words():
        for w in raw_stopwords(lang):
            want.update(plain.tokens(w, lang))
    assert stopwords_for(lang) == frozenset(want) and (want or lang == "fa")
