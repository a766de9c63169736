"""The user's whole path against the plain datasketch pipeline, in one run.

    python -m benchmarks.wholepath                   # 11,380 documents (~550 words, en and ru, edited copies)
    python -m benchmarks.wholepath --docs 3000       # smaller
    python -m benchmarks.wholepath --repeat 3        # best of 3 per side

One JSONL file of English and Russian documents of about 550 words (collages of corpus
sentences, 30% edited copies of earlier ones, a handful with a few Persian words), then, each
in fresh processes:

* **neardup**: ``neardup index FILE`` then ``neardup clusters --json``, default options, on
  the embedded engine (the command line's own ``main``, run in a child process that times
  the stages: read, canonicalize, sign, wait for signing workers, tag, store, cluster), and
  once more with ``--workers 0`` so that every stage's whole cost shows;
* **datasketch**: read the file, Python ``\\w+`` word 5-shingles of the lower-cased text,
  ``MinHash(num_perm=128).update_batch``, ``MinHashLSH(threshold=0.8)`` insert, then a query
  per document and union-find over the answers.

neardup and the benchmarks are byte-compiled first, as ``pip install`` does for a wheel.
Reported: seconds (wall, process start to exit, both commands for neardup), the ratio
datasketch / neardup, the stage table, peak RSS of each process and the clusters found.
Writes ``results/wholepath.json`` and ``results/wholepath.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

HERE = Path(__file__).resolve().parent
_PERSIAN = ["فارسی", "کتاب", "ایران"]  # a few Arabic-script characters in a handful of documents


# -- the corpus ----------------------------------------------------------------------------------
def build_corpus(path: Path, n: int, seed: int = 13) -> dict[str, Any]:
    """``n`` English/Russian documents of about 550 words into ``path`` (JSONL)."""
    from . import corpora
    from .synth import Generator

    base = corpora.load("en") + corpora.load("ru")
    gen = Generator(base, seed=seed, dup_rate=0.3, langs=("en", "ru"), sentences=(40, 72))
    gen.count = len(gen.base)  # collages and their edited copies only (the corpus documents are short)
    words = edited = 0
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            s = next(gen)
            text = s.doc.text
            if i % 2000 == 1000:
                text += f" ({_PERSIAN[i % 3]})"
            words += len(text.split())
            edited += s.source >= 0
            f.write(json.dumps({"id": f"w{i:06d}", "text": text}, ensure_ascii=False) + "\n")
    return {"documents": n, "words_per_doc": round(words / max(1, n)), "edited_copies": edited, "bytes": path.stat().st_size}


# -- child processes -----------------------------------------------------------------------------
def _peak_rss_mb() -> float:
    """This process's peak RSS: VmHWM (reset by exec; ru_maxrss keeps the high-water mark of
    the process that forked it, here the benchmark's own)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / (1 << 20) if sys.platform == "darwin" else r / 1024


