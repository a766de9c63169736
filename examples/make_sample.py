"""Rebuild examples/sample.jsonl, the bundled demo slice of ../shared/corpora.

The slice keeps the corpora's organic near-duplicates (license texts shared by many
packages, re-transmitted Reuters items, re-posted Persian articles, Russian news variants)
and some unrelated documents around them. Deterministic: run it again, get the same file.

    python examples/make_sample.py [CORPORA_DIR]
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from neardup import Config, Document, NearDup

HERE = Path(__file__).resolve().parent
CORPORA = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[1] / "shared" / "corpora"
MAX_WORDS = 2500


def load(name: str) -> list[dict]:
    with open(CORPORA / f"{name}.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def title_of(rec: dict) -> str:
    meta = rec.get("meta") or {}
    if meta.get("title"):
        return meta["title"]
    if meta.get("packages"):
        pk = meta["packages"]
        pk = json.loads(pk.replace("'", '"')) if isinstance(pk, str) else pk
        return "license of " + ", ".join(p.split(":", 1)[-1] for p in pk[:3])
    first = rec["text"].strip().splitlines()[0]
    return first[:80]


def pick(name: str, clustered: int, singles: int, rng: random.Random) -> list[dict]:
    recs = [r for r in load(name) if len(r["text"].split()) <= MAX_WORDS]
    nd = NearDup.open(":memory:", Config(threshold=0.5))
    nd.index((Document(r["id"], r["text"], lang=r.get("lang")) for r in recs), progress=None)
    clusters = nd.clusters(write=False)
    chosen: list[str] = []
    for c in clusters:
        if len(chosen) >= clustered:
            break
        chosen += c.members[:6]
    in_clusters = {m for c in clusters for m in c.members}
    rest = [r["id"] for r in recs if r["id"] not in in_clusters]
    chosen += rng.sample(rest, min(singles, len(rest)))
    by_id = {r["id"]: r for r in recs}
    return [by_id[i] for i in chosen]


def main() -> None:
    rng = random.Random(7)
    out = []
    for name, clustered, singles in (
        ("en_licenses", 40, 15),
        ("en", 30, 25),
        ("fa", 30, 25),
        ("ru", 30, 25),
    ):
        for r in pick(name, clustered, singles, rng):
            out.append(
                {
                    "id": r["id"],
                    "title": title_of(r),
                    "lang": r["lang"],
                    "text": r["text"],
                    "source": r["source"],
                }
            )
    rng.shuffle(out)
    with open(HERE / "sample.jsonl", "w", encoding="utf-8") as f:
        for r in out:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(out)} documents to {HERE / 'sample.jsonl'}")


if __name__ == "__main__":
    main()
