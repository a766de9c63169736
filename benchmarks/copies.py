"""One text copied many times: indexing cost beside a collection of distinct documents.

    python -m benchmarks.copies                    # 10,000 and 100,000 copies, embedded engine
                                                   # (about 10 minutes on 2 cores)
    python -m benchmarks.copies --quick            # 1,000 copies (CI smoke run)
    python -m benchmarks.copies --url http://localhost:9200 --sizes 10000   # a real engine

For each size N and each corpus the copied text comes from (English, Persian and Russian
at the smallest size, English at the larger ones), three collections of 2N
documents are indexed, each into a new index, each in a fresh process (``NearDup.index``,
batches of 500):

* **distinct**: 2N distinct documents: collages of 12-20 real sentences of the shared corpora
  (:mod:`benchmarks.synth`, no edited copies);
* **exact**: N of those distinct documents, and between each two a copy of one document of
  the corpus (of ``en.jsonl``, ``fa.jsonl`` or ``ru.jsonl``, the one whose length is nearest
  the collages', ``COPIED_CHARS``);
* **edited**: the same, each copy with two of its words replaced by other words of the
  corpus (every copy resembles the first at >= the threshold).

The cluster rule compares a document with earlier representatives only, so the copies should
cost no more than distinct documents: the target is a time and peak-memory ratio
copies/distinct within 2 (``TARGET_RATIO``). Peak memory is the child process's maximum
resident set (VmHWM); the documents are read from a file as they are indexed.
The copied text's length is in ``copied_chars``. The table and ``copies.json`` (``--out``,
default ``benchmarks/results``) carry the date, machine and commit.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from neardup.signing.records import Document

from .corpora import load, load_all
from .provenance import provenance, provenance_line
from .synth import Generator
from .wholepath_stages import peak_rss_mb

HERE = Path(__file__).resolve().parent
TARGET_RATIO = 2.0
KINDS = ("distinct", "exact", "edited")
#: Sentences of a distinct document (a collage), about 1,300 characters on average.
SENTENCES = (12, 20)
#: The length of the copied text: about that of the collages, so that a copy costs what a
#: distinct document costs to read and sign; two words changed in about 200 leave each
#: edited copy at r >= 0.8 of the first.
COPIED_CHARS = 1300
#: The corpora the copied text comes from.
SOURCES = ("en", "fa", "ru")


def collection(n: int, kind: str, source: str, seed: int = 7) -> list[dict[str, Any]]:
    """The 2n documents of one case (see the module docstring), as JSON records."""
    base = [d for docs in load_all().values() for d in docs]
    gen = Generator(base, seed=seed, dup_rate=0.0, sentences=SENTENCES)
    gen.count = len(gen.base)  # collages only: the corpus documents are not in the stream
    one = copied_text(source)
    words = [w for w in one.text.split() if len(w) > 2]
    rng = random.Random(seed)
    out = []
    for i in range(2 * n):
        if kind == "distinct" or i % 2 == 0:
            d = next(gen).doc
            out.append({"id": f"d{i}", "text": d.text})
            continue
        text = one.text
        if kind == "edited":
            ws = text.split()
            for _ in range(2):
                ws[rng.randrange(len(ws))] = rng.choice(words)
            text = " ".join(ws)
        out.append({"id": f"c{i}", "text": text, "lang": one.lang})
    return out


def copied_text(source: str) -> Document:
    """The document of corpus ``source`` copied: the one whose length is nearest
    :data:`COPIED_CHARS`, so that the copies are as long as the distinct documents."""
    return min(load(source), key=lambda d: (abs(len(d.text) - COPIED_CHARS), d.id))


def child(path: str, target: str, index: str | None) -> dict[str, Any]:
    """Index the records of ``path`` into ``target`` (this process): seconds, peak memory."""
    from neardup import Document, NearDup

    opts = {"index": index} if index else {}
    t0 = time.perf_counter()
    with open(path, encoding="utf-8") as f, NearDup.open(target, **opts) as nd:
        # read as indexed: the peak is the index's, not the file's held in memory
        docs = (Document(r["id"], r["text"], lang=r.get("lang")) for r in map(json.loads, f))
        report = nd.index(docs, progress=None)
    seconds = time.perf_counter() - t0
    peak = peak_rss_mb()  # (VmHWM: ru_maxrss keeps the parent's peak across exec)
    return {
        "seconds": seconds,
        "peak_mb": peak,
        "documents": report.indexed,
        "duplicates": report.duplicates,
    }


def measure(n: int, kind: str, source: str, url: str | None, tmp: Path) -> dict[str, Any]:
    """One case in a fresh process."""
    path = tmp / f"{kind}-{source}-{n}.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for r in collection(n, kind, source):
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    index = f"neardup-bench-copies-{kind}-{source}-{n}" if url else None
    target = url or str(tmp / f"{kind}-{source}-{n}.db")
    code = (
        "import json, sys; from benchmarks.copies import child; "
        "print(json.dumps(child(sys.argv[1], sys.argv[2], sys.argv[3] or None)))"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parent), *sys.path]))
    p = subprocess.run(
        [sys.executable, "-c", code, str(path), target, index or ""],
        cwd=HERE.parent,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    path.unlink()
    if p.returncode != 0:
        raise RuntimeError(f"{kind} {source} {n}: the child exited {p.returncode}: {p.stderr}")
    if url and index:
        _delete_index(url, index)
    return json.loads(p.stdout.strip().splitlines()[-1])


def _delete_index(url: str, index: str) -> None:
    """Remove the benchmark's own index, and those neardup made beside it, from ``url``."""
    names = ",".join([index, f"{index}-clusters", f"{index}-neardup-state"])
    req = urllib.request.Request(
        f"{url.rstrip('/')}/{names}?ignore_unavailable=true", method="DELETE"
    )
    with urllib.request.urlopen(req, timeout=120):
        pass


