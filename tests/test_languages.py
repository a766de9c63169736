"""Persian and Russian as their readers write them.

On a committed sample of 15 real Persian texts with ZWNJ (tests/data/fa_zwnj_sample.jsonl,
held-out texts of the shared fa.jsonl): all-spaces and all-joined copies cluster with their
original and compare at r >= 0.95; 150 copies with letters, digits, diacritics and ZWNJ
varied at once are all found; search treats letter forms and Russian inflections alike; a
Persian copy with r = 1.0 is fully highlighted in the report.
"""

import json
import random
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.persian import all_joined, all_spaces, mixed
from neardup import Config, Document, NearDup
from neardup.canonical import Canonicalizer, search_text, tokens_with_offsets
from neardup.canonical import search as search_module
from neardup.canonical.search import _term, _terms_memo, search_text_words
from neardup.cli import main
from neardup.comparison.highlight import shared_passages, shingle_spans
from neardup.report.html import ReportOptions, build_report
from neardup.signing.signer import Signer
from tests.corpora import corpus

SAMPLE = Path(__file__).parent / "data" / "fa_zwnj_sample.jsonl"
TEXTS = [json.loads(line)["text"] for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


def test_the_sample_has_segmentation_to_vary():
    assert len(TEXTS) == 15 and all(t.count("\u200c") >= 4 for t in TEXTS)
    assert all(all_spaces(t) != t != all_joined(t) for t in TEXTS)


def test_all_spaces_and_all_joined_copies_cluster_with_their_original(tmp_path):
    nd = NearDup.open(str(tmp_path / "fa.db"), Config(threshold=0.8))
    docs = [
        Document(f"{i}/{k}", f(t), lang="fa")
        for i, t in enumerate(TEXTS)
        for k, f in (("o", lambda s: s), ("s", all_spaces), ("j", all_joined))
    ]
    nd.index(docs, progress=None)
    clusters = nd.clusters(0.8)
    nd.close()
    groups = sorted(sorted(c.members) for c in clusters)
    assert groups == sorted([f"{i}/j", f"{i}/o", f"{i}/s"] for i in range(len(TEXTS)))


def test_compare_gives_at_least_095_for_sampled_copies(tmp_path):
    db = tmp_path / "cmp.db"
    NearDup.open(str(db), Config()).close()
    for i in (0, 7, 14):
        for make in (all_spaces, all_joined):
            a, b = tmp_path / f"{i}a.txt", tmp_path / f"{i}b.txt"
            a.write_text(TEXTS[i], encoding="utf-8")
            b.write_text(make(TEXTS[i]), encoding="utf-8")
            res = CliRunner().invoke(
                main, ["compare", str(a), str(b), "-e", str(db), "--json"], catch_exceptions=False
            )
            assert res.exit_code == 0, res.output
            assert json.loads(res.stdout)["resemblance"] >= 0.95


def test_150_copies_with_everything_varied_at_once_are_found(tmp_path):
    nd = NearDup.open(str(tmp_path / "mixed.db"), Config(threshold=0.8))
    nd.index(
        [Document(str(i), t, lang="fa") for i, t in enumerate(TEXTS)], progress=None, tag=False
    )
    found = 0
    for k in range(150):
        i = k % len(TEXTS)
        variant = mixed(TEXTS[i], random.Random(k))
        assert variant != TEXTS[i]
        found += str(i) in {m.id for m in nd.query(variant, lang="fa")}
    nd.close()
    assert found == 150


# -- search ----------------------------------------------------------------------------------


def test_search_text_unifies_letters_zwnj_yo_digits_and_stems_russian():
    assert search_text("ايران") == search_text("ایران") == "ایران"
    assert search_text("دانش‌آموزان") == search_text("دانش آموزان")
    assert search_text("Ёлка ۱۲۳") == "елк 123"
    assert len({search_text(w) for w in ("файлами", "файл", "файлы", "файлов")}) == 1
    assert search_text("files filed", stem=False) == "files filed"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(
            st.sampled_from(["файлами", "файл", "files", "filed", "سلام", "42", "ёлка"])
            | st.text(min_size=1, max_size=6)
        ),
        max_size=4,
    ),
    st.sampled_from([None, "en", "ru", "fa"]),
)
def test_search_text_words_are_each_words_term_however_the_memo_stands(texts, lang):
    """The memo (all of a text's words remembered: one lookup each; else the new ones
    analyzed and remembered; full: analyzed each time) gives each word's own :func:`_term`."""
    for words in texts:
        assert search_text_words(words, lang) == [_term(w, lang) for w in words]


