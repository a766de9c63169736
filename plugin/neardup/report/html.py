"""A self-contained HTML report of an index's near-duplicates (no server, no network).

The page holds summary numbers, charts (static SVG drawn with matplotlib), the per-language
split and the largest clusters, each expandable to its members with a side-by-side word
diff against the representative. Large collections are sampled, and the page says how:

* counts come from one streaming pass over ``engine.scan()`` (at most ``max_scan`` documents);
* clusters are those of the index-time tags (``cluster_id`` / ``dup_of``: the cluster rule of
  :mod:`neardup.matching.tagging`) seen in the scan, or, for an index without tags, the stored
  N-to-N clusters (``engine.read_clusters``, at most ``max_clusters``);
* only the ``top`` largest clusters are shown, with at most ``members`` members each, and
  texts are cut at ``max_words`` words.

This module computes what the page shows (counts, charts, each shown cluster's members
with their resemblance and word diff from :mod:`neardup.comparison.worddiff`); the page
itself is the jinja2 template ``templates/report.html``, rendered with autoescaping.
"""

from __future__ import annotations

import base64
import html
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, Callable, Iterable

import jinja2
from markupsafe import Markup

from . import charts
from ..matching.candidates import CandidateRule
from ..matching.clustering import best_earlier_resemblances, tuning_low
from ..canonical import Canonicalizer
from ..engines.base import ClusterRecord, Engine, StoredDoc
from ..comparison.highlight import shared_passages
from ..runtime.redact import redact
from ..sketches.verify import similarity
from ..comparison.worddiff import WordChanges, WordDiff, word_changes

#: Languages written right to left (ISO 639-1 / -3 codes).
RTL_LANGS = frozenset({"fa", "ar", "he", "ur", "ps", "ckb", "yi", "dv", "sd", "ug", "ku"})


@dataclass(frozen=True)
class ReportOptions:
    top: int = 20  # clusters shown
    members: int = 10  # members shown per cluster (besides the representative)
    max_scan: int | None = 1_000_000  # documents read for the counts (None: all)
    max_clusters: int = 10_000  # stored clusters read for the size distribution
    max_words: int = 1500  # words of each text in a diff
    title: str = "Near-duplicate report"

    def __post_init__(self) -> None:
        for name in ("top", "members", "max_clusters", "max_words"):
            if getattr(self, name) < 1:
                raise ValueError(f"report option {name} must be >= 1, not {getattr(self, name)}")
        if self.max_scan is not None and self.max_scan < 1:
            raise ValueError(f"report option max_scan must be >= 1 or None, not {self.max_scan}")


@dataclass
class _TagCluster:
    """A cluster seen through index-time tags: the first copy and the duplicates tagged with
    its id."""

    members: list[str] = field(default_factory=list)  # at most ``keep`` duplicates
    size: int = 1
    res_min: float = 1.0
    res_max: float = 0.0
    res_sum: float = 0.0
    languages: set[str] = field(default_factory=set)
    first_seen: str | None = None
    last_seen: str | None = None


@dataclass
class Stats:
    """Counts from one streaming pass over the index."""

    total: int  # documents in the index (engine.count())
    scanned: int = 0
    duplicates: int = 0
    by_lang: dict[str, list[int]] = field(default_factory=dict)  # lang -> [documents, duplicates]
    edges: list[float] = field(default_factory=list)  # resemblance bins
    res_dup: list[int] = field(default_factory=list)
    res_other: list[int] = field(default_factory=list)
    first_indexed: str | None = (
        None  # earliest and latest date: the order field's where the index has one
    )
    last_indexed: str | None = None
    dated_by: str | None = (
        None  # the order field the dates come from (attach --order-field), else None: indexed_at
    )
    tag_clusters: dict[str, _TagCluster] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.scanned >= self.total

    @property
    def share(self) -> float:
        return self.duplicates / self.scanned if self.scanned else 0.0


