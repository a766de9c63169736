"""``neardup report``: one self-contained HTML page of an index's near-duplicate clusters."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from .options import count, echo_json, engine_options, fail, json_option
from .output import clean
from .session import progress

if TYPE_CHECKING:
    from ..engines import Engine


@click.command("report")
@engine_options
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, writable=True),
    default="neardup-report.html",
    show_default=True,
    help="HTML file to write.",
)
@click.option("--top", type=count(1), default=20, show_default=True, help="Largest clusters shown.")
@click.option(
    "--members",
    type=count(1),
    default=10,
    show_default=True,
    help="Members shown per cluster, each diffed against the representative.",
)
@click.option(
    "--max-scan",
    type=count(0),
    default=1_000_000,
    show_default=True,
    help="Documents read for the counts and charts (0: all).",
)
@click.option(
    "--max-clusters",
    type=count(1),
    default=10_000,
    show_default=True,
    help="Stored clusters read for the cluster-size chart.",
)
@click.option(
    "--max-words",
    type=count(1),
    default=1500,
    show_default=True,
    help="Words of each text shown in a diff.",
)
@click.option("--title", default="Near-duplicate report", show_default=True, help="Page title.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@json_option
def report_cmd(
    target: str,
    engine_opts: dict,
    output: str,
    top: int,
    members: int,
    max_scan: int,
    max_clusters: int,
    max_words: int,
    title: str,
    quiet: bool,
    as_json: bool,
) -> None:
    """Write an HTML report of the near-duplicates in an index: open it in any browser.

    One file, no server and no network: summary numbers, charts of cluster sizes,
    resemblance and languages, and the largest clusters. Each cluster expands to its
    members: what changed from the representative (words removed and added), and the
    two texts side by side with their shared passages highlighted (right-to-left for
    Persian and other RTL languages; titles keep their own direction). An index attached
    with --order-field is dated by that field.

    Clusters are those of the index-time tags (each duplicate with the representative
    it joined); only an index without tags (index --no-tag) falls back to the clusters
    stored by 'neardup clusters --write'. Big indexes are sampled (--max-scan, --top,
    --members) and the page says how. --json prints where the page is and what it read.

    \b
    Examples:
      neardup index examples/sample.jsonl
      neardup report -o report.html
      neardup report --engine https://localhost:9200 --index docs --top 50 -o docs.html
    """
    from ..api import NearDup
    from ..report.html import ReportOptions, write_report

    if output == "-":  # (a page with its charts is a file; '-' is no name for it)
        raise click.BadParameter(
            "the report is an HTML file: give its name ('-' is not one)",
            param_hint="'--output' / '-o'",
        )
    if not target.startswith(("http://", "https://")) and not Path(target).exists():
        fail(
            f"no index at {target!r}: index documents first (neardup index FILE --engine {target}) "
            "or point --engine at an existing index"
        )
    opts = ReportOptions(
        top=top,
        members=members,
        max_scan=max_scan or None,
        max_clusters=max_clusters,
        max_words=max_words,
        title=title,
    )
    nd = NearDup.open(target, create=False, **engine_opts)
    try:
        total = nd.engine.count() if max_scan == 0 else min(nd.engine.count(), max_scan)
        with progress(total, "reading the index for the report", quiet or as_json) as bar:
            task = bar.add_task("reading", total=total)
            write_report(nd, output, opts, progress=lambda n: bar.advance(task, n))
        data = {
            "output": output,
            "url": Path(output).resolve().as_uri(),
            "index": nd.engine.location,
            "documents": nd.engine.count(),
            "clusters_from": _clusters_from(nd.engine),
        }
    except OSError as e:
        fail(f"cannot write {output}: {e.strerror or e}")
    finally:
        nd.close()
    if as_json:
        echo_json(data)
    else:
        click.echo(clean(f"wrote {output}  (open it in a browser: {data['url']})"))


def _clusters_from(engine: Engine) -> str:
    """Where the report's clusters came from, as the report decides: the tags where any
    document is tagged a duplicate or no clusters are stored, else the stored clusters."""
    tagged = any(row.tags is not None and row.tags.is_duplicate for row in engine.scan_tags())
    return "tags" if tagged or not engine.read_clusters(limit=1) else "stored clusters"
