"""Ingest time of the embedded engine against the batch size, as the index grows.

Each batch is one SQLite transaction, and a batch's signature keys land on postings pages all
over the index, so the batch size sets how often those pages are written again. This
measures it: the same synthetic documents (:mod:`benchmarks.synth`, the engine benchmark's
stream) indexed into a new index once per batch size, in one process each (clean peak RSS),
with the time of every slice of ``--slice`` documents.

    python -m benchmarks.batches                  # 100,000 documents, batches of 500 and 4,000
    python -m benchmarks.batches --docs 20000 --sizes 500,1000,2000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def child(docs: int, batch_size: int, slice_: int, db: Path, seed: int) -> dict[str, Any]:
    """Index ``docs`` synthetic documents in slices; seconds at the end of each slice."""
    from neardup.api import NearDup

    from . import synth
    from .engine import base_documents, peak_rss_mb

    gen = synth.Generator(base_documents(), seed=seed)
    stream = [next(gen).doc for _ in range(docs)]
    marks = []
    t0 = time.perf_counter()
    with NearDup.open(str(db)) as nd:
        for lo in range(0, docs, slice_):
            nd.index(stream[lo : lo + slice_], batch_size=batch_size)
            marks.append({"docs": min(docs, lo + slice_), "seconds": time.perf_counter() - t0})
    return {"batch_size": batch_size, "marks": marks, "peak_rss_mb": peak_rss_mb()}


def run(docs: int, sizes: list[int], slice_: int, seed: int = 7) -> list[dict[str, Any]]:
    out = []
    with tempfile.TemporaryDirectory(prefix="neardup-batches-") as d:
        for bs in sizes:
            db = Path(d) / f"b{bs}.db"
            p = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "benchmarks.batches",
                    "--child",
                    str(docs),
                    str(bs),
                    str(slice_),
                    str(db),
                    str(seed),
                ],
                cwd=HERE.parent,
                capture_output=True,
                text=True,
            )
            if p.returncode != 0:
                raise RuntimeError(f"batch size {bs} failed: {p.stderr[-2000:]}")
            out.append(json.loads(p.stdout.strip().splitlines()[-1]))
    return out


def table(results: list[dict[str, Any]]) -> str:
    cols = [r["batch_size"] for r in results]
    lines = [
        "| documents | " + " | ".join(f"batches of {c:,}: s (slice s)" for c in cols) + " |",
        "|---:|" + "---:|" * len(cols),
    ]
    for i, m in enumerate(results[0]["marks"]):
        cells = []
        for r in results:
            s = r["marks"][i]["seconds"]
            prev = r["marks"][i - 1]["seconds"] if i else 0.0
            cells.append(f"{s:.1f} ({s - prev:.1f})")
        lines.append(f"| {m['docs']:,} | " + " | ".join(cells) + " |")
    lines.append("| peak RSS MB | " + " | ".join(f"{r['peak_rss_mb']:.0f}" for r in results) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        docs, bs, slice_, db, seed = argv[1:6]
        print(json.dumps(child(int(docs), int(bs), int(slice_), Path(db), int(seed))))
        return 0
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.batches", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--sizes", default="500,4000", help="batch sizes, comma-separated")
    ap.add_argument(
        "--slice", dest="slice_", type=int, default=25_000, help="documents per timed slice"
    )
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=None, help="JSON file for the results")
    a = ap.parse_args(argv)
    res = run(a.docs, [int(x) for x in a.sizes.split(",")], a.slice_, a.seed)
    print(table(res))
    if a.out:
        a.out.write_text(json.dumps({"docs": a.docs, "results": res}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
