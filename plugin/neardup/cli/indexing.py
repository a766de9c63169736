"""``neardup init``, ``index``, ``retag`` and ``info``: make an index, fill it, recompute its
tags, and say what it holds."""

from __future__ import annotations

import sys
from typing import Any, Iterable, Iterator

import click

from ..config import CHOICES, SIGNATURES
from ..indexing.workers import default_workers
from ..runtime.cpus import CPU_SAMPLE, CpuSample
from .errors import interrupted
from .options import (
    BATCH_SIZE,
    LANGUAGE,
    THRESHOLD,
    count,
    echo_json,
    engine_options,
    fail,
    input_options,
    json_option,
    signing_options,
)
from .output import clean, safe
from .session import (
    announce_waits,
    console,
    interrupt_at_batch_end,
    opened,
    progress,
    ready_to_sign,
)


#: The options of the index's settings, on ``init`` and ``index`` alike (:func:`_config_from`).
_SETTING_OPTIONS = (
    click.option(
        "--lang",
        type=LANGUAGE,
        help="Language of documents without 'lang': fa, ru, en have rules of their own, any other "
        "code (de, ar, zh, ...) the generic ones (default: detect by script).",
    ),
    click.option(
        "--shingle-size", "-w", type=click.IntRange(1, 10), help="Words per shingle (default 5)."
    ),
    click.option(
        "--char-shingles",
        type=click.IntRange(1, 32),
        help="Use character n-grams of this length instead of words.",
    ),
    click.option(
        "--threshold",
        "-t",
        type=THRESHOLD,
        help="Resemblance at which documents are near-duplicates (default 0.8).",
    ),
    click.option("--num-perm", type=click.IntRange(16, 1024), help="MinHash size K (default 128)."),
    click.option(
        "--minhash-scheme",
        type=click.Choice(CHOICES["minhash_scheme"]),
        help="One-permutation hashing (default) or K permutations.",
    ),
    click.option(
        "--bands-rows",
        metavar="BxR",
        callback=lambda ctx, param, v: _bands_rows(v),
        help="LSH bands x rows, e.g. 16x8 (default: chosen for the threshold).",
    ),
    click.option(
        "--signatures",
        metavar="LIST",
        help=f"Comma-separated signatures (default {','.join(SIGNATURES)}).",
    ),
    click.option(
        "--stem",
        type=click.Choice(CHOICES["stem"]),
        help="Stemming: snowball (ru, en), lemma (ru: pymorphy3); Persian text uses hazm's stemmer "
        "with either, which needs neardup[hazm] (default none).",
    ),
    click.option(
        "--no-stopwords",
        is_flag=True,
        help="Keep the function words (articles, prepositions, conjunctions, pronouns, "
        "auxiliaries).",
    ),
    click.option("--seed", type=count(0, 2**63 - 1), help="Hash seed (default 1)."),
    click.option(
        "--simhash-k", type=click.IntRange(0, 16), help="SimHash Hamming radius (default 3)."
    ),
    click.option(
        "--fa-segmentation",
        type=click.Choice(CHOICES["fa_segmentation"]),
        help="Persian tokens: pieces cut at content-defined anchors (default), words with "
        "compounds joined, or words as written.",
    ),
)
_CONFIG_OPTIONS = (
    "lang",
    "shingle_size",
    "char_shingles",
    "threshold",
    "num_perm",
    "minhash_scheme",
    "signatures",
    "stem",
    "no_stopwords",
    "seed",
    "simhash_k",
    "bands_rows",
    "fa_segmentation",
)


def setting_options(f):
    """Add the options of :data:`_SETTING_OPTIONS` to a command."""
    for option in reversed(_SETTING_OPTIONS):
        f = option(f)
    return f


