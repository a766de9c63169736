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
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from .provenance import provenance as run_provenance

HERE = Path(__file__).resolve().parent
_PERSIAN = ["فارسی", "کتاب", "ایران"]  # a few Arabic-script characters in a handful of documents


# -- the corpus ----------------------------------------------------------------------------------
def build_corpus(path: Path, n: int, seed: int = 13) -> dict[str, Any]:
    """``n`` English/Russian documents of about 550 words into ``path`` (JSONL)."""
    from . import corpora
    from .synth import Generator

    base = corpora.load("en") + corpora.load("ru")
    gen = Generator(base, seed=seed, dup_rate=0.3, langs=("en", "ru"), sentences=(40, 72))
    gen.count = len(
        gen.base
    )  # collages and their edited copies only (the corpus documents are short)
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
    return {
        "documents": n,
        "words_per_doc": round(words / max(1, n)),
        "edited_copies": edited,
        "bytes": path.stat().st_size,
    }


def build_real_corpus(path: Path) -> dict[str, Any]:
    """The documents of the shared corpora's en, ru and fa files, as they are, into ``path``
    (JSONL; organic near-duplicates and exact re-postings included)."""
    from . import corpora

    n = words = 0
    with path.open("w", encoding="utf-8") as f:
        for name in ("en", "ru", "fa"):
            for d in corpora.load(name):
                words += len(d.text.split())
                n += 1
                f.write(json.dumps({"id": d.id, "text": d.text}, ensure_ascii=False) + "\n")
    return {
        "documents": n,
        "words_per_doc": round(words / max(1, n)),
        "edited_copies": 0,
        "source": "shared corpora en, ru, fa",
        "bytes": path.stat().st_size,
    }


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
    for the one around it. ``wrap`` times every call of a function. ``seconds`` is wall
    time, ``cpu`` this process's CPU time (user + system, :func:`time.process_time`)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.first: dict[
            str, float
        ] = {}  # a wrapped iterator's stage: the seconds of its first item
        self._inner: list[tuple[float, float]] = []  # per open stage: (wall, CPU) of inner stages

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        self._inner.append((0.0, 0.0))
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            spent, used = time.perf_counter() - t0, time.process_time() - c0
            inner, inner_cpu = self._inner.pop()
            self.seconds[name] = self.seconds.get(name, 0.0) + spent - inner
            self.cpu[name] = self.cpu.get(name, 0.0) + used - inner_cpu
            if self._inner:
                w, c = self._inner[-1]
                self._inner[-1] = (w + spent, c + used)

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
    st = _Stages()
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
        "peak_rss_mb": _peak_rss_mb(),
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


_WORD = re.compile(r"\w+")


def _union_find(keys: list[Any], pairs: Iterator[tuple[Any, Any]]) -> dict[str, Any]:
    """Clusters of ``keys`` joined by ``pairs`` (union-find): how many, and the documents in
    them."""
    parent = {k: k for k in keys}

    def find(x: Any) -> Any:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    sizes: dict[Any, int] = {}
    for x in parent:
        r = find(x)
        sizes[r] = sizes.get(r, 0) + 1
    big = [s for s in sizes.values() if s > 1]
    return {"clusters": len(big), "docs_in_clusters": sum(big)}


def _shingles(words: list[str], w: int) -> list[str]:
    return [" ".join(words[i : i + w]) for i in range(max(1, len(words) - w + 1))]


def child_datasketch(
    path: str, how: str = "bulk", threshold: float = 0.8, num_perm: int = 128, w: int = 5
) -> dict[str, Any]:
    """The plain datasketch pipeline: read, shingle, MinHash, LSH, union-find; seconds per
    stage. ``how``: ``new`` a new ``MinHash`` per document (``update_batch``), ``bulk``
    ``MinHash.bulk`` (one set of permutations, reused) and an insertion session."""
    st = _Stages()
    with st.stage("import"):
        from datasketch import MinHash, MinHashLSH
    with st.stage("read"):
        docs = [json.loads(line) for line in open(path, encoding="utf-8")]
    with st.stage("canonicalize"):  # lower-case and \w+ words
        words = [_WORD.findall(d["text"].lower()) for d in docs]
    with st.stage("sign"):  # shingles and MinHash
        if how == "bulk":
            sketches = MinHash.bulk(
                [[s.encode() for s in _shingles(ws, w)] for ws in words], num_perm=num_perm
            )
        else:
            sketches = []
            for ws in words:
                m = MinHash(num_perm=num_perm)
                m.update_batch([s.encode() for s in _shingles(ws, w)])
                sketches.append(m)
    ids = [d["id"] for d in docs]
    with st.stage("store"):  # LSH insert
        lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
        if how == "bulk":
            with lsh.insertion_session() as session:
                for i, m in zip(ids, sketches, strict=True):
                    session.insert(i, m, check_duplication=False)
        else:
            for i, m in zip(ids, sketches, strict=True):
                lsh.insert(i, m)
    with st.stage("cluster"):  # query every document, union-find
        found = _union_find(
            ids, ((i, o) for i, m in zip(ids, sketches, strict=True) for o in lsh.query(m))
        )
    return {
        "stages": st.seconds,
        "peak_rss_mb": _peak_rss_mb(),
        **found,
        "bands": lsh.b,
        "rows": lsh.r,
    }