def test_search_text_words_past_a_full_memo(monkeypatch):
    monkeypatch.setattr(search_module, "_MEMO_WORDS", 2)
    _terms_memo.cache_clear()
    words = ["файлами", "files", "filed", "файлами"]
    assert search_text_words(words) == [_term(w, None) for w in words]
    assert search_text_words(words) == ["файл", "file", "file", "файл"]
    _terms_memo.cache_clear()


@pytest.fixture(scope="module")
def search_index(tmp_path_factory):
    nd = NearDup.open(str(tmp_path_factory.mktemp("search") / "s.db"), Config())
    docs = [
        ("fa-arabic", "سفر به ايران در بهار و دیدار از شهرهای تاریخی"),  # Arabic yeh
        ("fa-persian", "تاریخ ایران باستان در کتاب تازه"),
        ("fa-other", "کتابی درباره دریا و ماهی"),
        ("ru-1", "Сохраните файл на диске"),
        ("ru-2", "Все файлы удалены"),
        ("ru-3", "Список файлов пуст"),
        ("ru-4", "Работа с файлами в системе"),
        ("ru-other", "Погода в Москве"),
    ]
    nd.index([Document(i, t) for i, t in docs], progress=None)
    yield nd
    nd.close()


def test_search_finds_arabic_and_persian_letter_forms_alike(search_index):
    arabic = {h.id for h in search_index.search("ايران")}
    persian = {h.id for h in search_index.search("ایران")}
    assert arabic == persian == {"fa-arabic", "fa-persian"}


def test_search_finds_russian_documents_by_another_inflection(search_index):
    assert {h.id for h in search_index.search("файлами")} == {"ru-1", "ru-2", "ru-3", "ru-4"}
    hits = search_index.search("файлов")
    assert len(hits) == 4 and all(h.snippet for h in hits)  # snippets come from the raw text


def test_search_after_update_and_delete_keeps_the_index_consistent(search_index):
    search_index.index([Document("ru-1", "Сохраните документ на диске")], progress=None)
    assert "ru-1" not in {h.id for h in search_index.search("файл")}
    search_index.engine.delete(["ru-2"])
    assert {h.id for h in search_index.search("файл")} == {"ru-3", "ru-4"}


# -- highlights ------------------------------------------------------------------------------


def test_tokens_keep_their_raw_spans():
    text = "The <b>cat</b> sat.\nدانش آموزان و كتاب‌ها docu-\nment"
    toks, lang = tokens_with_offsets(text, Canonicalizer(Config()))
    assert [t.text for t in toks] == Signer(Config()).canonicalizer.tokens(text)
    spans = {t.text: text[t.start : t.end] for t in toks if t.text.isascii()}
    assert spans == {"cat": "<b>cat</b>", "sat": "sat.", "document": "docu-\nment"}
    assert all(0 <= t.start <= t.end <= len(text) for t in toks)


@pytest.mark.parametrize(
    "config",
    [Config(), Config(shingle="char", shingle_size=8), Config(stopwords=False, shingle_size=3)],
)
def test_highlighted_shingles_are_the_signed_ones(config):
    for text in TEXTS[:3] + ["Сохраните файл на диске, пожалуйста, сегодня же вечером"]:
        seq, spans = shingle_spans(text, Canonicalizer(config))
        assert np.array_equal(np.unique(seq), Signer(config).sign(text).shingles) and len(
            spans
        ) == len(seq)


def _marked_share(html_text: str) -> float:
    marked = "".join(re.findall(r'<mark class="shared">(.*?)</mark>', html_text, re.S))
    plain = re.sub(r"<[^>]+>", "", html_text)
    return len(re.sub(r"\s", "", marked)) / len(re.sub(r"\s", "", plain))


