"""4. N-to-N: all near-duplicate pairs / clusters of one collection (the synthetic stream's
first ``n`` documents, the same ones the engine run indexes).

Everyone starts from the same canonical tokens (neardup's canonicalizer, run once before
any timing), so everyone hashes the same shingles:

* neardup: a fresh embedded index, ``NearDup.index(tag=False)`` of documents carrying their
  tokens (bulk load: sign and store), then ``NearDup.clusters()``; pairs verified exactly.
* text-dedup's MinHash dedup and datasketch ``MinHashLSH`` + union-find, unverified.

Everyone is scored against the exact ground truth: PP-join on the stored shingle sets.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path

from neardup.api import NearDup
from neardup.canonical import Canonicalizer
from neardup.config import Config
from neardup.evaluation.ppjoin import ppjoin

from . import exchange, peers, synth
from .engine import base_documents


def cluster_recall(labels: list, truth: dict[tuple[int, int], float]) -> float | None:
    if not truth:
        return None
    return sum(labels[a] == labels[b] for a, b in truth) / len(truth)


def flagged(labels: list, truth: dict[tuple[int, int], float]) -> dict:
    """Documents put in a cluster of 2+ vs documents that have a true partner (J >= t)."""
    counts: dict = {}
    for x in labels:
        counts[x] = counts.get(x, 0) + 1
    flag = {i for i, x in enumerate(labels) if counts[x] > 1}
    real = {i for p in truth for i in p}
    return {
        "flagged_docs": len(flag),
        "docs_with_true_partner": len(real),
        "flagged_precision": len(flag & real) / len(flag) if flag else None,
        "flagged_recall": len(flag & real) / len(real) if real else None,
        "clusters": sum(1 for c in counts.values() if c > 1),
    }


def run(n: int, t: float, seed: int, use_peers: bool, with_text_dedup: bool, log=print) -> dict:
    docs = [s.doc for s in synth.Generator(base_documents(), seed=seed).take(n)]
    index = {d.id: i for i, d in enumerate(docs)}
    out: dict = {"docs": n, "threshold": t}
    log(f"N-to-N: canonical tokens of the {n} documents")
    t0 = time.perf_counter()
    canonicalizer = Canonicalizer(Config())
    canon = [canonicalizer.canonicalize(d.text, d.lang) for d in docs]
    out["canonicalize_s"] = time.perf_counter() - t0
    tokens = [x.tokens for x in canon]
    with tempfile.TemporaryDirectory(prefix="neardup-nton-") as tmp:
        log(f"N-to-N: neardup bulk index of {n} documents (tag=False)")
        nd = NearDup.open(str(Path(tmp) / "nton.db"), Config())
        t0 = time.perf_counter()
        nd.index(
            (
                dataclasses.replace(d, lang=x.lang, tokens=x.tokens)
                for d, x in zip(docs, canon, strict=True)
            ),
            batch_size=1000,
            tag=False,
            progress=None,
        )
        t_index = time.perf_counter() - t0
        t0 = time.perf_counter()
        clusters = nd.clusters(t, write=False)
        t_clusters = time.perf_counter() - t0
        t0 = time.perf_counter()
        pairs = nd.pairs(t)
        t_pairs = time.perf_counter() - t0
        sets = [None] * n
        for d in nd.engine.scan(batch_size=5000):
            sets[index[d.id]] = d.shingles
        nd.close()
    log(f"N-to-N: exact ground truth (PP-join, t={t})")
    t0 = time.perf_counter()
    truth = {(a, b): j for a, b, j in ppjoin(sets, t)}
    out.update(truth_pairs=len(truth), ppjoin_s=time.perf_counter() - t0)
    nd_pairs = {tuple(sorted((index[p.a], index[p.b]))) for p in pairs}
    labels = list(range(n))
    for k, c in enumerate(clusters):
        for m in c.members:
            labels[index[m]] = n + k
    out["neardup"] = {
        "seconds": t_index + t_clusters,
        "index_s": t_index,
        "clusters_s": t_clusters,
        "pairs_s": t_pairs,
        "pair_recall": len(nd_pairs & truth.keys()) / len(truth) if truth else None,
        "pair_precision": len(nd_pairs & truth.keys()) / len(nd_pairs) if nd_pairs else None,
        "cluster_recall": cluster_recall(labels, truth),
        **flagged(labels, truth),
        "verified": True,
        "note": "seconds = index(tag=False) from canonical tokens (sign, store) + clusters(); "
        "pairs verified exactly",
    }
    if not use_peers:
        return out
    which = ["datasketch"] + (["text-dedup", "text-dedup-simhash"] if with_text_dedup else [])
    with tempfile.TemporaryDirectory(prefix="neardup-bench-") as tmp:
        task = {
            "task": "nton",
            "threshold": t,
            "peers": which,
            "tokens": str(exchange.write_jsonl(Path(tmp) / "tokens.jsonl", tokens)),
        }
        log(f"N-to-N: peers {', '.join(which)}")
        try:
            res = peers.run(task, timeout=3600)
        except Exception as e:
            out["peers_error"] = str(e)
            return out
    for name in which:
        r = res.get(name)
        if r is None or "error" in r:
            out[name] = {"error": (r or {}).get("error", "not run")}
            continue
        lab = r.pop("labels")
        out[name] = {**r, "cluster_recall": cluster_recall(lab, truth), **flagged(lab, truth)}
    if not with_text_dedup:
        out["text-dedup"] = {
            "error": "text-dedup is not installed in the peers' virtualenv "
            "(quick mode installs the light peers only)"
        }
    out["peer_versions"] = res.get("versions")
    return out