def _config_from(ctx: click.Context, opts: dict[str, Any]):
    """A Config from the settings given on the command line, or None when none was given."""
    from ..config import Config

    given = {
        k
        for k in _CONFIG_OPTIONS
        if ctx.get_parameter_source(k) == click.core.ParameterSource.COMMANDLINE
    }
    if not given:
        return None
    kw: dict[str, Any] = _shingle_settings(opts)
    if opts.get("lang"):
        kw["default_lang"] = opts["lang"]
    for k in (
        "threshold",
        "num_perm",
        "minhash_scheme",
        "stem",
        "seed",
        "simhash_k",
        "fa_segmentation",
    ):
        if opts.get(k) is not None:
            kw[k] = opts[k]
    if opts.get("signatures"):
        kw["signatures"] = _signature_names(opts["signatures"])
    if opts.get("no_stopwords"):
        kw["stopwords"] = False
    if opts.get("bands_rows"):
        kw["bands"], kw["rows"] = opts["bands_rows"]
    return Config(**kw)


def _shingle_settings(opts: dict[str, Any]) -> dict[str, Any]:
    """The shingle settings of the options: --char-shingles N (characters), else
    --shingle-size."""
    if opts.get("char_shingles"):
        return {"shingle": "char", "shingle_size": opts["char_shingles"]}
    if opts.get("shingle_size"):
        return {"shingle_size": opts["shingle_size"]}
    return {}


def _signature_names(value: str) -> tuple[str, ...]:
    """The signatures of ``--signatures`` (comma-separated)."""
    return tuple(s.strip() for s in value.split(",") if s.strip())


def _bands_rows(value: str | None) -> tuple[int, int] | None:
    """``BxR`` as (bands, rows), each from 1 to 1024."""
    if value is None:
        return None
    b, _, r = value.lower().partition("x")
    if not (
        b.strip().isdigit() and r.strip().isdigit() and 1 <= int(b) <= 1024 and 1 <= int(r) <= 1024
    ):
        raise click.BadParameter(
            f"{value!r} is not BxR with bands and rows from 1 to 1024, e.g. 16x8"
        )
    return int(b), int(r)


@click.command("init")
@engine_options
@click.option(
    "--no-pipeline",
    is_flag=True,
    help="Do not install the ingest pipeline (engines without ingest nodes).",
)
@setting_options
@click.option(
    "--shards",
    type=click.IntRange(1, 1024),
    help="Primary shards of a new documents index (HTTP engines; default 1).",
)
@click.option(
    "--replicas",
    type=click.IntRange(0, 64),
    help="Replicas of a new documents index (HTTP engines; default: the engine's).",
)
@json_option
@click.pass_context
def init_cmd(
    ctx: click.Context,
    target: str,
    engine_opts: dict,
    no_pipeline: bool,
    as_json: bool,
    shards: int | None,
    replicas: int | None,
    **settings: Any,
) -> None:
    """Create an index and everything it needs, or check an existing one.

    On Elasticsearch/OpenSearch: the ingest pipeline (refuses unsigned documents, stamps
    indexed_at, fingerprints the raw body), the index templates of the documents and of
    NAME-clusters, and both indices; then waits for the cluster to be at least yellow.
    Running it again changes nothing; running it with other settings than the index was
    built with is refused. The settings and the signature version are stored in the
    index NAME-neardup-state (the mapping's _meta.neardup points to it); an embedded index
    keeps them in its own SQLite file.

    \b
      neardup init --engine http://localhost:9200 --user elastic --password "$ELASTIC_PASSWORD"
      neardup init --engine https://localhost:9201 --index news --ca-certs ca.pem -t 0.7
      neardup init --engine http://localhost:9200 --no-pipeline   # no ingest nodes
      neardup init --engine http://localhost:9200 --shards 3 --replicas 1   # a 3-node cluster
    """
    from ..engines import is_url, open_engine

    http = is_url(target)
    if not http and (shards is not None or replicas is not None):
        fail("--shards and --replicas are for an Elasticsearch/OpenSearch index")
        return
    opts = _init_options(engine_opts, no_pipeline, shards, replicas) if http else engine_opts
    config = _config_from(ctx, settings)
    engine = open_engine(target, **opts)
    cfg = engine.open(config, create=True)
    actions = list(engine.actions) or [
        f"{engine.location} {'created' if engine.created else 'exists - kept'}"
    ]
    count = engine.count()
    backend = engine.backend
    engine.close()
    data = {
        "index": engine.location,
        "documents": count,
        "fingerprint": cfg.fingerprint(),
        "actions": actions,
        "server": backend,
    }
    if as_json:
        echo_json(data)
        return
    click.echo(clean(f"{data['index']} on {data['server']}"))
    for a in actions:
        click.echo(clean(f"  - {a}"))
    click.echo(f"ready: {count} documents, settings {data['fingerprint']}")


