"""Interrupted runs and arrival order, on both engines.

Ctrl-C (SIGINT to the whole process group, as a terminal sends it) at several moments of a
``neardup index`` subprocess: no traceback, no hang, what is stored is a prefix of the input
(in first-occurrence order), and running the same command again gives exactly the one-run
index (arrival numbers and tags). Arrival order is the order of first occurrences whatever
the batch size and the number of signing workers.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from neardup.api import NearDup

from .test_hardening import WORDS, eargs, prepare

from .corpora import NEARDUP_PATH

ROOT = Path(__file__).resolve().parents[1]


def _records(n: int, seed: int = 7) -> list[dict]:
    """``n`` records: families of near-duplicates, and ids repeated later with another text."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        fam = random.Random(i // 4)
        words = [fam.choice(WORDS) + str(fam.randrange(30)) for _ in range(50)]
        if i % 4:
            words[rnd.randrange(50)] = f"edit{i}"
        out.append({"id": f"d{i}", "text": " ".join(words)})
        if i % 97 == 50:  # an earlier id again, with the text of another family
            j = rnd.randrange(i)
            out.append({"id": f"d{j}", "text": " ".join(words[::-1])})
    return out


def _first_order(records: list[dict]) -> list[str]:
    return list(dict.fromkeys(r["id"] for r in records))


def _snapshot(target: str, opts: dict) -> list[tuple]:
    """(id, seq, tags) of every stored document, in arrival order."""
    nd = NearDup.open(target, create=False, **opts)
    try:
        nd.engine.refresh()
        return [(r.id, r.seq, r.tags) for r in nd.engine.scan_tags()]
    finally:
        nd.close()


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "neardup.cli", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(NEARDUP_PATH)}


def _index_args(path: Path, target: str, opts: dict, batch_size: int, workers: int) -> list[str]:
    return [
        "index",
        str(path),
        *eargs(target, opts),
        "--batch-size",
        str(batch_size),
        "-j",
        str(workers),
        "-q",
    ]


@pytest.mark.parametrize("workers", [0, 2])
def test_ctrl_c_at_any_moment_leaves_a_prefix_and_resuming_gives_the_one_run_index(
    engine_target, tmp_path, workers
):
    target, opts = engine_target
    records = _records(1500 if opts else 4000)  # (an HTTP engine takes longer per batch)
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    order = _first_order(records)

    # the one-run index, in its own place; a first run (the compiled loops' cache warm), then
    # the time of a run that indexes one record: what the process takes before it indexes
    one = (str(tmp_path / "one.db"), {}) if not opts else (target, {**opts, "index": "one"})
    prepare(*one)
    done = subprocess.run(
        _cli(*_index_args(path, *one, 40, workers)),
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    expected = _snapshot(*one)
    assert [i for i, _, _ in expected] == order
    single = tmp_path / "one.jsonl"
    single.write_text(json.dumps(records[0]) + "\n")
    warm = (str(tmp_path / "warm.db"), {}) if not opts else (target, {**opts, "index": "warm"})
    prepare(*warm)
    t0 = time.monotonic()
    subprocess.run(
        _cli(*_index_args(single, *warm, 40, workers)),
        env=_env(),
        capture_output=True,
        timeout=300,
        check=True,
    )
    startup = time.monotonic() - t0
    warm2 = (str(tmp_path / "warm2.db"), {}) if not opts else (target, {**opts, "index": "warm2"})
    prepare(*warm2)
    t0 = time.monotonic()
    subprocess.run(
        _cli(*_index_args(path, *warm2, 40, workers)),
        env=_env(),
        capture_output=True,
        timeout=300,
        check=True,
    )
    took = time.monotonic() - t0

    interrupted, seen = 0, []
    for k, frac in enumerate((0.03, 0.12, 0.25, 0.45)):
        at = startup + frac * max(0.1, took - startup)  # inside the indexing, past the start
        run_target, run_opts = (
            (str(tmp_path / f"run{k}.db"), {})
            if not opts
            else (target, {**opts, "index": f"run{k}"})
        )
        prepare(run_target, run_opts)
        args = _cli(*_index_args(path, run_target, run_opts, 40, workers))
        p = subprocess.Popen(
            args,
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        time.sleep(at)
        os.killpg(p.pid, signal.SIGINT)  # as a terminal's Ctrl-C: to the signing workers too
        try:
            out, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            pytest.fail(f"index hung after Ctrl-C at {at:.2f} s")
        assert "Traceback" not in err and "Error" not in err, err
        # (-SIGINT: the signal came before the interpreter had started, and did nothing)
        assert p.returncode in (0, 130) or (p.returncode == -signal.SIGINT and not err), (
            p.returncode,
            err,
        )
        seen.append((round(at, 2), p.returncode))
        if p.returncode == 130:
            interrupted += 1
            assert "run the same command again" in err
        stored = _snapshot(run_target, run_opts)
        ids = [i for i, _, _ in stored]
        assert ids == order[: len(ids)], f"not a prefix of the input after Ctrl-C at {at:.2f} s"
        again = subprocess.run(args, env=_env(), capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr
        assert _snapshot(run_target, run_opts) == expected
    assert interrupted >= 2, (startup, took, seen)  # the moments fell inside the runs


@pytest.mark.parametrize("batch_size", [1, 7, 500])
@pytest.mark.parametrize("workers", [0, 2])
def test_arrival_order_is_first_occurrence_whatever_the_batch_size(
    engine_target, tmp_path, batch_size, workers
):
    target, opts = engine_target
    records = _records(300, seed=batch_size)
    records += [
        {"id": "d3", "text": records[0]["text"]},
        {"id": "d0", "text": "a new text for d0 " + records[5]["text"]},
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    prepare(target, opts)
    r = subprocess.run(
        _cli(*_index_args(path, target, opts, batch_size, workers)),
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    got = _snapshot(target, opts)
    assert [i for i, _, _ in got] == _first_order(records)
    # the content is the last occurrence's, tagged as if it had always read so: the same
    # tags as an index of the deduplicated input in first-occurrence order
    last = {rec["id"]: rec for rec in records}
    dedup = tmp_path / "dedup.jsonl"
    dedup.write_text("".join(json.dumps(last[i]) + "\n" for i in _first_order(records)))
    ref = (str(tmp_path / "ref.db"), {}) if not opts else (target, {**opts, "index": "ref"})
    prepare(*ref)
    r = subprocess.run(
        _cli(*_index_args(dedup, *ref, 500, 0)),
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert got == _snapshot(*ref)
