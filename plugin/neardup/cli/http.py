"""``neardup init`` and ``neardup retag``: set up an index, recompute its tags."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..config import LANGUAGES, SIGNATURES
from .options import echo_json, engine_options, fail, json_option
from .output import clean


def _settings(lang: str | None, shingle_size: int | None, threshold: float | None, num_perm: int | None,
              signatures: str | None):
    from ..config import Config

    kw: dict[str, Any] = {}
    if lang:
        kw["default_lang"] = lang
    if shingle_size:
        kw["shingle_size"] = shingle_size
    if threshold is not None:
        kw["threshold"] = threshold
    if num_perm:
        kw["num_perm"] = num_perm
    if signatures:
        kw["signatures"] = tuple(s.strip() for s in signatures.split(",") if s.strip())
    return Config(**kw) if kw else None


@click.command("init")
@engine_options
@click.option("--no-pipeline", is_flag=True, help="Do not install the ingest pipeline (engines without ingest nodes).")
@click.option("--lang", type=click.Choice(LANGUAGES), help="Language of documents without 'lang' (default: detect by script).")
@click.option("--shingle-size", "-w", type=click.IntRange(1, 10), help="Words per shingle (default 5).")
@click.option("--threshold", "-t", type=click.FloatRange(0, 1, min_open=True), help="Resemblance of near-duplicates (default 0.8).")
@click.option("--num-perm", type=click.IntRange(16, 1024), help="MinHash size (default 128).")
@click.option("--signatures", metavar="LIST", help=f"Comma-separated signatures (default {','.join(SIGNATURES)}).")
@json_option
def init_cmd(target: str, engine_opts: dict, no_pipeline: bool, lang: str | None, shingle_size: int | None,
             threshold: float | None, num_perm: int | None, signatures: str | None, as_json: bool) -> None:
    """Create an index and everything it needs, or check an existing one.

    On Elasticsearch/OpenSearch: the ingest pipeline (refuses unsigned documents, stamps
    indexed_at, fingerprints the raw body), the index templates of the documents and of
    NAME-clusters, and both indices; then waits for the cluster to be at least yellow.
    Running it again changes nothing; running it with other settings than the index was
    built with is refused. Settings and signature version are stored in the index _meta.

    \b
      neardup init --engine http://localhost:9200 --user elastic --password "$ELASTIC_PASSWORD"
      neardup init --engine https://localhost:9201 --index news --ca-certs ca.pem -t 0.7
      neardup init --engine http://localhost:9200 --no-pipeline   # no ingest nodes
    """
    from ..config import ConfigError
    from ..engines import is_url, open_engine
    from ..engines.base import EngineError

    opts = dict(engine_opts)
    if is_url(target):
        opts["setup"] = True  # templates and pipeline again, even for an existing index
        if no_pipeline:
            opts["pipeline"] = False
    config = _settings(lang, shingle_size, threshold, num_perm, signatures)
    try:
        engine = open_engine(target, **opts)
        existed = _exists(engine)
        cfg = engine.open(config, create=True)
        actions = list(getattr(engine, "actions", [])) or [f"{engine.location} {'exists - kept' if existed else 'created'}"]
        count = engine.count()
        server = getattr(engine, "server", None)
        engine.close()
    except (EngineError, ConfigError) as e:
        fail(str(e))
        return
    data = {"index": engine.location, "documents": count, "fingerprint": cfg.fingerprint(), "actions": actions,
            "server": f"{server.product} {server.number}" if server else "embedded (SQLite)"}
    if as_json:
        echo_json(data)
        return
    click.echo(clean(f"{data['index']} on {data['server']}"))
    for a in actions:
        click.echo(clean(f"  - {a}"))
    click.echo(f"ready: {count} documents, settings {data['fingerprint']}")


def announce_waits(engine: Any) -> None:
    """Say on stderr who holds the write lease while this command waits for it (HTTP engines)."""
    if not hasattr(engine, "on_wait"):
        return
    seen: set[str] = set()

    def on_wait(holder: Any, waited: float) -> None:
        if holder.owner not in seen:
            seen.add(holder.owner)
            click.echo(f"waiting for another writer ({holder.describe()})", err=True)

    engine.on_wait = on_wait


def _exists(engine: Any) -> bool:
    path = getattr(engine, "path", None)
    if path is None or path == ":memory:":
        return False
    from pathlib import Path

    return Path(path).exists()


@click.command("retag")
@engine_options
@click.option("--batch-size", default=500, show_default=True, help="Documents per candidate round trip.")
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
    from ..config import ConfigError
    from ..engines.base import EngineError

    try:
        nd = NearDup.open(target, create=False, **engine_opts)
    except (EngineError, ConfigError) as e:
        fail(str(e))
        return
    announce_waits(nd.engine)
    try:
        total = nd.count()
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        with Progress(TextColumn("[bold]retagging"), BarColumn(), TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                      TimeRemainingColumn(), console=Console(stderr=True), disable=quiet or not sys.stderr.isatty()) as bar:
            task = bar.add_task("retag", total=total)
            dups = nd.retag(batch_size=batch_size, progress=lambda n: bar.advance(task, n))
    except EngineError as e:
        fail(str(e))
        return
    finally:
        nd.close()
    data = {"index": nd.engine.location, "documents": total, "duplicates": dups}
    if as_json:
        echo_json(data)
    else:
        click.echo(clean(f"{data['index']}: {total} documents retagged, {dups} near-duplicates of earlier documents"))