def test_a_persian_copy_with_resemblance_one_is_fully_highlighted():
    for text in TEXTS:
        copy = mixed(all_spaces(text), random.Random(3))
        d = shared_passages(text, copy, Canonicalizer(Config()), "fa", "fa", max_words=None)
        assert (
            d.shared_share == 1.0
            and _marked_share(d.a_html) == 1.0
            and _marked_share(d.b_html) == 1.0
        )


def test_partial_copies_mark_only_the_shared_passage():
    text, other = TEXTS[0], TEXTS[1]
    d = shared_passages(
        text, all_spaces(text) + "\n" + other, Canonicalizer(Config()), "fa", "fa", max_words=None
    )
    assert 0.2 < d.shared_share < 0.9 and _marked_share(d.a_html) == 1.0


def test_report_highlights_a_persian_copy_fully(tmp_path):
    nd = NearDup.open(str(tmp_path / "r.db"), Config(threshold=0.8))
    nd.index(
        [
            Document("orig", TEXTS[2], lang="fa"),
            Document("copy", all_joined(all_spaces(TEXTS[2])).replace("ی", "ي"), lang="fa"),
        ],
        progress=None,
    )
    nd.clusters(0.8)
    page = build_report(nd.engine, threshold=0.8, options=ReportOptions(max_words=5000))
    nd.close()
    assert "resemblance 1.000" in page and "100% of its words in shared passages" in page
    member = page[page.index('data-member-id="copy"') :]
    member = member[
        member.index('<div class="diff"') :
    ]  # the side-by-side texts, after what changed
    assert (
        _marked_share(member[member.index('<div class="text"') : member.index("</section>")]) == 1.0
    )


def test_search_on_real_persian_texts_marks_the_raw_words_in_snippets(tmp_path):
    nd = NearDup.open(str(tmp_path / "fa-search.db"), Config())
    nd.index(
        [Document(str(i), t, lang="fa") for i, t in enumerate(TEXTS)], progress=None, tag=False
    )
    words = [w for w in re.findall(r"[\u0600-\u06ff]{5,}", TEXTS[0])][:12]
    for w in words:
        for form in (w, w.replace("ی", "ي").replace("ک", "ك")):
            hits = nd.search(form)
            assert "0" in {h.id for h in hits}
            assert all("[" in h.snippet for h in hits if h.id == "0")
    nd.close()


def test_snippet_marks_other_inflections_and_letter_forms():
    from neardup.canonical.search import snippet

    assert (
        snippet("Работа с файлами в системе", search_text("файлы").split())
        == "Работа с [файлами] в системе"
    )
    assert snippet("سفر به ايران در بهار", search_text("ایران").split()) == "سفر به [ايران] در بهار"
    long = " ".join(["слово"] * 40 + ["файлов"] + ["слово"] * 40)
    s = snippet(long, ["файл"], words=8)
    assert s.startswith("… ") and s.endswith(" …") and "[файлов]" in s and len(s.split()) == 10


def test_shared_passage_texts_are_the_raw_text_of_the_shared_part():
    from neardup.comparison.highlight import shared_passage_texts

    other = "Совсем другой текст о погоде в Москве и о снеге на улицах города сегодня"
    a = TEXTS[4] + "\n\n" + other
    passages = shared_passage_texts(a, all_spaces(TEXTS[4]), Canonicalizer(Config()), "fa", "fa")
    assert passages == [" ".join(TEXTS[4].split())]
    assert shared_passage_texts(other, TEXTS[4], Canonicalizer(Config())) == []


@pytest.mark.parametrize("i", range(len(TEXTS)))
def test_shared_passages_from_a_signed_documents_shingles_are_the_same(i):
    """``compare`` passes the signed ``b``'s shingles instead of making them again from its
    text: the same passages, for every text and an edited copy of it."""
    from neardup.comparison.highlight import shared_passage_texts
    from neardup.signing.signer import Signer

    config = Config()
    b = all_spaces(TEXTS[i]) + " " + TEXTS[(i + 1) % len(TEXTS)]
    a = TEXTS[i] + "\n\n" + "Совсем другой текст о погоде в Москве и о снеге на улицах"
    signer = Signer(config)
    signed = signer.sign(Document("b", b))
    assert shared_passage_texts(a, b, signer.canonicalizer) == shared_passage_texts(
        a, b, signer.canonicalizer, shingles_b=signed.shingles
    )