class _Stages:
    """Seconds per stage, exclusive: a stage timed inside another counts for itself, not
    for the one around it. ``wrap`` times every call of a function."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.first: dict[str, float] = {}  # a wrapped iterator's stage: the seconds of its first item
        self._inner: list[float] = []  # per open stage: seconds of the stages inside it

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        self._inner.append(0.0)
        t0 = time.perf_counter()
        try:
            yield
        finally:
            spent = time.perf_counter() - t0
            inner = self._inner.pop()
            self.seconds[name] = self.seconds.get(name, 0.0) + spent - inner
            if self._inner:
                self._inner[-1] += spent

    def wrap(self, owner: Any, attr: str, name: str) -> None:
        fn = getattr(owner, attr)
        stages = self

        def timed(*a: Any, **k: Any) -> Any:
            with stages.stage(name):
                return fn(*a, **k)

        setattr(owner, attr, timed)

    def wrap_iter(self, owner: Any, attr: str, name: str) -> None:
        fn = getattr(owner, attr)
        stages = self

        def timed(*a: Any, **k: Any) -> Iterator[Any]:
            it = iter(fn(*a, **k))
            while True:
                before = stages.seconds.get(name, 0.0)
                with stages.stage(name):
                    try:
                        x = next(it)
                    except StopIteration:
                        return
                stages.first.setdefault(name, stages.seconds[name] - before)
                yield x

        setattr(owner, attr, timed)


def child_neardup(argv: list[str]) -> dict[str, Any]:
    """Run ``neardup <argv>`` (the command line's ``main``) in this process, timing its stages."""
    import io as _io
    from contextlib import redirect_stdout

    t0 = time.perf_counter()
    from neardup import api, ingest, io, signer, tagging
    from neardup.canonical import canonicalizer
    from neardup.cli import main
    from neardup.engines import embedded

    st = _Stages()
    st.seconds["import"] = time.perf_counter() - t0
    st.wrap_iter(io, "read_documents", "read")
    st.wrap_iter(ingest, "signed_batches", "wait")  # for the signing workers (what is not read, canonicalize, sign)
    st.wrap(canonicalizer.Canonicalizer, "canonicalize", "canonicalize")  # the text steps, and tokens as strings
    st.wrap(canonicalizer.Canonicalizer, "spans_for_tokens", "canonicalize")  # the text steps (tokens as hashes)
    st.wrap(canonicalizer.Canonicalizer, "languages", "canonicalize")  # and the languages, detected together
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
    res: dict[str, Any] = {"stages": st.seconds, "first_wait_s": st.first.get("wait"), "exit": code, "peak_rss_mb": _peak_rss_mb()}
    if "--json" in argv:
        cl = json.loads(out.getvalue())
        res["clusters"] = len(cl)
        res["docs_in_clusters"] = sum(c["size"] for c in cl)
    return res


def _rss_mb() -> float:
    """This process's resident memory now (VmRSS), MB."""
    with open("/proc/self/status", encoding="ascii") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS:"))


def child_kernels() -> dict[str, Any]:
    """What loading the compiled signing loops adds to a fresh process that has made its
    tables: seconds, and resident MB (``Signer.warm_up`` without them, then with them)."""
    from neardup import Config
    from neardup.signer import Signer

    signer = Signer(Config())
    signer.warm_up(kernels=False)
    rss, t0 = _rss_mb(), time.perf_counter()
    signer.warm_up(kernels=True)
    return {"load_s": time.perf_counter() - t0, "rss_mb": _rss_mb() - rss}


_WORD = re.compile(r"\w+")


def child_datasketch(path: str, threshold: float = 0.8, num_perm: int = 128, w: int = 5) -> dict[str, Any]:
    """The plain pipeline: read, shingle, MinHash, LSH, union-find; seconds per stage."""
    st = _Stages()
    with st.stage("import"):
        from datasketch import MinHash, MinHashLSH
    with st.stage("read"):
        docs = [json.loads(line) for line in open(path, encoding="utf-8")]
    with st.stage("canonicalize"):  # lower-case and \w+ words
        words = [_WORD.findall(d["text"].lower()) for d in docs]
    sketches = []
    with st.stage("sign"):  # shingles and MinHash
        for ws in words:
            m = MinHash(num_perm=num_perm)
            m.update_batch([" ".join(ws[i : i + w]).encode() for i in range(max(1, len(ws) - w + 1))])
            sketches.append(m)
    with st.stage("store"):  # LSH insert
        lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
        for d, m in zip(docs, sketches, strict=True):
            lsh.insert(d["id"], m)
    with st.stage("cluster"):  # query every document, union-find
        parent = {d["id"]: d["id"] for d in docs}

        def find(x: str) -> str:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for d, m in zip(docs, sketches, strict=True):
            for o in lsh.query(m):
                a, b = find(d["id"]), find(o)
                if a != b:
                    parent[max(a, b)] = min(a, b)
        sizes: dict[str, int] = {}
        for x in parent:
            r = find(x)
            sizes[r] = sizes.get(r, 0) + 1
    big = [s for s in sizes.values() if s > 1]
    return {"stages": st.seconds, "peak_rss_mb": _peak_rss_mb(), "clusters": len(big), "docs_in_clusters": sum(big)}


def _run_child(args: list[str], env: dict[str, str], python: str | None = None) -> tuple[float, dict[str, Any]]:
    t0 = time.perf_counter()
    p = subprocess.run([python or sys.executable, "-m", "benchmarks.wholepath", "--child", *args], cwd=HERE.parent, env=env,
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"child {args[0]} failed ({p.returncode}): {p.stderr[-2000:]}")
    return wall, json.loads(p.stdout.strip().splitlines()[-1])


# -- one measurement -----------------------------------------------------------------------------
STAGES = ("import", "read", "canonicalize", "sign", "wait", "tag", "store", "cluster")


def measure_neardup(corpus: Path, db: Path, env: dict[str, str], workers: int | None = None) -> dict[str, Any]:
    for p in (db, Path(str(db) + "-wal"), Path(str(db) + "-shm")):
        p.unlink(missing_ok=True)
    extra = [] if workers is None else ["--workers", str(workers)]
    w1, idx = _run_child(["neardup", "index", str(corpus), "--engine", str(db), "--quiet", *extra], env)
    w2, cl = _run_child(["neardup", "clusters", "--engine", str(db), "--json"], env)
    stages: dict[str, float] = {}
    for part in (idx, cl):
        for k, v in part["stages"].items():
            stages[k] = stages.get(k, 0.0) + v
    total = w1 + w2
    stages["other"] = max(0.0, total - sum(stages.values()))  # process start, engine open, commit, reports
    # not part of the whole path: the first full-text search adds every document to the
    # full-text index (which follows behind indexing), the next one only searches
    search = ["neardup", "search", "market prices", "--engine", str(db)]
    first_search, _ = _run_child(search, env)
    next_search, _ = _run_child(search, env)
    # nor the first containment query: it adds the winnowing postings, which follow behind too
    contained = ["neardup", "query", "--id", "w000001", "--containment", "-t", "0.5", "--engine", str(db)]
    first_contained, _ = _run_child(contained, env)
    next_contained, _ = _run_child(contained, env)
    return {"seconds": total, "index_s": w1, "clusters_s": w2, "stages": stages, "first_wait_s": idx.get("first_wait_s"),
            "db_bytes": db.stat().st_size,
            "first_search_s": first_search, "next_search_s": next_search,
            "first_containment_query_s": first_contained, "next_containment_query_s": next_contained,
            "peak_rss_mb": {"index": idx["peak_rss_mb"], "clusters": cl["peak_rss_mb"]},
            "clusters": cl.get("clusters"), "docs_in_clusters": cl.get("docs_in_clusters")}


def _datasketch_python() -> str:
    """This interpreter when it has datasketch (the ``bench`` extra), else the peers' venv."""
    import importlib.util

    if importlib.util.find_spec("datasketch") is not None:
        return sys.executable
    from . import peers

    peers.ensure(False, log=lambda *a: None)
    return str(peers._python())


def measure_datasketch(corpus: Path, env: dict[str, str]) -> dict[str, Any]:
    wall, r = _run_child(["datasketch", str(corpus)], env, _datasketch_python())
    r["stages"]["other"] = max(0.0, wall - sum(r["stages"].values()))
    return {"seconds": wall, **r, "peak_rss_mb": {"all": r["peak_rss_mb"]}}


def measure_fresh_query(tmp: Path, env: dict[str, str], docs: int = 250, queries: int = 7) -> dict[str, Any]:
    """Median seconds of ``neardup query TEXT`` in a fresh process, a Persian text against a
    Russian one, on an index of ``docs`` documents of each (target: Persian within 1.5x)."""
    import statistics

    from . import corpora

    fa, ru = corpora.load("fa", docs + queries), corpora.load("ru", docs + queries)
    path, db = tmp / "query-docs.jsonl", tmp / "query.db"
    with path.open("w", encoding="utf-8") as f:
        for d in fa[:docs] + ru[:docs]:
            f.write(json.dumps({"id": d.id, "text": d.text}, ensure_ascii=False) + "\n")
    py = [sys.executable, "-m", "neardup.cli"]
    subprocess.run([*py, "index", str(path), "--engine", str(db), "--quiet"], env=env, check=True, capture_output=True)
    out: dict[str, Any] = {"index_docs": 2 * docs, "queries": queries}
    for lang, ds in (("fa", fa[docs:]), ("ru", ru[docs:])):
        times = []
        for d in ds[:queries]:
            t0 = time.perf_counter()
            subprocess.run([*py, "query", d.text, "--engine", str(db)], env=env, check=True, capture_output=True)
            times.append(time.perf_counter() - t0)
        out[f"{lang}_s"] = statistics.median(times)
    out["fa_over_ru"] = out["fa_s"] / out["ru_s"]
    return out


def measure_kernels(env: dict[str, str], n: int = 5) -> dict[str, Any]:
    """Median of :func:`child_kernels` over ``n`` fresh processes."""
    import statistics

    runs = [_run_child(["kernels"], env)[1] for _ in range(n)]
    return {"runs": n, "load_s": statistics.median(r["load_s"] for r in runs), "rss_mb": statistics.median(r["rss_mb"] for r in runs)}


def byte_compile() -> None:
    """Byte-compile neardup and the benchmarks, as ``pip install`` does for a wheel: from an
    editable install, in an environment that sets PYTHONDONTWRITEBYTECODE, every fresh
    process would compile every module it imports from source (0.05 s of ``neardup
    clusters``). The peers are installed, so compiled already."""
    import compileall

    for d in (HERE, HERE.parent / "plugin" / "neardup"):
        compileall.compile_dir(str(d), quiet=1)


def run(n: int, repeat: int = 1, seed: int = 13, log: Callable[[str], None] = print, tmp: Path | None = None,
        workers: int | None = None) -> dict[str, Any]:
    """Build the corpus, measure both sides ``repeat`` times (alternating), keep each side's best
    (the code byte-compiled first: :func:`byte_compile`). ``workers``: ``neardup index
    --workers`` (None: the command's default)."""
    byte_compile()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parent), str(HERE.parent / "plugin"), os.environ.get("PYTHONPATH", "")]),
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    with tempfile.TemporaryDirectory(prefix="neardup-wholepath-", dir=tmp) as d:
        d = Path(d)
        corpus = d / "corpus.jsonl"
        info = build_corpus(corpus, n, seed)
        log(f"corpus: {info}")
        nd_runs, ds_runs = [], []
        for r in range(repeat):
            nd_runs.append(measure_neardup(corpus, d / "index.db", env, workers))
            log(f"run {r + 1}: neardup {nd_runs[-1]['seconds']:.2f} s")
            ds_runs.append(measure_datasketch(corpus, env))
            log(f"run {r + 1}: datasketch {ds_runs[-1]['seconds']:.2f} s")
        one = None
        if workers != 0:  # every stage's cost, all in one process (the table's middle column)
            one = measure_neardup(corpus, d / "index.db", env, 0)
            log(f"one process (--workers 0): neardup {one['seconds']:.2f} s")
        query = measure_fresh_query(d, env)
        log(f"fresh-process query: fa {query['fa_s']:.2f} s, ru {query['ru_s']:.2f} s")
        kernels = measure_kernels(env)
        log(f"compiled loops: {kernels['load_s']:.2f} s, {kernels['rss_mb']:.0f} MB")
    nd = min(nd_runs, key=lambda x: x["seconds"])
    ds = min(ds_runs, key=lambda x: x["seconds"])
    return {"corpus": info, "repeat": repeat, "workers": workers, "neardup": nd, "neardup_one_process": one, "datasketch": ds,
            "fresh_query": query, "compiled_loops": kernels,
            "all_seconds": {"neardup": [x["seconds"] for x in nd_runs], "datasketch": [x["seconds"] for x in ds_runs]},
            "ratio": ds["seconds"] / nd["seconds"], "load_before": os.getloadavg()[0]}


