"""``neardup clusters``: every cluster of the index (the tags' clusters), the same rule at another
threshold, or connected components."""

from __future__ import annotations

import csv
import io as _io
from typing import TYPE_CHECKING

import click

from .options import THRESHOLD, count, echo_json, engine_options, json_option
from .output import one_line, safe, terminal_text
from .session import console, opened, recall_note, slow_notice

if TYPE_CHECKING:
    from ..engines.base import ClusterRecord


def _histogram(nd, as_json: bool) -> None:
    """``clusters --histogram``: documents by their best resemblance to an earlier one."""
    t = nd.config.threshold
    bins = nd.resemblance_histogram()
    if as_json:
        echo_json({"threshold": t, "low": bins[0]["from"] if bins else t, "bins": bins})
        return
    con = console()
    con.print(
        f"Best resemblance of each document to an earlier one (threshold t = {t:g}; "
        "the tagged duplicates are those >= t)"
    )
    top = max([b["documents"] for b in bins] + [1])
    for b in reversed(bins):
        bar = "#" * round(30 * b["documents"] / top)
        mark = "  <- t" if b["from"] <= t < b["to"] or (b["to"] == 1.0 and t == 1.0) else ""
        con.print(
            f"  {b['from']:.2f}-{b['to']:.2f}  {b['documents']:>7}  {bar}{mark}", highlight=False
        )
    con.print(
        "A gap between two groups is a good place for t; documents just below t are "
        "near-duplicates the index does not tag (lower t to take them in, after reading a few "
        "with 'neardup compare --ids').",
        soft_wrap=True,
    )


@click.command("clusters")
@engine_options
@click.option(
    "--threshold",
    "-t",
    type=THRESHOLD,
    help="Resemblance for an edge (default: the index's threshold).",
)
@click.option(
    "--min-size", type=count(1), default=2, show_default=True, help="Smallest cluster to list."
)
@click.option(
    "--top",
    type=count(1),
    default=20,
    show_default=True,
    help="How many clusters to show in the table (JSON/CSV get all).",
)
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV (one row per cluster).")
@click.option(
    "--connected",
    is_flag=True,
    help="Transitive closure instead: connected components of the verified pairs (members may "
    "resemble each other only through a chain).",
)
@click.option(
    "--write/--no-write",
    default=False,
    show_default=True,
    help="Store the clusters (in NAME-clusters on an HTTP engine, in the SQLite file otherwise), "
    "where dashboards read them; reports read them only for an index without tags.",
)
@click.option(
    "--histogram",
    is_flag=True,
    help="Instead of clusters: how the documents' best resemblances spread, from t - 0.3 to 1, "
    "to choose t.",
)
@json_option
def clusters_cmd(
    target: str,
    engine_opts: dict,
    threshold: float | None,
    min_size: int,
    top: int,
    as_csv: bool,
    connected: bool,
    write: bool,
    histogram: bool,
    as_json: bool,
) -> None:
    """Every cluster of near-duplicates in the index (N-to-N).

    A cluster is a representative and the later documents that resemble it most, at
    resemblance >= t: the rule the index's tags follow (cluster_id, dup_of), so at the
    index's threshold these are exactly the tags' clusters, read without verifying anything
    again. At another threshold the same rule runs over the pairs verified at that
    threshold; below the index's threshold the signature keys propose fewer of the pairs
    there (the expected share is printed). --connected gives connected components instead.
    Nothing is written unless --write is given.

    \b
    Examples:
      neardup clusters
      neardup clusters -t 0.9 --csv > clusters.csv
      neardup clusters --write          # store them for the dashboards
      neardup clusters --histogram      # where to put the threshold
    """
    with opened(target, engine_opts, create=False) as nd:
        if histogram:
            _histogram(nd, as_json)
            return
        t = nd.rule.at(threshold)
        recall = nd.expected_recall(t) if t < nd.config.threshold else None
        with slow_notice("clustering" + (" and storing the clusters" if write else "")):
            cl = nd.clusters(threshold, write=write, min_size=min_size, connected=connected)
        if recall is not None:
            click.echo(recall_note(nd, t, recall), err=True)
        if as_json:
            echo_json([c.to_dict() for c in cl])
            return
        if as_csv:
            click.echo(terminal_text(_clusters_csv(cl)), nl=False)
            return
        _print_clusters(cl, nd.count(), connected, t, top)


def _clusters_csv(cl: list) -> str:
    """The clusters as CSV: a header row, then a row per cluster with its members."""
    buf = _io.StringIO()
    w = csv.writer(buf)
    w.writerow(
        [
            "cluster_id",
            "size",
            "representative_id",
            "representative_title",
            "min_resemblance",
            "mean_resemblance",
            "max_resemblance",
            "languages",
            "members",
        ]
    )
    for c in cl:
        w.writerow(
            [
                c.cluster_id,
                c.size,
                c.representative_id,
                c.representative_title or "",
                f"{c.min_resemblance:.4f}",
                f"{c.mean_resemblance:.4f}",
                f"{c.max_resemblance:.4f}",
                " ".join(c.languages),
                " ".join(c.members),
            ]
        )
    return buf.getvalue()


def _print_clusters(cl: list, docs: int, connected: bool, threshold: float, top: int) -> None:
    """The ``top`` largest clusters (or connected components) as a table, with what is left
    out."""
    from rich.table import Table

    kind = "connected components" if connected else "clusters"
    dup_docs = sum(c.size for c in cl)
    t = Table(title=f"{len(cl)} {kind}, {dup_docs} of {docs} documents, resemblance >= {threshold}")
    con = console()
    avail = max(24, con.width - 36)
    for col, kw in (
        ("size", {"justify": "right"}),
        ("mean r", {}),
        ("min r", {}),
        ("lang", {}),
        ("representative (title, id)", {}),
    ):
        t.add_column(col, no_wrap=True, **kw)
    for c in cl[:top]:
        t.add_row(
            str(c.size),
            f"{c.mean_resemblance:.3f}",
            f"{c.min_resemblance:.3f}",
            safe(",".join(c.languages)),
            safe(_representative_label(c, avail)),
        )
    con.print(t)
    if len(cl) > top:
        con.print(f"... {len(cl) - top} more clusters (--top N, --json or --csv for all)")
    con.print("members of each cluster: --json or --csv")


def _representative_label(c: ClusterRecord, avail: int) -> str:
    """A cluster's representative as "title (id)" on one line, cut to ``avail`` characters."""
    title = one_line(c.representative_title or "")
    label = f"{title} ({one_line(c.representative_id)})".strip()
    return label if len(label) <= avail else label[: avail - 1] + "…"
