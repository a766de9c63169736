"""Documents and their tags: show, export, delete."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import IO, Iterable

import click

from .session import console, opened, progress, slow_notice
from .options import echo_json, engine_options, fail, json_option
from ..errors import DocumentNotFound
from .output import json_text


@click.command("show")
@click.argument("doc_id", metavar="ID")
@engine_options
@json_option
def show_cmd(doc_id: str, target: str, engine_opts: dict, as_json: bool) -> None:
    """One document's tags: its representative and resemblance to it, or, for a
    representative, its members.

    \b
    Examples:
      neardup show doc-42
      neardup show doc-42 --json
    """
    with opened(target, engine_opts) as nd:
        try:
            s = nd.show(doc_id)
        except DocumentNotFound as e:
            with slow_notice("looking for ids like it"):
                close = nd.similar_ids(doc_id)
            fail(str(e) + (f"; did you mean {', '.join(repr(i) for i in close)}?" if close else ""))
        if as_json:
            echo_json(s.to_dict())
            return
        con = console()
        con.print(
            f"{s.id}  (arrival #{s.seq}){'  ' + s.title if s.title else ''}",
            markup=False,
            highlight=False,
        )
        if s.too_short:
            con.print(
                "  too short: fewer canonical tokens than twice the shingle size, so its "
                "resemblance is all or nothing (same canonical words or not)",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
        if s.tags is None:
            con.print("  not tagged yet: run 'neardup retag'")
        elif s.tags.is_duplicate:
            con.print(
                f"  duplicate of {s.representative}   resemblance {s.resemblance:.4f}   "
                f"cluster {s.tags.cluster_id}",
                markup=False,
                highlight=False,
            )
        else:
            con.print(
                f"  representative of cluster {s.id}: {len(s.members)} member(s)",
                markup=False,
                highlight=False,
            )
            for m, r in s.members:
                con.print(f"    {r:.4f}  {m}", markup=False, highlight=False)


@click.command("export")
@engine_options
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, writable=True, allow_dash=True),
    default="-",
    show_default=True,
    help="JSON Lines file to write ('-': standard output).",
)
@click.option(
    "--unique",
    "which",
    flag_value="unique",
    help="Representatives only: the deduplicated collection.",
)
@click.option(
    "--duplicates",
    "which",
    flag_value="duplicates",
    help="Duplicates only: what --unique leaves out.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress on standard error.")
@json_option
def export_cmd(
    target: str, engine_opts: dict, output: str, which: str | None, quiet: bool, as_json: bool
) -> None:
    """Write the stored documents as JSON Lines, in arrival order: id, title, text, lang,
    the document's own fields, and its tags under "neardup" (cluster_id, dup_of,
    resemblance, is_duplicate, seq).

    --unique writes one document per cluster, its representative: every document it
    drops resembles a document it keeps at the index's threshold or more (resemblance of
    the shingle sets, exact). Without --unique or --duplicates every document is written.
    --json prints a summary (on standard error when the documents go to standard output).

    \b
    Examples:
      neardup export --unique -o deduplicated.jsonl
      neardup export --duplicates | jq -r '.id + " -> " + .neardup.dup_of'
    """
    which = which or "all"
    with opened(target, engine_opts) as nd:
        total = nd.count()
        out = sys.stdout if output == "-" else None
        try:
            f = out or Path(output).open("w", encoding="utf-8")
        except OSError as e:
            fail(f"{output}: cannot write ({e.strerror})")
        try:
            where = "standard output" if out is not None else output
            n = _write_records(nd.export(which), f, where, total, quiet or as_json)
        finally:
            if out is None:
                f.close()
        if as_json:
            click.echo(
                json_text({"exported": n, "documents": total, "which": which, "output": output}),
                err=output == "-",
            )
        elif not quiet:
            _say_exported(n, total, which, output)


def _write_records(records: Iterable[dict], f: IO[str], where: str, total: int, quiet: bool) -> int:
    """Write ``records`` to ``f`` as JSON Lines under a progress bar; the number written. A
    write that fails names ``where`` and how many were written before."""
    n = 0
    try:
        with progress(total, "exporting", quiet) as bar:
            task = bar.add_task("exporting", total=total)
            for rec in records:
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                n += 1
                bar.advance(task)
    except BrokenPipeError:
        raise  # the reader went away (| head): a quiet end (neardup.cli.LazyGroup.main)
    except OSError as e:
        fail(f"{where}: write failed after {n} documents ({e.strerror})")
    return n


def _say_exported(n: int, total: int, which: str, output: str) -> None:
    """The line ``export`` ends with on standard error."""
    click.echo(
        f"exported {n} of {total} documents ({which})" + ("" if output == "-" else f" to {output}"),
        err=True,
    )


@click.command("delete")
@click.argument("ids", nargs=-1, metavar="ID...")
@engine_options
@click.option(
    "--from",
    "from_file",
    type=click.File("r", encoding="utf-8"),
    help="Read ids from a file, one per line ('-': stdin).",
)
@click.option(
    "--yes-delete-source-documents",
    "delete_source",
    is_flag=True,
    help="On an index adopted with 'neardup attach': really delete your own documents from it.",
)
@json_option
def delete_cmd(
    ids: tuple[str, ...],
    target: str,
    engine_opts: dict,
    from_file,
    delete_source: bool,
    as_json: bool,
) -> None:
    """Remove documents, and re-tag exactly the documents whose tags depended on them.

    A deleted duplicate changes nothing else. The members of a deleted representative are
    tagged again by the cluster rule (each joins the earlier representative it resembles
    most, or becomes one), and so on down the line, so that the tags equal those of a fresh
    index of the remaining documents.

    On an index adopted in place with 'neardup attach', the documents are your own: deleting
    them removes them from that index for good, with all their fields, not only what
    neardup added. delete refuses there unless --yes-delete-source-documents is given.

    Ids not in the index are named on standard error and the exit status is 1 (the
    others are deleted all the same).

    \b
    Examples:
      neardup delete doc-7 doc-9
      neardup delete --from removed.txt --json
      neardup delete art-17 --engine $URL --index articles --yes-delete-source-documents
    """
    wanted = list(ids)
    if from_file is not None:
        wanted += [ln.strip() for ln in from_file if ln.strip()]
    if not wanted:
        fail("give document ids, or --from FILE")
    with opened(target, engine_opts) as nd:
        with slow_notice("deleting and re-tagging the documents that depended on them"):
            rep = nd.delete(wanted, delete_source_documents=delete_source)
        if as_json:
            echo_json(rep.to_dict())
        else:
            click.echo(
                f"deleted {len(rep.deleted)} document(s); re-tagged {len(rep.retagged)}; "
                f"{nd.count()} in the index"
            )
        if rep.missing:
            shown = ", ".join(repr(i) for i in rep.missing[:20]) + (
                f" and {len(rep.missing) - 20} more" if len(rep.missing) > 20 else ""
            )
            fail(
                f"{len(rep.missing)} id(s) not in {nd.engine.location}, "
                f"nothing deleted for them: {shown}"
            )
