"""3 and 5. The embedded engine at growing sizes, in its own process (clean peak RSS):
ingest rate, 1-to-N query latency (``NearDup.query``, signing and exact verification
included), index bytes per document beyond the stored text (with every posting: after the
ingest, one containment query adds the winnowing postings, which follow behind indexing; the
size as indexed and that query's time are in the JSON too; the full-text index, made at the
first search, is not in it); and the N-to-N run
(``NearDup.pairs`` / ``NearDup.clusters``) at one size.

One collection grows through the checkpoints (``--sizes``): the corpora first, then the
synthetic stream (:mod:`benchmarks.synth`); each segment's ingest is timed on its own.

    python -m benchmarks.engine --sizes 10000,100000 --out result.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

import numpy as np

from neardup.runtime.allocator import keep_freed_memory
from neardup.api import NearDup
from neardup.config import Config

from . import corpora, exchange, synth


def base_documents() -> list:
    return [d for docs in corpora.load_all().values() for d in docs]


def db_bytes(path: Path) -> int:
    return sum(
        os.path.getsize(f"{path}{s}") for s in ("", "-wal", "-shm") if os.path.exists(f"{path}{s}")
    )


def page_usage(path: Path, n: int) -> dict:
    """Per document: unused bytes in the file's pages and bytes of the stored shingle hashes
    (SQLite's dbstat; empty where SQLite lacks it)."""
    import sqlite3

    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as c:
            unused = c.execute("SELECT SUM(unused) FROM dbstat").fetchone()[0] or 0
            shingles = c.execute("SELECT SUM(length(shingles)) FROM docs").fetchone()[0] or 0
    except sqlite3.Error:
        return {}
    return {"unused_bytes_per_doc": unused / n, "shingle_bytes_per_doc": shingles / n}


def table_bytes(path: Path, n: int) -> dict:
    """Bytes per document of each table and index (SQLite's dbstat), where SQLite has it."""
    import sqlite3

    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as c:
            rows = c.execute(
                "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
            ).fetchall()
    except sqlite3.Error as e:
        return {"error": str(e)}
    return {name: size / n for name, size in rows}


def percentiles(xs: list[float]) -> dict:
    a = np.asarray(xs) * 1e3
    return {
        "n": len(xs),
        "p50_ms": float(np.percentile(a, 50)),
        "p95_ms": float(np.percentile(a, 95)),
        "p99_ms": float(np.percentile(a, 99)),
        "mean_ms": float(a.mean()),
        "max_ms": float(a.max()),
    }


def peak_rss_mb() -> float:
    """This process's peak resident memory, MB: the pages of the index file SQLite reads
    through its memory map count in it (:func:`rss_mb` tells them apart)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> dict:
    """This process's resident memory now, MB: ``anon`` (its own) and ``file`` (pages of
    files it maps, the index's among them: the kernel's page cache, shared, dropped under
    memory pressure); empty where /proc/self/status is not there."""
    out = {}
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                for key, name in (("RssAnon:", "anon"), ("RssFile:", "file")):
                    if line.startswith(key):
                        out[name] = int(line.split()[1]) / 1024
    except OSError:
        pass
    return out


class _Feed:
    """Synthetic documents for the index, counting their text bytes; :meth:`take` stops
    early (and sets ``cut``) once the time budget's deadline has passed."""

    def __init__(self, gen: synth.Generator):
        self.gen = gen
        self.text_bytes = 0
        self.cut = False

    def take(self, n: int, deadline: float) -> Iterator:
        for i in range(n):
            if i % 500 == 0 and time.perf_counter() > deadline:
                self.cut = True
                return
            s = next(self.gen)
            self.text_bytes += len(s.doc.text.encode("utf-8"))
            yield s.doc


class CandidateCount:
    """Counts what the engine's candidate queries return (wraps ``engine.candidates``): all
    candidates, and those proposed by SimHash block keys alone (the ones the Hamming
    distance test may still drop)."""

    def __init__(self, engine):
        self.engine, self.inner = engine, engine.candidates
        self.total = self.simhash_only = 0
        engine.candidates = self

    def __call__(self, queries):
        out = self.inner(queries)
        for cands in out:
            self.total += len(cands)
            self.simhash_only += sum(c.matched == frozenset({"simhash"}) for c in cands)
        return out

    def take(self) -> tuple[int, int]:
        """The counts since the last call."""
        counts = (self.total, self.simhash_only)
        self.total = self.simhash_only = 0
        return counts


