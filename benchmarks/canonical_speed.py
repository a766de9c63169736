"""Canonicalization speed: documents per second of ``Canonicalizer(Config()).canonicalize``.

    python -m benchmarks.canonical_speed [--docs 600] [--repeat 3]

Times (CPU time of this process, steadier than wall time on a shared machine) the first ``--docs``
documents of fa.jsonl, ru.jsonl and en.jsonl of the shared corpora (``$NEARDUP_CORPORA``, default
/work/shared/corpora) after a warm-up pass (imports, hazm, caches), best of ``--repeat`` runs. Only
the public API is used, so the same script times an older checkout (``PYTHONPATH=<old>/plugin``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import time
from pathlib import Path

from neardup.canonical import Canonicalizer
from neardup.config import Config


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=600)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    folder = Path(os.environ.get("NEARDUP_CORPORA", "/work/shared/corpora"))
    canon = Canonicalizer(Config())
    out = {}
    for lang in ("fa", "ru", "en"):
        with open(folder / f"{lang}.jsonl", encoding="utf-8") as f:
            texts = [json.loads(line)["text"] for line in itertools.islice(f, args.docs)]
        for t in texts:
            canon.canonicalize(t, lang)
        best = min(_timed(canon, texts, lang) for _ in range(args.repeat))
        out[lang] = {
            "docs": len(texts),
            "seconds": round(best, 3),
            "docs_per_s": round(len(texts) / best, 1),
        }
    print(json.dumps(out))


def _timed(canon: Canonicalizer, texts: list[str], lang: str) -> float:
    t0 = time.process_time()
    for t in texts:
        canon.canonicalize(t, lang)
    return time.process_time() - t0


if __name__ == "__main__":
    main()