def resemblance_edges(threshold: float, bins: int = 20) -> list[float]:
    """Bin edges over [lo, 1], lo = threshold - 0.3 down to a multiple of 0.05
    (:func:`~neardup.matching.clustering.tuning_low`), so that the pairs below the threshold
    show."""
    lo = tuning_low(threshold)
    return [round(lo + (1 - lo) * i / bins, 6) for i in range(bins + 1)]


def doc_date(doc: StoredDoc, dated_by: str | None) -> str | None:
    """A document's date on the page: its order field's (``ordered_at``) where the index has an
    order field, else when it was indexed."""
    return doc.ordered_at if dated_by else doc.indexed_at


def scan_stats(
    engine: Engine,
    *,
    threshold: float,
    limit: int | None,
    keep_members: int | None,
    progress: Callable[[int], None] | None = None,
    below: dict[str, float] | None = None,
) -> Stats:
    """Stream the index once: totals, per-language split, resemblance bins, tag clusters.
    The bins count each duplicate at its resemblance to its representative and, with
    ``below`` (document -> best resemblance to an earlier document,
    :func:`~neardup.matching.clustering.best_earlier_resemblances`), each other document at its best
    resemblance ("below threshold").

    Memory is bounded by the number of languages and bins, plus, when ``keep_members`` is
    given, one small record per cluster that has duplicates (and ``below``).
    """
    st = Stats(
        total=engine.count(), edges=resemblance_edges(threshold), dated_by=engine.order_field
    )
    nbins = len(st.edges) - 1
    st.res_dup, st.res_other = [0] * nbins, [0] * nbins
    for doc in engine.scan(text=False, batch_size=1000):
        if limit is not None and st.scanned >= limit:
            break
        st.scanned += 1
        _count_document(st, doc, keep_members, below or {})
        if progress and st.scanned % 1000 == 0:
            progress(1000)
    if progress:
        progress(st.scanned % 1000)
    return st


def _count_document(st: Stats, doc: Any, keep_members: int | None, below: dict[str, float]) -> None:
    """One document of the scan counted in ``st``: its language, date, resemblance bin and,
    for a duplicate, its tag cluster."""
    tags = doc.tags
    dup = bool(tags and tags.is_duplicate)
    counts = st.by_lang.setdefault(doc.lang or "und", [0, 0])
    counts[0] += 1
    when = doc_date(doc, st.dated_by)
    if when:
        st.first_indexed = min(st.first_indexed or when, when)
        st.last_indexed = max(st.last_indexed or when, when)
    _count_resemblance(st, tags.max_resemblance if dup else below.get(doc.id, 0.0), dup)
    if dup:
        st.duplicates += 1
        counts[1] += 1
        if keep_members is not None:
            _add_member(st.tag_clusters, doc, when, keep_members)


def _count_resemblance(st: Stats, best: float, dup: bool) -> None:
    """A document's best resemblance counted in its bin, of duplicates or of the others
    (none below the first edge)."""
    lo, nbins = st.edges[0], len(st.edges) - 1
    if best > 0 and best >= lo:
        (st.res_dup if dup else st.res_other)[_bin_of(best, lo, nbins)] += 1


def _bin_of(r: float, lo: float, nbins: int) -> int:
    """The bin of resemblance ``r`` (>= ``lo``) among ``nbins`` equal bins from ``lo`` to 1."""
    return min(nbins - 1, int((r - lo) / (1 - lo) * nbins)) if lo < 1 else nbins - 1


def _add_member(
    clusters: dict[str, _TagCluster], doc: Any, when: str | None, keep_members: int
) -> None:
    """Duplicate ``doc`` counted in the record of its tag cluster (its first
    ``keep_members`` members kept by id)."""
    tags = doc.tags
    tc = clusters.setdefault(tags.cluster_id, _TagCluster())
    tc.size += 1
    if len(tc.members) < keep_members:
        tc.members.append(doc.id)
    r = tags.max_resemblance
    tc.res_min, tc.res_max, tc.res_sum = min(tc.res_min, r), max(tc.res_max, r), tc.res_sum + r
    tc.languages.add(doc.lang or "und")
    tc.last_seen = max(tc.last_seen or "", when or "") or None


