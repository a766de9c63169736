"""The main job: index, query, compare, clusters, search, info."""

from __future__ import annotations

import csv
import io as _io
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import click

from ..config import CHOICES, LANGUAGES, SIGNATURES
from ..ingest import default_workers
from .options import echo_json, engine_options, fail, json_option, wordless_query
from .output import clean, one_line, safe, terminal_text

_CONFIG_OPTIONS = ("lang", "shingle_size", "char_shingles", "threshold", "num_perm", "minhash_scheme", "signatures", "stem",
                   "no_stopwords", "seed", "simhash_k", "bands_rows")


def _config_from(ctx: click.Context, opts: dict[str, Any]):
    """A Config from the settings given on the command line, or None when none was given."""
    from ..config import Config

    given = {k for k in _CONFIG_OPTIONS if ctx.get_parameter_source(k) == click.core.ParameterSource.COMMANDLINE}
    if not given:
        return None
    kw: dict[str, Any] = {}
    if opts.get("lang"):
        kw["default_lang"] = opts["lang"]
    if opts.get("char_shingles"):
        kw["shingle"], kw["shingle_size"] = "char", opts["char_shingles"]
    elif opts.get("shingle_size"):
        kw["shingle_size"] = opts["shingle_size"]
    for k in ("threshold", "num_perm", "minhash_scheme", "stem", "seed", "simhash_k"):
        if opts.get(k) is not None:
            kw[k] = opts[k]
    if opts.get("signatures"):
        kw["signatures"] = tuple(s.strip() for s in opts["signatures"].split(",") if s.strip())
    if opts.get("no_stopwords"):
        kw["stopwords"] = False
    if opts.get("bands_rows"):
        b, _, r = opts["bands_rows"].partition("x")
        kw["bands"], kw["rows"] = int(b), int(r)
    return Config(**kw)


@contextmanager
def _opened(target: str, engine_opts: dict, config=None, create: bool = False) -> Iterator[Any]:
    """Open the index, turning engine and settings errors into clear messages."""
    from ..api import NearDup
    from ..config import ConfigError
    from ..engines.base import EngineError

    try:
        nd = NearDup.open(target, config, create=create, **engine_opts)
    except (EngineError, ConfigError) as e:
        fail(str(e))
    try:
        yield nd
    except EngineError as e:
        fail(str(e))
    finally:
        nd.close()


def _console():
    from rich.console import Console

    return Console(soft_wrap=False, emoji=False)  # data is printed as written: ":rocket:" stays text


def _progress(total: int | None, label: str, quiet: bool):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from rich.console import Console

    cols = [TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
            TimeElapsedColumn(), TimeRemainingColumn()] if total else [TextColumn("[bold]{task.description}"), MofNCompleteColumn(), TimeElapsedColumn()]
    return Progress(*cols, console=Console(stderr=True), disable=quiet or not sys.stderr.isatty(), transient=False)


# -- index --------------------------------------------------------------------------------------
@click.command("index")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, allow_dash=True))
@engine_options
@click.option("--batch-size", default=500, show_default=True, help="Documents per transaction / bulk request.")
@click.option("--workers", "-j", type=click.IntRange(0), default=None,
              help="Processes that canonicalize and sign while this one tags and stores; 0 signs here too. "
                   "[default: one per CPU, none on one CPU; input of one batch is signed here]")
