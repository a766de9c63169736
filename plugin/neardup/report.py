"""A self-contained HTML report of an index's near-duplicates (no server, no network).

The page holds summary numbers, charts (static SVG drawn with matplotlib), the per-language
split and the largest clusters, each expandable to its members with a side-by-side word
diff against the representative. Large collections are sampled, and the page says how:

* counts come from one streaming pass over ``engine.scan()`` (at most ``max_scan`` documents);
* clusters are the stored N-to-N clusters (``engine.read_clusters``, at most ``max_clusters``),
  or, when none are stored, the index-time tags (``cluster_id`` / ``dup_of``) seen in the scan;
* only the ``top`` largest clusters are shown, with at most ``members`` members each, and
  texts are cut at ``max_words`` words.
"""

from __future__ import annotations

import base64
import html
import math
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import resources
from string import Template
from typing import Any, Callable, Iterable

from . import charts
from .config import Config
from .engines.base import ClusterRecord, Engine, StoredDoc
from .highlight import shared_passages
from .verify import similarity

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
    """A cluster seen through index-time tags: the first copy and the duplicates tagged with its id."""

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
    first_indexed: str | None = None
    last_indexed: str | None = None
    tag_clusters: dict[str, _TagCluster] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.scanned >= self.total

    @property
    def share(self) -> float:
        return self.duplicates / self.scanned if self.scanned else 0.0


def resemblance_edges(threshold: float, bins: int = 20) -> list[float]:
    """Bin edges over [lo, 1], lo a multiple of 0.05 at or below min(threshold - 0.1, 0.5)."""
    lo = max(0.0, math.floor(min(threshold - 0.1, 0.5) * 20 + 1e-9) / 20)
    return [round(lo + (1 - lo) * i / bins, 6) for i in range(bins + 1)]


def scan_stats(engine: Engine, *, threshold: float, limit: int | None, keep_members: int | None,
               progress: Callable[[int], None] | None = None) -> Stats:
    """Stream the index once: totals, per-language split, resemblance bins, tag clusters.

    Memory is bounded by the number of languages and bins, plus, when ``keep_members`` is
    given, one small record per cluster that has duplicates.
    """
    st = Stats(total=engine.count(), edges=resemblance_edges(threshold))
    nbins = len(st.edges) - 1
    st.res_dup, st.res_other = [0] * nbins, [0] * nbins
    lo = st.edges[0]
    for doc in engine.scan(text=False, batch_size=1000):
        if limit is not None and st.scanned >= limit:
            break
        st.scanned += 1
        tags = doc.tags
        dup = bool(tags and tags.is_duplicate)
        counts = st.by_lang.setdefault(doc.lang or "und", [0, 0])
        counts[0] += 1
        if doc.indexed_at:
            st.first_indexed = min(st.first_indexed or doc.indexed_at, doc.indexed_at)
            st.last_indexed = max(st.last_indexed or doc.indexed_at, doc.indexed_at)
        if tags and tags.max_resemblance > 0 and tags.max_resemblance >= lo:
            b = min(nbins - 1, int((tags.max_resemblance - lo) / (1 - lo) * nbins)) if lo < 1 else nbins - 1
            (st.res_dup if dup else st.res_other)[b] += 1
        if dup:
            st.duplicates += 1
            counts[1] += 1
            if keep_members is not None:
                tc = st.tag_clusters.setdefault(tags.cluster_id, _TagCluster())
                tc.size += 1
                if len(tc.members) < keep_members:
                    tc.members.append(doc.id)
                r = tags.max_resemblance
                tc.res_min, tc.res_max, tc.res_sum = min(tc.res_min, r), max(tc.res_max, r), tc.res_sum + r
                tc.languages.add(doc.lang or "und")
                tc.last_seen = max(tc.last_seen or "", doc.indexed_at or "") or None
        if progress and st.scanned % 1000 == 0:
            progress(1000)
    if progress:
        progress(st.scanned % 1000)
    return st


def tag_cluster_records(st: Stats, engine: Engine, detail: int) -> list[ClusterRecord]:
    """Clusters from index-time tags, largest first (representative = the first copy).

    Only the ``detail`` largest are completed from their representative (title, language,
    first seen), so memory stays bounded by the clusters shown.
    """
    order = sorted(st.tag_clusters, key=lambda cid: (-st.tag_clusters[cid].size, cid))
    reps = engine.get(order[:detail]) if order else {}
    out = []
    for cid in order:
        tc, rep = st.tag_clusters[cid], reps.get(cid)
        langs = tc.languages | ({rep.lang} if rep and rep.lang else set())
        out.append(ClusterRecord(cid, tc.size, cid, rep.title if rep else None, [cid, *tc.members], tc.res_min,
                                 tc.res_sum / (tc.size - 1), tc.res_max, sorted(langs), rep.indexed_at if rep else None, tc.last_seen))
    return out


