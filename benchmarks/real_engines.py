"""neardup on real engines, side by side in one run, with the embedded engine beside them.

    python -m benchmarks.real_engines                        # 100,000 documents, OpenSearch 2 and 3
    python -m benchmarks.real_engines --docs 20000 --engines opensearch-2 --out /tmp/bench-engines

Each engine is started by ``tests/engines/run`` (one node, heap ``--heap``). The same synthetic
collection (:mod:`benchmarks.synth`, seeded) goes

* through ``neardup index`` (``NearDup.index``: signing, candidate lookups, exact
  verification, tags, with neardup's ingest pipeline) into a neardup index, and
* as the plain raw documents (title and body, no neardup fields) through ``_bulk`` into an
  index with a plain mapping: the engine's own ingest rate, so the ratio is the plugin's cost;

then ``NearDup.query`` latency (p50/p99 of ``--queries`` edited copies and new texts) and the
store bytes per document from ``_stats`` (primaries, after a flush), for both indices. The
embedded engine takes the same documents and queries. Prints a table and writes
``real-engines.json`` and ``real-engines.md`` to ``--out``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import shlex
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from rich.table import Table

from neardup.api import NearDup
from neardup.config import Config
from tests.engines import launch

from . import synth
from .engine import base_documents, db_bytes, percentiles

REPO = Path(__file__).resolve().parents[1]
PLAIN_MAPPING = {
    "settings": {"index": {"number_of_shards": 1, "number_of_replicas": 0}},
    "mappings": {"properties": {"title": {"type": "text"}, "body": {"type": "text"}}},
}


class Engine:
    """``tests/engines/run ENGINE`` in the background until :meth:`close`."""

    def __init__(self, name: str, heap: str, timeout: float = 900.0):
        self.proc, self.url = launch.start(
            name, "--heap", heap, stdin=subprocess.DEVNULL, timeout=timeout
        )

    def close(self) -> None:
        launch.stop(self.proc)


def commit() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def store(client, index: str) -> dict:
    client.indices.flush(index=index)
    s = client.indices.stats(index=index, metric="store,docs")["indices"][index]["primaries"]
    n = s["docs"]["count"]
    return {
        "docs": n,
        "store_bytes": s["store"]["size_in_bytes"],
        "bytes_per_doc": s["store"]["size_in_bytes"] / n if n else None,
    }


def query_latency(nd: NearDup, queries: list) -> dict:
    nd.query("warm up the canonicalizer and the stop lists")
    lat, hits = [], 0
    for q in queries:
        t = time.perf_counter()
        hits += bool(nd.query(q.doc.text))
        lat.append(time.perf_counter() - t)
    return {**percentiles(lat), "queries_with_a_match": hits}


def neardup_ingest(nd: NearDup, docs: list) -> dict:
    t = time.perf_counter()
    rep = nd.index(docs, batch_size=500, tag=True, progress=None)
    s = time.perf_counter() - t
    return {
        "docs": rep.indexed,
        "failed": len(rep.failed),
        "duplicates": rep.duplicates,
        "seconds": s,
        "docs_per_s": rep.indexed / s,
    }


def plain_bulk(client, helpers, docs: list) -> dict:
    client.indices.create(index="plain", body=PLAIN_MAPPING)
    actions = (
        {"_index": "plain", "_id": d.id, "_source": {"title": d.title, "body": d.text}}
        for d in docs
    )
    t = time.perf_counter()
    ok, errors = helpers.bulk(
        client, actions, chunk_size=500, raise_on_error=False, request_timeout=120
    )
    client.indices.refresh(index="plain")
    s = time.perf_counter() - t
    return {"docs": ok, "failed": len(errors), "seconds": s, "docs_per_s": ok / s}


def run_engine(name: str, docs: list, queries: list, heap: str, log) -> dict:
    eng = Engine(name, heap)
    try:
        nd = NearDup.open(eng.url, Config(), index="bench", pipeline=True)
        client = nd.engine.client
        from opensearchpy import helpers

        version = client.info()["version"]["number"]
        log(f"{name} {version} at {eng.url}: plain _bulk of {len(docs):,} documents")
        plain = plain_bulk(client, helpers, docs)
        log(f"{name}: neardup index of {len(docs):,} documents")
        ingest = neardup_ingest(nd, docs)
        nd.engine.refresh()
        log(f"{name}: {len(queries)} queries")
        out = {
            "engine": name,
            "version": version,
            "plain_bulk": plain,
            "neardup_index": ingest,
            "plugin_cost": plain["docs_per_s"] / ingest["docs_per_s"],
            "query": query_latency(nd, queries),
            "store": {"neardup": store(client, "bench"), "plain": store(client, "plain")},
        }
        nd.close()
        return out
    finally:
        eng.close()


def run_embedded(docs: list, queries: list, log) -> dict:
    with tempfile.TemporaryDirectory() as d:
        db = Path(d) / "bench.db"
        nd = NearDup.open(str(db), Config())
        log(f"embedded: neardup index of {len(docs):,} documents")
        ingest = neardup_ingest(nd, docs)
        q = query_latency(nd, queries)
        nd.close()
        n = ingest["docs"]
        return {
            "engine": "embedded",
            "version": "SQLite",
            "neardup_index": ingest,
            "query": q,
            "store": {
                "neardup": {
                    "docs": n,
                    "store_bytes": db_bytes(db),
                    "bytes_per_doc": db_bytes(db) / n,
                }
            },
        }


def table(res: dict) -> Table:
    t = Table(
        title=f"neardup on real engines: {res['docs']:,} documents, {res['queries']} queries "
        f"({res['started_at'][:10]}, {res['machine']['cpus']} CPUs, commit {res['commit']})"
    )
    for c in COLUMNS:
        t.add_column(c, justify="left" if c == "engine" else "right")
    for r in res["runs"]:
        t.add_row(*_cells(r))
    return t


def _cells(r: dict) -> list[str]:
    """One row of the table: the engine, ingest rates and their ratio, query latency, bytes."""
    plain = r.get("plain_bulk")
    return [
        f"{r['engine']} {r['version']}",
        f"{r['neardup_index']['docs_per_s']:,.0f}",
        f"{plain['docs_per_s']:,.0f}" if plain else "-",
        f"{r['plugin_cost']:.1f}x" if plain else "-",
        f"{r['query']['p50_ms']:.1f}",
        f"{r['query']['p99_ms']:.1f}",
        f"{r['store']['neardup']['bytes_per_doc']:,.0f}",
        f"{r['store']['plain']['bytes_per_doc']:,.0f}" if "plain" in r["store"] else "-",
    ]


COLUMNS = [
    "engine",
    "neardup index docs/s",
    "plain _bulk docs/s",
    "plain / neardup",
    "query p50 ms",
    "query p99 ms",
    "neardup bytes/doc",
    "plain bytes/doc",
]


def _load(res: dict) -> str:
    """The 1-minute load average at start and end of the run (other work on the machine)."""
    m = res["machine"]
    if "load_average_at_start" not in m:
        return "not recorded"
    return f"{m['load_average_at_start'][0]:.1f} to {m['load_average_at_end'][0]:.1f}"


def markdown(res: dict) -> str:
    """The table as Markdown (``real-engines.md`` beside the JSON)."""
    head = (
        f"{res['docs']:,} documents, {res['queries']} queries, {res['started_at'][:10]}, "
        f"{res['machine']['cpus']} CPUs ({res['machine']['platform']}), "
        f"load average {_load(res)}, engine heap {res['heap']}, commit {res['commit']}: "
        f"`{res['command']}`\n\n"
    )
    rows = ["| " + " | ".join(COLUMNS) + " |", "| --- |" + " ---: |" * (len(COLUMNS) - 1)]
    rows += ["| " + " | ".join(_cells(r)) + " |" for r in res["runs"]]
    return head + "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.real_engines", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument(
        "--docs", type=int, default=100_000, help="documents in the collection (default 100000)"
    )
    ap.add_argument(
        "--queries", type=int, default=300, help="queries timed per engine (default 300)"
    )
    ap.add_argument(
        "--engines",
        default="opensearch-2,opensearch-3",
        help="comma-separated (tests/engines/run names)",
    )
    ap.add_argument("--heap", default="1g", help="JVM heap of each engine (default 1g)")
    ap.add_argument("--no-embedded", action="store_true", help="leave the embedded engine out")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--out",
        type=Path,
        default=REPO / "benchmarks" / "results",
        help="folder for real-engines.json",
    )
    a = ap.parse_args(argv)
    console = Console(stderr=True)
    log = lambda m: console.log(m)  # noqa: E731
    gen = synth.Generator(base_documents(), seed=a.seed)
    docs = [s.doc for s in itertools.islice(gen, a.docs)]
    qrng = random.Random(a.seed * 1_000_003 + a.docs)
    queries = [gen.query(f"q{i}", qrng) for i in range(a.queries)]
    res: dict = {
        "command": "python -m benchmarks.real_engines "
        + " ".join(shlex.quote(x) for x in (argv if argv is not None else sys.argv[1:])),
        "docs": len(docs),
        "queries": len(queries),
        "seed": a.seed,
        "heap": a.heap,
        "commit": commit(),
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_average_at_start": os.getloadavg(),
        },
        "runs": [],
    }
    for name in [x.strip() for x in a.engines.split(",") if x.strip()]:
        res["runs"].append(run_engine(name, docs, queries, a.heap, log))
    if not a.no_embedded:
        res["runs"].append(run_embedded(docs, queries, log))
    res["machine"]["load_average_at_end"] = (
        os.getloadavg()
    )  # other work on the machine slows every row alike
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "real-engines.json").write_text(json.dumps(res, indent=2))
    (a.out / "real-engines.md").write_text(markdown(res))
    Console(width=200).print(table(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
