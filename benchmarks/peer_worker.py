"""Runs inside the peers' virtualenv: datasketch, rensa, text-dedup and simhash measured on
inputs written by the main process. Standard library, numpy and the peers only.

    python peer_worker.py TASK.json   ->  JSON result on stdout

Inputs (paths in the task): ``texts`` JSONL of raw strings, ``tokens`` JSONL of neardup's
canonical token lists, ``hashes`` .npz with neardup's shingle hashes (``flat`` uint64,
``offsets``). Every timed run is one process, one core.
"""

from __future__ import annotations

import gc
import json
import os
import re
import resource
import sys
import time
from importlib import metadata

import numpy as np

NUM_PERM = 128
SHINGLE = 5
_WORD = re.compile(r"\w+")


def versions() -> dict:
    out = {}
    for p in ("datasketch", "rensa", "text-dedup", "simhash", "numpy"):
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = None
    return out


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def read_hashes(path):
    z = np.load(path)
    flat, off = z["flat"], z["offsets"]
    return [flat[off[i] : off[i + 1]] for i in range(len(off) - 1)], flat, off


def shingle_strings(tokens):
    """Word 5-shingles as strings; one shingle of all tokens when there are fewer than 5."""
    if not tokens:
        return []
    w = min(SHINGLE, len(tokens))
    return [" ".join(tokens[i : i + w]) for i in range(len(tokens) - w + 1)]


def python_shingles(text):
    """The usual Python pipeline: lower-case, \\w+ words, word 5-shingles."""
    return shingle_strings(_WORD.findall(text.lower()))


def timed(fn, items, repeat=1):
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn(items)
        best = min(best, time.perf_counter() - t)
    return {"seconds": best, "docs": len(items), "docs_per_s": len(items) / best if best else None}


def low32(x):
    """datasketch's default scheme takes 32-bit hash values: the low 32 bits of neardup's."""
    return int(x) & 0xFFFFFFFF


# -- 1. signing ---------------------------------------------------------------------------------
def task_signing(task):
    texts = read_jsonl(task["texts"])
    tokens = read_jsonl(task["tokens"])
    sets, flat, off = read_hashes(task["hashes"])
    rep = task.get("repeat", 1)
    return {
        "text": _signing_from_text(texts, rep),
        "tokens": _signing_from_tokens(tokens, rep),
        "hashes": _minhash_stage(sets, flat, off, rep),
    }


def _sketchers(shingles_of, words_of):
    """The peers' signing paths with ``shingles_of`` (item -> shingle strings)."""
    import datasketch
    import rensa
    import simhash

    def ds_batch(xs):
        for t in xs:
            m = datasketch.MinHash(num_perm=NUM_PERM)
            m.update_batch([s.encode() for s in shingles_of(t)])

    def ds_bulk(xs):
        datasketch.MinHash.bulk(
            [[s.encode() for s in shingles_of(t)] for t in xs], num_perm=NUM_PERM
        )

    def rensa_with(cls):
        def run(xs):
            for t in xs:
                m = cls(num_perm=NUM_PERM, seed=42)
                m.update(shingles_of(t))
                m.digest()

        return run

    def simhash_of(xs):
        return [simhash.Simhash(words_of(t)).value for t in xs]

    return {
        "datasketch_update_batch": ds_batch,
        "datasketch_bulk": ds_bulk,
        "rensa_rminhash": rensa_with(rensa.RMinHash),
        "rensa_cminhash": rensa_with(rensa.CMinHash),
        "simhash_1e0ng": simhash_of,
    }


def _signing_from_text(texts, rep):
    def python_shingling_only(xs):
        for t in xs:
            python_shingles(t)

    text_paths = _sketchers(python_shingles, lambda t: _WORD.findall(t.lower()))
    return {
        "python_shingling_only": timed(python_shingling_only, texts, rep),
        **{name: timed(fn, texts, rep) for name, fn in text_paths.items()},
    }


def _signing_from_tokens(tokens, rep):
    token_paths = _sketchers(shingle_strings, lambda t: t)
    return {
        name: timed(token_paths[name], tokens, rep)
        for name in ("datasketch_update_batch", "rensa_rminhash", "rensa_cminhash", "simhash_1e0ng")
    }


