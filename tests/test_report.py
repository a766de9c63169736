"""The HTML report: word diff, page content, escaping, sampling notes, streaming, CLI."""

from __future__ import annotations

import base64
import html
import re
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.report import html as html_module
from neardup.report.html import (
    ReportOptions,
    build_report,
    write_report,
    resemblance_edges,
    scan_stats,
    text_attrs,
    title_attrs,
)
from neardup.comparison.worddiff import word_changes, word_diff

from ._report_data import EN_TRIO, FA_PAIR, HOSTILE_TITLE, build_index, sample_docs


# -- word diff -------------------------------------------------------------------------------


def _marked(fragment: str) -> list[str]:
    return [
        html.unescape(m) for m in re.findall(r'<mark class="shared">(.*?)</mark>', fragment, re.S)
    ]


def test_word_diff_marks_shared_runs_only():
    d = word_diff(
        "the quick brown fox jumps over", "the quick brown cat jumps over the lazy dog", min_run=3
    )
    assert _marked(d.a_html) == ["the quick brown"]
    assert _marked(d.b_html) == ["the quick brown"]
    assert d.shared_words == 3 and d.words_a == 6 and d.words_b == 9
    assert d.shared_share == pytest.approx(3 / 9)
    assert not d.truncated


def test_word_diff_is_case_insensitive_and_escapes():
    d = word_diff('A <b>B</b> & "c" d e', 'a <B>b</B> & "C" d x', min_run=2)
    assert "<b>" not in d.a_html and "&lt;b&gt;B&lt;/b&gt;" in d.a_html and "&amp;" in d.a_html
    assert _marked(d.b_html) == ['a <B>b</B> & "C" d']


def test_word_diff_truncates_long_texts():
    d = word_diff(" ".join(f"w{i}" for i in range(50)), "w0 w1 w2", max_words=10)
    assert d.truncated and d.words_a == 10


@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab <>&\"'\n\tسلام\u200cдаx")), max_size=80),
    st.text(alphabet=st.sampled_from(list("ab <>&\"'\n\tسلام\u200cдаx")), max_size=80),
)
def test_word_diff_keeps_the_texts(a, b):
    d = word_diff(a, b, min_run=1, max_words=None)
    for original, fragment in ((a, d.a_html), (b, d.b_html)):
        assert "<" not in re.sub(r"</?mark[^>]*>", "", fragment)
        assert html.unescape(re.sub(r"</?mark[^>]*>", "", fragment)) == original


def _plain(fragment: str, drop: str) -> list[str]:
    """The words of a change view with the ``drop`` elements (del or ins) left out."""
    kept = re.sub(rf"<{drop}>.*?</{drop}>", " ", fragment, flags=re.S)
    return html.unescape(re.sub(r"</?(del|ins)>", " ", kept)).split()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c", "<x>", "&", "سلام", "да", "A"]), max_size=30),
    st.lists(st.sampled_from(["a", "b", "c", "<x>", "&", "سلام", "да", "d"]), max_size=30),
)
def test_word_changes_give_both_texts_back(a, b):
    """Without the insertions the change view is the first text, without the deletions the
    second (words compared case-folded: an unchanged word is shown as the second has it)."""
    c = word_changes(" ".join(a), " ".join(b), context=100, max_words=None)
    assert [w.casefold() for w in _plain(c.html, "ins")] == [w.casefold() for w in a]
    assert _plain(c.html, "del") == b
    assert c.added == sum(len(x.split()) for x in re.findall(r"<ins>(.*?)</ins>", c.html))
    assert c.removed == sum(len(x.split()) for x in re.findall(r"<del>(.*?)</del>", c.html))
    assert "<x>" not in c.html


def test_word_changes_shorten_long_unchanged_runs():
    same = " ".join(f"w{i}" for i in range(100))
    c = word_changes(same + " old end", same + " new end", context=3)
    assert (
        c.html == '<span class="same">… 97 unchanged words …</span> '
        "w97 w98 w99 <del>old</del> <ins>new</ins> end"
    )
    assert (c.added, c.removed) == (1, 1) and not c.unchanged
    assert word_changes(same, same.upper()).unchanged


def test_title_attrs_keep_the_titles_own_direction():
    assert (
        title_attrs("fa") == 'lang="fa" dir="auto"' and title_attrs("en") == 'lang="en" dir="auto"'
    )
    assert title_attrs(None) == 'dir="auto"'


# -- helpers ---------------------------------------------------------------------------------


def test_text_attrs_direction_by_language():
    assert text_attrs("fa") == 'lang="fa" dir="rtl"'
    assert text_attrs("fa-IR") == 'lang="fa-IR" dir="rtl"'
    assert text_attrs("ar") == 'lang="ar" dir="rtl"'
    assert text_attrs("en") == 'lang="en" dir="auto"'
    assert text_attrs(None) == 'dir="auto"' and text_attrs("und") == 'dir="auto"'
    assert text_attrs('x"><script>') == 'lang="x&quot;&gt;&lt;script&gt;" dir="auto"'