def _init_options(
    engine_opts: dict, no_pipeline: bool, shards: int | None, replicas: int | None
) -> dict:
    """The engine options of ``init`` on Elasticsearch/OpenSearch: the templates and the
    pipeline made again (or no pipeline) and the shards and replicas asked for."""
    opts = dict(engine_opts)
    opts["setup"] = True  # templates and pipeline again, even for an existing index
    if no_pipeline:
        opts["pipeline"] = False
    opts.update({k: v for k, v in (("shards", shards), ("replicas", replicas)) if v is not None})
    return opts


def index_files(
    nd: Any,
    paths: tuple[str, ...],
    label: str,
    *,
    record_fields: Any,
    encoding: str | None,
    skip_bad: bool,
    errors: list,
    quiet: bool,
    batch_size: int,
    workers: int | None,
    ids: list[str] | None = None,
    **index_args: Any,
) -> Any:
    """Read ``paths`` (every record checked, refused ones added to ``errors``, the ids read to
    ``ids`` if given) and index them into ``nd`` under a progress bar of the bytes read; the
    :class:`~neardup.indexing.ingest.IndexReport`. ``workers`` None:
    :func:`~neardup.indexing.workers.default_workers`."""
    from ..io.reading import read_documents
    from ..io.files import total_bytes

    total = total_bytes(paths)
    with progress(total, label, quiet) as bar:
        task = bar.add_task(label, total=total)
        docs = read_documents(
            paths,
            skip_bad=skip_bad,
            on_error=errors.append,
            on_bytes=lambda n: bar.advance(task, n),
            fields=record_fields,
            encoding=encoding,
        )
        if ids is not None:
            docs = _noting_ids(docs, ids)
        return nd.index(
            docs,
            batch_size=batch_size,
            workers=default_workers(sample=_cpu_sample()) if workers is None else workers,
            checked=True,  # read_documents checks every record
            **index_args,
        )


def _cpu_sample() -> CpuSample | None:
    """The command line's :class:`~neardup.runtime.cpus.CpuSample`, begun as it started
    (None outside a command)."""
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get(CPU_SAMPLE) if ctx is not None else None


def _noting_ids(docs: Iterable[Any], ids: list[str]) -> Iterator[Any]:
    for d in docs:
        ids.append(d.id)
        yield d


