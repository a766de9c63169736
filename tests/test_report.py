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

from neardup.report import ReportOptions, build_report, resemblance_edges, scan_stats, text_attrs
from neardup.worddiff import word_diff

from ._report_data import EN_TRIO, FA_PAIR, HOSTILE_TITLE, build_index, sample_docs


# -- word diff -------------------------------------------------------------------------------


def _marked(fragment: str) -> list[str]:
    return [html.unescape(m) for m in re.findall(r'<mark class="shared">(.*?)</mark>', fragment, re.S)]


def test_word_diff_marks_shared_runs_only():
    d = word_diff("the quick brown fox jumps over", "the quick brown cat jumps over the lazy dog", min_run=3)
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
@given(st.text(alphabet=st.sampled_from(list("ab <>&\"'\n\tسلام\u200cдаx")), max_size=80),
       st.text(alphabet=st.sampled_from(list("ab <>&\"'\n\tسلام\u200cдаx")), max_size=80))
def test_word_diff_keeps_the_texts(a, b):
    d = word_diff(a, b, min_run=1, max_words=None)
    for original, fragment in ((a, d.a_html), (b, d.b_html)):
        assert "<" not in re.sub(r"</?mark[^>]*>", "", fragment)
        assert html.unescape(re.sub(r"</?mark[^>]*>", "", fragment)) == original


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
    assert resemblance_edges(0.3)[0] == 0.0 and resemblance_edges(0.9)[0] == 0.6  # t - 0.3: the pairs below t show


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
    blocks = re.findall(r'<details class="cluster" id="cluster-(\d+)" data-cluster-id="([^"]+)"', page)
    assert [b[1] for b in blocks][0] == EN_TRIO[0]
    assert {b[1] for b in blocks} == {EN_TRIO[0], FA_PAIR[0], "en-reuters-8ffe52940db3"}
    fa = page[page.index(f'data-cluster-id="{FA_PAIR[0]}"'):]
    fa = fa[: fa.index("</details></div></details>")]
    assert fa.count('<div class="text" lang="fa" dir="rtl">') == 2
    assert '<bdi class="title" lang="fa" dir="rtl">' in fa
    assert '<mark class="shared">' in fa
    assert 'lang="en" dir="auto"' in page


def test_sampling_limits_are_applied_and_stated(nd):
    page = build_report(nd.engine, threshold=nd.config.threshold, options=ReportOptions(top=1, members=1, max_scan=5))
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
    assert "Clusters come from the index-time tags: in arrival order each document joins the earlier representative" in page
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
    res = CliRunner().invoke(main, ["report", "--engine", nd.engine.location, "-o", str(out), "--top", "2", "-q"])
    assert res.exit_code == 0, res.output
    assert out.exists() and "wrote" in res.output
    assert out.read_text(encoding="utf-8").count('<details class="cluster"') == 2


def test_cli_report_missing_index(tmp_path):
    from neardup.cli import main

    res = CliRunner().invoke(main, ["report", "--engine", str(tmp_path / "nope.db"), "-o", str(tmp_path / "r.html")])
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
        page = build_report(nd.engine, threshold=nd.config.threshold, options=ReportOptions(members=1))
    finally:
        nd.close()
    assert f'<dd id="n-documents">{len(sample_docs())}</dd>' in page and '<dd id="n-clusters">3</dd>' in page
    ids = re.findall(r'<details class="cluster" id="cluster-\d+" data-cluster-id="([^"]+)"', page)
    assert ids[0] == EN_TRIO[0] and set(ids) == {EN_TRIO[0], FA_PAIR[0], "en-reuters-8ffe52940db3"}
    assert page.count('<div class="text" lang="fa" dir="rtl">') == 2
    assert page.count('<details class="member"') == 3 and "1 more member not shown." in page