def test_resemblance_edges():
    e = resemblance_edges(0.8)
    assert len(e) == 21 and e[0] == 0.5 and e[-1] == 1.0 and e == sorted(e)
    assert (
        resemblance_edges(0.3)[0] == 0.0 and resemblance_edges(0.9)[0] == 0.6
    )  # t - 0.3: the pairs below t show


# -- the page --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nd(tmp_path_factory):
    nd = build_index(tmp_path_factory.mktemp("report") / "index.db")
    yield nd
    nd.close()


@pytest.fixture(scope="module")
def page(nd):
    return build_report(nd.engine, threshold=nd.config.threshold)


def _tags(nd):
    return [d.tags for d in nd.engine.scan()]


def test_summary_numbers_match_the_index(nd, page):
    tags = _tags(nd)
    dups = sum(t.is_duplicate for t in tags)
    assert dups > 0
    assert f'<dd id="n-documents">{len(sample_docs())}</dd>' in page
    assert f'<dd id="n-duplicates">{dups}</dd>' in page
    assert '<dd id="n-clusters">3</dd>' in page
    assert f'<dd id="share">{dups / len(tags):.1%}</dd>' in page
    assert "Counts cover all 12 documents." in page


def test_page_is_self_contained(page):
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    imgs = re.findall(r'<img src="([^"]+)"', page)
    assert len(imgs) == 3
    for src in imgs:
        assert src.startswith("data:image/svg+xml;base64,")
        root = ET.fromstring(base64.b64decode(src.split(",", 1)[1]))
        assert root.tag.endswith("svg") and len(root) > 0


def test_all_text_is_escaped(page):
    assert html.escape(HOSTILE_TITLE) in page
    assert HOSTILE_TITLE not in page and "<script>window" not in page
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert page.count("<script>") == 1  # the page's own


def test_clusters_and_rtl_blocks(page):
    blocks = re.findall(
        r'<details class="cluster" id="cluster-(\d+)" data-cluster-id="([^"]+)"', page
    )
    assert [b[1] for b in blocks][0] == EN_TRIO[0]
    assert {b[1] for b in blocks} == {EN_TRIO[0], FA_PAIR[0], "en-reuters-8ffe52940db3"}
    fa = page[page.index(f'data-cluster-id="{FA_PAIR[0]}"') :]
    fa = fa[: fa.index("</details></div></details>")]
    assert (
        fa.count('<div class="text" lang="fa" dir="rtl">') == 3
    )  # what changed, the representative, the member
    assert '<bdi class="title" lang="fa" dir="auto">' in fa
    assert '<mark class="shared">' in fa
    assert 'lang="en" dir="auto"' in page


def test_each_member_shows_what_changed_from_its_representative(page):
    """The copy with markup appended shows exactly those words as added, nothing removed."""
    member = page[page.index('data-member-id="hostile-copy"') :]
    member = member[: member.index("</details>")]
    changes = member[member.index('<section class="changes">') : member.index("</section>")]
    changes = changes[changes.index('<div class="text"') :]  # the text, after the legend
    assert re.findall(r"<ins>(.*?)</ins>", changes) == ["&lt;img src=x onerror=alert(1)&gt;"]
    assert "<del>" not in changes
    assert "<ins>+3</ins> <del>−0</del> words" in member
    for m in re.findall(r'<details class="member".*?</details>', page, re.S):
        assert '<section class="changes">' in m


def test_a_latin_title_stays_left_to_right_in_a_persian_cluster(tmp_path):
    from neardup import Document, NearDup

    fa = {
        d.id: d for d in sample_docs() if d.id in FA_PAIR
    }  # a Persian pair, titled in Latin script here
    docs = [
        Document(id=i, text=fa[i].text, title="Windows 10 (64-bit) notes", lang="fa")
        for i in FA_PAIR
    ]
    with NearDup.open(str(tmp_path / "i.db")) as nd:
        nd.index(docs)
        page = build_report(nd.engine, threshold=nd.config.threshold)
    assert '<bdi class="title" lang="fa" dir="auto">Windows 10 (64-bit) notes</bdi>' in page
    assert '<bdi lang="fa" dir="auto">Windows 10 (64-bit) notes</bdi>' in page
    assert 'dir="rtl">Windows' not in page
    assert page.count('<div class="text" lang="fa" dir="rtl">') == 3