def child_rensa(
    path: str, threshold: float = 0.8, num_perm: int = 128, bands: int = 16, w: int = 5
) -> dict[str, Any]:
    """A plain rensa script: read, ``\\w+`` words of the lower-cased text, word 5-shingles,
    ``RMinHash.from_token_sets`` (its batch constructor), ``RMinHashLSH`` (16 bands of 8 rows)
    ``insert_many`` and ``query_all``, union-find; seconds per stage."""
    st = _Stages()
    with st.stage("import"):
        import rensa
    with st.stage("read"):
        docs = [json.loads(line) for line in open(path, encoding="utf-8")]
    with st.stage("canonicalize"):
        words = [_WORD.findall(d["text"].lower()) for d in docs]
    with st.stage("sign"):
        sketches = rensa.RMinHash.from_token_sets(
            [_shingles(ws, w) for ws in words], num_perm=num_perm, seed=42
        )
    with st.stage("store"):
        lsh = rensa.RMinHashLSH(threshold=threshold, num_perm=num_perm, num_bands=bands)
        lsh.insert_many(sketches)
    with st.stage("cluster"):
        found = _union_find(
            list(range(len(docs))),
            ((i, j) for i, hits in enumerate(lsh.query_all(sketches)) for j in hits),
        )
    return {
        "stages": st.seconds,
        "peak_rss_mb": _peak_rss_mb(),
        **found,
        "bands": bands,
        "rows": num_perm // bands,
    }


def child_rensa_plain(
    path: str, threshold: float = 0.8, num_perm: int = 128, bands: int = 16, w: int = 5
) -> dict[str, Any]:
    """The plainest rensa script: per document ``re.findall(r"\\w+", text.lower())``, the set of
    word 5-shingles, ``RMinHash(num_perm=128, seed=42).update(list(shingles))`` and
    ``RMinHashLSH(threshold=0.8, num_perm=128, num_bands=16).insert(i, m)``; then
    ``lsh.query(m)`` for each document, and a union-find; seconds per stage."""
    st = _Stages()
    with st.stage("import"):
        from rensa import RMinHash, RMinHashLSH
    with st.stage("read"):
        docs = [json.loads(line) for line in open(path, encoding="utf-8")]
    with st.stage("canonicalize"):
        words = [re.findall(r"\w+", d["text"].lower()) for d in docs]
    with st.stage("sign"):
        sketches = []
        for ws in words:
            m = RMinHash(num_perm=num_perm, seed=42)
            m.update(list(set(_shingles(ws, w))))
            sketches.append(m)
    with st.stage("store"):
        lsh = RMinHashLSH(threshold=threshold, num_perm=num_perm, num_bands=bands)
        for i, m in enumerate(sketches):
            lsh.insert(i, m)
    with st.stage("cluster"):
        found = _union_find(
            list(range(len(docs))), ((i, j) for i, m in enumerate(sketches) for j in lsh.query(m))
        )
    return {
        "stages": st.seconds,
        "peak_rss_mb": _peak_rss_mb(),
        **found,
        "bands": bands,
        "rows": num_perm // bands,
    }


