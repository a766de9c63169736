"""The user's whole path against the peers' plain pipelines, in one run.

    python -m benchmarks.wholepath                   # 11,380 documents (~550 words, en and ru,
                                                     # edited copies)
    python -m benchmarks.wholepath --docs 3000       # smaller
    python -m benchmarks.wholepath --repeat 3        # median of 3 per side, runs alternating
    python -m benchmarks.wholepath --peers datasketch_bulk,rensa,rensa_plain
    python -m benchmarks.wholepath --corpus real     # the shared corpora's documents only

Two JSONL files (``--corpus both``, the default): the **synthetic** one, English and Russian
documents of about 550 words (collages of corpus sentences, 30% edited copies of earlier
ones, a handful with a few Persian words), and the **real** one, the documents of the shared
corpora as they are (en, ru and fa: news, manuals, articles, with their organic duplicates;
:func:`build_real_corpus`). On each, in fresh processes:

* **neardup**: ``neardup index FILE`` then ``neardup clusters --json``, default options, on
  the embedded engine (the command line's own ``main``, run in a child process that times
  the stages: read, canonicalize, sign, wait for signing workers, tag, store, cluster), and
  once more with ``--workers 0`` so that every stage's whole cost shows;
* the peers (:data:`PEERS`), each the plain script a user of it would write, in its strongest
  usage named as such: read the file, Python ``\\w+`` word 5-shingles of the lower-cased text,
  128 permutations, LSH at 0.8, a query per document and union-find over the answers:
  **datasketch bulk** (``MinHash.bulk``: one set of permutations reused, an insertion
  session), **datasketch new** (a new ``MinHash`` per document), **rensa script**
  (``RMinHash.from_token_sets``, ``RMinHashLSH.insert_many`` and ``query_all``), **rensa
  plain** (the plainest script: per document a set of shingles, ``RMinHash.update`` and
  ``RMinHashLSH.insert``, then ``query`` per document) and **text-dedup** (its ``minhash``
  command; in the peers' venv, full install only). The rensa ratio is given against the
  faster of the two rensa scripts.

neardup and the benchmarks are byte-compiled first, as ``pip install`` does for a wheel.
Reported: seconds, wall (process start to exit, both commands for neardup) and CPU (user +
system of the processes and the ones they waited for: signing workers), the median of the
runs of each side, the ratios peer / neardup of those medians, the stage table, peak RSS of
each process and the clusters found. Writes ``results/wholepath.json`` and
``results/wholepath.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from .provenance import provenance as run_provenance
from .wholepath_corpus import build_corpus, build_real_corpus
from .wholepath_peers import (
    PEERS,
    child_datasketch,
    child_rensa,
    child_rensa_plain,
    child_text_dedup,
    peer_python,
)
from .wholepath_report import markdown, whole_day
from .wholepath_stages import Stages, peak_rss_mb

HERE = Path(__file__).resolve().parent


# -- child processes -----------------------------------------------------------------------------
def child_neardup(argv: list[str]) -> dict[str, Any]:
    """Run ``neardup <argv>`` (the command line's ``main``) in this process, timing its stages."""
    import io as _io
    from contextlib import redirect_stdout

    t0 = time.perf_counter()
    from neardup import api
    from neardup.io import reading as io
    from neardup.indexing import ingest
    from neardup.matching import tagging
    from neardup.signing import signer
    from neardup.canonical import canonicalizer
    from neardup.cli import indexing, main
    from neardup.engines import embedded

    chosen: list[int] = []  # the signing workers the default chose (index without --workers)
    default_workers = indexing.default_workers

    def recorded(*a: Any, **k: Any) -> int:
        chosen.append(default_workers(*a, **k))
        return chosen[-1]

    indexing.default_workers = recorded
    st = Stages()
    st.seconds["import"] = time.perf_counter() - t0
    st.cpu["import"] = time.process_time()
    st.wrap_iter(io, "read_documents", "read")
    st.wrap_iter(
        ingest, "signed_batches", "wait"
    )  # for the signing workers (what is not read, canonicalize, sign)
    st.wrap(
        canonicalizer.Canonicalizer, "canonicalize", "canonicalize"
    )  # the text steps, and tokens as strings
    st.wrap(
        canonicalizer.Canonicalizer, "spans_for_tokens", "canonicalize"
    )  # the text steps (tokens as hashes)
    st.wrap(
        canonicalizer.Canonicalizer, "languages", "canonicalize"
    )  # and the languages, detected together
    st.wrap(signer, "text_flags_many", "canonicalize")  # which text steps each text needs
    st.wrap(canonicalizer.Canonicalizer, "token_hashes_many", "sign")  # tokens to hashes
    st.wrap(signer.Signer, "_sign", "sign")
    st.wrap(tagging.Tagger, "tag_ordered", "tag")
    st.wrap(embedded.EmbeddedEngine, "put", "store")
    st.wrap(api.NearDup, "clusters", "cluster")
    out = _io.StringIO()
    code = 0
    with redirect_stdout(out):
        try:
            main.main(args=argv, prog_name="neardup", standalone_mode=False)
        except SystemExit as e:
            code = e.code or 0
    st.cpu["other"] = max(0.0, time.process_time() - sum(st.cpu.values()))
    res: dict[str, Any] = {
        "stages": st.seconds,
        "stages_cpu": st.cpu,  # this process's own: signing workers not included
        "first_wait_s": st.first.get("wait"),
        "default_workers": chosen[0] if chosen else None,
        "exit": code,
        "peak_rss_mb": peak_rss_mb(),
    }
    if "--json" in argv:
        cl = json.loads(out.getvalue())
        res["clusters"] = len(cl)
        res["docs_in_clusters"] = sum(c["size"] for c in cl)
    return res


def _rss_mb() -> float:
    """This process's resident memory now (VmRSS), MB."""
    with open("/proc/self/status", encoding="ascii") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS:"))


def child_compiled_loops() -> dict[str, Any]:
    """What loading the compiled signing loops adds to a fresh process that has made its
    tables: seconds, and resident MB (``Signer.warm_up`` without them, then with them)."""
    from neardup import Config
    from neardup.signing.signer import Signer

    signer = Signer(Config())
    signer.warm_up(compiled=False)
    rss, t0 = _rss_mb(), time.perf_counter()
    signer.warm_up(compiled=True)
    return {"load_s": time.perf_counter() - t0, "rss_mb": _rss_mb() - rss}


def _run_child(
    args: list[str], env: dict[str, str], python: str | None = None
) -> tuple[float, dict[str, Any]]:
    """Run a child; (wall seconds, its result with ``cpu_s``: user + system seconds of the
    child and of the processes it waited for, its signing workers included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(
        [python or sys.executable, "-m", "benchmarks.wholepath", "--child", *args],
        cwd=HERE.parent,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise RuntimeError(f"child {args[0]} failed ({p.returncode}): {p.stderr[-2000:]}")
    res = json.loads(p.stdout.strip().splitlines()[-1])
    res["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, res


# -- one measurement -----------------------------------------------------------------------------


def measure_neardup(
    corpus: Path,
    db: Path,
    env: dict[str, str],
    workers: int | None = None,
    search_ready: bool = False,
) -> dict[str, Any]:
    """neardup's day on ``corpus``: ``index`` (``--search-ready`` or not), ``clusters``, the
    first and the next search, the first and the next containment query."""
    for p in (db, Path(str(db) + "-wal"), Path(str(db) + "-shm")):
        p.unlink(missing_ok=True)
    extra = [] if workers is None else ["--workers", str(workers)]
    extra += ["--search-ready"] if search_ready else []
    w1, idx = _run_child(
        ["neardup", "index", str(corpus), "--engine", str(db), "--quiet", *extra], env
    )
    w2, cl = _run_child(["neardup", "clusters", "--engine", str(db), "--json"], env)
    stages: dict[str, float] = {}
    stages_cpu: dict[str, float] = {}
    for part in (idx, cl):
        for k, v in part["stages"].items():
            stages[k] = stages.get(k, 0.0) + v
        for k, v in part.get("stages_cpu", {}).items():
            stages_cpu[k] = stages_cpu.get(k, 0.0) + v
    total = w1 + w2
    cpu = idx["cpu_s"] + cl["cpu_s"]
    stages["other"] = max(
        0.0, total - sum(stages.values())
    )  # process start, engine open, commit, reports
    # the rest of the day: the first full-text search after indexing adds every document to
    # the full-text index (which follows behind indexing, unless --search-ready), the next
    # one only searches
    search = ["neardup", "search", "market prices", "--engine", str(db)]
    first_search, _ = _run_child(search, env)
    next_search, _ = _run_child(search, env)
    # nor the first containment query: it adds the winnowing postings, which follow behind too
    contained = [
        "neardup",
        "query",
        "--id",
        "w000001",
        "--containment",
        "-t",
        "0.5",
        "--engine",
        str(db),
    ]
    first_contained, _ = _run_child(contained, env)
    next_contained, _ = _run_child(contained, env)
    return {
        "seconds": total,
        "cpu_s": cpu,
        "index_s": w1,
        "clusters_s": w2,
        "stages": stages,
        "stages_cpu": stages_cpu,  # the storing process's and the clusters process's own
        "first_wait_s": idx.get("first_wait_s"),
        "default_workers": idx.get("default_workers"),
        "db_bytes": db.stat().st_size,
        "first_search_s": first_search,
        "next_search_s": next_search,
        "first_containment_query_s": first_contained,
        "next_containment_query_s": next_contained,
        "peak_rss_mb": {"index": idx["peak_rss_mb"], "clusters": cl["peak_rss_mb"]},
        "clusters": cl.get("clusters"),
        "docs_in_clusters": cl.get("docs_in_clusters"),
    }


def measure_peer(peer: str, corpus: Path, env: dict[str, str], workdir: Path) -> dict[str, Any]:
    """One run of ``peer`` (a key of :data:`PEERS`) in a fresh process: wall and CPU seconds,
    stages, peak RSS, clusters; or ``error``."""
    python = peer_python(peer)
    if python is None:
        return {"error": f"{peer} is not installed (the peers' venv could not be built)"}
    work = workdir / f"{peer}-work"
    if work.exists():
        import shutil

        shutil.rmtree(work)
    work.mkdir()
    args = [a.format(corpus=corpus, workdir=work) for a in PEERS[peer][0]]
    try:
        wall, r = _run_child(args, env, python)
    except RuntimeError as e:
        return {"error": str(e)[-500:]}
    r["stages"]["other"] = max(0.0, wall - sum(r["stages"].values()))
    return {"seconds": wall, **r, "peak_rss_mb": {"all": r["peak_rss_mb"]}}


def measure_fresh_query(
    tmp: Path, env: dict[str, str], docs: int = 250, queries: int = 7
) -> dict[str, Any]:
    """Median seconds (wall, and CPU: user + system) of ``neardup query TEXT`` in a fresh
    process, a Persian text against a Russian one, on an index of ``docs`` documents of each
    (target: Persian within 1.5x)."""

    from . import corpora

    fa, ru = corpora.load("fa", docs + queries), corpora.load("ru", docs + queries)
    path, db = tmp / "query-docs.jsonl", tmp / "query.db"
    with path.open("w", encoding="utf-8") as f:
        for d in fa[:docs] + ru[:docs]:
            f.write(json.dumps({"id": d.id, "text": d.text}, ensure_ascii=False) + "\n")
    py = [sys.executable, "-m", "neardup.cli"]
    subprocess.run(
        [*py, "index", str(path), "--engine", str(db), "--quiet"],
        env=env,
        check=True,
        capture_output=True,
    )
    out: dict[str, Any] = {"index_docs": 2 * docs, "queries": queries}
    for lang, ds in (("fa", fa[docs:]), ("ru", ru[docs:])):
        times, cpus = [], []
        for d in ds[:queries]:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(
                [*py, "query", d.text, "--engine", str(db)],
                env=env,
                check=True,
                capture_output=True,
            )
            times.append(time.perf_counter() - t0)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        out[f"{lang}_s"], out[f"{lang}_cpu_s"] = statistics.median(times), statistics.median(cpus)
    out["fa_over_ru"] = out["fa_s"] / out["ru_s"]
    return out


def measure_compiled_loops(env: dict[str, str], n: int = 5) -> dict[str, Any]:
    """Median of :func:`child_compiled_loops` over ``n`` fresh processes."""

    runs = [_run_child(["compiled-loops"], env)[1] for _ in range(n)]
    return {
        "runs": n,
        "form": "C modules built at install",
        "load_s": statistics.median(r["load_s"] for r in runs),
        "rss_mb": statistics.median(r["rss_mb"] for r in runs),
    }


def _neardup_path() -> str:
    """The folder neardup is imported from: the installed package (with the compiled loops
    pip built), or the checkout's plugin/ in an editable install."""
    import neardup

    return str(Path(neardup.__file__).resolve().parents[1])


def byte_compile() -> None:
    """Byte-compile neardup and the benchmarks, as ``pip install`` does for a wheel: from an
    editable install, in an environment that sets PYTHONDONTWRITEBYTECODE, every fresh
    process would compile every module it imports from source (0.05 s of ``neardup
    clusters``). The peers are installed, so compiled already."""
    import compileall

    for d in (HERE, Path(_neardup_path()) / "neardup"):
        compileall.compile_dir(str(d), quiet=1)


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median wall seconds (the lower of the middle two for an even count)."""
    ordered = sorted(runs, key=lambda x: x["seconds"])
    return ordered[(len(ordered) - 1) // 2]


#: The rensa scripts; the ratio to rensa is given against the faster of them.
RENSA = ("rensa", "rensa_plain")


def compare(
    corpus: Path,
    info: dict[str, Any],
    repeat: int,
    env: dict[str, str],
    d: Path,
    workers: int | None,
    peers: tuple[str, ...],
    log: Callable[[str], None],
    one_process: bool = True,
) -> dict[str, Any]:
    """neardup and each of ``peers`` on ``corpus``, ``repeat`` times, alternating: the median
    run of each side, the ratios of the medians (peer / neardup, wall and CPU), and under
    ``rensa_faster`` the faster of the rensa scripts'."""
    nd_runs: list[dict[str, Any]] = []
    ready_runs: list[dict[str, Any]] = []
    peer_runs: dict[str, list[dict[str, Any]]] = {p: [] for p in peers}
    for r in range(repeat):
        nd_runs.append(measure_neardup(corpus, d / "index.db", env, workers))
        last = nd_runs[-1]
        log(f"run {r + 1}: neardup {last['seconds']:.2f} s (CPU {last['cpu_s']:.2f} s)")
        ready_runs.append(measure_neardup(corpus, d / "index.db", env, workers, True))
        last = ready_runs[-1]
        log(
            f"run {r + 1}: neardup --search-ready {last['seconds']:.2f} s "
            f"(CPU {last['cpu_s']:.2f} s), day {whole_day(last):.2f} s"
        )
        for p in peers:
            if peer_runs[p] and "error" in peer_runs[p][-1]:
                continue
            peer_runs[p].append(measure_peer(p, corpus, env, d))
            x = peer_runs[p][-1]
            log(
                f"run {r + 1}: {p} "
                + (
                    x["error"][:200]
                    if "error" in x
                    else f"{x['seconds']:.2f} s (CPU {x['cpu_s']:.2f} s)"
                )
            )
    one = None
    if one_process and workers != 0:  # every stage's cost, all in one process
        one = measure_neardup(corpus, d / "index.db", env, 0)
        log(f"one process (--workers 0): neardup {one['seconds']:.2f} s (CPU {one['cpu_s']:.2f} s)")
    nd = _median_run(nd_runs)
    nd_cpu = statistics.median(x["cpu_s"] for x in nd_runs)
    median = {
        p: _median_run([x for x in runs if "error" not in x])
        if runs and "error" not in runs[-1]
        else runs[-1]
        for p, runs in peer_runs.items()
    }
    ratios = {
        p: {
            "wall": x["seconds"] / nd["seconds"],
            "cpu": statistics.median(y["cpu_s"] for y in peer_runs[p]) / nd_cpu,
        }
        for p, x in median.items()
        if "error" not in x
    }
    res: dict[str, Any] = {
        "corpus": info,
        "repeat": repeat,
        "kept": "median",  # each side's median run (results before this kept the best)
        "workers": workers,
        "neardup": nd,
        "neardup_search_ready": _median_run(ready_runs),
        "neardup_one_process": one,
        "peers": median,
        "ratios": ratios,
        "all_seconds": {
            "neardup": [x["seconds"] for x in nd_runs],
            **{p: [x.get("seconds") for x in r] for p, r in peer_runs.items()},
        },
        "all_cpu_s": {
            "neardup": [x["cpu_s"] for x in nd_runs],
            **{p: [x.get("cpu_s") for x in r] for p, r in peer_runs.items()},
        },
        "all_default_workers": [x.get("default_workers") for x in nd_runs],
    }
    if rensas := [p for p in RENSA if p in ratios]:
        fastest = min(rensas, key=lambda p: median[p]["seconds"])
        res["rensa_faster"] = {"peer": fastest, **ratios[fastest]}
    if "datasketch_bulk" in ratios:  # the headline: the strongest datasketch usage
        res["datasketch"] = median["datasketch_bulk"]
        res["ratio"] = ratios["datasketch_bulk"]["wall"]
    return res


def run(
    n: int,
    repeat: int = 1,
    seed: int = 13,
    log: Callable[[str], None] = print,
    tmp: Path | None = None,
    workers: int | None = None,
    peers: tuple[str, ...] = tuple(PEERS),
    corpus: str = "both",
) -> dict[str, Any]:
    """Build the corpora (``corpus``: "synthetic", "real" or "both"), and on each
    :func:`compare` neardup with ``peers`` (keys of :data:`PEERS`), ``repeat`` runs each,
    alternating (the code byte-compiled first: :func:`byte_compile`). ``workers``: ``neardup
    index --workers`` (None: the command's default). The synthetic corpus's comparison is
    the result's top level (the real one's under ``real``), else the real one's."""
    byte_compile()
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(
            [str(HERE.parent), _neardup_path(), os.environ.get("PYTHONPATH", "")]
        ),
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
    )
    load_before = os.getloadavg()[0]
    kinds = ("synthetic", "real") if corpus == "both" else (corpus,)
    found: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="neardup-wholepath-", dir=tmp) as d:
        d = Path(d)
        for kind in kinds:
            path = d / f"{kind}.jsonl"
            info = build_corpus(path, n, seed) if kind == "synthetic" else build_real_corpus(path)
            log(f"{kind} corpus: {info}")
            found[kind] = compare(
                path, info, repeat, env, d, workers, peers, log, one_process=kind == kinds[0]
            )
        query = measure_fresh_query(d, env)
        log(
            f"fresh-process query: fa {query['fa_s']:.2f} s, ru {query['ru_s']:.2f} s "
            f"(CPU {query['fa_cpu_s']:.2f}, {query['ru_cpu_s']:.2f} s)"
        )
        compiled = measure_compiled_loops(env)
        log(f"compiled loops: {compiled['load_s']:.3f} s, {compiled['rss_mb']:.0f} MB")
    res = dict(found[kinds[0]])
    res["corpus_kind"] = kinds[0]
    if kinds[0] != "real" and "real" in found:
        res["real"] = found["real"]
    res.update(
        workers_from="/proc/stat, sampled",
        fresh_query=query,
        compiled_loops=compiled,
        load_before=load_before,
        load_after=os.getloadavg()[0],
    )
    return res


