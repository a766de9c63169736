"""2. Candidate quality: recall of the exact ground-truth pairs and candidates per query, for
neardup's LSH bands (``Config(threshold=t)``: b bands of r rows, a pair is a candidate when
it shares >= m = ``min_match`` band keys), neardup's full candidate query (those bands +
SimHash blocks + exact key, length filter: what the engine hands to verification),
datasketch ``MinHashLSH`` and rensa ``RMinHashLSH``, all at 128 permutations on the same
shingle sets.

Ground truth: every pair with exact Jaccard >= t (PP-join, :mod:`neardup.evaluation.ppjoin`).
The pairs neardup reports (an embedded index at each threshold) are measured against it:
precision (1.0 where verification is exact), recall, and the largest error of a reported
resemblance (0 where it is exact). No candidate set can be smaller than the true pairs it
finds: recall r at J >= t needs at least r * (true pairs per query) candidates per query
(``truth`` in each row).
"""

from __future__ import annotations

import random
import tempfile
from collections import Counter
from itertools import combinations
from pathlib import Path

import numpy as np

from neardup.api import NearDup
from neardup.config import Config
from neardup.sketches.lsh import band_keys, collision_probability, optimal_bands, optimal_lsh
from neardup.sketches.minhash import oph_sketch
from neardup.evaluation.ppjoin import ppjoin
from neardup.signing.signer import Signer
from neardup.signing.records import Document
from neardup.sketches.simhash import hamming
from neardup.sketches.verify import length_bounds

from . import exchange, peers, synth

_trapezoid = getattr(np, "trapezoid", None) or np.trapz  # NumPy >= 2.0 renamed trapz to trapezoid

THRESHOLDS = (0.5, 0.7, 0.8, 0.9)
#: (fp_weight, fn_weight) pairs tried for the (bands, rows, min_match) choice; the Config
#: default is among them.
WEIGHT_GRID = ((0.5, 0.5), (0.3, 0.7), (0.2, 0.8), (0.1, 0.9), (0.05, 0.95), (0.02, 0.98))


