"""SimHash block keys: how many candidates each key scheme proposes as the index grows.

Two 64-bit fingerprints within Hamming distance k agree on at least j of k + j blocks
(pigeonhole), so keys over the j-subsets of the blocks find every such pair
(:func:`neardup.sketches.simhash.block_keys`). This signs a stream of documents of about 550 words
(:func:`benchmarks.engine.long_generator`) and counts, at each checkpoint, the earlier
documents sharing a SimHash key with each document (what the engine proposes by SimHash,
before the length filter), for j = 1 (4 x 16-bit keys, signature versions up to 5), j = 2
(10 keys of 25-26 bits, version 6) and j = 3 (20 keys of 32-33 bits), and how many of them
are within distance k (the same for every j: the check that no scheme loses a pair).

    python -m benchmarks.simhash_keys --sizes 20000,80000 --out result.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from neardup.config import Config
from neardup.signing.signer import Signer
from neardup.sketches.simhash import block_keys_many, hamming_many

SCHEMES = (1, 2, 3)


def pairs_sharing_a_key(keys: np.ndarray) -> np.ndarray:
    """The distinct pairs (a < b) of rows of ``keys`` (D x n) sharing the key of a column,
    as codes a * D + b."""
    d = len(keys)
    codes = []
    for col in keys.T:
        order = np.argsort(col, kind="stable")
        ks = col[order]
        gap = 1
        while gap < d:
            same = np.flatnonzero(ks[gap:] == ks[:-gap])
            if not len(same):
                break
            a, b = order[same], order[same + gap]
            codes.append(np.minimum(a, b) * d + np.maximum(a, b))
            gap += 1
    return np.unique(np.concatenate(codes)) if codes else np.zeros(0, dtype=np.int64)


def measure(fps: np.ndarray, sizes: list[int], k: int) -> list[dict]:
    out = []
    for n in sizes:
        row: dict = {"documents": n, "schemes": {}}
        near = None
        for j in SCHEMES:
            t0 = time.process_time()
            keys = block_keys_many(fps[:n], k, j)
            key_s = time.process_time() - t0
            pairs = pairs_sharing_a_key(keys)
            a, b = pairs // n, pairs % n
            within = int((hamming_many(fps[a], fps[b]) <= k).sum())
            near = within if near is None else near
            if within != near:
                raise AssertionError(f"j = {j}: {within} pairs within distance {k}, j = 1: {near}")
            row["schemes"][f"j={j}"] = {
                "blocks": k + j,
                "keys_per_doc": math.comb(k + j, j),
                "candidates_per_doc": len(pairs) / n,
                "within_k_per_doc": within / n,
                "key_cpu_us_per_doc": 1e6 * key_s / n,
            }
        out.append(row)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.simhash_keys", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--sizes", default="20000,80000")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    sizes = sorted(int(x) for x in a.sizes.split(",") if x)
    from .engine import long_generator

    gen = long_generator(a.seed)
    config = Config()
    signer = Signer(config)
    fps = []
    for start in range(0, sizes[-1], 1000):
        docs = [s.doc for s in gen.take(min(1000, sizes[-1] - start))]
        fps.extend(s.simhash for s in signer.sign_batch(docs))
    res = {
        "command": "python -m benchmarks.simhash_keys "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "k": config.simhash_k,
        "checkpoints": measure(np.array(fps, dtype=np.uint64), sizes, config.simhash_k),
    }
    a.out.write_text(json.dumps(res, indent=1))
    for row in res["checkpoints"]:
        for name, r in row["schemes"].items():
            print(
                f"{row['documents']:>8,} docs {name}: {r['keys_per_doc']:>2} keys/doc, "
                f"{r['candidates_per_doc']:.3f} candidates/doc, "
                f"{r['within_k_per_doc']:.3f} within k/doc"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