# ---------------------------------------------------------------------------------------
# rendering helpers


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def text_attrs(lang: str | None) -> str:
    """``lang`` and ``dir`` attributes of a text block: rtl for RTL languages, else auto."""
    if not lang or lang == "und":
        return 'dir="auto"'
    return f'lang="{esc(lang)}" dir="{"rtl" if lang.split("-")[0] in RTL_LANGS else "auto"}"'


def _img(svg: str, alt: str, chart_id: str) -> str:
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return (f'<figure class="chart" id="{chart_id}"><img src="data:image/svg+xml;base64,{data}" alt="{esc(alt)}">'
            f"<figcaption>{esc(alt)}</figcaption></figure>")


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


def _num(n: int) -> str:
    return f"{n:,}"


@dataclass
class _Member:
    doc: StoredDoc
    resemblance: float
    containment: float


def _cluster_html(rank: int, rec: ClusterRecord, docs: dict[str, StoredDoc], opts: ReportOptions, config: Config) -> str:
    rep = docs.get(rec.representative_id)
    shown = [m for m in rec.members if m != rec.representative_id][: opts.members]
    members = []
    for mid in shown:
        d = docs.get(mid)
        if d is not None and rep is not None:
            sim = similarity(rep.shingles, d.shingles)
            members.append(_Member(d, sim.resemblance, sim.containment_ba))
    hidden = rec.size - 1 - len(members)
    title = rec.representative_title or (rep.title if rep else None) or rec.representative_id
    rep_lang = rep.lang if rep else (rec.languages[0] if len(rec.languages) == 1 else None)
    parts = [f'<details class="cluster" id="cluster-{rank}" data-cluster-id="{esc(rec.cluster_id)}">',
             f'<summary><span class="rank">#{rank}</span> <span class="size">{_num(rec.size)} documents</span> '
             f'<span class="res">mean resemblance {rec.mean_resemblance:.3f}</span> '
             f'<span class="langs">{esc(", ".join(rec.languages))}</span> '
             f'<bdi class="title" {text_attrs(rep_lang)}>{esc(title)}</bdi></summary>',
             '<div class="cluster-body">',
             f'<p class="meta">Representative <code>{esc(rec.representative_id)}</code>; resemblance in cluster '
             f'{rec.min_resemblance:.3f}–{rec.max_resemblance:.3f}'
             + (f"; first seen {esc(rec.first_seen)}" if rec.first_seen else "") + "</p>"]
    if rep is None:
        parts.append(f'<p class="warn">The representative {esc(rec.representative_id)} is no longer in the index.</p>')
    for m in members:
        diff = shared_passages(rep.text or "", m.doc.text or "", config, rep.lang, m.doc.lang, max_words=opts.max_words)
        cut = f' <span class="cut">(texts cut at {_num(opts.max_words)} words)</span>' if diff.truncated else ""
        parts.append(
            f'<details class="member" data-member-id="{esc(m.doc.id)}"><summary><code>{esc(m.doc.id)}</code> '
            f'resemblance {m.resemblance:.3f} · containment {m.containment:.3f} · '
            f'{diff.shared_share:.0%} of its words in shared passages '
            f'<bdi {text_attrs(m.doc.lang)}>{esc(m.doc.title or "")}</bdi>{cut}</summary>'
            f'<div class="diff" {text_attrs(rep.lang)}>'
            f'<section><h4>Representative <code>{esc(rep.id)}</code></h4>'
            f'<div class="text" {text_attrs(rep.lang)}>{diff.a_html}</div></section>'
            f'<section><h4>Member <code>{esc(m.doc.id)}</code></h4>'
            f'<div class="text" {text_attrs(m.doc.lang)}>{diff.b_html}</div></section></div></details>')
    if hidden > 0:
        parts.append(f'<p class="more">{_num(hidden)} more member{"s" if hidden != 1 else ""} not shown.</p>')
    parts.append("</div></details>")
    return "".join(parts)


