"""The longest accepted text: ``neardup query --file`` and ``neardup compare --ids`` of a
50,000,000-character document, each in a fresh process.

    python -m benchmarks.long_text                   # about 3 minutes on this machine
    python -m benchmarks.long_text --chars 5000000   # a tenth of the size

Document A is real text: documents of the shared corpora's ``en.jsonl`` and ``ru.jsonl``
drawn at random (seeded) and joined by newlines up to ``--chars`` characters. Document B is
A with one word in a hundred (by whitespace) replaced by another word. Both are indexed
(``neardup index``, embedded engine), then, each in a fresh process and timed from start to
exit: ``neardup query --file B --json`` (B's text against the index) and
``neardup compare --ids A B --json`` (similarities, shared shingles and passages of the
pair). The corpora hold less than 50,000,000 characters, so a long A repeats documents and
its distinct shingles level off while B's edits keep adding new ones: at full size the pair
is no longer a near-duplicate (the table gives its resemblance). The target is 60 s each at
50,000,000 characters (the accepted maximum, docs/errors-and-limits.md).

Writes ``long-text.json`` and ``long-text.md`` to ``--out`` (default ``benchmarks/results``).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .corpora import corpora_dir
from .provenance import provenance, provenance_line

HERE = Path(__file__).resolve().parent
TARGET_S = 60.0


def make_pair(chars: int, seed: int = 5) -> tuple[str, str]:
    """Document A (corpus texts joined to ``chars`` characters) and B (A with one word in
    a hundred replaced)."""
    texts = []
    for name in ("en.jsonl", "ru.jsonl"):
        with open(corpora_dir() / name, encoding="utf-8") as f:
            texts += [json.loads(line)["text"] for line in f]
    rnd = random.Random(seed)
    out, n = [], 0
    while n < chars:
        t = rnd.choice(texts)
        out.append(t)
        n += len(t) + 1
    a = "\n".join(out)[:chars]
    words = a.split(" ")
    for i in rnd.sample(range(len(words)), len(words) // 100):
        words[i] = "edited"
    return a, " ".join(words)[:chars]


def timed(args: list[str], cwd: Path) -> dict[str, Any]:
    """Wall and CPU seconds (user + system) of ``neardup ARGS`` in a fresh process, and its
    standard output as JSON."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "neardup.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "output": json.loads(p.stdout)}


def run(chars: int) -> dict[str, Any]:
    res: dict[str, Any] = {**provenance(), "chars": chars, "target_s": TARGET_S}
    a, b = make_pair(chars)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        with (d / "docs.jsonl").open("w", encoding="utf-8") as f:
            for i, text in (("a", a), ("b", b)):
                f.write(json.dumps({"id": i, "text": text}, ensure_ascii=False) + "\n")
        (d / "b.txt").write_text(b, encoding="utf-8")
        del a, b
        index = timed(["index", "docs.jsonl", "--quiet", "--json"], d)
        query = timed(["query", "--file", "b.txt", "--json"], d)
        compare = timed(["compare", "--ids", "a", "b", "--json"], d)
    res["index"] = {k: index[k] for k in ("wall_s", "cpu_s")}
    res["query"] = {
        "wall_s": query["wall_s"],
        "cpu_s": query["cpu_s"],
        "hits": [(h["id"], round(h["resemblance"], 4)) for h in query["output"]],
    }
    out = compare["output"]
    res["compare"] = {
        "wall_s": compare["wall_s"],
        "cpu_s": compare["cpu_s"],
        "resemblance": out["resemblance"],
        "shingles_a": out["shingles_a"],
        "shared_passages": len(out["shared_passages"]),
    }
    return res


def markdown(res: dict[str, Any]) -> str:
    q, c = res["query"], res["compare"]
    rows = [
        ("`neardup index` (both)", res["index"], "–", "–"),
        (
            "`neardup query --file B`",
            q,
            "hits: " + (", ".join(f"{i} at {r:.3f}" for i, r in q["hits"]) or "none"),
            f"{TARGET_S:.0f} s",
        ),
        (
            "`neardup compare --ids A B`",
            c,
            f"resemblance {c['resemblance']:.3f} over {c['shingles_a']:,} shingles, "
            f"{c['shared_passages']:,} shared passages",
            f"{TARGET_S:.0f} s",
        ),
    ]
    lines = [
        provenance_line(res),
        "",
        f"A {res['chars']:,}-character text (corpus news joined) and a copy with one word in "
        "a hundred replaced, each command in a fresh process:",
        "",
        "| command | wall | CPU | answer | target |",
        "|---|---:|---:|---|---:|",
    ]
    for name, t, answer, target in rows:
        lines.append(f"| {name} | {t['wall_s']:.1f} s | {t['cpu_s']:.1f} s | {answer} | {target} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chars", type=int, default=50_000_000)
    ap.add_argument("--out", default=str(HERE / "results"))
    args = ap.parse_args()
    res = run(args.chars)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "long-text.json").write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    (out / "long-text.md").write_text(markdown(res), encoding="utf-8")
    print(markdown(res))


if __name__ == "__main__":
    main()
