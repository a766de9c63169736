"""Memory is bounded by a stated multiple of the largest document, for every command that
reads documents: from an index whose largest document is a fifth as long, its peak resident
memory grows by at most :data:`BYTES_PER_CHARACTER` per character the largest document
gained (compare holds both of its documents, report the pair it explains). Both indices hold
documents long enough to load every code path, so what grows is what the length costs."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from .test_hardening import eargs, prepare

from .corpora import NEARDUP_PATH

ROOT = Path(__file__).resolve().parents[1]

#: The stated bound (docs/errors-and-limits.md): bytes of resident memory per character of
#: the largest document, beyond a fixed base.
BYTES_PER_CHARACTER = 64

COMMANDS = (
    ["compare", "--ids", "A", "B"],
    ["compare", "--ids", "A", "B", "--json"],
    ["show", "A"],
    ["query", "--id", "A"],
    ["search", "w17x"],
    ["search", "w17x", "--dedupe"],
    ["export", "-o", os.devnull],
    ["clusters"],
    ["info"],
)


def _peak_kb(args: list[str], cwd: Path) -> int:
    """Peak resident memory (KiB) of the command line run with ``args``."""
    env = {**os.environ, "PYTHONPATH": str(NEARDUP_PATH)}
    p = subprocess.Popen(
        [sys.executable, "-m", "neardup.cli", *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(p.pid, 0)
    err = p.stderr.read().decode() if p.stderr else ""
    p.returncode = os.waitstatus_to_exitcode(status)
    assert p.returncode == 0, (args, err)
    return usage.ru_maxrss


def _pair(words: int, seed: int = 3) -> list[dict]:
    rnd = random.Random(seed)
    vocab = [f"w{i}x" for i in range(20000)]
    a = " ".join(rnd.choice(vocab) for _ in range(words))
    b = a[: len(a) // 2] + " changed here " + a[len(a) // 2 :]
    return [{"id": "A", "text": a}, {"id": "B", "text": b}]


def test_every_command_stays_within_the_stated_multiple_of_the_largest_document(
    engine_target, tmp_path
):
    target, opts = engine_target
    big, small = _pair(150_000), _pair(30_000)
    chars = max(len(r["text"]) for r in big) - max(len(r["text"]) for r in small)
    sizes = {}
    for name, records in (("small", small), ("big", big)):
        t, o = (str(tmp_path / f"{name}.db"), {}) if not opts else (target, {**opts, "index": name})
        prepare(t, o)
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        env = {**os.environ, "PYTHONPATH": str(NEARDUP_PATH)}
        subprocess.run(
            [
                sys.executable,
                "-m",
                "neardup.cli",
                "index",
                str(path),
                *eargs(t, o),
                "-q",
                "-j",
                "0",
            ],
            env=env,
            check=True,
            capture_output=True,
        )
        sizes[name] = {" ".join(c): _peak_kb([*c, *eargs(t, o)], tmp_path) for c in COMMANDS}
        if not opts:
            sizes[name]["report"] = _peak_kb(
                ["report", "-o", str(tmp_path / "r.html"), "-q", *eargs(t, o)], tmp_path
            )
    allowed_kb = BYTES_PER_CHARACTER * chars / 1024
    over = {
        c: (sizes["big"][c] - sizes["small"][c])
        for c in sizes["big"]
        if sizes["big"][c] - sizes["small"][c] > allowed_kb
    }
    assert not over, (
        f"grew more than {BYTES_PER_CHARACTER} B per character for {chars:,} more characters "
        f"(KiB): {over}"
    )


@pytest.mark.parametrize("n", [1, 3])
def test_the_shared_shingles_listed_are_capped_and_the_count_is_exact(n):
    from neardup.api import NearDup
    from neardup.comparison.explain import MAX_SHARED_SHINGLES
    from neardup.signing.records import Document

    nd = NearDup.open(":memory:")
    text = " ".join(f"t{i}" for i in range(MAX_SHARED_SHINGLES * n + 10))
    cmp = nd.compare(Document("a", text), Document("b", text + " end"))
    assert cmp.intersection == MAX_SHARED_SHINGLES * n + 6
    assert len(cmp.shared_shingles) == min(MAX_SHARED_SHINGLES, cmp.intersection)
    assert cmp.shared_shingles == sorted(cmp.shared_shingles)
    nd.close()