def _minhash_stage(sets, flat, off, rep):
    """MinHash stage alone on neardup's shingle hashes (identity hash function where allowed)."""
    import datasketch
    import rensa

    def ds_batch_hash(xs):
        for s in xs:
            m = datasketch.MinHash(num_perm=NUM_PERM, hashfunc=low32)
            m.update_batch(s.tolist())

    def ds_bulk_hash(xs):
        datasketch.MinHash.bulk([s.tolist() for s in xs], num_perm=NUM_PERM, hashfunc=low32)

    def rensa_flat(xs):
        rensa.RMinHash.digest_matrix_from_flat_token_hashes(flat, off, num_perm=NUM_PERM, seed=42)

    def rensa_sets(xs):
        rensa.RMinHash.digest_matrix_from_token_hash_sets(
            [s.tolist() for s in xs], num_perm=NUM_PERM, seed=42
        )

    def cminhash_sets(xs):
        rensa.CMinHash.digests64_from_token_hash_sets(
            [s.tolist() for s in xs], num_perm=NUM_PERM, seed=42
        )

    stage = {}
    for name, fn in (
        ("datasketch_update_batch", ds_batch_hash),
        ("datasketch_bulk", ds_bulk_hash),
        ("rensa_rminhash_flat_batch", rensa_flat),
        ("rensa_rminhash_sets_batch", rensa_sets),
        ("rensa_cminhash_sets_batch", cminhash_sets),
    ):
        try:
            stage[name] = timed(fn, sets, rep)
        except Exception as e:  # an API this version lacks
            stage[name] = {"error": f"{type(e).__name__}: {e}"}
    return stage


# -- 2. candidate quality -------------------------------------------------------------------------
def _as_bytes(sets):
    return [[int(x).to_bytes(8, "little") for x in s] for s in sets]


def task_candidates(task):
    """For every document, the other documents each LSH index proposes (self excluded)."""
    import datasketch
    import rensa

    sets, _, _ = read_hashes(task["hashes"])
    n = len(sets)
    out = {}
    t0 = time.perf_counter()
    mhs = datasketch.MinHash.bulk([s.tolist() for s in sets], num_perm=NUM_PERM, hashfunc=low32)
    ds_sign = time.perf_counter() - t0
    t0 = time.perf_counter()
    rmh = rensa.RMinHash.from_token_sets(_as_bytes(sets), num_perm=NUM_PERM, seed=42)
    rensa_sign = time.perf_counter() - t0
    for t in task["thresholds"]:
        res = {}
        lsh = datasketch.MinHashLSH(threshold=t, num_perm=NUM_PERM)
        t0 = time.perf_counter()
        with lsh.insertion_session() as s:
            for i, m in enumerate(mhs):
                s.insert(i, m, check_duplication=False)
        ins = time.perf_counter() - t0
        t0 = time.perf_counter()
        cands = [sorted(j for j in lsh.query(m) if j != i) for i, m in enumerate(mhs)]
        res["datasketch"] = {
            "bands": lsh.b,
            "rows": lsh.r,
            "insert_s": ins,
            "query_s": time.perf_counter() - t0,
            "sign_s": ds_sign,
            "candidates": cands,
        }
        bands = task["rensa_bands"][str(t)]
        try:
            rl = rensa.RMinHashLSH(threshold=t, num_perm=NUM_PERM, num_bands=bands)
            t0 = time.perf_counter()
            for i, m in enumerate(rmh):
                rl.insert(i, m)
            ins = time.perf_counter() - t0
            t0 = time.perf_counter()
            cands = [sorted(j for j in rl.query(m) if j != i) for i, m in enumerate(rmh)]
            res["rensa"] = {
                "bands": bands,
                "rows": NUM_PERM // bands,
                "insert_s": ins,
                "query_s": time.perf_counter() - t0,
                "sign_s": rensa_sign,
                "candidates": cands,
                "note": "rensa hashes its tokens itself: fed the 8-byte shingle hashes as bytes "
                "(same sets)",
            }
        except Exception as e:
            res["rensa"] = {"error": f"{type(e).__name__}: {e}"}
        out[str(t)] = res
    out["n"] = n
    return out