def test_persian_stop_words_dropped_from_mixed_text_where_persian_keeps_words():
    """With words as Persian tokens (segmentation "join"), a mostly English text drops the
    Persian stop words of its Persian part too, in both token paths (strings and hashes);
    with anchor pieces (the default) Persian has none, so no text is scanned for them."""
    pytest.importorskip(
        "hazm",
        reason="Persian stop words and the join segmentation use hazm's lists (the hazm extra)",
    )
    from neardup.canonical import canonicalizer as cz
    from neardup.sketches.hashing import hash_strings

    text = "the annual report of the company was published in the spring کتاب را خواندم"
    c = cz.Canonicalizer(Config(fa_segmentation="join"))
    canon, lang = c.text_and_language(text)
    assert lang == "en" and "را" in cz.stopwords_for("fa", "join")
    tokens = c.tokens(text)
    assert "را" not in tokens and "کتاب" in tokens and "the" not in tokens
    h, off = c.token_hashes_many([canon], [lang])
    assert h.tolist() == hash_strings(tokens, 1).tolist()
    assert not cz.persian_stop_words() and cz.stopwords_for("fa") == frozenset()
    assert (
        cz.Canonicalizer(Config()).tokens(text) != tokens
    )  # (the setting is the index's, not the process's)


def test_pieces_made_at_once_are_the_pieces_made_one_by_one():
    """``offsets.piece_tokens`` (distinct pieces canonicalized in one call, laid out with
    numpy) equals ``piece_tokens_reference`` (a piece at a time) on every test text in each
    language, texts with every kind of whitespace, and real corpus documents."""
    import importlib.util

    from neardup.canonical.letters import has_arabic_script
    from neardup.canonical.offsets import piece_tokens, piece_tokens_reference

    texts = list(TEXTS) + [all_spaces(t) for t in TEXTS]
    texts += [
        "",
        "   ",
        "x",
        " \u00a0a\u2003b\u3000\u200bc\n\u0085d ",
        "<p>Hi,</p>\tco-\nop 1,0 ١٢",
    ]
    cases = [(text, lang) for text in texts for lang in ("fa", "ru", "en")]
    cases += [(d["text"], name) for name in ("en", "ru", "fa") for d in corpus(name, limit=12)]
    # (stemmed texts with Persian words where hazm, an extra, is installed: it stems them)
    hazm = importlib.util.find_spec("hazm") is not None
    stemmed = Config(digits="drop", stem="snowball")
    for config, text, lang in [(Config(), *c) for c in cases] + [
        (stemmed, *c) for c in cases if hazm or not has_arabic_script(c[0])
    ]:
        made = piece_tokens(text, config, lang)
        assert made == piece_tokens_reference(text, config, lang), (text[:60], lang)


def test_alignment_fast_path_gives_the_reference_spans():
    """``offsets.align`` (the compiled loop where it runs) and ``align_python`` (the usual
    tokens taken without a search) equal ``align_reference`` (every token searched) on every
    test text, edited copies, and real corpus documents."""
    from neardup.canonical.offsets import (
        align,
        align_python,
        align_reference,
        tokens_and_pieces,
    )

    texts = list(TEXTS) + [all_spaces(t) for t in TEXTS]
    texts += ["<p>Hello, WORLD!</p> 1,000 ١٢٣ co-\noperate e-mail  the end", "", "   "]
    for name in ("en", "ru", "fa"):
        texts += [d["text"] for d in corpus(name, limit=60)]
    config = Config()
    for text in texts:
        words, pieces, _ = tokens_and_pieces(text, Canonicalizer(config))
        want = align_reference(words, pieces, len(text))
        assert align(words, pieces, len(text)) == want
        assert align_python(words, pieces, len(text)) == want