def long_generator(seed: int) -> synth.Generator:
    """Documents of about 550 words, as the whole path's
    (:func:`benchmarks.wholepath_corpus.build_corpus`):
    English and Russian collages of 40-72 corpus sentences, 30 % edited copies of earlier ones."""
    base = corpora.load("en") + corpora.load("ru")
    gen = synth.Generator(base, seed=seed, dup_rate=0.3, langs=("en", "ru"), sentences=(40, 72))
    gen.count = len(
        gen.base
    )  # collages and their edited copies only (the corpus documents are short)
    return gen


def warm_up(path: Path, gen: synth.Generator) -> None:
    """Index a few documents of ``gen`` (another seed than the measured stream's) into a
    throwaway index first, so that loading (in a fresh install, compiling) the compiled
    loops is not timed as ingest."""
    docs = [s.doc for s in gen.take(300)]
    with NearDup.open(str(path), Config()) as nd:
        nd.index(docs, batch_size=100, tag=True)
    for s in ("", "-wal", "-shm"):
        if os.path.exists(f"{path}{s}"):
            os.remove(f"{path}{s}")


def run(
    sizes: list[int],
    queries: int,
    seed: int,
    db: Path,
    budget_s: float,
    nton_at: int | None,
    nton_threshold: float,
    dump: Path | None,
    log=print,
    long: bool = False,
) -> dict:
    gen = long_generator(seed) if long else synth.Generator(base_documents(), seed=seed)
    for s in ("", "-wal", "-shm"):
        if os.path.exists(f"{db}{s}"):
            os.remove(f"{db}{s}")
    warm_up(
        db.with_name(db.name + ".warm"),
        long_generator(seed + 1) if long else synth.Generator(base_documents(), seed=seed + 1),
    )
    nd = NearDup.open(str(db), Config())
    nd.query("warm up the canonicalizer and the stop lists")
    out: dict = {
        "config": json.loads(nd.config.to_json()),
        "checkpoints": [],
        "seed": seed,
        "sqlite": db_bytes(db),
        "documents": "long (~550 words, en/ru)"
        if long
        else "synthetic stream (corpora, then 3-9 sentence collages)",
    }
    feed = _Feed(gen)
    counter = CandidateCount(nd.engine)
    done = 0
    t_start = time.perf_counter()
    for size in sorted(sizes):
        counter.take()  # the checkpoint's queries before are not ingest
        seg_start, seg_cpu = time.perf_counter(), time.process_time()
        text_before = feed.text_bytes
        rep = nd.index(
            feed.take(size - done, deadline=t_start + budget_s), batch_size=500, tag=True
        )
        seg_s, seg_cpu = time.perf_counter() - seg_start, time.process_time() - seg_cpu
        n_cands, n_simhash_only = counter.take()
        done += rep.indexed + len(rep.failed)
        nd.engine.refresh()
        n = nd.count()
        cp: dict = {
            "size": n,
            "target": size,
            "ingest": {
                "docs": rep.indexed,
                "seconds": seg_s,
                "docs_per_s": rep.indexed / seg_s if seg_s else None,
                "cpu_s": seg_cpu,
                "cpu_ms_per_doc": 1e3 * seg_cpu / max(1, rep.indexed),
                "candidates_per_doc": n_cands / max(1, rep.indexed),
                "simhash_only_candidates_per_doc": n_simhash_only / max(1, rep.indexed),
                "text_bytes_per_doc": (feed.text_bytes - text_before) / max(1, rep.indexed),
                "failed": len(rep.failed),
                "duplicates_tagged": rep.duplicates,
                "load_average": os.getloadavg()[0],
            },
        }
        as_indexed = db_bytes(db)
        # the winnowing postings follow behind: the first containment query adds them; the
        # size reported has them (what a user of containment queries has)
        t0 = time.perf_counter()
        nd.query(gen.query("c0", random.Random(n)).doc.text, mode="containment", threshold=0.5)
        first_containment_s = time.perf_counter() - t0
        nd.engine.refresh()
        size_bytes = db_bytes(db)
        cp["index"] = {
            "db_bytes": size_bytes,
            "text_bytes": feed.text_bytes,
            "bytes_per_doc": size_bytes / n,
            "bytes_per_doc_beyond_text": (size_bytes - feed.text_bytes) / n,
            "bytes_per_doc_by_table": table_bytes(db, n),
            "bytes_per_doc_beyond_text_as_indexed": (as_indexed - feed.text_bytes) / n,
            **page_usage(db, n),
            "first_containment_query_s": first_containment_s,
        }
        qrng = random.Random(seed * 1_000_003 + n)
        qs = [gen.query(f"q{i}", qrng) for i in range(queries)]
        lat, hits = [], 0
        for q in qs:
            t = time.perf_counter()
            m = nd.query(q.doc.text)
            lat.append(time.perf_counter() - t)
            hits += bool(m)
        cp["query"] = {**percentiles(lat), "queries_with_a_match": hits}
        if nton_at is not None and n < nton_at:
            t0 = time.perf_counter()
            nd.clusters(nton_threshold, write=False)
            cp["nton"] = {"threshold": nton_threshold, "clusters_s": time.perf_counter() - t0}
        if nton_at is not None and n == nton_at:
            cp["nton"] = nton(nd, nton_threshold, dump, log)
            if dump is not None:  # lets the caller score the peers while this process goes on
                info = {
                    **cp["nton"],
                    "size": n,
                    "ingest_s": sum(c["ingest"]["seconds"] for c in out["checkpoints"]) + seg_s,
                }
                (dump / "nton.json").write_text(json.dumps(info))
        cp["peak_rss_mb"] = peak_rss_mb()
        cp["rss_mb"] = rss_mb()
        cp["elapsed_s"] = time.perf_counter() - t_start
        out["checkpoints"].append(cp)
        ing, qry = cp["ingest"], cp["query"]
        log(
            f"engine: {n:,} docs, ingest {ing['docs_per_s']:.0f} docs/s "
            f"({ing['cpu_ms_per_doc']:.2f} ms CPU/doc, {ing['candidates_per_doc']:.2f} "
            f"candidates/doc), query p50 {qry['p50_ms']:.2f} ms p99 {qry['p99_ms']:.2f} ms, "
            f"{cp['index']['bytes_per_doc_beyond_text']:.0f} B/doc beyond text"
        )
        if feed.cut:
            out["budget_exhausted"] = {"budget_s": budget_s, "reached": n, "wanted": size}
            log(f"engine: time budget of {budget_s:.0f} s used up at {n} documents (wanted {size})")
            break
    nd.close()
    return out