def child_text_dedup(
    path: str, workdir: str, threshold: float = 0.8, num_perm: int = 128, w: int = 5
) -> dict[str, Any]:
    """text-dedup's MinHash command (one process, ``--hash_func xxh3``) on the file: read the
    JSONL into a dataset, then its command (load, MinHash, LSH, union-find, filter, save)."""
    import importlib

    st = _Stages()
    with st.stage("import"):
        import datasets

        mod = importlib.import_module("text_dedup.minhash")
    with st.stage("read"):
        src = os.path.join(workdir, "td_in")
        datasets.Dataset.from_json(path, cache_dir=os.path.join(workdir, "td_cache")).save_to_disk(
            src
        )
    args = [
        "--path",
        src,
        "--local",
        "--output",
        os.path.join(workdir, "td_out"),
        "--column",
        "text",
        "--num_proc",
        "1",
        "--threshold",
        str(threshold),
        "--num_perm",
        str(num_perm),
        "--ngram",
        str(w),
        "--min_length",
        "0",
        "--hash_func",
        "xxh3",
        "--cache_dir",
        os.path.join(workdir, "td_cache"),
    ]
    with st.stage("cluster"):  # everything of its command
        try:
            mod.main.main(args, standalone_mode=False)
        except SystemExit as e:
            if e.code:
                raise RuntimeError(f"text-dedup minhash exited with {e.code}") from e
    n = sum(1 for _ in open(path, encoding="utf-8"))
    labels = [mod.uf.find(i) for i in range(n)]
    found = _union_find(list(range(n)), ((i, r) for i, r in enumerate(labels) if r != i))
    return {"stages": st.seconds, "peak_rss_mb": _peak_rss_mb(), **found}


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
STAGES = ("import", "read", "canonicalize", "sign", "wait", "tag", "store", "cluster")


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
    # the rest of the day: the first full-text search and containment query after indexing
    # (on an index an earlier version wrote, they added what indexing had left to them)
    search = ["neardup", "search", "market prices", "--engine", str(db)]
    first_search, _ = _run_child(search, env)
    next_search, _ = _run_child(search, env)
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


def _datasketch_python() -> str:
    """This interpreter when it has datasketch (the ``bench`` extra), else the peers' venv."""
    import importlib.util

    if importlib.util.find_spec("datasketch") is not None:
        return sys.executable
    from . import peers

    peers.ensure(False, log=lambda *a: None)
    return str(peers._python())


#: The peers of the whole path, strongest first: the child kind and its arguments, what the
#: table calls it.
PEERS = {
    "datasketch_bulk": (["datasketch", "{corpus}", "bulk"], "datasketch bulk"),
    "rensa": (["rensa", "{corpus}"], "rensa script"),
    "rensa_plain": (["rensa-plain", "{corpus}"], "rensa plain"),
    "datasketch_new": (["datasketch", "{corpus}", "new"], "datasketch new"),
    "text_dedup": (["text-dedup", "{corpus}", "{workdir}"], "text-dedup"),
}


def _peer_python(peer: str) -> str | None:
    """The interpreter that has ``peer``'s package: this one (the ``bench`` extra), else the
    peers' venv; None where neither has it (text-dedup is only in the venv's full install)."""
    import importlib.util

    module = {"text_dedup": "text_dedup", "rensa": "rensa", "rensa_plain": "rensa"}.get(
        peer, "datasketch"
    )
    if importlib.util.find_spec(module) is not None:
        return sys.executable
    from . import peers

    try:
        peers.ensure(peer == "text_dedup", log=lambda *a: None)
    except peers.PeersUnavailable:
        return None
    if peer == "text_dedup" and not peers.has("text-dedup"):
        return None
    return str(peers._python())


def measure_peer(peer: str, corpus: Path, env: dict[str, str], workdir: Path) -> dict[str, Any]:
    """One run of ``peer`` (a key of :data:`PEERS`) in a fresh process: wall and CPU seconds,
    stages, peak RSS, clusters; or ``error``."""
    python = _peer_python(peer)
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
        workers_from="a short sample of /proc/stat",
        fresh_query=query,
        compiled_loops=compiled,
        load_before=load_before,
        load_after=os.getloadavg()[0],
    )
    return res


# -- output --------------------------------------------------------------------------------------
def wholepath_peers(wp: dict) -> tuple[dict, dict]:
    """The peers of a whole-path result and their ratios (peer / neardup, wall and CPU). A
    result from before the peers were several had datasketch alone, a new ``MinHash`` per
    document: "datasketch new", with its wall ratio."""
    if "peers" in wp:
        return wp["peers"], wp.get("ratios", {})
    return {"datasketch_new": wp["datasketch"]}, {
        "datasketch_new": {"wall": wp["ratio"], "cpu": None}
    }


