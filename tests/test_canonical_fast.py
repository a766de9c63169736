"""The fast paths of canonicalization give what the plain definitions give.

Each rewritten pattern is compared with the one-pass pattern it replaces, ``canonicalize``
with ``Canonicalizer.text`` followed by tokenizing and the per-token stop-word rule, and the
hazm normalizer with prebuilt tables with hazm's own.
"""

import itertools
import json
import re
import sys
import unicodedata

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from neardup.canonical import canonicalizer, flags, letters, persian, ranges, scripts, spans
from neardup.canonical import Canonicalizer, stopwords_for
from neardup.canonical.scripts import token_language
from neardup.config import Config
from neardup.sketches.hashing import hash_strings

from .conftest import CORPORA, forms
from .corpora import FA_ZWNJ_SAMPLE, SAMPLE

# The one-pass definitions the fast patterns replace.
HYPHEN_BREAK = re.compile(r"(\w)[-\u00ad\u2010]\s*\n\s*(\w)")
PAGE_NUMBER_LINE = re.compile(
    r"(?<=\n)[ \t]*(?:[-\u2013\u2014]\s*)?(?:page|стр\.?|страница|صفحه)?[ \t]*\d{1,4}"
    r"(?:[ \t]*[-\u2013\u2014])?[ \t]*(?=\r?\n)",
    re.I,
)
PUNCT = re.compile(r"[^\w\u200c]+|_+|(?<![\u0600-\u06ff])\u200c+|\u200c+(?![\u0600-\u06ff])")
NON_WORD = re.compile(r"[^\w\u200c]+")
SPACE = re.compile(r"\s+")
ZWNJ_INSIDE = re.compile(r"(?<=[\u0600-\u06ff])\u200c+(?=[\u0600-\u06ff])")
_TOKEN = re.compile(r"[^\W_]+")


def texts(pieces, max_size=30):
    return st.lists(st.sampled_from(pieces), max_size=max_size).map("".join)


LINE_PIECES = [
    "a-\n",
    "b-\n",
    "a",
    "b",
    "ж",
    "ک",
    "1",
    "12",
    "_",
    "é",
    "-",
    "\u00ad",
    "\u2010",
    "\u2013",
    "\u2014",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "page",
    "Page ",
    "стр.",
    "Страница ",
    "صفحه ",
    "12345",
    "x.",
]
PUNCT_PIECES = [
    "a",
    "ک",
    "ж",
    "1",
    " ",
    "  ",
    ".",
    ", ",
    "\n",
    "\t",
    "_",
    "__",
    "\u200c",
    "\u200c\u200c",
    "\u0660",
    "\u060c",
    "\u0645",
    "-",
]


@settings(max_examples=400, deadline=None)
@given(texts(LINE_PIECES))
def test_rejoin_hyphenation_is_the_one_pass_substitution(text):
    assert letters.rejoin_hyphenation(text) == HYPHEN_BREAK.sub(r"\1\2", text)


@pytest.mark.parametrize(
    "text", ["a-\nb-\nc", "a-\nb-\nc-\nd", "é-\n\u00e8-\n x", "ab\u00ad \n cd-\n\nef", "x-\n-\ny"]
)
def test_rejoin_hyphenation_chains(text):
    assert letters.rejoin_hyphenation(text) == HYPHEN_BREAK.sub(r"\1\2", text)


@settings(max_examples=400, deadline=None)
@given(texts(LINE_PIECES))
@example(
    "x\n\u0635\u0641\u062d\u0647 12\ny\n\u2014 3\n\n\u2013 3 \u2013\nстр. 4\n"
    "Страница 5\n\tPage 6\n- 7 -\n8\nab\n"
)  # each way a page line starts
def test_page_number_lines_as_with_the_lookbehind_pattern(text):
    assert letters._PAGE_NUMBER_LINE.sub("\n ", text) == PAGE_NUMBER_LINE.sub(" ", text)


@settings(max_examples=400, deadline=None)
@given(texts(PUNCT_PIECES))
def test_punctuation_and_space_patterns_as_the_one_pass_ones(text):
    assert letters._PUNCT.sub(" ", text) == PUNCT.sub(" ", text)
    assert letters._NON_WORD.sub(" ", text) == NON_WORD.sub(" ", text)
    assert letters.SPACE_RUNS.sub(" ", text) == SPACE.sub(" ", text)
    assert persian._ZWNJ_INSIDE.sub("", text) == ZWNJ_INSIDE.sub("", text)


def test_u0345_is_the_only_separator_that_casefolds_to_a_word_character():
    # drop_punctuation may be skipped (Canonicalizer._text_for_tokens) only because no other
    # character outside [^\W_] casefolds to one inside it.
    word = re.compile(r"[^\W_]")
    found = {
        chr(cp)
        for cp in range(sys.maxunicode + 1)
        if chr(cp).casefold() != chr(cp)
        and not word.match(chr(cp))
        and word.search(chr(cp).casefold())
    }
    assert found == {"\u0345"}, unicodedata.unidata_version


def test_a_character_without_rare_ones_passes_the_steps_they_skip():
    """Canonicalizer._text_for_tokens skips drop_marks, drop_punctuation, persian and
    unify_digits on a text without rare characters: every other character passes them, and
    its casefold (which comes between) passes unify_digits."""
    for cp in range(sys.maxunicode + 1):
        ch = chr(cp)
        if flags.has_rare_characters(
            "\u0400" + ch
        ):  # (a non-ASCII companion: ASCII texts are never scanned)
            continue
        assert letters.drop_marks(ch) == ch and not letters.punctuation_matters("\u0400" + ch), hex(
            cp
        )
        assert letters.unify_digits("\u0400" + ch.casefold()) == "\u0400" + ch.casefold(), hex(cp)
    assert (
        flags.has_rare_characters("\u0400\u0301")
        and flags.has_rare_characters("\u0400\u0667")
        and flags.has_rare_characters("\u0400\u0345")
    )