# -- output --------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        kind, rest = argv[1], argv[2:]
        children: dict[str, Callable[..., dict[str, Any]]] = {
            "neardup": child_neardup,
            "compiled-loops": child_compiled_loops,
            "datasketch": child_datasketch,
            "rensa": child_rensa,
            "rensa-plain": child_rensa_plain,
            "text-dedup": child_text_dedup,
        }
        res = children[kind](rest) if kind == "neardup" else children[kind](*rest)
        print(json.dumps(res))
        return 0
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.wholepath", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--docs", type=int, default=11_380)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument(
        "--workers",
        type=int,
        default=None,
        help="neardup index --workers (default: the command's own default)",
    )
    ap.add_argument(
        "--peers",
        default=",".join(PEERS),
        help=f"comma-separated, of {', '.join(PEERS)} (default: all)",
    )
    ap.add_argument(
        "--corpus",
        choices=("both", "synthetic", "real"),
        default="both",
        help="the synthetic corpus, the shared corpora's real documents, or both (default)",
    )
    ap.add_argument("--out", type=Path, default=HERE / "results")
    a = ap.parse_args(argv)
    chosen = tuple(p for p in a.peers.split(",") if p)
    if unknown := [p for p in chosen if p not in PEERS]:
        ap.error(f"unknown peer(s) {', '.join(unknown)}; choose from {', '.join(PEERS)}")
    provenance = (
        run_provenance()
    )  # taken before the run: the date it started, the commit it measures
    res = run(
        a.docs,
        a.repeat,
        a.seed,
        log=lambda m: print(m, file=sys.stderr),
        workers=a.workers,
        peers=chosen,
        corpus=a.corpus,
    )
    res["command"] = "python -m benchmarks.wholepath " + " ".join(argv)
    res.update(provenance)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "wholepath.json").write_text(json.dumps(res, indent=1))
    md = markdown(res)
    (a.out / "wholepath.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
