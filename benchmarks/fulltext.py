"""Full-text search of the embedded engine on the shared corpora: index size, ingest time,
and whether letter forms and inflections find the same documents.

    python -m benchmarks.fulltext [--docs 1000]

Indexes the first ``--docs`` documents of fa.jsonl, ru.jsonl and en.jsonl into a fresh
SQLite file and reports the bytes of the FTS5 tables (``dbstat``), the whole file, the
ingest seconds, and the hits of word pairs that should find the same documents (Arabic and
Persian letter forms) or related ones (Russian inflections). Only the public API is used, so
the same script measures an older checkout (``PYTHONPATH=<old>/plugin``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sqlite3
import tempfile
import time
from pathlib import Path

from neardup import Config, Document, NearDup

from .corpora import corpora_dir

QUERIES = ["ايران", "ایران", "كتاب", "کتاب", "дом", "домами", "файлами", "файлы", "ёлка", "елка"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=1000)
    args = ap.parse_args()
    folder = corpora_dir()
    docs = []
    for lang in ("fa", "ru", "en"):
        with open(folder / f"{lang}.jsonl", encoding="utf-8") as f:
            docs += [
                Document(r["id"], r["text"], lang=lang)
                for r in map(json.loads, itertools.islice(f, args.docs))
            ]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "ft.db"
        nd = NearDup.open(str(path), Config())
        t0 = time.perf_counter()
        nd.index(docs, progress=None, tag=False)
        ingest = time.perf_counter() - t0
        hits = {q: len(nd.search(q, size=10_000)) for q in QUERIES}
        nd.engine.refresh()
        nd.close()
        db = sqlite3.connect(path)
        fts = db.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'fts%'").fetchone()[0]
        db.close()
        out = {
            "docs": len(docs),
            "ingest_s": round(ingest, 1),
            "fts_bytes": fts,
            "file_bytes": path.stat().st_size,
            "hits": hits,
        }
    print(json.dumps(out, ensure_ascii=False))


if __name__ == "__main__":
    main()