def _template() -> Template:
    return Template(resources.files("neardup").joinpath("templates/report.html").read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------------------


def build_report(engine: Engine, *, threshold: float, options: ReportOptions = ReportOptions(),
                 location: str | None = None, progress: Callable[[int], None] | None = None) -> str:
    """The report page as one HTML string."""
    opts = options
    stored = engine.read_clusters(limit=opts.max_clusters + 1)
    clusters_truncated = len(stored) > opts.max_clusters
    stored = stored[: opts.max_clusters]
    st = scan_stats(engine, threshold=threshold, limit=opts.max_scan,
                    keep_members=None if stored else opts.members, progress=progress)
    from_tags = not stored
    clusters = stored or tag_cluster_records(st, engine, opts.top)
    top = clusters[: opts.top]

    # -- charts
    figs = []
    labels, counts = _size_bins(c.size for c in clusters)
    if labels:
        figs.append(_img(charts.bar_chart(labels, counts, title="Cluster sizes", xlabel="documents per cluster",
                                          ylabel="clusters"), "Cluster-size distribution", "chart-sizes"))
    if any(st.res_dup) or any(st.res_other):
        figs.append(_img(charts.binned_histogram(
            st.edges, {"duplicates": st.res_dup, "below threshold": st.res_other}, [charts.DUP, charts.ORIG],
            title="Highest resemblance to an earlier document", xlabel="resemblance", ylabel="documents",
            marker=threshold, marker_label=f"threshold {threshold:g}"), "Resemblance distribution", "chart-resemblance"))
    langs = sorted(st.by_lang, key=lambda k: -st.by_lang[k][0])
    if langs:
        figs.append(_img(charts.stacked_bars(
            langs, {"first copies": [st.by_lang[k][0] - st.by_lang[k][1] for k in langs],
                    "duplicates": [st.by_lang[k][1] for k in langs]}, [charts.ORIG, charts.DUP],
            title="Documents by language", xlabel="language", ylabel="documents"), "Per-language split", "chart-languages"))

    # -- sampling note
    notes = []
    if st.complete:
        notes.append(f"Counts cover all {_num(st.scanned)} documents.")
    else:
        notes.append(f"Counts cover the first {_num(st.scanned)} of {_num(st.total)} documents (in arrival order); "
                     "raise --max-scan to read more.")
    if from_tags:
        notes.append("No stored clusters: clusters come from index-time tags (each duplicate joins the cluster of "
                     "the earlier document it matched); run <code>neardup clusters</code> for N-to-N clusters.")
    elif clusters_truncated:
        notes.append(f"The cluster-size distribution covers the {_num(opts.max_clusters)} largest stored clusters only.")
    notes.append(f"Showing the {_num(len(top))} largest of {_num(len(clusters))}{'+' if clusters_truncated else ''} "
                 f"clusters, at most {_num(opts.members)} member{'s' if opts.members != 1 else ''} each besides the "
                 f"representative; texts are cut at {_num(opts.max_words)} words.")

    # -- clusters
    sections = []
    for rank, rec in enumerate(top, 1):
        ids = [rec.representative_id] + [m for m in rec.members if m != rec.representative_id][: opts.members]
        sections.append(_cluster_html(rank, rec, engine.get(ids, text=True), opts, engine.config))

    lang_rows = "".join(
        f'<tr><td lang="{esc(k)}">{esc(k)}</td><td>{_num(v[0])}</td><td>{_num(v[1])}</td>'
        f'<td>{(v[1] / v[0] if v[0] else 0):.1%}</td></tr>' for k in langs for v in [st.by_lang[k]])
    in_clusters = sum(c.size for c in clusters)
    summary = (
        '<dl class="summary">'
        f'<div><dt>Documents</dt><dd id="n-documents">{_num(st.scanned)}</dd></div>'
        f'<div><dt>Duplicates</dt><dd id="n-duplicates">{_num(st.duplicates)}</dd></div>'
        f'<div><dt>Clusters</dt><dd id="n-clusters">{_num(len(clusters))}{"+" if clusters_truncated else ""}</dd></div>'
        f'<div><dt>Share of duplicates</dt><dd id="share">{st.share:.1%}</dd></div>'
        f'<div><dt>Documents in clusters</dt><dd>{_num(in_clusters)}</dd></div>'
        "</dl>")
    indexed = (f" Indexed {esc(st.first_indexed)} – {esc(st.last_indexed)}." if st.first_indexed else "")
    body = "".join([
        f'<header><h1>{esc(opts.title)}</h1><p class="where">Index <code>{esc(location or engine.location)}</code>, '
        f"threshold {threshold:g}.{indexed} Generated {esc(datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC'))}."
        "</p></header>",
        summary,
        '<section class="notes" id="sampling"><h2>What this page covers</h2><ul>',
        "".join(f"<li>{n}</li>" for n in notes), "</ul></section>",
        '<section class="charts"><h2>Distributions</h2>', "".join(figs) or "<p>No data to chart.</p>", "</section>",
        '<section class="langs"><h2>Languages</h2><table><thead><tr><th>Language</th><th>Documents</th>'
        f"<th>Duplicates</th><th>Share</th></tr></thead><tbody>{lang_rows}</tbody></table></section>",
        '<section class="clusters"><h2>Largest clusters</h2>',
        '<p class="controls"><button type="button" id="expand-all">Expand all</button> '
        '<button type="button" id="collapse-all">Collapse all</button> '
        '<span class="legend"><mark class="shared">highlighted</mark> passages are shared with the representative.</span></p>',
        "".join(sections) or "<p>No near-duplicate clusters.</p>", "</section>",
    ])
    return _template().substitute(title=esc(opts.title), body=body)


def write_report(nd: Any, path: str, options: ReportOptions = ReportOptions(),
                 progress: Callable[[int], None] | None = None) -> str:
    """Write the report of a :class:`neardup.NearDup` index to ``path``; returns the path."""
    page = build_report(nd.engine, threshold=nd.config.threshold, options=options, progress=progress)
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    return path