def tag_cluster_records(st: Stats, engine: Engine, detail: int) -> list[ClusterRecord]:
    """Clusters from index-time tags, largest first (representative = the first copy).

    Only the ``detail`` largest are completed from their representative (title, language,
    first seen), so memory stays bounded by the clusters shown.
    """
    order = sorted(st.tag_clusters, key=lambda cid: (-st.tag_clusters[cid].size, cid))
    reps = engine.get(order[:detail], shingles=False) if order else {}
    out = []
    for cid in order:
        tc, rep = st.tag_clusters[cid], reps.get(cid)
        langs = tc.languages | ({rep.lang} if rep and rep.lang else set())
        out.append(
            ClusterRecord(
                cluster_id=cid,
                size=tc.size,
                representative_id=cid,
                representative_title=rep.title if rep else None,
                members=[cid, *tc.members],
                min_resemblance=tc.res_min,
                mean_resemblance=tc.res_sum / (tc.size - 1),
                max_resemblance=tc.res_max,
                languages=sorted(langs),
                first_seen=doc_date(rep, st.dated_by) if rep else None,
                last_seen=tc.last_seen,
            )
        )
    return out


# ---------------------------------------------------------------------------------------
# what the page shows, computed (the page itself is templates/report.html)


@dataclass
class _Chart:
    id: str
    alt: str
    svg_base64: str


@dataclass
class _Member:
    doc: StoredDoc
    resemblance: float
    containment: float
    diff: WordDiff  # shared passages marked (neardup.comparison.highlight)
    # what changed from the representative, word by word (neardup.comparison.worddiff)
    changes: WordChanges


@dataclass
class _ClusterView:
    rank: int
    record: ClusterRecord
    representative: StoredDoc | None
    title: str
    lang: str | None  # of the title
    languages: str  # of the members, comma-separated
    members: list[_Member]
    hidden: int  # members not shown


def _chart(svg: str, alt: str, chart_id: str) -> _Chart:
    return _Chart(chart_id, alt, base64.b64encode(svg.encode("utf-8")).decode("ascii"))


def _size_bins(sizes: Iterable[int]) -> tuple[list[str], list[int]]:
    """Cluster sizes as labels and counts: one bar per size up to 20 sizes, else powers of two."""
    c = Counter(sizes)
    if not c:
        return [], []
    if max(c) <= 21:
        keys = range(2, max(c) + 1)
        return [str(k) for k in keys], [c.get(k, 0) for k in keys]
    labels, counts, lo = [], [], 2
    while lo <= max(c):
        hi = lo * 2 - 1
        labels.append(f"{lo}" if lo == hi else f"{lo}-{hi}")
        counts.append(sum(v for k, v in c.items() if lo <= k <= hi))
        lo = hi + 1
    return labels, counts


def _charts(
    st: Stats, clusters: list[ClusterRecord], threshold: float, langs: list[str]
) -> list[_Chart]:
    """Cluster sizes, highest resemblance of each document, documents per language."""
    out = []
    labels, counts = _size_bins(c.size for c in clusters)
    if labels:
        out.append(
            _chart(
                charts.bar_chart(
                    labels,
                    counts,
                    title="Cluster sizes",
                    xlabel="documents per cluster",
                    ylabel="clusters",
                ),
                "Cluster-size distribution",
                "chart-sizes",
            )
        )
    if any(st.res_dup) or any(st.res_other):
        out.append(
            _chart(
                charts.binned_histogram(
                    st.edges,
                    {"duplicates": st.res_dup, "below threshold": st.res_other},
                    [charts.DUP, charts.ORIG],
                    title="Highest resemblance to an earlier document",
                    xlabel="resemblance",
                    ylabel="documents",
                    marker=threshold,
                    marker_label=f"threshold {threshold:g}",
                ),
                "Resemblance distribution",
                "chart-resemblance",
            )
        )
    if langs:
        out.append(
            _chart(
                charts.stacked_bars(
                    langs,
                    {
                        "first copies": [st.by_lang[k][0] - st.by_lang[k][1] for k in langs],
                        "duplicates": [st.by_lang[k][1] for k in langs],
                    },
                    [charts.ORIG, charts.DUP],
                    title="Documents by language",
                    xlabel="language",
                    ylabel="documents",
                ),
                "Per-language split",
                "chart-languages",
            )
        )
    return out


