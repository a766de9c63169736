"""``neardup dedup``: the deduplicated file in one command, no index left behind."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator

import click

from .indexing import _config_from, index_files, setting_options
from .options import echo_json, engine_options, fail, input_options, json_option, signing_options
from .output import clean, json_text
from .session import opened, ready_to_sign


@click.command("dedup")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, allow_dash=True))
@click.option(
    "--output",
    "-o",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="JSON Lines file to write the representatives to ('-': standard output).",
)
@engine_options
@input_options
@setting_options
@click.option(
    "--skip-bad",
    is_flag=True,
    help="Skip unreadable records (reported with file and line) instead of stopping.",
)
@signing_options
@click.option("--quiet", "-q", is_flag=True, help="No progress on standard error.")
@json_option
@click.pass_context
def dedup_cmd(
    ctx: click.Context,
    paths: tuple[str, ...],
    output: str,
    target: str,
    engine_opts: dict,
    record_fields: Any,
    encoding: str | None,
    skip_bad: bool,
    batch_size: int,
    workers: int | None,
    quiet: bool,
    as_json: bool,
    **settings: Any,
) -> None:
    """Write the deduplicated collection of files in one command: each document that is not
    a near-duplicate of an earlier one (resemblance >= t), in input order.

    Reads what 'neardup index' reads (JSONL, CSV, Parquet, text files, directories; the
    same --text-field, --id-field, --encoding) and writes JSON Lines as 'neardup export'
    does: id, title, text, lang, the record's other fields, and its tags under "neardup".
    The documents go into a temporary embedded index that is removed at the end, so
    nothing is left behind; with --engine they go into that index and stay there, and
    documents that are near-duplicates of ones already in it are dropped too. --json
    prints a summary (on standard error when the documents go to standard output).

    \b
    Examples:
      neardup dedup corpus.jsonl -o deduplicated.jsonl
      neardup dedup articles.csv --text-field body --id-field url -o unique.jsonl -t 0.7
      neardup dedup pages/ -o - --json 2>summary.json | gzip > unique.jsonl.gz
      neardup dedup new.jsonl -o new-unique.jsonl --engine archive.db   # against an index kept
    """
    from ..io.files import InputError

    keep = ctx.get_parameter_source("target") == click.core.ParameterSource.COMMANDLINE
    tmp = None if keep else tempfile.TemporaryDirectory(prefix="neardup-dedup-")
    if tmp is not None:
        target, engine_opts = str(Path(tmp.name) / "dedup.db"), {}
    errors: list[InputError] = []
    read: list[str] = []
    silent = quiet or as_json  # (no progress bar)
    try:
        with opened(target, engine_opts, _config_from(ctx, settings), create=True) as nd:
            ready_to_sign(nd, quiet=silent)
            try:
                report = index_files(
                    nd,
                    paths,
                    "deduplicating",
                    record_fields=record_fields,
                    encoding=encoding,
                    skip_bad=skip_bad,
                    errors=errors,
                    quiet=silent,
                    batch_size=batch_size,
                    workers=workers,
                    ids=read,
                )
            except InputError as e:
                fail(
                    f"{e}\n  nothing was written; fix the record or use --skip-bad to go on "
                    "past bad records"
                )
            nd.engine.refresh()
            wanted = set(read)
            written = _write(output, _unique_among(nd, wanted))
            location = nd.engine.location if keep else None
    finally:
        if tmp is not None:
            tmp.cleanup()
    summary = _summary(len(wanted), written, output, location, errors, report.failed)
    if as_json:
        _echo_summary_json(summary)
    elif not quiet:
        _say_written(summary)
    if report.failed:
        sys.exit(2)


def _summary(
    read: int, written: int, output: str, location: str | None, errors: list, failed: list
) -> dict[str, Any]:
    """What ``dedup`` did (its --json output): documents read, written and dropped, where,
    and the records, files and documents left out."""
    return {
        "read": read,
        "written": written,
        "dropped": read - written,
        "output": output,
        "index": location,
        "skipped_records": [str(e) for e in errors if e.fatal],
        "skipped_files": [str(e) for e in errors if not e.fatal],
        "failed": [{"id": f.id, "reason": f.reason} for f in failed],
    }


def _echo_summary_json(summary: dict[str, Any]) -> None:
    """The summary as JSON: on standard error where the documents are on standard output."""
    if summary["output"] == "-":
        click.echo(json_text(summary), err=True)
    else:
        echo_json(summary)


def _say_written(summary: dict[str, Any]) -> None:
    """The line ``dedup`` ends with on standard error: what it wrote and dropped."""
    location, output = summary["index"], summary["output"]
    kept = f"; the index {location} keeps them" if location else "; no index kept"
    click.echo(
        clean(
            f"wrote {summary['written']} of {summary['read']} documents to "
            f"{'standard output' if output == '-' else output} "
            f"({summary['dropped']} near-duplicates dropped, "
            f"{len(summary['skipped_records'])} records skipped){kept}"
        ),
        err=True,
    )


def _unique_among(nd: Any, ids: set[str]) -> Iterator[dict[str, Any]]:
    """The records of ``export --unique`` of the documents ``ids``."""
    return (rec for rec in nd.export("unique") if rec["id"] in ids)


def _write(output: str, records: Iterable[dict[str, Any]]) -> int:
    """Write ``records`` as JSON Lines to ``output`` ('-': standard output); a file appears
    only complete (written beside it, then renamed into place). The number written."""
    n = 0
    if output == "-":
        for rec in records:
            sys.stdout.write(json.dumps(rec, ensure_ascii=False) + "\n")
            n += 1
        sys.stdout.flush()
        return n
    out = Path(output)
    try:
        fd, tmp = tempfile.mkstemp(dir=out.resolve().parent, prefix=f".{out.name}.", suffix=".tmp")
    except OSError as e:
        fail(f"{output}: cannot write ({e.strerror})")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for rec in records:
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                n += 1
        os.replace(tmp, out)
    except OSError as e:
        fail(f"{output}: write failed after {n} documents ({e.strerror})")
    finally:
        Path(tmp).unlink(missing_ok=True)  # gone after the replace; what a failure left
    return n