@click.command("index")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, allow_dash=True))
@engine_options
@signing_options
@input_options
@click.option(
    "--skip-bad",
    is_flag=True,
    help="Skip unreadable records (reported with file and line) instead of stopping.",
)
@click.option(
    "--no-tag", is_flag=True, help="Do not tag at index time (run 'neardup retag' afterwards)."
)
@click.option(
    "--search-ready",
    is_flag=True,
    help="Embedded engine: add the documents to the full-text index and their winnowing "
    "postings as they are stored, so the first search and containment query after indexing "
    "find them ready (by default those add them, and indexing never pays for search).",
)
@setting_options
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@json_option
@click.pass_context
def index_cmd(
    ctx: click.Context,
    paths: tuple[str, ...],
    target: str,
    engine_opts: dict,
    batch_size: int,
    workers: int,
    skip_bad: bool,
    no_tag: bool,
    search_ready: bool,
    quiet: bool,
    as_json: bool,
    record_fields: Any,
    encoding: str | None,
    **settings: Any,
) -> None:
    """Sign, store and tag documents from JSONL, CSV, Parquet or text files, or directories.

    Records (JSONL lines, CSV rows, Parquet rows) need a text field ("text", or name it
    with --text-field); "id", "title", "lang" are optional (--id-field, --title-field,
    --lang-field) and every other field is kept. A record without an id gets FILE:LINE
    (its file's name); a text file's id is its path relative to the directory given, or
    its name when the file is given, so the same files get the same ids however their
    path is typed. Each document is tagged by the cluster rule: in arrival order, it joins the
    earlier representative it resembles most (resemblance >= t): cluster_id = dup_of = that
    representative, max_resemblance = its resemblance to it. Otherwise it is a
    representative (cluster_id = its own id).

    Settings (shingle size, threshold, signatures, ...) are fixed when the index is
    created and stored with it; later runs use the stored ones. Re-running is safe and
    changes no tag: a document sent again unchanged keeps its place and tags; a document
    whose text changed is updated in place and what depended on it is re-tagged; a run
    cut short can simply be run again. Two runs on one index at once take turns batch by
    batch (the second says it is waiting).

    \b
    Examples:
      neardup index docs.jsonl
      neardup index corpus/ --lang fa --threshold 0.7
      neardup index articles.csv --text-field body --id-field url --title-field headline
      neardup index old-news.txt --encoding cp1251
      neardup index big.jsonl --workers 0          # one process: sign, tag and store here
      neardup index news.jsonl --search-ready      # search right after, without a wait
      neardup index news.jsonl -e https://localhost:9200 --index news --api-key KEY
    """
    from ..config import ConfigError
    from ..engines import is_url
    from ..io.files import InputError

    try:
        config = _config_from(ctx, settings)
    except ConfigError as e:
        fail(str(e))
    errors: list[InputError] = []
    if search_ready and not is_url(target):  # (a server's index is ready as it is written)
        engine_opts = {**engine_opts, "search_ready": True}
    with opened(target, engine_opts, config, create=True) as nd:
        announce_waits(nd.engine)
        ready_to_sign(nd, quiet=quiet or as_json)
        try:
            with interrupt_at_batch_end() as asked_to_stop:
                report = index_files(
                    nd,
                    paths,
                    "indexing",
                    record_fields=record_fields,
                    encoding=encoding,
                    skip_bad=skip_bad,
                    errors=errors,
                    quiet=quiet or as_json,
                    batch_size=batch_size,
                    workers=workers,
                    tag=not no_tag,
                    stop=asked_to_stop,
                )
        except InputError as e:
            fail(
                f"{e}\n  documents before it are stored; fix the record or use --skip-bad to go on "
                "past bad records"
            )
        nd.engine.refresh()
        errors, left_out = _bad_records_and_left_out(errors)
        report.skipped = len(errors)
        where = _failed_places(paths, report.failed, record_fields, encoding)
        if as_json:
            _echo_index_json(nd, report, where, errors, left_out)
        else:
            _print_index_report(nd, report, where, errors, left_out)
        if report.stopped:  # (status 130, what is kept and how to go on)
            interrupted("index")
        if report.failed:
            sys.exit(2)


def _bad_records_and_left_out(errors: list) -> tuple[list, list]:
    """The problems of reading: (bad records skipped, entries of directories left out)."""
    return [e for e in errors if e.fatal], [e for e in errors if not e.fatal]


def _failed_places(
    paths: tuple[str, ...], failed: list, record_fields: Any, encoding: str | None
) -> dict[str, str]:
    """Where each document the engine refused was read (none refused: nothing read again)."""
    from ..io.locate import locate

    if not failed:
        return {}
    return locate(paths, {f.id for f in failed}, record_fields, encoding)


def _echo_index_json(nd: Any, report: Any, where: dict, errors: list, left_out: list) -> None:
    """``neardup index --json``: the report, with where each failed document was read."""
    echo_json(
        {
            **report.to_dict(),
            "failed": [{**f.__dict__, "where": where.get(f.id)} for f in report.failed],
            "skipped_records": [str(e) for e in errors],
            "skipped_files": [str(e) for e in left_out],
            "index": nd.engine.location,
            "documents": nd.count(),
        }
    )