def _cluster_view(
    rank: int,
    rec: ClusterRecord,
    docs: dict[str, StoredDoc],
    opts: ReportOptions,
    canonicalizer: Canonicalizer,
) -> _ClusterView:
    """One cluster's shown members with their resemblance to the representative and word diff."""
    rep = docs.get(rec.representative_id)
    shown = [m for m in rec.members if m != rec.representative_id][: opts.members]
    members = [
        _member(rep, docs[mid], opts, canonicalizer)
        for mid in shown
        if docs.get(mid) is not None and rep is not None
    ]
    title, lang = _title_and_lang(rec, rep)
    return _ClusterView(
        rank=rank,
        record=rec,
        representative=rep,
        title=title,
        lang=lang,
        languages=", ".join(rec.languages),
        members=members,
        hidden=rec.size - 1 - len(members),
    )


def _title_and_lang(rec: ClusterRecord, rep: StoredDoc | None) -> tuple[str, str | None]:
    """A cluster's title (its representative's, else its id) and language (its
    representative's, else the one language of its members)."""
    title = rec.representative_title or (rep.title if rep else None) or rec.representative_id
    lang = rep.lang if rep else (rec.languages[0] if len(rec.languages) == 1 else None)
    return title, lang


def _member(
    rep: StoredDoc, d: StoredDoc, opts: ReportOptions, canonicalizer: Canonicalizer
) -> _Member:
    """Member ``d`` as shown under representative ``rep``: resemblance, containment, the
    passages they share and the words that changed."""
    sim = similarity(rep.shingles, d.shingles)
    diff = shared_passages(
        rep.text or "",
        d.text or "",
        canonicalizer,
        rep.lang,
        d.lang,
        max_words=opts.max_words,
        shingles_a=rep.shingles,
        shingles_b=d.shingles,
    )
    changes = word_changes(rep.text or "", d.text or "", max_words=opts.max_words)
    return _Member(
        doc=d,
        resemblance=sim.resemblance,
        containment=sim.containment_ba,
        diff=diff,
        changes=changes,
    )


# ---------------------------------------------------------------------------------------
# rendering


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def text_attrs(lang: str | None) -> str:
    """``lang`` and ``dir`` attributes of a text block: rtl for RTL languages, else auto."""
    if not lang or lang == "und":
        return 'dir="auto"'
    return f'lang="{esc(lang)}" dir="{"rtl" if lang.split("-")[0] in RTL_LANGS else "auto"}"'


def title_attrs(lang: str | None) -> str:
    """``lang`` and ``dir`` attributes of a title (in a ``<bdi>``): its direction always from
    its own first strong character (``dir="auto"``), so a Latin title of a Persian document
    stays left to right, and a Persian title right to left, wherever it stands.

    >>> title_attrs("fa"), title_attrs(None)
    ('lang="fa" dir="auto"', 'dir="auto"')
    """
    return 'dir="auto"' if not lang or lang == "und" else f'lang="{esc(lang)}" dir="auto"'


def _num(n: int) -> str:
    return f"{n:,}"