def _reference_tokens(canon: Canonicalizer, text: str, lang: str | None) -> tuple[list[str], str]:
    """``canonicalize`` from its definitions: every text step, tokens, then the per-token
    stop-word rule (a stop word of its own script, or of the document language; none in a
    document of a language other than fa, ru and en)."""
    c = canon.config
    doc_lang = lang or canon._language_of(text)
    toks = _TOKEN.findall(canon.text(text, lang))
    if c.digits == "drop":
        toks = [t for t in toks if not t.isdigit()]
    if c.stopwords and doc_lang in (
        "fa",
        "ru",
        "en",
    ):  # (a document of another language drops none)
        toks = [t for t in toks if t not in stopwords_for(token_language(t) or doc_lang)]
    return toks, doc_lang


FULL_PIECES = [
    "Rose",
    "the",
    "and",
    " ",
    ", ",
    ".\n",
    "-\n",
    "\n12\n",
    "_",
    "дом",
    "и",
    "Ёж",
    "کتاب",
    "و",
    "می",
    "\u200c",
    "خواهم",
    "۱۲",
    "3",
    "é",
    "\u0345",
    "ß",
    "İ",
    "<b>",
    "&amp;",
    "\u0301",
    "Ⅻ",
    "²",
    "ﬁ",
    "ﻻ",
    "\u037a",
    "５",
    "\u00ad\n",
    "\u2010\n",
    "ﹱ",
    "Ё",
    "&#1611;",
    "&#1633;",
    "&#x6F1;x",
    "\u064e",
    "\u0651\u064e",
    "\u0627\u0654",
    "\u0627\u0653",
    "\u0647\u0654",
    "\u0670",
    "猫",
    "我喜欢",
    "ภาษา",
    "ｱ",
    "\U00020000",
    "\u2f00",
    "&#x4e00;",
]
CANONICALIZERS = [
    Canonicalizer(Config()),
    Canonicalizer(Config(stopwords=False)),
    Canonicalizer(Config(digits="drop", strip_html=False)),
]


@settings(max_examples=300, deadline=None)
@given(
    texts(FULL_PIECES, 40),
    st.sampled_from(CANONICALIZERS),
    st.sampled_from([None, "en", "ru", "fa"]),
)
def test_canonicalize_matches_its_definition(text, canon, lang):
    got = canon.canonicalize(text, lang)
    assert (got.tokens, got.lang) == _reference_tokens(canon, text, lang)


@pytest.mark.parametrize(
    "text",
    [
        "a\u0345b",
        "Rose\u0345 is",
        "Ёж\u0345",
        "x_y",
        "a\u200cb",
        "ab\u200cکتاب",
        "İstanbul, ﬁne",
        "Ё\u037a",
        "дом \u037aб",
        "５ дом",
        "ﻻ дом",
        "Rose\u2f00the",
        "дом\u2f00дом",
        "a&#x4e00;b",
        "дом&#x4e00;дом",
        "дом猫дом",
        "ｱｲ дом",
    ],
)
def test_canonicalize_matches_its_definition_on_edge_cases(text):
    for canon in CANONICALIZERS:
        for lang in (None, "en", "fa"):
            got = canon.canonicalize(text, lang)
            assert (got.tokens, got.lang) == _reference_tokens(canon, text, lang)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(texts(FULL_PIECES, 12), max_size=12),
    st.sampled_from(CANONICALIZERS),
    st.sampled_from([1, 8, 1 << 16]),
    st.booleans(),
    st.booleans(),
)
def test_texts_for_tokens_of_a_batch_are_those_of_each_text(
    batch, canon, group_chars, compiled, persian_pass
):
    """A batch's texts, scanned and mapped together in groups of any size, with the
    compiled loops or numpy, with the compiled Persian pass or without it (as where hazm is
    not 0.10: the steps one by one): the tokens of each are those of its text steps."""
    from unittest import mock

    canon = Canonicalizer(canon.config, backend="compiled" if compiled else "reference")
    with (
        mock.patch.object(spans, "_GROUP_CHARS", group_chars),
        mock.patch.object(
            persian,
            "_piece_tables",
            persian._piece_tables if persian_pass else (lambda anchors=None: None),
        ),
    ):
        got = canon._texts_for_tokens(batch)
    assert [_TOKEN.findall(t) for t in got] == [_TOKEN.findall(canon.text(t)) for t in batch]


def _reference_detect(text: str, default: str = "en", sample: int = 4000) -> str:
    """The decision on the first ``sample`` letters counted one by one by their script code."""
    letters = [ch for ch in text if ch.isalpha()][:sample]
    counts = [0] * scripts._CODES
    for ch in letters:
        counts[scripts.script_code(ch)] += 1
    return scripts.language_by_script(counts, text, default)


@settings(max_examples=300, deadline=None)
@given(
    texts(
        [
            "a",
            "B",
            "1",
            " ",
            ".",
            "ж",
            "Ё",
            "ک",
            "ي",
            "ω",
            "中",
            "é",
            "پ",
            "ة",
            "が",
            "한",
            "ก",
            "ẞ",
        ],
        20,
    ),
    st.sampled_from(["en", "ru", "fa"]),
    st.integers(1, 8),
)
def test_detect_language_is_the_majority_of_the_first_letters(text, default, sample):
    assert scripts.detect_language(text, default, sample) == _reference_detect(
        text, default, sample
    )