def collection(corpora: dict[str, list[Document]], n: int, seed: int) -> list[Document]:
    """``n`` documents: a shuffled sample of the corpora followed by collages and edited copies."""
    base = [d for docs in corpora.values() for d in docs]
    random.Random(seed).shuffle(base)
    gen = synth.Generator(base[: max(1, n // 4)], seed=seed, dup_rate=0.35)
    return [s.doc for s in gen.take(n)]


def pairs_from_keys(keys: np.ndarray, min_match: int = 1) -> set[tuple[int, int]]:
    """Pairs of rows sharing a value in the same column of ``keys`` (N x b) in at least
    ``min_match`` columns (the engines' ``KeyGroup.min_match``)."""
    shared: Counter = Counter()
    n = keys.shape[0]
    for col in keys.T:
        order = np.argsort(col, kind="stable")
        s = col[order]
        cut = np.flatnonzero(s[1:] != s[:-1]) + 1
        for g in np.split(order, cut):
            if len(g) > 1:
                shared.update(combinations(sorted(g.tolist()), 2))
    out = {p for p, c in shared.items() if c >= min_match}
    assert all(0 <= a < b < n for a, b in list(out)[:10])
    return out


def recall(cands: set[tuple[int, int]], truth: dict[tuple[int, int], float], t: float) -> dict:
    at_t = [p for p in truth]
    above = [p for p, j in truth.items() if j >= t + 0.05 - 1e-12]
    return {
        "truth_pairs": len(at_t),
        "recall_at_t": sum(p in cands for p in at_t) / len(at_t) if at_t else None,
        "truth_pairs_t_plus_0_05": len(above),
        "recall_at_t_plus_0_05": sum(p in cands for p in above) / len(above) if above else None,
    }


def reported_pairs(docs: list[Document], t: float, truth: dict[tuple[int, int], float]) -> dict:
    """What neardup reports at threshold ``t``, measured against the exact truth: the pairs
    of an embedded index of ``docs`` made with ``Config(threshold=t)``
    (:meth:`neardup.api.NearDup.pairs`: candidates from the keys, verified on full shingle
    sets), their precision (the share that are true pairs), their recall, and the largest
    difference between a reported resemblance and the exact Jaccard PP-join gives."""
    at = {d.id: i for i, d in enumerate(docs)}
    with NearDup.open(":memory:", Config(threshold=t)) as nd:
        nd.index(docs, progress=None)
        got = {tuple(sorted((at[p.a], at[p.b]))): p.resemblance for p in nd.pairs(t)}
    true = got.keys() & truth.keys()
    return {
        "pairs": len(got),
        "precision": len(true) / len(got) if got else None,
        "recall_at_t": len(true) / len(truth) if truth else None,
        "max_resemblance_error": max((abs(got[p] - truth[p]) for p in true), default=None),
    }


def run(corpora: dict[str, list[Document]], n: int, seed: int, use_peers: bool, log=print) -> dict:
    docs = collection(corpora, n, seed)
    log(f"candidates: signing {len(docs)} documents")
    base_cfg = Config()
    signer = Signer(base_cfg)
    signed = signer.sign_batch(docs)
    sets = [s.shingles for s in signed]
    hv = np.stack([oph_sketch(s, base_cfg.num_perm, base_cfg.seed) for s in sets])
    sizes = np.array([len(s) for s in sets])
    sim_keys = np.stack([s.keys["simhash"] for s in signed])
    exact = np.array([s.keys["exact"][0] for s in signed])
    simh = [s.simhash for s in signed]

    peer_res: dict = {}
    if use_peers:
        # rensa needs bands dividing num_perm: the divisor with the least 0.5/0.5 error area
        ds_bands = {str(t): rensa_bands(t, base_cfg.num_perm) for t in THRESHOLDS}
        with tempfile.TemporaryDirectory(prefix="neardup-bench-") as tmp:
            task = {
                "task": "candidates",
                "thresholds": list(THRESHOLDS),
                "rensa_bands": ds_bands,
                "hashes": str(exchange.write_hashes(Path(tmp) / "hashes.npz", sets)),
            }
            log("candidates: peers (datasketch MinHashLSH, rensa RMinHashLSH)")
            try:
                peer_res = peers.run(task)
            except Exception as e:
                peer_res = {"error": str(e)}

    out: dict = {
        "docs": len(docs),
        "num_perm": base_cfg.num_perm,
        "default_weights": [base_cfg.fp_weight, base_cfg.fn_weight],
        "thresholds": {},
        "weight_grid": {},
    }
    # the engine's resemblance query besides the bands: SimHash blocks (kept when Hamming <= k),
    # exact key
    others = {
        p
        for p in pairs_from_keys(sim_keys)
        if hamming(simh[p[0]], simh[p[1]]) <= base_cfg.simhash_k
    }
    others |= pairs_from_keys(exact[:, None])
    band_cache: dict[tuple[int, int], np.ndarray] = {}  # (b, r) -> band keys of every document

    def band_pairs(b: int, r: int, m: int) -> set[tuple[int, int]]:
        if (b, r) not in band_cache:
            band_cache[(b, r)] = np.stack([band_keys(h, b, r) for h in hv])
        return pairs_from_keys(band_cache[(b, r)], m)

    for t in THRESHOLDS:
        log(f"candidates: threshold {t}")
        truth = {(a, b): j for a, b, j in ppjoin(sets, t)}
        cfg = Config(threshold=t)
        row: dict = {"truth": {"pairs": len(truth), "pairs_per_query": 2 * len(truth) / len(docs)}}
        lsh = band_pairs(cfg.bands, cfg.rows, cfg.min_match)
        row["neardup_lsh"] = {
            "bands": cfg.bands,
            "rows": cfg.rows,
            "min_match": cfg.min_match,
            "candidates_per_query": 2 * len(lsh) / len(docs),
            **recall(lsh, truth, t),
        }
        # the classic any-band scheme (m = 1) the optimizer picks for the same weights, for
        # comparison
        b1, r1 = optimal_bands(t, base_cfg.num_perm, base_cfg.fp_weight, base_cfg.fn_weight)
        any_band = band_pairs(b1, r1, 1)
        row["neardup_lsh_any_band"] = {
            "bands": b1,
            "rows": r1,
            "min_match": 1,
            "candidates_per_query": 2 * len(any_band) / len(docs),
            **recall(any_band, truth, t),
        }
        full = _engine_pairs(lsh, others, sizes, t)
        row["neardup_engine_keys"] = {
            "bands": cfg.bands,
            "rows": cfg.rows,
            "min_match": cfg.min_match,
            "candidates_per_query": 2 * len(full) / len(docs),
            **recall(full, truth, t),
        }

        row["neardup_verified"] = reported_pairs(docs, t, truth)

        for peer in ("datasketch", "rensa"):
            pr = peer_res.get(str(t), {}).get(peer) if "error" not in peer_res else None
            if pr is None:
                row[peer] = {"error": peer_res.get("error", "peers not run")}
            elif "error" in pr:
                row[peer] = {"error": pr["error"]}
            else:
                cp = {(i, j) for i, cs in enumerate(pr["candidates"]) for j in cs if i < j} | {
                    (j, i) for i, cs in enumerate(pr["candidates"]) for j in cs if j < i
                }
                row[peer] = {
                    "bands": pr["bands"],
                    "rows": pr["rows"],
                    "candidates_per_query": 2 * len(cp) / len(docs),
                    **recall(cp, truth, t),
                    **({"note": pr["note"]} if "note" in pr else {}),
                }
        out["thresholds"][str(t)] = row

        grid = {}
        for fp, fn in WEIGHT_GRID:
            b, r, m = optimal_lsh(t, base_cfg.num_perm, fp, fn, base_cfg.max_bands)
            p = lsh if (b, r, m) == (cfg.bands, cfg.rows, cfg.min_match) else band_pairs(b, r, m)
            grid[f"{fp}/{fn}"] = {
                "bands": b,
                "rows": r,
                "min_match": m,
                "candidates_per_query": 2 * len(p) / len(docs),
                "engine_candidates_per_query": 2
                * len(_engine_pairs(p, others, sizes, t))
                / len(docs),
                **recall(p, truth, t),
            }
        out["weight_grid"][str(t)] = grid
    out["recommended_weights"] = recommend(out)
    if "error" in peer_res:
        out["peers_error"] = peer_res["error"]
    elif peer_res:
        out["peer_versions"] = peer_res.get("versions")
    return out


def rensa_bands(t: float, num_perm: int) -> int:
    """Among the band counts dividing ``num_perm``, the one minimising the (0.5, 0.5)-weighted
    false-positive + false-negative areas of the S-curve (datasketch's criterion)."""

    def err(b: int) -> float:
        lo, hi = np.linspace(0.0, t, 512), np.linspace(t, 1.0, 512)
        r = num_perm // b
        return 0.5 * _trapezoid(collision_probability(lo, b, r), lo) + 0.5 * _trapezoid(
            1.0 - collision_probability(hi, b, r), hi
        )

    return min((b for b in range(1, num_perm + 1) if num_perm % b == 0), key=err)


def _engine_pairs(
    lsh: set[tuple[int, int]], others: set[tuple[int, int]], sizes, t: float
) -> set[tuple[int, int]]:
    """What the engine hands to verification: >= m bands, SimHash blocks, exact key, length
    filter."""
    return {(a, b) for a, b in lsh | others if _length_ok(sizes[a], sizes[b], t)}


def _length_ok(na: int, nb: int, t: float) -> bool:
    lo, hi = length_bounds(int(na), t)
    return lo <= nb <= hi


def recommend(out: dict) -> dict:
    """The grid weights whose bands alone meet the recall targets (>= 0.99 at t + 0.05, >= 0.95
    at t; measured: a threshold without true pairs meets neither) at every threshold with the
    fewest candidates the engine verifies (bands with their
    min_match + SimHash blocks + exact key, length filter), and whether those stay under
    datasketch's count."""
    best = None
    for w in out["weight_grid"][str(THRESHOLDS[0])]:
        ok, cpq, under = True, 0.0, True
        for t in THRESHOLDS:
            g = out["weight_grid"][str(t)][w]
            r1, r2 = g["recall_at_t"], g["recall_at_t_plus_0_05"]
            # (a recall not measured, no true pair there, meets no target)
            ok &= r1 is not None and r1 >= 0.95 and r2 is not None and r2 >= 0.99
            cpq += g["engine_candidates_per_query"]
            ds = out["thresholds"][str(t)].get("datasketch", {})
            if "candidates_per_query" in ds:
                under &= g["engine_candidates_per_query"] <= ds["candidates_per_query"]
        if ok and (best is None or cpq < best[1]):
            best = (w, cpq, under)
    if best is None:
        return {"weights": None, "note": "no grid weights met every recall target"}
    return {
        "weights": best[0],
        "total_engine_candidates_per_query": best[1],
        "not_more_than_datasketch": best[2],
    }