def _comparison_md(title: str, res: dict[str, Any]) -> list[str]:
    """The lines of one corpus's comparison (:func:`compare`): the headline, the stage table,
    the CPU stages, the peers not measured."""
    nd, one, c = res["neardup"], res.get("neardup_one_process"), res["corpus"]
    peers, ratios = wholepath_peers(res)
    ok = {p: x for p, x in peers.items() if "error" not in x}
    cols: list[tuple[str, dict[str, Any]]] = [("neardup", nd)] + (
        [("neardup, one process", one)] if one else []
    )
    cols += [(PEERS[p][1], x) for p, x in ok.items()]
    head = ", ".join(
        f"{PEERS[p][1]} {ok[p]['seconds']:.2f} s (**{r['wall']:.2f}x** wall"
        + ("" if r["cpu"] is None else f", {r['cpu']:.2f}x CPU")
        + ")"
        for p, r in ratios.items()
        if p in ok
    )
    fast = res.get("rensa_faster")
    faster = (
        f" Against the faster rensa script ({PEERS[fast['peer']][1]}): **{fast['wall']:.2f}x**."
        if fast
        else ""
    )
    workers = "" if res.get("workers") is None else f", neardup index --workers {res['workers']}"
    what = (
        f"{c['documents']:,} documents (~{c['words_per_doc']} words, "
        + (c["source"] if "source" in c else f"{c['edited_copies']:,} edited copies")
        + ")"
    )
    lines = [
        f"**{title}**, {what}, {res.get('kept', 'best')} of {res['repeat']}{workers}: "
        f"neardup {nd['seconds']:.2f} s wall, {nd.get('cpu_s', 0):.2f} s CPU; {head} "
        f"(x = peer / neardup; targets: >= 3x datasketch bulk, >= 1.5x rensa).{faster}",
        "",
        *_day_md(nd, ok),
        *(
            _day_md(res["neardup_search_ready"], ok, "`index --search-ready`")
            if "neardup_search_ready" in res
            else []
        ),
        "| stage (s) | " + " | ".join(name for name, _ in cols) + " |",
        "|---|" + "---:|" * len(cols),
    ]
    for s in (*STAGES, "other"):
        lines.append(
            f"| {s} | " + " | ".join(f"{x['stages'].get(s, 0.0):.2f}" for _, x in cols) + " |"
        )

    def rss(x: dict[str, Any]) -> str:
        m = x["peak_rss_mb"]
        return (
            f"index {m['index']:.0f}, clusters {m['clusters']:.0f}"
            if "index" in m
            else f"{m['all']:.0f}"
        )

    lines += [
        "| **total (wall)** | " + " | ".join(f"**{x['seconds']:.2f}**" for _, x in cols) + " |",
        "| **CPU (user + sys)** | "
        + " | ".join(f"**{x.get('cpu_s', 0):.2f}**" for _, x in cols)
        + " |",
        "| peak RSS (MB) | " + " | ".join(rss(x) for _, x in cols) + " |",
        "| clusters (docs in them) | "
        + " | ".join(f"{x['clusters']:,} ({x['docs_in_clusters']:,})" for _, x in cols)
        + " |",
        "",
    ]
    lines += _cpu_stages([(name, x) for name, x in cols[: 2 if one else 1]])
    for p, x in peers.items():
        if "error" in x:
            lines += [f"{PEERS[p][1]}: not measured ({x['error'][:300]}).", ""]
    return lines


def whole_day(nd: dict[str, Any]) -> float:
    """neardup's whole day: ``index`` + ``clusters`` + the first search + the first
    containment query after indexing, seconds (wall, each a fresh process)."""
    return nd["seconds"] + nd["first_search_s"] + nd["first_containment_query_s"]


def _day_md(
    nd: dict[str, Any], peers: dict[str, dict[str, Any]], index: str = "`index`"
) -> list[str]:
    """The line of neardup's whole day (``index`` as ``index`` says) beside the peers' runs
    (their scripts have no search: their day is their run; x = peer / neardup)."""
    beside = ", ".join(
        f"{PEERS[p][1]} {x['seconds']:.2f} s ({x['seconds'] / whole_day(nd):.2f}x)"
        for p, x in peers.items()
    )
    return [
        f"The whole day: {index} {nd['index_s']:.2f} s, `clusters` {nd['clusters_s']:.2f} s, "
        f"the first `search` {nd['first_search_s']:.2f} s, the first containment `query` "
        f"{nd['first_containment_query_s']:.2f} s (targets <= 0.5 s each): "
        f"**{whole_day(nd):.2f} s**; beside the peers' runs (no search): {beside or 'none'}.",
        "",
    ]