#: Characters at each end of (and just outside) the script ranges :func:`script_of` names.
SCRIPT_EDGES = sorted(
    {
        chr(c)
        for lo, hi in (*ranges.FA_SCRIPT, *ranges.RU_LETTERS, *ranges.EN_LETTERS)
        for c in (lo - 1, lo, hi, hi + 1)
    }
)


@settings(max_examples=500, deadline=None)
@given(st.text(st.sampled_from(SCRIPT_EDGES) | st.characters(), max_size=8))
def test_token_language_is_the_first_letter_with_a_script(token):
    assert token_language(token) == scripts.token_language_by_letters(token)


# -- hazm ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def normalizers():
    """neardup's normalizer (hazm 0.10's tables, shipped) and the installed hazm's."""
    hazm = pytest.importorskip("hazm")
    return persian._hazm_normalizer(), hazm.Normalizer()


def test_the_shipped_tables_are_hazm_0_10s():
    """The tables neardup ships name the file they come from by its sha256: that of hazm
    0.10.0's normalizer.py, where that is installed (read through the distribution's file
    list, importlib.metadata); the letter steps on them are the stock Normalizer's
    (test_prebuilt_hazm_normalizer_is_hazms)."""
    import hashlib
    from importlib.metadata import PackageNotFoundError, distribution

    assert set(persian.shipped_tables()) == set(persian.TABLES)
    try:
        dist = distribution("hazm")
    except PackageNotFoundError:
        pytest.skip("hazm is not installed")
    if dist.version != "0.10.0":
        pytest.skip(f"hazm {dist.version} is not the release the tables come from")
    source = next(f for f in dist.files or () if str(f) == "hazm/normalizer.py")
    shipped = json.loads(persian.HAZM_TABLES_FILE.read_text(encoding="utf-8"))
    assert hashlib.sha256(source.locate().read_bytes()).hexdigest() == shipped["source_sha256"]