def _print_index_report(nd: Any, report: Any, where: dict, errors: list, left_out: list) -> None:
    """``neardup index``'s report for people: the first 20 skipped files, skipped records and
    failed documents, then the totals."""
    con = console()
    for e in left_out[:20]:
        con.print(f"[dim]skipped file[/] {safe(e)}", highlight=False)
    if len(left_out) > 20:
        con.print(
            f"[dim]... and {len(left_out) - 20} more files skipped in folders "
            "(--json lists them all)[/]"
        )
    for e in errors[:20]:
        con.print(f"[yellow]skipped[/] {safe(e)}", markup=True, highlight=False)
    if len(errors) > 20:
        con.print(
            f"[yellow]... and {len(errors) - 20} more skipped records (--json lists them all)[/]"
        )
    for f in report.failed[:20]:
        place = f"{safe(where[f.id])} " if f.id in where else ""
        con.print(f"[red]failed[/] {place}{safe(f.id)}: {safe(f.reason)}", highlight=False)
    if report.wordless:
        con.print(
            f"{report.wordless} documents had no words (only punctuation, markup or stop words): "
            "stored, never near-duplicates of anything"
        )
    again = (
        f", {report.unchanged} unchanged, {report.updated} updated "
        f"({report.retagged} other documents re-tagged)"
        if report.unchanged or report.updated
        else ""
    )
    con.print(
        f"indexed [bold]{report.indexed}[/] new documents into {safe(nd.engine.location)} "
        f"([bold]{report.duplicates}[/] near-duplicates of earlier ones{again}, "
        f"{len(errors)} skipped, {len(report.failed)} failed); {nd.count()} in the index"
    )


@click.command("retag")
@engine_options
@click.option(
    "--batch-size",
    type=BATCH_SIZE,
    default=500,
    show_default=True,
    help="Documents per candidate round trip.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@json_option
def retag_cmd(target: str, engine_opts: dict, batch_size: int, quiet: bool, as_json: bool) -> None:
    """Recompute cluster_id / dup_of / is_duplicate / max_resemblance of every document.

    Documents are visited in arrival order, as if indexed again: each one is tagged with
    its best verified earlier match. Use it after indexing with --no-tag, after deleting
    documents, or to fill the tags of an index written by other tools.

    \b
      neardup retag                                   # the SQLite index neardup.db
      neardup retag --engine http://localhost:9200 --index news --json
    """
    from ..api import NearDup

    nd = NearDup.open(target, create=False, **engine_opts)
    announce_waits(nd.engine)
    try:
        total = nd.count()
        with progress(total, "retagging", quiet or as_json) as bar:
            task = bar.add_task("retagging", total=total)
            dups = nd.retag(batch_size=batch_size, progress=lambda n: bar.advance(task, n))
    finally:
        nd.close()
    data = {"index": nd.engine.location, "documents": total, "duplicates": dups}
    if as_json:
        echo_json(data)
    else:
        click.echo(
            clean(
                f"{data['index']}: {total} documents retagged, "
                f"{dups} near-duplicates of earlier documents"
            )
        )


def _unsigned_hint(engine: Any) -> str:
    """What signs the documents of an HTTP index that have no neardup fields."""
    layout = engine.remote.layout
    if engine.adopted:  # attaching again resumes, with the same fields
        command = f"neardup attach {safe(engine.index)} {layout.describe(safe)}"
        return f"'{command}' signs them (with --watch, as they come)"
    return "written by another client; index them with 'neardup index' to include them"


@click.command("info")
@engine_options
@json_option
def info_cmd(target: str, engine_opts: dict, as_json: bool) -> None:
    """Settings the index was built with, and what it holds.

    On Elasticsearch/OpenSearch it also counts the documents of the index without
    neardup's fields ("unsigned": written by another client, or not signed yet in an
    attached index), which every neardup command skips.
    """
    with opened(target, engine_opts, create=False) as nd:
        c = nd.config
        data = {
            "index": nd.engine.location,
            "documents": nd.count(),
            "config": c.to_dict(),
            "fingerprint": c.fingerprint(),
        }
        unsigned = nd.engine.unsigned()  # (HTTP engines: other clients write the index too)
        if unsigned is not None:
            data["unsigned"] = unsigned
        if as_json:
            echo_json(data)
            return
        con = console()
        con.print(
            f"[bold]{safe(data['index'])}[/]: {data['documents']} documents, "
            f"settings {data['fingerprint']}"
        )
        if data.get("unsigned"):
            con.print(
                f"  {data['unsigned']} more without neardup's fields, "
                "skipped by every neardup command: " + _unsigned_hint(nd.engine),
                highlight=False,
                soft_wrap=True,
            )
        for k, v in c.to_dict().items():
            con.print(f"  {k:22} {safe(v)}", highlight=False)
