"""``neardup attach``: adopt an existing Elasticsearch/OpenSearch index in place."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any, Callable

import click

from .session import announce_waits, progress
from .options import BATCH_SIZE, SECONDS, THRESHOLD, echo_json, engine_options, fail, json_option


def sign_pass(
    nd: Any, batch_size: int, progress: Callable[[int], None] | None = None
) -> tuple[Any, Counter]:
    """Sign and tag every document of the adopted index that has no neardup fields yet, in
    arrival order (the layout's order field, then index order), through ``NearDup.index``:
    the same rule as ``neardup index``. Each batch is stored before the next is read, so an
    interrupted pass resumes where it stopped when run again. Returns the report and the
    documents whose text field gives no text, counted by what it holds
    (:func:`~neardup.engines.elastic.hits.field_text`)."""
    textless: Counter = Counter()

    def skipped(doc_id: str, kind: str) -> None:
        textless[kind] += 1
        if progress is not None:
            progress(1)

    report = nd.index(
        nd.engine.unsigned_documents(batch_size, on_textless=skipped),
        batch_size=batch_size,
        progress=progress,
    )
    return report, textless


def watch(
    nd: Any,
    batch_size: int,
    interval: float,
    stop: Callable[[int], bool],
    on_round: Callable[[Any], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Keep signing the documents other writers add: a pass every ``interval`` seconds until
    ``stop(rounds done)`` is true; returns how many documents were signed."""
    signed, rounds = 0, 0
    while not stop(rounds):
        sleep(interval)
        report, _ = sign_pass(nd, batch_size)
        signed += report.indexed
        rounds += 1
        if on_round is not None:
            on_round(report)
    return signed


@click.command("attach")
@click.argument("index", metavar="INDEX")
@engine_options
@click.option(
    "--text-field",
    metavar="FIELD",
    default=None,
    help="Field holding the text to sign (e.g. body); needed the first time, stored with the "
    "index afterwards.",
)
@click.option(
    "--title-field",
    metavar="FIELD",
    default=None,
    help="Field holding the title (shown in clusters and reports).",
)
@click.option(
    "--lang-field",
    metavar="FIELD",
    default=None,
    help="Field holding the language code (fa, ru or en).",
)
@click.option(
    "--order-field",
    metavar="FIELD",
    default=None,
    help="Field giving the arrival order, e.g. a timestamp (default: the index's own order).",
)
@click.option(
    "--threshold",
    "-t",
    type=THRESHOLD,
    default=None,
    help="Resemblance of near-duplicates (default 0.8).",
)
@click.option(
    "--batch-size", type=BATCH_SIZE, default=500, show_default=True, help="Documents per batch."
)
@click.option(
    "--watch",
    "watching",
    is_flag=True,
    help="Keep signing documents other writers add (Ctrl-C stops).",
)
@click.option(
    "--interval",
    type=SECONDS,
    default=10.0,
    show_default=True,
    help="Seconds between passes with --watch.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@json_option
def attach_cmd(
    index: str,
    target: str,
    engine_opts: dict,
    text_field: str | None,
    title_field: str | None,
    lang_field: str | None,
    order_field: str | None,
    threshold: float | None,
    batch_size: int,
    watching: bool,
    interval: float,
    quiet: bool,
    as_json: bool,
) -> None:
    """Adopt an existing index in place: no re-ingest, the user's fields untouched.

    One mapping update adds neardup's fields under one object, neardup.* (the user's
    fields and mapping do not change); then every document is signed and tagged in
    arrival order (--order-field, e.g. a timestamp), in batches, with a progress bar.
    Interrupted, it resumes where it stopped when run again (the field options are
    stored the first time: later runs need none of them). Afterwards every neardup
    command works on the index (--index INDEX), and your own queries can collapse on
    neardup.cluster_id.

    \b
      neardup attach articles --engine https://localhost:9200 --text-field body \\
          --title-field headline --order-field published
      neardup attach articles --engine $URL --watch   # again later: keep up with new documents
    """
    from ..api import NearDup
    from ..config import Config
    from ..engines import is_url, open_engine
    from ..engines.elastic.layout import Layout

    if not is_url(target):
        fail(
            "attach adopts an Elasticsearch/OpenSearch index: give its URL with --engine "
            "(or NEARDUP_URL)"
        )
        return
    opts = {**engine_opts, "index": index}
    layout = Layout(
        text=text_field, title=title_field, lang=lang_field, order=order_field, adopted=True
    )
    engine = open_engine(target, **opts)
    config = engine.attach(layout, Config(threshold=threshold) if threshold is not None else None)
    nd = NearDup(engine, config)
    announce_waits(engine)
    try:
        report, textless = _first_pass(nd, batch_size, quiet)
        data = {
            "index": engine.location,
            "actions": engine.actions,
            "signed": report.indexed,
            "duplicates": report.duplicates,
            "failed": [f.__dict__ for f in report.failed],
            "documents": nd.count(),
            "without_text": sum(textless.values()),
            "without_text_by_kind": dict(sorted(textless.items())),
        }
        if as_json:
            echo_json(data)
        else:
            _print_first_pass(engine, report, data, textless)
        if watching:
            _watch(nd, batch_size, interval)
    finally:
        nd.close()


def _print_first_pass(engine: Any, report: Any, data: dict, textless: dict[str, int]) -> None:
    """What the first pass of ``attach`` did: the actions, the documents signed and left
    unsigned, the first refused ones."""
    for a in engine.actions:
        click.echo(f"  - {a}")
    click.echo(
        f"{data['index']}: {report.indexed} documents signed "
        f"({report.duplicates} near-duplicates of earlier ones), "
        f"{data['documents']} signed in all"
        + (
            f", {data['without_text']} without text in {engine.remote.layout.text} left unsigned "
            f"({', '.join(f'{n} {k}' for k, n in sorted(textless.items()))})"
            if data["without_text"]
            else ""
        )
    )
    for f in report.failed[:20]:
        click.echo(f"  refused {f.id}: {f.reason}", err=True)


def _watch(nd: Any, batch_size: int, interval: float) -> None:
    """``attach --watch``: sign the documents added to the index every ``interval`` seconds
    until Ctrl-C."""
    click.echo(
        f"watching {nd.engine.location} for new documents every {interval:g} s (Ctrl-C stops)",
        err=True,
    )
    try:
        watch(
            nd,
            batch_size,
            interval,
            stop=lambda rounds: False,
            on_round=lambda r: (
                r.indexed
                and click.echo(f"signed {r.indexed} new documents ({r.duplicates} near-duplicates)")
            ),
        )
    except KeyboardInterrupt:
        pass


def _first_pass(nd: Any, batch_size: int, quiet: bool) -> Any:
    total = nd.engine.unsigned()  # (those without text are counted as the pass meets them)
    with progress(total, "attaching", quiet) as bar:
        task = bar.add_task("attaching", total=total)
        return sign_pass(nd, batch_size, progress=lambda n: bar.advance(task, n))