def markdown(res: dict[str, Any]) -> str:
    nd, c = res["neardup"], res["corpus"]
    lines = [
        f"Load average {res.get('load_before', 0):.1f} before, "
        f"{res.get('load_after', 0):.1f} after.",
        "",
    ]
    lines += _comparison_md(
        "Real documents" if res.get("corpus_kind") == "real" else "Synthetic corpus", res
    )
    if res.get("real"):
        lines += _comparison_md("Real documents", res["real"])
    q = res["fresh_query"]
    loops = res["compiled_loops"]
    lines += [
        f"After indexing the {c['documents']:,} documents: the first `neardup search` "
        f"{nd['first_search_s']:.2f} s, the next one {nd['next_search_s']:.2f} s; the first "
        f"containment `neardup query` {nd['first_containment_query_s']:.2f} s, the next one "
        f"{nd['next_containment_query_s']:.2f} s.",
        "",
        f"Fresh-process `neardup query` (median of {q['queries']}, index of {q['index_docs']} "
        f"fa + ru documents): Persian {q['fa_s']:.2f} s wall, {q.get('fa_cpu_s', 0):.2f} s CPU; "
        f"Russian {q['ru_s']:.2f} s wall, {q.get('ru_cpu_s', 0):.2f} s CPU; "
        f"Persian / Russian **{q['fa_over_ru']:.2f}x** (target <= 1.5x; target <= 0.15 s each).",
        "",
        f"Loading the compiled signing loops ({loops.get('form', 'numba')}), in a fresh process "
        f"that has made its tables (median of {loops['runs']}): {loops['load_s']:.3f} s and "
        f"{loops['rss_mb']:.0f} MB resident. With signing workers the storing process first "
        f"waits {nd['first_wait_s'] or 0:.2f} s for a signed batch."
        + (
            f" The default chose {nd['default_workers']} signing workers in that run (one per "
            "idle CPU less the storing process's, read from "
            f"{res.get('workers_from', 'the load average')} as the command starts)."
            if nd.get("default_workers") is not None
            else ""
        ),
        "",
        "neardup: `neardup index` + `neardup clusters` in fresh processes (defaults, embedded "
        "engine; stages are this process's own: with signing workers, `canonicalize` and "
        "`sign` are what it signed itself and `wait` the time it waited for the workers; "
        "`other` = interpreter start, opening the index, commits). The one-process column is "
        "`neardup index --workers 0`, every stage's whole cost. CPU: user + system seconds of "
        "the processes, signing workers included. Peers, each reading the same JSONL file in "
        "a fresh process, then union-find over the candidates (unverified): *datasketch "
        "bulk*, its strongest usage: Python `\\w+` 5-shingles, `MinHash.bulk` (one set of "
        "permutations for all documents), `MinHashLSH` at 0.8 filled in an insertion session, "
        "a query per document; *datasketch new*: a new `MinHash` per document with "
        "`update_batch`, one `insert` each; *rensa script*: the same shingles, "
        "`RMinHash.from_token_sets`, `RMinHashLSH` (16 bands of 8 rows) `insert_many` and "
        "`query_all`; *rensa plain*: per document the set of shingles, "
        "`RMinHash(num_perm=128, seed=42).update`, `RMinHashLSH.insert`, then `query` per "
        "document; *text-dedup*: the file read into a dataset, then its `minhash` command "
        "(one process, xxh3).",
    ]
    return "\n".join(lines) + "\n"


def _cpu_stages(cols: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """The CPU seconds per stage of neardup's ``index`` and ``clusters`` processes (their
    own: signing workers' CPU is in the total only), where the results have them."""
    cols = [(name, x) for name, x in cols if x.get("stages_cpu")]
    if not cols:
        return []
    lines = [
        "| stage, CPU (s) | " + " | ".join(name for name, _ in cols) + " |",
        "|---|" + "---:|" * len(cols),
    ]
    for s in (*STAGES, "other"):
        lines.append(
            f"| {s} | " + " | ".join(f"{x['stages_cpu'].get(s, 0.0):.2f}" for _, x in cols) + " |"
        )
    lines.append(
        "| **storing + clusters processes** | "
        + " | ".join(f"**{sum(x['stages_cpu'].values()):.2f}**" for _, x in cols)
        + " |"
    )
    return lines + [""]


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