def run(sizes: list[int], sources: list[str], url: str | None, log=print) -> dict[str, Any]:
    """Every case; ratios copies/distinct per (size, source). The smallest size copies a
    text of each of ``sources``, the larger ones of the first alone."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="neardup-copies-") as tmp:
        for n in sizes:
            for source in sources if n == min(sizes) else sources[:1]:
                got = {}
                for kind in KINDS:
                    got[kind] = measure(n, kind, source, url, Path(tmp))
                    log(f"copies: {n:,} {source} {kind}: {got[kind]}")
                for kind in KINDS[1:]:
                    rows.append(
                        {
                            "copies": n,
                            "documents": 2 * n,
                            "source": source,
                            "kind": kind,
                            "engine": "http" if url else "embedded",
                            "copied_chars": len(copied_text(source).text),
                            "distinct": got["distinct"],
                            "copied": got[kind],
                            "time_ratio": got[kind]["seconds"] / got["distinct"]["seconds"],
                            "memory_ratio": got[kind]["peak_mb"] / got["distinct"]["peak_mb"],
                        }
                    )
    met = all(max(r["time_ratio"], r["memory_ratio"]) <= TARGET_RATIO for r in rows)
    return {"rows": rows, "target_ratio": TARGET_RATIO, "met": met}


def table(res: dict[str, Any]) -> Table:
    t = Table(title=f"One text copied N times beside N distinct documents ({provenance_line(res)})")
    for c in ("copies", "copied from", "copies are", "engine", "distinct s", "copies s"):
        t.add_column(c, justify="right")
    for c in ("time ratio", "distinct MB", "copies MB", "memory ratio"):
        t.add_column(c, justify="right")
    for r in res["rows"]:
        t.add_row(
            f"{r['copies']:,}",
            r["source"],
            r["kind"],
            r["engine"],
            f"{r['distinct']['seconds']:.1f}",
            f"{r['copied']['seconds']:.1f}",
            f"{r['time_ratio']:.2f}",
            f"{r['distinct']['peak_mb']:.0f}",
            f"{r['copied']['peak_mb']:.0f}",
            f"{r['memory_ratio']:.2f}",
        )
    return t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.copies", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--quick", action="store_true", help="1,000 copies, English only (CI)")
    ap.add_argument("--sizes", default=None, help="copies, comma-separated (default 10000,100000)")
    ap.add_argument("--sources", default=None, help="corpora of the copied text (default en,fa,ru)")
    ap.add_argument("--url", default=None, help="an Elasticsearch/OpenSearch URL (else embedded)")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    a = ap.parse_args(argv)
    sizes = [1000] if a.quick else [10_000, 100_000]
    if a.sizes:
        sizes = [int(x) for x in a.sizes.split(",") if x.strip()]
    sources = ["en"] if a.quick else list(SOURCES)
    if a.sources:
        sources = [x for x in a.sources.split(",") if x.strip()]
    console = Console(stderr=True)
    res = {
        "command": "python -m benchmarks.copies " + " ".join(argv or sys.argv[1:]),
        **provenance(),
        **run(sizes, sources, a.url, log=console.log),
    }
    a.out.mkdir(parents=True, exist_ok=True)
    out = a.out / "copies.json"
    out.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    Console(width=200).print(table(res))
    console.log(f"wrote {out}; target (ratios within {TARGET_RATIO}) met: {res['met']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