@click.option("--skip-bad", is_flag=True, help="Skip unreadable records (reported with file and line) instead of stopping.")
@click.option("--no-tag", is_flag=True, help="Do not tag at index time (run 'neardup retag' afterwards).")
@click.option("--lang", type=click.Choice(LANGUAGES), help="Language of documents without 'lang' (default: detect by script).")
@click.option("--shingle-size", "-w", type=click.IntRange(1, 10), help="Words per shingle (default 5).")
@click.option("--char-shingles", type=click.IntRange(1, 32), help="Use character n-grams of this length instead of words.")
@click.option("--threshold", "-t", type=click.FloatRange(0, 1, min_open=True), help="Resemblance at which documents are near-duplicates (default 0.8).")
@click.option("--num-perm", type=click.IntRange(16, 1024), help="MinHash size K (default 128).")
@click.option("--minhash-scheme", type=click.Choice(CHOICES["minhash_scheme"]), help="One-permutation hashing (default) or K permutations.")
@click.option("--bands-rows", metavar="BxR", help="LSH bands x rows, e.g. 16x8 (default: chosen for the threshold).")
@click.option("--signatures", metavar="LIST", help=f"Comma-separated signatures (default {','.join(SIGNATURES)}).")
@click.option("--stem", type=click.Choice(CHOICES["stem"]), help="Stemming (ru/en snowball, ru lemma) (default none).")
@click.option("--no-stopwords", is_flag=True, help="Keep stop words.")
@click.option("--seed", type=int, help="Hash seed (default 1).")
@click.option("--simhash-k", type=click.IntRange(0, 16), help="SimHash Hamming radius (default 3).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@json_option
@click.pass_context
def index_cmd(ctx: click.Context, paths: tuple[str, ...], target: str, engine_opts: dict, batch_size: int, workers: int, skip_bad: bool,
              no_tag: bool, quiet: bool, as_json: bool, **settings: Any) -> None:
    """Sign, store and tag documents from JSONL files, text files or directories.

    JSONL records need "text"; "id", "title", "lang" are optional and every other field
    is kept. Each document is tagged by the cluster rule: in arrival order, it joins the
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
      neardup index big.jsonl --workers 0          # one process: sign, tag and store here
      neardup index news.jsonl -e https://localhost:9200 --index news --api-key KEY
    """
    from ..io import InputError, locate, read_documents, total_bytes

    config = _config_from(ctx, settings)
    errors: list[InputError] = []
    with _opened(target, engine_opts, config, create=True) as nd:
        nd.engine.on_wait = lambda msg: click.echo(msg, err=True)
        total = total_bytes(paths)
        with _progress(total, "indexing", quiet) as bar:
            task = bar.add_task("indexing", total=total)
            docs = read_documents(paths, skip_bad=skip_bad, on_error=errors.append, on_bytes=lambda n: bar.advance(task, n))
            try:
                report = nd.index(docs, batch_size=batch_size, tag=not no_tag, workers=default_workers() if workers is None else workers)
            except InputError as e:
                fail(f"{e}\n  documents before it are stored; fix the record or use --skip-bad to go on past bad records")
        nd.engine.refresh()
        left_out = [e for e in errors if not e.fatal]
        errors = [e for e in errors if e.fatal]
        report.skipped = len(errors)
        where = locate(paths, {f.id for f in report.failed}) if report.failed else {}
        if as_json:
            echo_json({**report.to_dict(), "failed": [{**f.__dict__, "where": where.get(f.id)} for f in report.failed],
                       "skipped_records": [str(e) for e in errors], "skipped_files": [str(e) for e in left_out],
                       "index": nd.engine.location, "documents": nd.count()})
            if report.failed:
                sys.exit(2)
            return
        con = _console()
        for e in left_out[:20]:
            con.print(f"[dim]skipped file[/] {safe(e)}", highlight=False)
        if len(left_out) > 20:
            con.print(f"[dim]... and {len(left_out) - 20} more files skipped in folders (--json lists them all)[/]")
        for e in errors[:20]:
            con.print(f"[yellow]skipped[/] {safe(e)}", markup=True, highlight=False)
        if len(errors) > 20:
            con.print(f"[yellow]... and {len(errors) - 20} more skipped records (--json lists them all)[/]")
        for f in report.failed[:20]:
            con.print(f"[red]failed[/] {safe(where.get(f.id, ''))}{' ' if f.id in where else ''}{safe(f.id)}: {safe(f.reason)}", highlight=False)
        if report.wordless:
            con.print(f"{report.wordless} documents had no words (only punctuation, markup or stop words): stored, "
                      "never near-duplicates of anything")
        again = (f", {report.unchanged} unchanged, {report.updated} updated ({report.retagged} other documents re-tagged)"
                 if report.unchanged or report.updated else "")
        con.print(f"indexed [bold]{report.indexed}[/] new documents into {safe(nd.engine.location)} "
                  f"([bold]{report.duplicates}[/] near-duplicates of earlier ones{again}, {len(errors)} skipped, "
                  f"{len(report.failed)} failed); {nd.count()} in the index")
        if report.failed:
            sys.exit(2)


# -- query --------------------------------------------------------------------------------------
@click.command("query")
@click.argument("text", required=False)
@engine_options
@click.option("--file", "-f", "file_", type=click.Path(exists=True, dir_okay=False, allow_dash=True),
              help="Read the query text from a file ('-': standard input).")
@click.option("--id", "doc_id", help="Query with a stored document.")
@click.option("--lang", type=click.Choice(LANGUAGES), help="Language of the query text (default: detect).")
@click.option("--containment", is_flag=True, help="Rank by containment c(query, doc): how much of the query is inside each document.")
@click.option("--threshold", "-t", type=click.FloatRange(0, 1, min_open=True), help="Minimum similarity (default: the index's threshold).")
@click.option("--top-k", "-k", default=10, show_default=True, help="How many matches.")
@json_option
def query_cmd(text: str | None, target: str, engine_opts: dict, file_: str | None, doc_id: str | None, lang: str | None,
              containment: bool, threshold: float | None, top_k: int, as_json: bool) -> None:
    """Near-duplicates of a text, a file or a stored document, with exact similarities.

    \b
    Examples:
      neardup query "text of a news item ..."
      neardup query --file draft.txt --containment -t 0.5
      neardup query --id doc-42 -k 20 --json
    """
    if sum(x is not None for x in (text, file_, doc_id)) != 1:
        fail("give exactly one of TEXT, --file or --id")
    if file_:
        text = _read_text(file_)
    if text is not None and not text.strip():
        fail("the query text is empty")
    mode = "containment" if containment else "resemblance"
    with _opened(target, engine_opts) as nd:
        try:
            matches = nd.query(text, id=doc_id, lang=lang, mode=mode, threshold=threshold, top_k=top_k)
        except KeyError as e:
            fail(str(e.args[0]))
        if mode == "resemblance" and threshold is not None and threshold < nd.config.threshold:
            click.echo(_recall_note(nd, threshold, nd.expected_recall(threshold)), err=True)
        note = None if matches else wordless_query(nd, text, doc_id, lang)
        if note:
            click.echo(clean(note), err=True)
        if as_json:
            echo_json([m.to_dict() for m in matches])
            return
        from rich.table import Table

        t = Table(title=f"{len(matches)} near-duplicate(s) by {mode} >= {threshold or nd.config.threshold}")
        for col in ("id", "resemblance", "containment q⊂d", "containment d⊂q", "shared", "title"):
            t.add_column(col, overflow="fold")
        for m in matches:
            t.add_row(safe(m.id), f"{m.resemblance:.3f}", f"{m.containment:.3f}", f"{m.containment_ba:.3f}", str(m.intersection), safe(m.title or ""))
        _console().print(t)


# -- compare ------------------------------------------------------------------------------------
@click.command("compare")
@click.argument("a")
@click.argument("b")
@engine_options
@click.option("--ids", is_flag=True, help="A and B are stored document ids (default: files, or ids when no such file).")
@click.option("--show", default=10, show_default=True, help="How many shared passages to show.")
@json_option
def compare_cmd(a: str, b: str, target: str, engine_opts: dict, ids: bool, show: int, as_json: bool) -> None:
    """Explain one pair: resemblance, containment, shared passages, colliding signatures.

    A and B are text files (or stored ids with --ids). Settings come from the index, so
    the comparison is exactly what the index would compute. The shared passages are A's
    own text behind the shingles it shares with B (long ones shortened); --json also
    gives the canonical shingles ("shared_shingles").

    \b
    Examples:
      neardup compare a.txt b.txt
      neardup compare --ids doc-1 doc-7 --json
    """
    from ..signer import Document

    use_ids = ids or not (Path(a).is_file() and Path(b).is_file())
    with _opened(target, engine_opts, create=False) as nd:
        try:
            if use_ids:
                cmp = nd.compare(a, b, ids=True)
            else:
                cmp = nd.compare(*(Document(p, _read_text(p), Path(p).name) for p in (a, b)))
        except KeyError as e:
            fail(f"{e.args[0]} (and no such file)")
        if as_json:
            echo_json(cmp.to_dict())
            return
        con = _console()
        con.print(f"[bold]{safe(cmp.a)}[/] vs [bold]{safe(cmp.b)}[/]")
        con.print(f"  resemblance      {cmp.resemblance:.4f}   ({cmp.intersection} shared of {cmp.shingles_a} + {cmp.shingles_b} shingles)")
        con.print(f"  containment a⊂b  {cmp.containment_ab:.4f}")
        con.print(f"  containment b⊂a  {cmp.containment_ba:.4f}")
        con.print(f"  length filter    {'passes' if cmp.passes_length_filter else 'fails'} at t = {nd.config.threshold}")
        con.print(f"  MinHash estimate {cmp.minhash_estimate:.4f}   SimHash Hamming distance {cmp.simhash_hamming}   exact copy: {'yes' if cmp.exact_equal else 'no'}")
        con.print("  signature keys shared: " + ", ".join(f"{f} {v['shared']}/{v['of']}" for f, v in cmp.collisions.items()))
        if cmp.shared_passages:
            con.print(f"  shared passages of {safe(cmp.a)}:")
        for s in cmp.shared_passages[:show]:
            con.print(f"    · {safe(_shortened(s))}", highlight=False, soft_wrap=True)  # the terminal wraps it
        if len(cmp.shared_passages) > show:
            con.print(f"    ... {len(cmp.shared_passages) - show} more shared passages")


def _shortened(passage: str, keep: int = 120) -> str:
    """A passage on one line, its middle left out when it is longer than 2 * ``keep`` characters."""
    text = " ".join(passage.split())
    if len(text) <= 2 * keep + 20:
        return text
    return f"{text[:keep]} … [{len(text) - 2 * keep} characters] … {text[-keep:]}"


def _read_text(path: str) -> str:
    """A text file's content ('-': standard input), UTF-8 with or without a BOM, CRLF as LF."""
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
        return data.decode("utf-8-sig").replace("\r\n", "\n")
    except UnicodeDecodeError as e:
        fail(f"{'standard input' if path == '-' else path}: not valid UTF-8 (byte {e.start})")
    except OSError as e:
        fail(f"{path}: cannot read ({e.strerror})")
    raise AssertionError


# -- clusters -----------------------------------------------------------------------------------
@click.command("clusters")
@engine_options
@click.option("--threshold", "-t", type=click.FloatRange(0, 1, min_open=True), help="Resemblance for an edge (default: the index's threshold).")
@click.option("--min-size", default=2, show_default=True, help="Smallest cluster to list.")
@click.option("--top", default=20, show_default=True, help="How many clusters to show in the table (JSON/CSV get all).")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV (one row per cluster).")
@click.option("--connected", is_flag=True,
              help="Transitive closure instead: connected components of the verified pairs (members may resemble "
                   "each other only through a chain).")
@click.option("--write/--no-write", default=False, show_default=True,
              help="Store the clusters in the index, where dashboards and reports read them.")
@json_option
def clusters_cmd(target: str, engine_opts: dict, threshold: float | None, min_size: int, top: int, as_csv: bool, connected: bool,
                 write: bool, as_json: bool) -> None:
    """Every cluster of near-duplicates in the index (N-to-N).

    A cluster is a representative and the later documents that resemble it most, at
    resemblance >= t: the rule the index's tags follow (cluster_id, dup_of), so at the
    index's threshold these are exactly the tags' clusters, read without verifying anything
    again. At another threshold the same rule runs over the pairs verified at that
    threshold; below the index's threshold the signature keys propose fewer of the pairs
    there (the expected share is printed). --connected gives connected components instead.

    \b
    Examples:
      neardup clusters
      neardup clusters -t 0.9 --csv > clusters.csv
      neardup clusters --write          # for dashboards and reports
    """
    with _opened(target, engine_opts, create=False) as nd:
        t = nd.config.threshold if threshold is None else threshold
        recall = nd.expected_recall(t) if t < nd.config.threshold else None
        cl = nd.clusters(threshold, write=write, min_size=min_size, connected=connected)
        if recall is not None:
            click.echo(_recall_note(nd, t, recall), err=True)
        if as_json:
            echo_json([c.to_dict() for c in cl])
            return
        if as_csv:
            buf = _io.StringIO()
            w = csv.writer(buf)
            w.writerow(["cluster_id", "size", "representative_id", "representative_title", "min_resemblance", "mean_resemblance",
                        "max_resemblance", "languages", "members"])
            for c in cl:
                w.writerow([c.cluster_id, c.size, c.representative_id, c.representative_title or "", f"{c.min_resemblance:.4f}",
                            f"{c.mean_resemblance:.4f}", f"{c.max_resemblance:.4f}", " ".join(c.languages), " ".join(c.members)])
            click.echo(terminal_text(buf.getvalue()), nl=False)
            return
        from rich.table import Table

        docs = nd.count()
        dup_docs = sum(c.size for c in cl)
        kind = "connected components" if connected else "clusters"
        t = Table(title=f"{len(cl)} {kind}, {dup_docs} of {docs} documents, resemblance >= {threshold or nd.config.threshold}")
        con = _console()
        avail = max(24, con.width - 36)
        for col, kw in (("size", {"justify": "right"}), ("mean r", {}), ("min r", {}), ("lang", {}), ("representative (title, id)", {})):
            t.add_column(col, no_wrap=True, **kw)
        for c in cl[:top]:
            label = f"{one_line(c.representative_title or '')} ({one_line(c.representative_id)})".strip()
            label = label if len(label) <= avail else label[: avail - 1] + "…"
            t.add_row(str(c.size), f"{c.mean_resemblance:.3f}", f"{c.min_resemblance:.3f}", safe(",".join(c.languages)), safe(label))
        con.print(t)
        if len(cl) > top:
            con.print(f"... {len(cl) - top} more clusters (--top N, --json or --csv for all)")
        con.print("members of each cluster: --json or --csv")


def _recall_note(nd: Any, t: float, recall: float) -> str:
    return (f"note: the index's signature keys were tuned for resemblance >= {nd.config.threshold}; a pair at {t} shares "
            f"enough MinHash bands with probability {recall:.2f} (more between {t} and {nd.config.threshold}), so some "
            f"pairs in that range may be missed. Index with --threshold {t} for full recall there.")


# -- search -------------------------------------------------------------------------------------
@click.command("search")
@click.argument("query")
@engine_options
@click.option("--size", "-n", default=10, show_default=True, help="How many results.")
@click.option("--dedupe/--no-dedupe", default=False, help="Fold near-duplicates under their best hit.")
@click.option("--threshold", "-t", type=click.FloatRange(0, 1, min_open=True), help="Verify copies on the fly at this resemblance (default: use index tags).")
@click.option("--dsl", is_flag=True, help="QUERY is a query-DSL JSON body (HTTP engines).")
@json_option
def search_cmd(query: str, target: str, engine_opts: dict, size: int, dedupe: bool, threshold: float | None, dsl: bool,
               as_json: bool) -> None:
    """Full-text search, with near-duplicates folded under their best hit (--dedupe).

    \b
    Examples:
      neardup search "apache license" --dedupe
      neardup search '{"match": {"body": "license"}}' --dsl -e http://localhost:9200 --dedupe
    """
    import json

    q: Any = query
    if dsl:
        try:
            q = json.loads(query)
        except json.JSONDecodeError as e:
            fail(f"--dsl: QUERY is not JSON ({e.msg} at column {e.colno})")
    with _opened(target, engine_opts, create=False) as nd:
        if hasattr(nd.engine, "fulltext_behind"):  # the embedded engine says when it adds documents to its full-text index
            nd.engine.on_wait = lambda msg: click.echo(msg, err=True)
        hits = nd.search(q, size=size, dedupe=dedupe, threshold=threshold)
        if as_json:
            echo_json([{**h.__dict__, "folded_count": len(h.folded)} for h in hits])
            return
        con = _console()
        if not hits:
            con.print("no results")
        for n, h in enumerate(hits, 1):
            folded = f"  [magenta](+{len(h.folded)} near-cop{'y' if len(h.folded) == 1 else 'ies'} folded)[/]" if h.folded else ""
            con.print(f"{n:>2}. [bold]{safe(one_line(h.title or h.id))}[/]  [dim]{safe(one_line(h.id))} score {h.score:.2f}[/]{folded}")
            con.print("    " + one_line(h.snippet)[:300], highlight=False, markup=False)


# -- info ---------------------------------------------------------------------------------------
def _unsigned_hint(engine: Any) -> str:
    """What signs the documents of an HTTP index that have no neardup fields."""
    layout = getattr(engine, "layout", None)
    if layout is not None and layout.adopted:  # attaching again resumes, with the same fields
        fields = " ".join(f"--{name}-field {safe(f)}" for name, f in (("text", layout.text), ("title", layout.title),
                                                                     ("lang", layout.lang), ("order", layout.order)) if f)
        return f"'neardup attach {safe(engine.index)} {fields}' signs them (with --watch, as they come)"
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
    with _opened(target, engine_opts, create=False) as nd:
        c = nd.config
        data = {"index": nd.engine.location, "documents": nd.count(), "config": c.to_dict(), "fingerprint": c.fingerprint()}
        unsigned = getattr(nd.engine, "unsigned", None)  # HTTP engines: other clients write the index too
        if unsigned is not None:
            data["unsigned"] = unsigned()
        if as_json:
            echo_json(data)
            return
        con = _console()
        con.print(f"[bold]{safe(data['index'])}[/]: {data['documents']} documents, settings {data['fingerprint']}")
        if data.get("unsigned"):
            con.print(f"  {data['unsigned']} more without neardup's fields, skipped by every neardup command: "
                      + _unsigned_hint(nd.engine), highlight=False, soft_wrap=True)
        for k, v in c.to_dict().items():
            con.print(f"  {k:22} {safe(v)}", highlight=False)