def test_without_hazm_signing_works_and_the_word_list_steps_say_what_they_need(
    monkeypatch, tmp_path
):
    """Without hazm: the letter steps and signing run; search's word-list steps leave the
    text; Persian stemming names the extra to install; the stop lists need no hazm."""
    import builtins

    from neardup.canonical import stemming, stopwords

    real_import = builtins.__import__

    def no_hazm(name, *args, **kwargs):
        if name == "hazm" or name.startswith("hazm."):
            raise ImportError("No module named 'hazm'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_hazm)
    monkeypatch.setattr(persian, "has_hazm", lambda: False)
    norm = persian.PrebuiltNormalizer(persian.shipped_tables())
    assert norm.normalize_letters("كتاب") == "کتاب"
    assert norm.seperate_mi("میخواهم") == "میخواهم"
    assert persian.split_persian("دانش‌آموزان") == "دانش آموزان"
    stemming.stemmer.cache_clear()
    with pytest.raises(persian.HazmMissing, match=r"Persian stemming uses hazm.*neardup\[hazm\]"):
        stemming.stemmer("fa", "snowball")
    stemming.stemmer.cache_clear()
    stopwords.raw_stopwords.cache_clear()
    assert "را" in stopwords.raw_stopwords("fa")  # (the stop lists are neardup's own data files)

    # on the command line: one line naming the extra, no traceback
    from click.testing import CliRunner

    from neardup.cli import main

    doc = tmp_path / "fa.jsonl"
    doc.write_text(
        json.dumps({"id": "1", "text": "کتاب‌های دانش‌آموزان را خواندیم", "lang": "fa"}) + "\n",
        encoding="utf-8",
    )
    stemming.stemmer.cache_clear()
    r = CliRunner().invoke(
        main,
        [
            "index",
            str(doc),
            "--engine",
            str(tmp_path / "i.db"),
            "--stem",
            "snowball",
            "--workers",
            "0",
            "-q",
        ],
    )
    stemming.stemmer.cache_clear()
    assert r.exit_code != 0
    assert (
        "Persian stemming uses hazm, which is not installed: pip install 'neardup[hazm]'"
        in r.output
    )
    assert "Traceback" not in r.output


HAZM_PIECES = [
    "کتاب",
    "كتاب",
    "علي",
    "ى",
    "ة",
    "ۀ",
    "ﮐ",
    "ﻻ",
    "ﷲ",
    "ﷺ",
    "﷼",
    "می",
    "نمی",
    "خواهم",
    "میخواهم",
    "رفت",
    "ها",
    "های",
    "تر",
    "ترین",
    "ای",
    "ام",
    "شنبه",
    "سلاممم",
    "ببب",
    "خیلیییی",
    " ",
    "  ",
    "\n",
    "\n\n\n",
    "\u200c",
    "\u200c\u200c",
    "ـ",
    "\u064e",
    "\u0651",
    "\u0670",
    "\u08ad",
    "1",
    "۱",
    "١",
    "%",
    ".",
    "...",
    '"',
    "«",
    "»",
    ":",
    "!",
    "(",
    ")",
    "abc",
    "Ёж",
]


def _as_compared(text: str) -> str:
    """A text as it is compared with the installed hazm: as it is with hazm 0.10, whose tables
    neardup ships; after NFKC with later hazm, as canonicalization gives it to the Persian step
    (hazm 0.12's tables also map presentation forms such as U+FEFB, which NFKC has composed
    away by then)."""
    from importlib.metadata import version

    return text if version("hazm").startswith("0.10.") else unicodedata.normalize("NFKC", text)


@settings(max_examples=300, deadline=None)
@given(texts(HAZM_PIECES, 40))
def test_prebuilt_hazm_normalizer_is_hazms(normalizers, text):
    fast, stock = normalizers
    text = _as_compared(text)
    assert fast.normalize(text) == stock.normalize(text)


def test_prebuilt_hazm_normalizer_on_the_persian_corpora(normalizers):
    fast, stock = normalizers
    n = 0
    for name in ("fa.jsonl", "fa_pairs.jsonl"):
        path = CORPORA / name
        if not path.exists():
            continue
        with open(path, encoding="utf-8") as f:
            for i, line in enumerate(f):
                if i % 10:
                    continue
                rec = json.loads(line)
                for key in ("text", "text1", "text2"):
                    if key in rec:
                        text = _as_compared(rec[key])
                        assert fast.normalize(text) == stock.normalize(text)
                        n += 1
    if not n:
        pytest.skip("no corpora")


# Anchor letters of both sets, repeats, digits of three scripts, separators, marks hazm
# drops, ligatures it expands, characters its letter table changes, and what needs its
# persian_style (a quotation mark or period, also as written with other characters).
PIECE_PIECES = [
    "کتاب",
    "دانش",
    "آموزان",
    "نیمه",
    "حرفه",
    "ای",
    "ببب",
    "ی",
    "یییی",
    "ءء",
    "ۀ",
    "ك",
    "ي",
    "ﮐ",
    "\ufefb",
    "\ufdf2",
    "۱۲",
    "١",
    "7",
    "\u06f0",
    " ",
    "  ",
    "\t",
    "\n\n",
    "\u00a0",
    "\u200c",
    "\u200c\u200c",
    "\u064e",
    "\u0651",
    "\u0670",
    "\u0654",
    "ـ",
    "abc",
    "Ёж",
    '"',
    ".",
    "\u201c",
    "%",
    "\u0600",
    "\u060c",
    "\u061f",
    "\u06ff",
    "\u06d5",
    "\u06d6",
]


#: The two forms of the one pass (:func:`.persian_loops.persian_pieces_many`): compiled, where
#: built, and interpreted.
PERSIAN_PASS = forms("neardup.canonical.persian_loops")


def _pass_leaves(text: str) -> bool:
    """Whether the one pass leaves ``text`` to the steps: it holds a character the letter map
    gives -2 (one ``persian_style`` may act on, or one that maps to several)."""
    letter_map = persian._piece_tables()[1]
    return any(ord(c) < len(letter_map) and letter_map[ord(c)] == -2 for c in text)


@settings(max_examples=600, deadline=None)
@given(texts(PIECE_PIECES, 40))
@example(
    "\u06a9\u200c\u060c \u060c\u200c\u06a9 \u0600\u200c\u0600"
)  # ZWNJ beside the Arabic block's first characters
@example("\u06f1\u06f2\u200c\u06f1\u06f2")  # ZWNJ dropped between digits, then the digits set apart
@example(
    "\u0627\u0627 \u0627 \u0628\u0628  \u0628 \u0621 \u0621\u06cc \u06cc"
)  # repeats counted after the spaces are dropped; the range ends
@example('\u06a9 " \u06a9')  # a character persian_style may act on: left to the steps
@pytest.mark.parametrize("form", PERSIAN_PASS, ids=lambda m: m.__name__)
def test_compiled_persian_pieces_are_the_steps(form, text):
    """The one pass, in each form, gives what the steps give, or leaves the text to them
    exactly where persian_style or a character of several could act."""
    if persian._piece_tables() is None:
        pytest.skip("hazm is not 0.10: the steps are made one by one")
    made = persian._compiled(text, step=False, form=form)
    assert (made is None) == _pass_leaves(text)
    want = persian.normalize_persian(text)  # (the reference: the steps)
    assert made is None or made[0] == want
    assert persian.normalize_persian(text, backend="compiled") == want


FUSED_PIECES = PIECE_PIECES + [
    "_",
    "__",
    "\u200c\u200c\u200c",
    ", ",
    "\u060c",
    "\u061b",
    "«",
    "»",
    "!",
    "-",
    "\u0345",
    "\u00b2",
    "\u0660",
    "\ufd3e",
    "\u2026",
    "\u0301",
    "\u200d",
    "\u200e",
    "\u00ad",
    "\ufeff",
    "\u0610",
    "\u06d6",
    "\u064b",
]


@settings(max_examples=600, deadline=None)
@given(
    texts(
        FUSED_PIECES + ["x", "X", "ß", "\u0130", "\u0401", "\u00d7", "\u0500", "\u024f", "\u0966"],
        40,
    )
)
@example(
    "\u06a9\u200c\u200c\u06a9 _\u200c\u06a9\u200c_ \u060c\u200c\u06a9"
)  # ZWNJ runs beside letters, underscores, punctuation
@example("\u060c\u061b 12")  # no Arabic script left: the punctuation step only
@example(
    "x " + "\u0628\u06f1" * 100 + " y"
)  # a Persian run that comes out twice as long (the buffer grows)
@example(
    "abc \u06a9\u200c\u06a9 1 \u06a9 \u00d7 \u06a9\u0628 \u0500\u200c\u06a9 \u06a9\u024f\u06a97"
)  # Persian runs between Latin and Cyrillic
@example(
    "\u0628\u200c\u064e\u200c\u0628 \u0640\u0640\u0640 x\u0301\u200d\u0628"
)  # marks inside ZWNJ runs and words; tatweel alone
@example(
    "\u0640 \u064e!"
)  # marks the only Arabic-block characters: no Arabic script left after drop_marks
@example("\ufefb \u06a9. x")  # a character of several: left to the steps; a period: dropped
@pytest.mark.parametrize("form", PERSIAN_PASS, ids=lambda m: m.__name__)
def test_marks_punctuation_and_persian_in_one_pass_are_the_three_steps(form, text):
    """The pass with drop_marks and the punctuation step first, in each form: the three
    steps, then the late steps where each character maps to one; the text left to the steps
    exactly where what the punctuation step leaves holds a character of several."""
    if persian._piece_tables() is None:
        pytest.skip("hazm is not 0.10")
    dropped = letters.drop_punctuation(letters.drop_marks(text))
    want = canonicalizer.persian_step(dropped)
    for late, after in (
        (None, lambda t: t),
        (letters.late_steps_table(False), lambda t: letters.yo_to_ye(t.casefold())),
        (
            letters.late_steps_table(True),
            lambda t: letters.unify_digits(letters.yo_to_ye(t.casefold())),
        ),
    ):
        made = persian._compiled(text, late=late, marks=True, form=form)
        assert (made is None) == _pass_leaves(dropped)
        if made is None:
            continue
        fused, late_applied = made
        assert fused == (after(want) if late_applied else want)
        assert late_applied == (late is not None and not set(want) & {"ß", "\u0130", "\ufb01"})


def _given_the_persian_step(texts: list[str]) -> list[str]:
    """Each text as the Persian step is given it (the text steps before it)."""
    canon, out = Canonicalizer(Config()), []
    for text in texts:
        for name, step in canon.text_steps:
            if name == "persian":
                break
            text = step(text)
        out.append(text)
    return out


@pytest.mark.parametrize("form", PERSIAN_PASS, ids=lambda m: m.__name__)
def test_compiled_persian_pieces_on_the_sample_texts(form):
    """The pass in each form on the repo's Persian, Russian and English samples: the steps."""
    if persian._piece_tables() is None:
        pytest.skip("hazm is not 0.10")
    recs = [json.loads(x) for x in SAMPLE.read_text(encoding="utf-8").splitlines()]
    recs += [json.loads(x) for x in FA_ZWNJ_SAMPLE.read_text(encoding="utf-8").splitlines()]
    assert {r["id"][:2] for r in recs} >= {"fa", "ru", "en"}
    texts = _given_the_persian_step([r["text"] for r in recs])
    made = [persian._compiled(text, step=False, form=form) for text in texts]
    assert [m and m[0] for m in made] == [
        None if _pass_leaves(t) else persian.normalize_persian(t) for t in texts
    ]
    assert sum(m is not None for m in made) > 200


@pytest.mark.parametrize("form", PERSIAN_PASS, ids=lambda m: m.__name__)
def test_compiled_persian_pieces_on_the_persian_corpora(form):
    """The pass in each form on the Persian corpus (one text in 5; one in 40 interpreted):
    every text is the pass's, and the steps'."""
    if persian._piece_tables() is None:
        pytest.skip("hazm is not 0.10")
    path = CORPORA / "fa.jsonl"
    if not path.exists():
        pytest.skip("no corpora")
    every = 40 if form.__name__ == "neardup.canonical.persian_loops" else 5
    with open(path, encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for i, line in enumerate(f) if i % every == 0]
    n = 0
    for text in _given_the_persian_step(texts):
        made = persian._compiled(text, step=False, form=form)
        assert made is not None and made[0] == persian.normalize_persian(text)
        n += 1
    assert n == len(texts) > 70


def test_the_letter_map_of_the_compiled_pass_is_hazms_letter_steps_on_every_bmp_character():
    tables = persian._piece_tables()
    if tables is None:
        pytest.skip("hazm is not 0.10")
    letter_map = tables[1]
    hazm = persian._hazm_normalizer()
    for cp in range(0x10000):
        out = letters.FA_LETTER_MAP(hazm.normalize_letters(chr(cp)))
        want = (
            -2
            if len(out) > 1 or hazm.letter_map(chr(cp)) in ('"', ".")
            else ord(out)
            if out
            else -1
        )
        assert letter_map[cp] == want, hex(cp)


# Characters that make NFKC do something: compatibility forms, combining marks out of order,
# pairs that compose (e + U+0301, Hangul jamo), spaces that are themselves compatibility forms.
NFKC_PIECES = [
    "a",
    "e",
    "ж",
    "ک",
    " ",
    "  ",
    "\n",
    "\u00a0",
    "\u3000",
    "\u0301",
    "\u0327",
    "\u0345",
    "\u05b0",
    "\u0591",
    "\u1100",
    "\u1161",
    "\u11a8",
    "\uac00",
    "\u00b4",
    "\u2116",
    "\u2026",
    "\ufb01",
    "\ufdfa",
    "\u0cc6",
    "\u0cd5",
    "\u09c7",
    "\u09be",
    "\u2033",
    "\u00bd",
    "\u1e9b\u0323",
    "\u212b",
    "\uff21",
    "\u0041\u030a",
    "\u2000",
    "\u200c",
    "\u0439",
    "\u00e9",
    "\u0451",
    "\u0418\u0306",
    "\u0654",
    "\u0653",
    "\u0655",
    "\u0647",
    "\u0627",
    "\u0648",
    "\u064e",
    "\u0651",
    "\u0315",
]


@settings(max_examples=600, deadline=None)
@given(texts(NFKC_PIECES, max_size=40))
def test_nfkc_by_words_is_unicodedata_nfkc(text):
    assert letters.nfkc_words(text) == unicodedata.normalize("NFKC", text)
    sparse = (
        "plain words " * 30 + text + " more plain text" * 30
    )  # few words to normalize: one by one
    assert letters.nfkc_words(sparse) == unicodedata.normalize("NFKC", sparse)
    assert letters.nfkc(text * 30) == unicodedata.normalize(
        "NFKC", text * 30
    )  # the long, remembered path


def test_nfkc_by_words_on_every_character_between_words_and_after_a_space():
    """Each code point NFKC changes, or that could join a neighbour, is among the characters
    the word windows look for (over all of Unicode, so a newer Unicode database is checked too)."""
    unstable = letters.nfkc_unstable()
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        ch = chr(cp)
        for t in (
            f"ab {ch} cd",
            f"a{ch}\u0301 x",
            f"\u1100{ch} \uac00{ch}",
            f" {ch}\u0327\u0301",
            f"é{ch}й",
            f"{ch}{ch}ё x{ch}\u0cc6",
        ):
            if unicodedata.normalize("NFKC", t) != t:
                assert unstable.intersection(t), hex(cp)
                assert letters.nfkc_words(t) == unicodedata.normalize("NFKC", t), hex(cp)


def test_nfkc_by_words_on_the_corpora():
    paths = [CORPORA / f"{name}.jsonl" for name in ("en", "ru", "fa")]
    if not all(path.exists() for path in paths):
        pytest.skip("no corpora")
    n = 0
    for path in paths:
        with path.open(encoding="utf-8") as f:
            for line in f:
                t = json.loads(line)["text"]
                assert letters.nfkc_words(t) == unicodedata.normalize("NFKC", t)
                n += 1
    assert n > 1000


@settings(max_examples=300, deadline=None)
@given(
    texts(NFKC_PIECES + ["\u037a", "\u0667", "\u0645", "\u0345", "５", "\U0001d7ce"], max_size=40)
)
def test_nfkc_flagged_is_nfkc(text):
    bits = flags.text_flags(text)
    got = flags.nfkc_flagged(text, bits)
    assert got == letters.nfkc(text) == unicodedata.normalize("NFKC", text)
    assert (got is text) == (
        got == text
    )  # the same object where nothing changes: the rare bit still holds for it
    # where drop_marks follows (the text steps): the marks it drops left to it
    assert letters.drop_marks(
        flags.nfkc_flagged(text, bits & ~flags.DROPPED_MARK)
    ) == letters.drop_marks(got)


@pytest.mark.parametrize(
    "text",
    [
        "\u00c0\u0323",
        "\u0623\u0655",
        "\u0647\u0654",
        "\u0627\u0654",
        "\u0627\u064e\u0654",
        "\u0647\u0654\u064e",
        "\u0648\u0654",
        "e\u0301",
        "\u0647\u0651\u0654",
        "\u0654x",
        "\u0627\u0653\u0654",
        "\u0915\u093c",
    ],
)
def test_a_composing_mark_is_normalized_where_it_may_compose(text):
    want = unicodedata.normalize("NFKC", text)
    for backend in letters.BACKENDS:
        bits = flags.text_flags(text, backend)
        assert flags.nfkc_flagged(text, bits, backend) == want
        assert letters.drop_marks(
            flags.nfkc_flagged(text, bits & ~flags.DROPPED_MARK, backend)
        ) == letters.drop_marks(want)


def test_composing_pairs_hold_every_composition_of_a_composing_mark():
    """Over the letters of the three scripts and Unicode's composing marks: where NFKC
    composes a letter with the mark after it, the pair is in the table the compiled scan reads."""
    pairs = set(letters.composing_pairs().tolist())
    marks = sorted(letters.composing_marks())
    assert len(pairs) > 500 and {"\u0654", "\u0301", "\u0653"} <= set(marks)
    bases = [
        chr(c)
        for r in (
            (0x41, 0x7B),
            (0xC0, 0x250),
            (0x400, 0x530),
            (0x600, 0x700),
            (0x900, 0x980),
            (0x1E00, 0x1F00),
        )
        for c in range(*r)
    ]
    for b in bases:
        for m in marks:
            settled = not unicodedata.combining(b) and unicodedata.decomposition(b)[:1] in (
                "",
                "<",
            )  # (else the mark is normalized anyway)
            if (
                unicodedata.normalize("NFKC", b + m) != b + m
                and settled
                and b == unicodedata.normalize("NFKC", b)
            ):
                assert (ord(b) << 21 | ord(m)) in pairs, (hex(ord(b)), hex(ord(m)))


def test_text_flags_table_is_the_nfkc_table_and_the_rare_pattern_on_every_character():
    """The two bits of each code point: NFKC may change it (letters.nfkc_table), and the
    pattern of the rare characters matches it (the definition has_rare_characters reads
    through the table)."""
    table = flags.flag_table()
    every = np.arange(0x110000, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")
    rare = np.zeros(0x110000, dtype=bool)
    rare[[m.start() for m in letters.rare_characters().finditer(every)]] = True
    dropped = np.zeros(0x110000, dtype=bool)
    dropped[[ord(ch) for ch in letters.dropped_marks()]] = True
    composing = np.zeros(0x110000, dtype=bool)
    composing[[ord(ch) for ch in letters.composing_marks()]] = True
    assert composing[[0x654, 0x301, 0x653]].all() and not (composing & dropped).any()
    assert np.array_equal(
        (table & flags.NFKC_MAY_CHANGE) != 0, letters.nfkc_table() & ~dropped & ~composing
    )
    assert np.array_equal((table & flags.DROPPED_MARK) != 0, dropped)
    assert np.array_equal((table & flags.COMPOSING_MARK) != 0, composing)
    assert not (composing & ~letters.nfkc_table()).any()
    unsettled = [
        bool(
            unicodedata.combining(chr(c)) or unicodedata.decomposition(chr(c))[:1] not in ("", "<")
        )
        for c in range(0x110000)
    ]
    assert np.array_equal((table & flags._UNSETTLED) != 0, np.array(unsettled))
    assert not (dropped & ~letters.nfkc_table()).any() and not (dropped & ~rare).any()
    assert np.array_equal((table & flags.RARE) != 0, rare)
    unspaced = np.zeros(0x110000, dtype=bool)
    unspaced[[m.start() for m in scripts._unspaced().finditer(every)]] = True
    for c in range(0x110000):  # (or NFKC makes one)
        if not 0xD800 <= c < 0xE000 and not unspaced[c]:
            made = unicodedata.normalize("NFKD", chr(c)) + unicodedata.normalize("NFKC", chr(c))
            unspaced[c] = made != chr(c) * 2 and scripts._unspaced().search(made) is not None
    assert unspaced[0x2F00] and np.array_equal((table & flags.UNSPACED) != 0, unspaced)
    assert not table[:128].any()  # (ASCII texts are not scanned)


def test_nfkc_composes_no_unspaced_letter_from_characters_outside_those_scripts():
    """Each letter of a script written without spaces that has a canonical decomposition
    decomposes to a letter of such a script first: canonical composition (NFKC's last step)
    makes one only from one, so a text whose characters and their NFKD hold none
    (flags.UNSPACED clear) holds none after NFKC."""
    for c in range(0x110000):
        ch = chr(c)
        if scripts._unspaced().match(ch) and unicodedata.decomposition(ch)[:1] not in ("", "<"):
            first = unicodedata.normalize("NFD", ch)[0]
            assert scripts._unspaced().match(first), hex(c)


def test_nfkc_only_moves_the_dropped_marks_and_drop_marks_drops_them():
    """Each mark of _dropped_marks, between letters of several scripts, with others of them
    and with marks of other combining classes: NFKC and then drop_marks give what
    drop_marks alone gives (over all of Unicode's marks, so a newer database is checked too)."""
    dropped = sorted(letters.dropped_marks())
    assert (
        {"\u064b", "\u064e", "\u0651", "\u0670"} <= set(dropped)
        and "\u0654" not in dropped
        and "\u0301" not in dropped
    )
    for m in dropped:
        for t in (
            f"a{m}b",
            f"\u0627{m}\u0628",
            f"\u0628{m}\u064e{m}\u0651 \u0627",
            f"{m}{dropped[0]}{dropped[-1]}x",
            f"\u0418{m}\u0306",
            f"\u05d0{m}\u05b0",
            f"\u0627{m}\u0653",
            f" {m}\u0655\u0627",
        ):
            if not set(t) & (
                set(letters.nfkc_unstable()) - set(dropped)
            ):  # only dropped marks for NFKC to act on
                assert letters.drop_marks(unicodedata.normalize("NFKC", t)) == letters.drop_marks(
                    t
                ), (hex(ord(m)), t)


@pytest.mark.parametrize(
    "text",
    [
        "\u0643\u0647\u0654 x",
        "\u0647\u0654",
        "\u0627\u0654",
        "cafe\u0301",
        "\u00c0\u0323",
        "x \u0654",
    ],
)
def test_text_flags_are_the_same_from_both_backends(text):
    """The composing-mark bit is cleared in the reference form as in the compiled one where
    the mark cannot compose (ه + hamza above: NFKC leaves it): one answer per text, whatever
    was imported before."""
    got = {backend: flags.text_flags(text, backend) for backend in letters.BACKENDS}
    assert len(set(got.values())) == 1, got
    if text.startswith("\u0643"):
        assert got["reference"] == flags.RARE  # (the hamza above may not compose with ه)


def test_no_result_depends_on_what_the_process_imported():
    """A fresh process: the flags before and after the compiled loops are imported agree."""
    import subprocess
    import sys

    code = (
        "from neardup.canonical import flags; a = flags.text_flags('\u0643\u0647\u0654 x'); "
        "import neardup.canonical.letters_loops; "
        "print(a, flags.text_flags('\u0643\u0647\u0654 x'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    ).stdout.split()
    assert out == ["2", "2"]


FLAG_PIECES = [
    "a",
    " ",
    "ж",
    "é",
    "\u0301",
    "\u064e",
    "\u0651",
    "\u0654",
    "\u0627",
    "\u0667",
    "۱",
    "ﬁ",
    "\u037a",
    "\u0345",
    "ک",
    "\u064b",
    "\ud800",
    "\U0001d7ce",
    "ß",
    "İ",
    "Ё",
    "Ⅻ",
]


@settings(max_examples=300, deadline=None)
@given(texts(FLAG_PIECES, max_size=30))
def test_text_flags_and_late_steps_with_and_without_the_compiled_loops(text):
    """text_flags: the bits of the characters' table entries, or-ed (the composing-mark bit
    only where the mark may compose), and has_rare_characters the regular expression's
    answer; late_steps: casefold, yo_to_ye, unify_digits, or None where a character maps to
    more than one; the same from both backends (compiled and numpy)."""
    table = flags.flag_table()
    want_flags = 0
    for ch in text:
        want_flags |= int(table[ord(ch)]) & ~flags._UNSETTLED
    if text.isascii():
        want_flags = 0
    pairs = set(letters.composing_pairs().tolist())
    composes = any(
        table[ord(m)] & flags.COMPOSING_MARK
        and (
            unicodedata.combining(p)
            or unicodedata.decomposition(p)[:1] not in ("", "<")
            or (ord(p) << 21 | ord(m)) in pairs
        )
        for p, m in itertools.pairwise(text)
    )
    late = letters.late_steps_table(True)
    stepped = letters.unify_digits(letters.yo_to_ye(text.casefold()))
    multi = any(len(ch.casefold()) > 1 for ch in text)
    for backend in letters.BACKENDS:
        assert flags.text_flags(text, backend) == (
            want_flags if composes else want_flags & ~flags.COMPOSING_MARK
        )
        got = letters.late_steps(text, late, backend)
        assert got == (None if multi else stepped)
    assert flags.has_rare_characters(text) == (
        not text.isascii() and letters.rare_characters().search(text) is not None
    )


# -- canonical tokens as hashes, straight from code points ---------------------------------------
def test_token_char_table_is_the_token_pattern_on_every_character():
    chars = "".join(map(chr, range(0x110000)))
    want = np.zeros(0x110000, dtype=bool)
    for m in _TOKEN.finditer(chars):
        want[m.start() : m.end()] = True
    assert np.array_equal(letters.token_char_table(), want)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(texts(FULL_PIECES, 40), min_size=1, max_size=5),
    st.sampled_from(CANONICALIZERS + [Canonicalizer(Config(digits="keep"))]),
    st.sampled_from([None, "en", "ru", "fa"]),
)
def test_token_hashes_many_are_the_hashes_of_the_canonical_tokens(batch, canon, lang):
    prepared = [canon.text_and_language(t, lang) for t in batch]
    hashes, offsets = canon.token_hashes_many(
        [t for t, _ in prepared], [doc_lang for _, doc_lang in prepared]
    )
    want = [canon.canonicalize(t, lang).tokens for t in batch]
    assert offsets.tolist() == np.cumsum([0] + [len(w) for w in want]).tolist()
    assert hashes.tolist() == hash_strings([t for w in want for t in w], canon.config.seed).tolist()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(texts(FULL_PIECES, 40), min_size=1, max_size=8),
    st.sampled_from(CANONICALIZERS),
    st.sampled_from([None, "ru", "fa"]),
)
def test_token_hashes_of_the_spans_are_those_of_the_texts(batch, canon, lang):
    """The texts a compiled pass made, read where they lie in its output (spans), give the
    token hashes their decoded strings give; decoded, they are the texts for tokens."""
    langs = [lang] * len(batch)
    made = canon.spans_for_tokens(batch, langs)
    texts_ = canon._texts_for_tokens(batch, langs)
    assert spans.decoded(made) == texts_
    doc_langs = canon.languages(batch, langs)
    got, want = (
        canon.token_hashes_many(made, doc_langs),
        canon.token_hashes_many(texts_, doc_langs),
    )
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.text(alphabet="ab д\u06a9", max_size=6)), max_size=10),
    st.integers(0, 3),
)
def test_joined_spans_are_the_joined_texts(items, cut):
    """Texts as strings and as spans of two buffers, in any mix and order (some spans end to
    end in their buffer, some not): their code points are those of the strings joined, each
    followed by a space."""
    words = [w for _, w in items]
    bufs = [
        spans.joined_code_points(words[: len(words) // 2 + cut], True),
        spans.joined_code_points(words, True),
    ]
    of_buffer = {0: spans.spans_of(*bufs[0]), 1: spans.spans_of(*bufs[1])}
    mixed = []
    for i, (as_span, w) in enumerate(items):
        pick = 0 if i < len(of_buffer[0]) and i % 2 else 1
        mixed.append(of_buffer[pick][i] if as_span else w)
    cps, bounds = spans.joined_spans(mixed)
    want, want_bounds = spans.joined_code_points(words, True)
    assert cps.tolist() == want.tolist() and bounds.tolist() == want_bounds.tolist()
    assert spans.decoded(mixed) == words


def test_token_hashes_many_on_the_corpora():
    if not (CORPORA / "en.jsonl").exists():
        pytest.skip("no corpora")
    canon = Canonicalizer(Config())
    for name in ("en", "ru", "fa"):
        batch = [
            json.loads(line)["text"]
            for line in (CORPORA / f"{name}.jsonl").open(encoding="utf-8").readlines()[:60]
        ]
        prepared = [canon.text_and_language(t) for t in batch]
        hashes, offsets = canon.token_hashes_many(
            [t for t, _ in prepared], [doc_lang for _, doc_lang in prepared]
        )
        want = [canon.tokens(t) for t in batch]
        assert hashes.tolist() == hash_strings([t for w in want for t in w], 1).tolist(), name
        assert np.diff(offsets).tolist() == [len(w) for w in want]


def test_token_hashes_many_refuses_stemmed_tokens():
    with pytest.raises(ValueError, match="stemmed"):
        Canonicalizer(Config(stem="snowball")).token_hashes_many(["roses"], ["en"])