def nton(nd: NearDup, t: float, dump: Path | None, log=print) -> dict:
    """Verified N-to-N pairs and clusters; the shingle sets are dumped for the ground truth."""
    log(f"engine: N-to-N at {nd.count()} documents, threshold {t}")
    t0 = time.perf_counter()
    pairs = nd.pairs(t)
    t_pairs = time.perf_counter() - t0
    t0 = time.perf_counter()
    clusters = nd.clusters(t, write=False)
    t_clusters = time.perf_counter() - t0
    res = {
        "threshold": t,
        "pairs_s": t_pairs,
        "clusters_s": t_clusters,
        "pairs": len(pairs),
        "clusters": len(clusters),
    }
    if dump is not None:
        dump.mkdir(parents=True, exist_ok=True)
        ids, sets = [], []
        for d in nd.engine.scan(batch_size=5000):
            ids.append(d.id)
            sets.append(d.shingles)
        exchange.write_hashes(dump / "sets.npz", sets)
        (dump / "ids.json").write_text(json.dumps(ids))
        (dump / "pairs.json").write_text(json.dumps([[p.a, p.b, p.resemblance] for p in pairs]))
        (dump / "clusters.json").write_text(json.dumps([c.members for c in clusters]))
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.engine", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--db", type=Path, default=None)
    ap.add_argument(
        "--budget", type=float, default=900.0, help="seconds; ingest stops when they are used up"
    )
    ap.add_argument("--nton-at", type=int, default=None)
    ap.add_argument("--nton-threshold", type=float, default=0.8)
    ap.add_argument("--dump", type=Path, default=None)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--no-table", action="store_true", help="write the JSON only")
    ap.add_argument(
        "--long",
        action="store_true",
        help="documents of about 550 words (en/ru collages, 30%% edited copies)",
    )
    a = ap.parse_args(argv)
    keep_freed_memory()  # as neardup's command line runs (neardup.runtime.allocator)
    sizes = [int(x) for x in a.sizes.split(",") if x]
    from .provenance import provenance

    prov = {
        "command": "python -m benchmarks.engine "
        + " ".join(sys.argv[1:] if argv is None else argv),
        **provenance(),
    }
    with tempfile.TemporaryDirectory(prefix="neardup-engine-") as tmp:
        db = a.db or Path(tmp) / "bench.db"
        res = run(
            sizes,
            a.queries,
            a.seed,
            db,
            a.budget,
            a.nton_at,
            a.nton_threshold,
            a.dump,
            log=lambda m: print(m, file=sys.stderr, flush=True),
            long=a.long,
        )
    res = {**res, **prov}
    a.out.write_text(json.dumps(res, indent=1))
    if a.no_table:
        return 0
    from rich.console import Console

    from . import report

    report.print_tables(
        {"engine": res, "targets": report.targets({"engine": res})},
        Console(width=None if sys.stdout.isatty() else 160),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