# -- 4. N-to-N ------------------------------------------------------------------------------------
class UnionFind:
    def __init__(self, n):
        self.parent = list(range(n))

    def find(self, x):
        p = self.parent
        while p[x] != x:
            p[x] = p[p[x]]
            x = p[x]
        return x

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def task_nton(task):
    tokens = read_jsonl(task["tokens"])
    t = task["threshold"]
    n = len(tokens)
    out = {"n": n}
    which = task.get("peers", ["datasketch", "text-dedup"])
    if "datasketch" in which:
        import datasketch

        t0 = time.perf_counter()
        mhs = datasketch.MinHash.bulk(
            [[s.encode() for s in shingle_strings(x)] for x in tokens], num_perm=NUM_PERM
        )
        t_sign = time.perf_counter() - t0
        lsh = datasketch.MinHashLSH(threshold=t, num_perm=NUM_PERM)
        with lsh.insertion_session() as s:
            for i, m in enumerate(mhs):
                s.insert(i, m, check_duplication=False)
        uf = UnionFind(n)
        for i, m in enumerate(mhs):
            for j in lsh.query(m):
                uf.union(i, j)
        total = time.perf_counter() - t0
        out["datasketch"] = {
            "seconds": total,
            "sign_s": t_sign,
            "labels": [uf.find(i) for i in range(n)],
            "bands": lsh.b,
            "rows": lsh.r,
            "verified": False,
        }
    if "text-dedup" in which:
        out["text-dedup"] = _text_dedup_minhash(tokens, t, task["workdir"])
    if "text-dedup-simhash" in which:
        out["text-dedup-simhash"] = _text_dedup_simhash(tokens, task["workdir"])
    return out


def _text_dedup_minhash(tokens, t, workdir):
    """text-dedup's MinHash dedup (its click command, one process) on the canonical tokens
    joined by spaces (its \\W split gives back the same tokens)."""
    out = _run_text_dedup(
        "minhash",
        tokens,
        workdir,
        "td",
        [
            "--threshold",
            str(t),
            "--num_perm",
            str(NUM_PERM),
            "--ngram",
            str(SHINGLE),
            "--min_length",
            "0",
            "--hash_func",
            "xxh3",
        ],
    )
    if "error" not in out:
        out.update(
            hash_func="xxh3",
            note="load + MinHashing + clustering + filtering + save, num_proc=1; "
            "dataset written before timing",
        )
    return out


def _text_dedup_simhash(tokens, workdir):
    """text-dedup's SimHash dedup (64 bits, Hamming <= 3, 4 buckets, word 3-grams: its
    defaults), one process, on the canonical tokens joined by spaces."""
    out = _run_text_dedup("simhash", tokens, workdir, "tds", [])
    if "error" not in out:
        out["note"] = (
            "SimHash: 64 bits, Hamming <= 3, word 3-grams (text-dedup defaults); "
            "load + hash + cluster + filter + save"
        )
    return out


def _run_text_dedup(method, tokens, workdir, prefix, extra_args):
    """Run text-dedup's ``method`` command on the tokens (dataset written before timing);
    seconds and its union-find labels, or an error."""
    import importlib

    try:
        import datasets

        mod = importlib.import_module(f"text_dedup.{method}")
    except Exception as e:
        return {"error": f"text-dedup not importable: {type(e).__name__}: {e}"}
    src = os.path.join(workdir, f"{prefix}_in")
    if not os.path.exists(src):
        datasets.Dataset.from_dict({"text": [" ".join(x) for x in tokens]}).save_to_disk(src)
    args = [
        "--path",
        src,
        "--local",
        "--output",
        os.path.join(workdir, f"{prefix}_out"),
        "--column",
        "text",
        "--num_proc",
        "1",
        *extra_args,
        "--cache_dir",
        os.path.join(workdir, f"{prefix}_cache"),
    ]
    t0 = time.perf_counter()
    try:
        mod.main.main(args, standalone_mode=False)
    except SystemExit as e:
        if e.code:
            return {"error": f"text-dedup {method} exited with {e.code}"}
    total = time.perf_counter() - t0
    return {
        "seconds": total,
        "labels": [mod.uf.find(i) for i in range(len(tokens))],
        "verified": False,
    }


TASKS = {"signing": task_signing, "candidates": task_candidates, "nton": task_nton}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        task = json.load(f)
    result = TASKS[task["task"]](task)
    result["versions"] = versions()
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with open(task["result"], "w", encoding="utf-8") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