def _escape(value: Any) -> Any:
    """Every ``{{ value }}`` of the template goes through here: escaped like :func:`esc`
    (``html.escape``, quotes too) unless it is already markup (``__html__``)."""
    return value if hasattr(value, "__html__") else Markup(esc(value))


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    """The template's environment: autoescaping on, and every value escaped by :func:`_escape`."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("neardup.report", "templates"),
        autoescape=True,
        finalize=_escape,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["num"] = _num
    env.filters["fmt"] = format
    env.globals["text_attrs"] = lambda lang: Markup(text_attrs(lang))
    env.globals["title_attrs"] = lambda lang: Markup(title_attrs(lang))
    return env


# ---------------------------------------------------------------------------------------


def build_report(
    engine: Engine,
    *,
    threshold: float,
    options: ReportOptions = ReportOptions(),
    location: str | None = None,
    progress: Callable[[int], None] | None = None,
    rule: CandidateRule | None = None,
) -> str:
    """The report page as one HTML string; ``rule``: the index's candidate rule (its
    owner's, :attr:`neardup.api.NearDup.rule`; made here from the engine when not given)."""
    opts = options
    # (the keys propose pairs for the index's threshold only)
    below = _best_earlier(engine, threshold, rule) if threshold == engine.config.threshold else None
    st = scan_stats(
        engine,
        threshold=threshold,
        limit=opts.max_scan,
        keep_members=opts.members,
        progress=progress,
        below=below,
    )
    # the tags' clusters (the cluster rule); stored clusters only for an index without tags
    stored = [] if st.duplicates else engine.read_clusters(limit=opts.max_clusters + 1)
    clusters_truncated = len(stored) > opts.max_clusters
    stored = stored[: opts.max_clusters]
    clusters = stored or tag_cluster_records(st, engine, opts.top)
    langs = sorted(st.by_lang, key=lambda k: -st.by_lang[k][0])
    canonicalizer = Canonicalizer(engine.config)  # (the shared passages of every cluster)
    views = [
        _cluster_view(
            rank, rec, engine.get(_shown_ids(rec, opts.members), text=True), opts, canonicalizer
        )
        for rank, rec in enumerate(clusters[: opts.top], 1)
    ]
    return (
        _environment()
        .get_template("report.html")
        .render(
            title=opts.title,
            opts=opts,
            location=location or engine.location,
            threshold=threshold,
            generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            first_indexed=st.first_indexed,
            last_indexed=st.last_indexed,
            dated_by=st.dated_by,
            scanned=st.scanned,
            total=st.total,
            complete=st.complete,
            duplicates=st.duplicates,
            share=st.share,
            n_clusters=len(clusters),
            clusters_truncated=clusters_truncated,
            from_tags=not stored,
            in_clusters=sum(c.size for c in clusters),
            charts=_charts(st, clusters, threshold, langs),
            languages=[
                {
                    "lang": k,
                    "documents": v[0],
                    "duplicates": v[1],
                    "share": v[1] / v[0] if v[0] else 0,
                }
                for k in langs
                for v in [st.by_lang[k]]
            ],
            clusters=views,
        )
    )


def _best_earlier(engine: Engine, threshold: float, rule: CandidateRule | None) -> dict[str, float]:
    """Each document's best resemblance to an earlier one that the candidate rule ``rule``
    proposes (:func:`~neardup.matching.clustering.best_earlier_resemblances`), down to the
    tuning chart's lowest bin."""
    if rule is None:
        from ..matching.candidates import extra_min_match
        from ..signing.signatures import ContextError
        from ..signing.signer import Signer

        try:
            signer = Signer(engine.config, engine.get_meta("context") or {})
        except ContextError:  # (signatures that still need collection statistics)
            signer = None
        rule = CandidateRule(engine.config, extra_min_match(signer))
    return best_earlier_resemblances(engine, rule, tuning_low(threshold))


def _shown_ids(rec: ClusterRecord, members: int) -> list[str]:
    """The ids shown of a cluster: its representative and its first ``members`` others."""
    others = [m for m in rec.members if m != rec.representative_id]
    return [rec.representative_id] + others[:members]


def write_report(
    nd: Any,
    path: str,
    options: ReportOptions = ReportOptions(),
    progress: Callable[[int], None] | None = None,
) -> str:
    """Write the report of a :class:`neardup.NearDup` index to ``path``; returns the path."""
    page = build_report(
        nd.engine,
        threshold=nd.config.threshold,
        options=options,
        location=redact(nd.engine.location),
        progress=progress,
        rule=nd.rule,
    )
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    return path
