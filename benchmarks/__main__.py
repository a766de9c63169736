"""neardup against its peers, in one run on the same texts.

    python -m benchmarks                 # full run (about 30 minutes on 2 cores)
    python -m benchmarks --quick         # smoke run for CI (under 3 minutes)
    python -m benchmarks --sizes 10000,100000 --out /tmp/bench

Writes ``latest.json`` and ``scaling.png`` to ``--out`` (default ``benchmarks/results``) and
prints the tables. The engine run (ingest, queries, N-to-N) goes on in a second process
while this one measures signing and candidate quality.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from rich.console import Console  # noqa: E402

from neardup.runtime.allocator import keep_freed_memory  # noqa: E402

from . import candidates, copies, corpora, nton, peers, provenance, report, signing  # noqa: E402
from . import wholepath, wholepath_peers  # noqa: E402

HERE = Path(__file__).resolve().parent

MODES = {
    "quick": dict(
        sign_docs=150,
        repeat=1,
        cand_docs=1500,
        sizes=[3000, 6000],
        queries=200,
        nton_at=6000,
        budget=75.0,
        heavy=False,
        wholepath_docs=1000,
        wholepath_repeat=1,
        copies=[1000],
    ),
    "full": dict(
        sign_docs=1000,
        repeat=2,
        cand_docs=12000,
        sizes=[10_000, 100_000, 1_000_000],
        queries=1000,
        nton_at=100_000,
        budget=840.0,
        heavy=True,
        wholepath_docs=11_380,
        wholepath_repeat=2,
        copies=[10_000, 100_000],
    ),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    ap.add_argument(
        "--quick", action="store_true", help="small sizes, light peers only (CI smoke run)"
    )
    ap.add_argument(
        "--sizes",
        default=None,
        help="engine collection sizes, comma-separated (default: full 10000,100000,1000000)",
    )
    ap.add_argument(
        "--out", type=Path, default=HERE / "results", help="folder for latest.json and scaling.png"
    )
    ap.add_argument("--no-peers", action="store_true", help="measure neardup alone")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--engine-budget",
        type=float,
        default=None,
        help="seconds of engine ingest before it stops growing the collection",
    )
    a = ap.parse_args(argv)
    # as neardup's command line and workers run (neardup.runtime.allocator); the peers'
    # processes are their own
    keep_freed_memory()
    mode = dict(MODES["quick" if a.quick else "full"])
    if a.sizes:
        mode["sizes"] = sorted(int(x) for x in a.sizes.split(",") if x.strip())
        mode["nton_at"] = min(mode["sizes"], key=lambda s: abs(s - 100_000))
    if a.engine_budget:
        mode["budget"] = a.engine_budget
    a.out.mkdir(parents=True, exist_ok=True)
    console = Console(stderr=True)
    log = lambda m: console.log(m)  # noqa: E731
    started = time.perf_counter()
    res: dict = {
        "command": "python -m benchmarks "
        + " ".join(shlex.quote(x) for x in (argv if argv is not None else sys.argv[1:])),
        "mode": "quick" if a.quick else "full",
        "settings": mode,
        **provenance.provenance(),
    }
    docs = corpora.load_all()
    use_peers = not a.no_peers
    if use_peers:
        try:
            res["peers"] = peers.ensure(with_heavy=mode["heavy"], log=log)
        except Exception as e:
            res["peers"] = {"error": str(e)}
            use_peers = False
            log(f"[red]peers unavailable, measuring neardup alone: {e}")
    with_text_dedup = use_peers and peers.has("text-dedup")

    with tempfile.TemporaryDirectory(prefix="neardup-bench-") as tmp:
        tmp = Path(tmp)
        eng_out = tmp / "engine.json"
        cmd = [
            sys.executable,
            "-m",
            "benchmarks.engine",
            "--sizes",
            ",".join(map(str, mode["sizes"])),
            "--queries",
            str(mode["queries"]),
            "--seed",
            str(a.seed),
            "--budget",
            str(mode["budget"]),
            "--nton-at",
            str(mode["nton_at"]),
            "--out",
            str(eng_out),
            "--db",
            str(tmp / "bench.db"),
            "--no-table",
        ]
        log(f"engine process: sizes {mode['sizes']}, budget {mode['budget']:.0f} s")
        eng = subprocess.Popen(
            cmd,
            cwd=HERE.parent,
            env=dict(
                os.environ,
                PYTHONPATH=str(HERE.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""),
            ),
        )

        t0 = time.perf_counter()
        res["signing"] = signing.run(docs, mode["sign_docs"], mode["repeat"], use_peers, log)
        res["signing"]["seconds"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        res["candidates"] = candidates.run(docs, mode["cand_docs"], a.seed, use_peers, log)
        res["candidates"]["seconds"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        res["nton"] = nton.run(mode["nton_at"], 0.8, a.seed, use_peers, with_text_dedup, log)
        res["nton"]["seconds_total"] = time.perf_counter() - t0
        rc = eng.wait()
        if rc == 0 and eng_out.exists():
            res["engine"] = json.loads(eng_out.read_text())
        else:
            res["engine"] = {"error": f"the engine process exited with {rc}"}
        # after the engine process: the whole path is timed with nothing else of this run beside it
        t0 = time.perf_counter()
        try:
            chosen = tuple(
                p
                for p in wholepath_peers.PEERS
                if use_peers and (with_text_dedup or p != "text_dedup")
            )
            res["wholepath"] = wholepath.run(
                mode["wholepath_docs"], mode["wholepath_repeat"], log=log, tmp=tmp, peers=chosen
            )
        except Exception as e:  # a failing peer or child is reported in its row
            res["wholepath"] = {"error": str(e)}
        res["wholepath"]["seconds_total"] = time.perf_counter() - t0
    # one text copied many times (benchmarks/copies.py), each case in its own process
    t0 = time.perf_counter()
    sources = ["en"] if a.quick else list(copies.SOURCES)
    res["copies"] = copies.run(mode["copies"], sources, None, log=log)
    res["copies"]["seconds_total"] = time.perf_counter() - t0
    res["targets"] = report.targets(res)
    res["runtime_s"] = time.perf_counter() - started
    out_json = a.out / "latest.json"
    report.write_json(res, out_json)
    png = a.out / "scaling.png"
    sep = a.out / "engine-1m.json"
    report.plot(res, png, json.loads(sep.read_text()) if sep.exists() else None)
    report.print_tables(res, Console(width=None if sys.stdout.isatty() else 200))
    Console(width=200).print(copies.table({**res, **res["copies"]}))
    log(f"wrote {out_json} and {png} in {res['runtime_s']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