# -- output --------------------------------------------------------------------------------------
def markdown(res: dict[str, Any]) -> str:
    nd, ds, one = res["neardup"], res["datasketch"], res.get("neardup_one_process")
    c = res["corpus"]
    mid = (lambda x: f" {x} |") if one else (lambda x: "")
    lines = [
        f"Whole path, {c['documents']:,} documents (~{c['words_per_doc']} words, {c['edited_copies']:,} edited copies), "
        f"best of {res['repeat']}{'' if res.get('workers') is None else ', neardup index --workers ' + str(res['workers'])}: neardup {nd['seconds']:.2f} s, datasketch {ds['seconds']:.2f} s, "
        f"**{res['ratio']:.2f}x** (target >= 3x).",
        "",
        f"| stage (s) | neardup |{mid('neardup, one process')} datasketch |",
        f"|---|---:|{mid('---:')}---:|",
    ]
    for s in (*STAGES, "other"):
        lines.append(f"| {s} | {nd['stages'].get(s, 0.0):.2f} |{mid(format(one['stages'].get(s, 0.0), '.2f')) if one else ''} "
                     f"{ds['stages'].get(s, 0.0):.2f} |")
    rss = lambda x: f"index {x['peak_rss_mb']['index']:.0f}, clusters {x['peak_rss_mb']['clusters']:.0f}"  # noqa: E731
    found = lambda x: f"{x['clusters']:,} ({x['docs_in_clusters']:,})"  # noqa: E731
    lines += [
        f"| **total (wall)** | **{nd['seconds']:.2f}** |{mid('**' + format(one['seconds'], '.2f') + '**') if one else ''} "
        f"**{ds['seconds']:.2f}** |",
        f"| peak RSS (MB) | {rss(nd)} |{mid(rss(one)) if one else ''} {ds['peak_rss_mb']['all']:.0f} |",
        f"| clusters (docs in them) | {found(nd)} |{mid(found(one)) if one else ''} {found(ds)} |",
        "",
        f"Not in the whole path: the first `neardup search` after indexing (it adds the {c['documents']:,} documents to the "
        f"full-text index) {nd['first_search_s']:.2f} s, the next one {nd['next_search_s']:.2f} s; the first containment "
        f"`neardup query` (it adds their winnowing postings) {nd['first_containment_query_s']:.2f} s, the next one "
        f"{nd['next_containment_query_s']:.2f} s.",
        "",
        "Fresh-process `neardup query` (median of {q}, index of {n} fa + ru documents): Persian {fa:.2f} s, Russian {ru:.2f} s, "
        "**{r:.2f}x** (target <= 1.5x).".format(q=res["fresh_query"]["queries"], n=res["fresh_query"]["index_docs"],
                                                fa=res["fresh_query"]["fa_s"], ru=res["fresh_query"]["ru_s"], r=res["fresh_query"]["fa_over_ru"]),
        "",
        f"Loading the compiled signing loops (numba), in a fresh process that has made its tables (median of "
        f"{res['compiled_loops']['runs']}): {res['compiled_loops']['load_s']:.2f} s and {res['compiled_loops']['rss_mb']:.0f} MB "
        f"resident. With signing workers the storing process first waits {nd['first_wait_s'] or 0:.2f} s for a signed batch "
        "(each worker loads the loops first).",
        "",
        "neardup: `neardup index` + `neardup clusters` in fresh processes (defaults, embedded engine; stages are "
        "this process's own: with signing workers, `canonicalize` and `sign` are its first batch and `wait` the time it "
        "waited for the workers; `other` = interpreter start, opening the index, commits). The one-process column is "
        "`neardup index --workers 0`, every stage's whole cost. datasketch: Python `\\w+` 5-shingles, "
        "`update_batch`, 128 permutations, `MinHashLSH` at 0.8, union-find (unverified).",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        kind, rest = argv[1], argv[2:]
        res = child_neardup(rest) if kind == "neardup" else child_kernels() if kind == "kernels" else child_datasketch(rest[0])
        print(json.dumps(res))
        return 0
    ap = argparse.ArgumentParser(prog="python -m benchmarks.wholepath", description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=11_380)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--workers", type=int, default=None, help="neardup index --workers (default: the command's own default)")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    a = ap.parse_args(argv)
    from .report import provenance as _provenance

    provenance = _provenance()  # taken before the run: the date it started, the commit it measures
    res = run(a.docs, a.repeat, a.seed, log=lambda m: print(m, file=sys.stderr), workers=a.workers)
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
