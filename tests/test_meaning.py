"""Detection that respects meaning: stop lists of function words only, the short-text guard,
languages beyond fa/ru/en, thresholds a user can tune (docs/canonicalization.md)."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from hypothesis import given, settings, strategies as st

from neardup import Config, NearDup
from neardup.canonical import Canonicalizer
from neardup.canonical.stopwords import raw_stopwords
from neardup.signing.signer import Signer

A = (
    "Inflation went up in the first quarter and the bank will raise rates by two points "
    "before the election."
)
B = (
    "Inflation went down in the second quarter and the bank will not raise rates by three "
    "points after the election."
)

#: Words no stop list may hold: negations, numbers and number words, directions and order,
#: comparatives and quantifiers, modals.
NEVER = {
    "en": "not no nor never none nothing t one two three first second million up down before "
    "after above below over under out off again then more most less least few all any each some "
    "only very than will would can could may might must shall should or".split(),
    "ru": "не ни нет без никогда один два три первый второй до после над под перед через между "
    "больше более меньше все много только может можно надо нельзя бы будет или".split(),
    "fa": "نه نمی نیست نبود هیچ یک دو سه اول دوم بالا پایین قبل بعد پیش پس بیشتر کمتر همه "
    "باید شاید یا بی".split(),
}


@pytest.mark.parametrize("lang", ["en", "ru", "fa"])
def test_stop_lists_are_small_data_files_naming_their_source(lang):
    text = (
        resources.files("neardup.canonical")
        .joinpath("data", f"stopwords_{lang}.txt")
        .read_text(encoding="utf-8")
    )
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert any("Source:" in line for line in header)
    words = raw_stopwords(lang)
    assert 20 <= len(words) < 150 and len(set(words)) == len(words)


@pytest.mark.parametrize("lang", ["en", "ru", "fa"])
def test_no_stop_list_holds_a_negation_number_direction_or_modal(lang):
    assert not set(NEVER[lang]) & set(raw_stopwords(lang))


def test_persian_list_is_drawn_from_hazms():
    hazm = pytest.importorskip("hazm")
    assert set(raw_stopwords("fa")) <= set(hazm.stopwords_list())


def test_the_issue_pair_is_no_duplicate_and_no_exact_copy(tmp_path):
    nd = NearDup.open(str(tmp_path / "x.db"), Config())
    cmp = nd.compare(A, B)
    nd.close()
    assert cmp.resemblance < 0.8 and not cmp.exact_equal


WORDS = {  # content words, function words, and the changes no exact copy may hide, per language
    "en": (
        "bank rates inflation election quarter points raise fell prices market report growth",
        "the of and in was is to by it they",
        {
            "negation": "not no never nor",
            "number": "two three first second 2 3 million",
            "direction": "up down before after more less above below",
        },
    ),
    "ru": (
        "банк ставки инфляция выборы квартал пункты поднял цены рынок отчёт рост",
        "в и на с о что он она это был",
        {
            "negation": "не ни нет без",
            "number": "два три первый второй 2 3 миллион",
            "direction": "до после над под больше меньше перед через",
        },
    ),
    "fa": (
        "بانک نرخ تورم انتخابات فصل امتیاز افزایش قیمت بازار گزارش رشد",
        "از به با در که و را این آن است",
        {
            "negation": "نه نمی نیست نبود",
            "number": "دو سه اول دوم ۲ ۳ میلیون",
            "direction": "بالا پایین قبل بعد بیشتر کمتر پیش پس",
        },
    ),
}
SIGNERS = Signer(Config())


@settings(max_examples=200, deadline=None)
@given(lang=st.sampled_from(sorted(WORDS)), data=st.data())
def test_texts_differing_in_a_negation_number_or_direction_are_never_exact_copies(lang, data):
    """A text with one negation, number or direction word inserted or swapped for another is
    no exact copy of the text without it, whatever function words are around."""
    content, function, changes = WORDS[lang]
    words = data.draw(st.lists(st.sampled_from(content.split()), min_size=3, max_size=14))
    fillers = data.draw(st.lists(st.sampled_from(function.split()), min_size=3, max_size=14))
    base = [w for pair in zip(words, fillers, strict=False) for w in pair]
    at = data.draw(st.integers(0, len(base)))
    kind = data.draw(st.sampled_from(sorted(changes)))
    word = data.draw(st.sampled_from(changes[kind].split()))
    other = data.draw(st.sampled_from([w for w in changes[kind].split() if w != word]))
    inserted = base[:at] + [word] + base[at:]
    swapped = base[:at] + [other] + base[at:]
    a, b, c = (SIGNERS.sign(" ".join(x), lang) for x in (base, inserted, swapped))
    assert a.exact != b.exact and b.exact != c.exact


def test_an_index_of_the_old_signature_version_says_how_to_re_sign(tmp_path):
    from neardup.engines.base import EngineError

    from ._indexes import index_of_signature_version

    path = index_of_signature_version(tmp_path / "old.db", 4)
    with pytest.raises(
        EngineError,
        match=r"signature version 4.*re-sign by indexing the source documents again.*neardup index",
    ):
        NearDup.open(str(path))


def test_function_words_still_go():
    assert Canonicalizer(Config()).tokens("The bank of the town and its rates") == [
        "bank",
        "town",
        "rates",
    ]


# -- the short-text guard --------------------------------------------------------------------


def _compare_files(tmp_path, a: str, b: str, *args: str) -> dict:
    from click.testing import CliRunner

    from neardup.cli import main

    fa, fb = tmp_path / "a.txt", tmp_path / "b.txt"
    fa.write_text(a, encoding="utf-8")
    fb.write_text(b, encoding="utf-8")
    res = CliRunner().invoke(
        main,
        ["compare", str(fa), str(fb), "-e", str(tmp_path / "none.db"), "--json", *args],
        catch_exceptions=False,
    )
    assert res.exit_code == 0, res.output
    assert not (tmp_path / "none.db").exists()  # compared without an index, none made
    return json.loads(res.stdout)


def test_compare_works_without_an_index_and_the_issue_pair_differs(tmp_path):
    got = _compare_files(tmp_path, A, B)
    assert got["resemblance"] < 0.8 and not got["exact_equal"] and not got["too_short_a"]
    assert _compare_files(tmp_path, A, A.upper())["exact_equal"]


def test_compare_without_an_index_takes_settings_from_options(tmp_path):
    a, b = "one two three four five six seven", "one two three four five six eight"
    assert _compare_files(tmp_path, a, b, "-w", "2")["resemblance"] == pytest.approx(5 / 7)
    assert (
        _compare_files(tmp_path, "the cat sat", "cat sat", "--no-stopwords")["resemblance"] == 0.0
    )


def test_a_short_text_is_flagged_and_an_exact_copy_only_of_the_same_words(tmp_path):
    got = _compare_files(tmp_path, "Bank raises rates.", "The bank raises rates!")
    assert (
        got["too_short_a"]
        and got["too_short_b"]
        and got["resemblance"] == 1.0
        and not got["exact_equal"]
    )
    same = _compare_files(tmp_path, "Bank raises rates.", "Bank  raises\nrates.")
    assert same["too_short_a"] and same["exact_equal"]


def test_too_short_is_twice_the_shingle_size():
    signer = Signer(Config())
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda".split()
    assert [signer.sign(" ".join(words[:n])).too_short for n in (1, 4, 5, 9, 10, 11)] == [
        True,
        True,
        True,
        True,
        False,
        False,
    ]
    assert not Signer(Config(shingle_size=2)).sign(" ".join(words[:4])).too_short


def test_too_short_is_stored_and_shown_on_both_engines(engine_target):
    from neardup import Document

    target, opts = engine_target
    nd = NearDup.open(target, Config(), **opts)
    nd.index([Document("short", "Bank raises rates."), Document("long", A)], progress=None)
    assert nd.show("short").too_short and not nd.show("long").too_short
    assert nd.show("short").to_dict()["too_short"] is True
    assert {r["id"]: r["neardup"]["too_short"] for r in nd.export()} == {
        "short": True,
        "long": False,
    }
    nd.close()


# -- languages beyond fa, ru and en ---------------------------------------------------------

SAMPLE = [
    json.loads(line)
    for line in (__import__("pathlib").Path(__file__).parent / "data" / "languages_sample.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
]


def test_each_language_of_the_sample_is_detected():
    c = Canonicalizer(Config())
    latin = {"de", "tr"}  # Latin script, not English: "und" (undetermined), no code is guessed
    assert [c.canonicalize(r["text"]).lang for r in SAMPLE] == [
        "und" if r["lang"] in latin else r["lang"] for r in SAMPLE
    ]


@pytest.mark.parametrize("lang", ["de", "tr"])
def test_a_latin_language_is_not_read_as_english(lang):
    text = next(r["text"] for r in SAMPLE if r["lang"] == lang)
    c = Canonicalizer(Config())
    assert c.tokens(text) == Canonicalizer(Config(stopwords=False)).tokens(
        text
    )  # no English stop word taken out
    assert c.canonicalize(text).lang == "und" and c.canonicalize(text, lang).lang == lang


def test_arabic_is_not_persian():
    ar = next(r["text"] for r in SAMPLE if r["lang"] == "ar")
    c = Canonicalizer(Config())
    got = c.canonicalize(ar)
    assert got.lang == "ar" and got.tokens == c.tokens(ar, "ar")
    assert (
        "الصحة" in got.tokens and "في" in got.tokens
    )  # words, with their Arabic letters (no anchor pieces, no ی for ي)
    assert c.canonicalize("کتاب‌های دانش‌آموزان را خواندم").lang == "fa"


def test_scripts_without_spaces_are_shingled_by_characters():
    c = Canonicalizer(Config())
    for lang in ("zh", "ja", "th"):
        text = next(r["text"] for r in SAMPLE if r["lang"] == lang)
        toks = c.tokens(text)
        assert len(toks) > 50 and max(map(len, toks)) == 1, lang


def test_a_lang_outside_fa_ru_en_is_accepted_everywhere(tmp_path):
    from click.testing import CliRunner

    from neardup.cli import main

    path = tmp_path / "docs.jsonl"
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in SAMPLE), encoding="utf-8"
    )
    res = CliRunner().invoke(
        main, ["index", str(path), "-e", str(tmp_path / "x.db"), "--quiet"], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(
        main,
        ["query", "-e", str(tmp_path / "x.db"), "--lang", "de", SAMPLE[0]["text"], "--json"],
        catch_exceptions=False,
    )
    assert res.exit_code == 0 and json.loads(res.stdout)[0]["id"] == "de-0", res.output
    res = CliRunner().invoke(main, ["query", "-e", str(tmp_path / "x.db"), "--lang", "german", "x"])
    assert res.exit_code != 0 and "no language code" in res.output


def test_a_corpus_of_many_languages_indexes_in_one_run_and_each_clusters_its_copies(engine_target):
    from benchmarks.meaning import language_corpus
    from neardup import Document

    target, opts = engine_target
    docs, truth = language_corpus(SAMPLE)
    nd = NearDup.open(target, Config(), **opts)
    report = nd.index(
        [Document(d["id"], d["text"]) for d in docs], progress=None
    )  # no lang given: detected
    assert not report.failed
    got = sorted(sorted(c.members) for c in nd.clusters())
    nd.close()
    assert got == sorted(sorted(g) for g in truth)


# -- tuning: the histogram and the user's own labels ------------------------------------------

LONG = (
    "The committee met on Tuesday to discuss the budget for the coming year and agreed to fund "
    "the new library, the repairs to the old bridge and a study of traffic in the town centre, "
    "which residents have asked for since spring."
)


def test_histogram_shows_pairs_below_the_threshold(tmp_path):
    from click.testing import CliRunner

    from neardup import Document
    from neardup.cli import main

    words = LONG.split()
    near = " ".join(
        words[:-6] + ["quite", "different", "ending", "words", "here", "now"]
    )  # r between 0.5 and 0.8
    nd = NearDup.open(str(tmp_path / "h.db"), Config())
    nd.index(
        [
            Document("a", LONG),
            Document("b", LONG + " Thanks."),
            Document("c", near),
            Document("d", A),
        ],
        progress=None,
    )
    r_c = nd.compare(LONG, near).resemblance
    assert 0.5 <= r_c < 0.8
    bins = nd.resemblance_histogram()
    nd.close()
    assert bins[0]["from"] == 0.5 and bins[-1]["to"] == 1.0
    below = [b for b in bins if b["below_threshold"]]
    assert sum(b["documents"] for b in below) == 1 and sum(b["duplicates"] for b in bins) == 1
    res = CliRunner().invoke(
        main,
        ["clusters", "--histogram", "-e", str(tmp_path / "h.db"), "--json"],
        catch_exceptions=False,
    )
    assert res.exit_code == 0 and json.loads(res.stdout)["bins"] == bins
    res = CliRunner().invoke(
        main, ["clusters", "--histogram", "-e", str(tmp_path / "h.db")], catch_exceptions=False
    )
    assert "<- t" in res.output


def test_report_fills_the_below_threshold_series(tmp_path):
    from neardup import Document
    from neardup.report.html import scan_stats, build_report

    words = LONG.split()
    near = " ".join(words[:-6] + ["quite", "different", "ending", "words", "here", "now"])
    nd = NearDup.open(str(tmp_path / "r.db"), Config())
    nd.index([Document("a", LONG), Document("c", near)], progress=None)
    from neardup.matching.clustering import best_earlier_resemblances, tuning_low

    below = best_earlier_resemblances(nd.engine, nd.rule, tuning_low(0.8))
    assert set(below) == {"c"}
    st = scan_stats(nd.engine, threshold=0.8, limit=None, keep_members=None, below=below)
    assert sum(st.res_other) == 1 and sum(st.res_dup) == 0
    assert "chart-resemblance" in build_report(nd.engine, threshold=0.8)
    nd.close()


def test_evaluate_scores_against_the_users_labels_from_a_folder(tmp_path):
    from click.testing import CliRunner

    from neardup.cli import main

    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in (("x", LONG), ("x_copy", LONG), ("y", LONG), ("z", A)):
        (docs / f"{name}.txt").write_text(text, encoding="utf-8")
    ids = {
        n: f"{n}.txt" for n in ("x", "x_copy", "y", "z")
    }  # (a text file's id: its path in the folder named)
    labels = tmp_path / "pairs.csv"
    labels.write_text(
        f"id_a,id_b,label\n{ids['x']},{ids['x_copy']},1\n{ids['x']},{ids['z']},false\n{ids['y']},{ids['z']},1\n",
        encoding="utf-8",
    )
    res = CliRunner().invoke(
        main,
        [
            "evaluate",
            str(docs),
            "--labels",
            str(labels),
            "--methods",
            "engine",
            "--thresholds",
            "0.8",
            "--json",
        ],
        catch_exceptions=False,
    )
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    row = got["rows"]["engine"][0]
    # x~y and x_copy~y are found but unlabelled: they count neither way; y~z is labelled a
    # duplicate and is missed
    assert got["pairs"] == 3 and (row["truth"], row["found"], row["common"]) == (2, 1, 1)
    assert row["precision"] == 1.0 and row["recall"] == 0.5
    labels.write_text(f"id_a,id_b,label\n{ids['x']},{ids['x_copy']},maybe\n", encoding="utf-8")
    res = CliRunner().invoke(
        main, ["evaluate", str(docs), "--labels", str(labels), "--methods", "engine"]
    )
    assert res.exit_code != 0 and "pairs.csv:2: label 'maybe'" in res.output


def test_the_docs_give_the_stop_lists_sizes():
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "canonicalization.md").read_text(
        encoding="utf-8"
    )
    for lang in ("en", "ru", "fa"):
        assert (
            f"`neardup/canonical/data/stopwords_{lang}.txt` | {len(raw_stopwords(lang))} |" in page
        )