def test_sampling_limits_are_applied_and_stated(nd):
    page = build_report(
        nd.engine,
        threshold=nd.config.threshold,
        options=ReportOptions(top=1, members=1, max_scan=5),
    )
    assert page.count('<details class="cluster"') == 1
    assert page.count('<details class="member"') == 1
    assert "1 more member not shown." in page
    assert "Counts cover the first 5 of 12 documents" in page
    assert '<dd id="n-documents">5</dd>' in page
    assert "Showing the 1 largest of 3 clusters, at most 1 member each" in page


def test_without_stored_clusters_the_tags_make_clusters(tmp_path):
    nd = build_index(tmp_path / "tags.db", clusters=False)
    try:
        assert nd.engine.read_clusters() == []
        page = build_report(nd.engine, threshold=nd.config.threshold)
    finally:
        nd.close()
    assert (
        "Clusters come from the index-time tags: in arrival order each document joins the "
        "earlier representative" in page
    )
    assert f'data-cluster-id="{EN_TRIO[0]}"' in page and f'data-cluster-id="{FA_PAIR[0]}"' in page
    first = re.search(r'<span class="size">(\d+) documents</span>', page)
    assert first and first.group(1) == "3"


class CountingEngine:
    """Wraps an engine and counts what the report pulls from ``scan``."""

    def __init__(self, engine):
        self._engine = engine
        self.pulled = 0
        self.text_scans = 0

    def scan(self, *, text=False, batch_size=1000):
        self.text_scans += bool(text)
        for d in self._engine.scan(text=text, batch_size=batch_size):
            self.pulled += 1
            yield d

    def __getattr__(self, name):
        return getattr(self._engine, name)


def test_scan_is_streamed_and_bounded(nd):
    eng = CountingEngine(nd.engine)
    st_ = scan_stats(eng, threshold=0.8, limit=4, keep_members=None)
    assert st_.scanned == 4 and eng.pulled <= 5 and eng.text_scans == 0
    assert not st_.complete and st_.total == 12
    eng = CountingEngine(nd.engine)
    build_report(eng, threshold=0.8, options=ReportOptions(max_scan=3))
    assert eng.pulled <= 4 and eng.text_scans == 0


def test_options_are_validated():
    with pytest.raises(ValueError, match="top"):
        ReportOptions(top=0)
    with pytest.raises(ValueError, match="max_scan"):
        ReportOptions(max_scan=0)


# -- command line ----------------------------------------------------------------------------


def test_cli_report(nd, tmp_path):
    from neardup.cli import main

    out = tmp_path / "r.html"
    res = CliRunner().invoke(
        main, ["report", "--engine", nd.engine.location, "-o", str(out), "--top", "2", "-q"]
    )
    assert res.exit_code == 0, res.output
    assert out.exists() and "wrote" in res.output
    assert out.read_text(encoding="utf-8").count('<details class="cluster"') == 2


def test_cli_report_missing_index(tmp_path):
    from neardup.cli import main

    res = CliRunner().invoke(
        main, ["report", "--engine", str(tmp_path / "nope.db"), "-o", str(tmp_path / "r.html")]
    )
    assert res.exit_code == 1
    assert "no index at" in res.output
    assert not (tmp_path / "nope.db").exists()


def test_report_on_either_engine(engine_target):
    from neardup import NearDup

    target, opts = engine_target
    nd = NearDup.open(target, **opts)
    try:
        nd.index(sample_docs(), progress=None)
        nd.engine.refresh()
        nd.clusters(write=True)
        nd.engine.refresh()
        page = build_report(
            nd.engine, threshold=nd.config.threshold, options=ReportOptions(members=1)
        )
    finally:
        nd.close()
    assert (
        f'<dd id="n-documents">{len(sample_docs())}</dd>' in page
        and '<dd id="n-clusters">3</dd>' in page
    )
    ids = re.findall(r'<details class="cluster" id="cluster-\d+" data-cluster-id="([^"]+)"', page)
    assert ids[0] == EN_TRIO[0] and set(ids) == {EN_TRIO[0], FA_PAIR[0], "en-reuters-8ffe52940db3"}
    assert (
        page.count('<div class="text" lang="fa" dir="rtl">') == 3
    )  # what changed, the representative, the member
    assert page.count('<details class="member"') == 3 and "1 more member not shown." in page


def test_the_report_of_an_index_uses_its_rule_and_makes_no_signer(nd, tmp_path, count_signers):
    """write_report hands the index's candidate rule (NearDup.rule) to the page: the page
    of a NearDup makes no signer of its own, and shows what build_report alone shows."""
    made = count_signers()
    write_report(nd, str(tmp_path / "report.html"))
    assert made == []
    t = nd.config.threshold
    with_rule = html_module._best_earlier(nd.engine, t, nd.rule)
    assert made == []
    assert html_module._best_earlier(nd.engine, t, None) == with_rule
    assert made  # (the engine alone: the rule is made there, with a signer)
