"""1. Signing throughput (one core): raw text -> everything neardup stores, per corpus and per
stage, against the peers on the same texts; then the MinHash stage alone on identical
shingle hashes.

    python -m benchmarks.signing              # this table alone, about 30 s a run
    python -m benchmarks.signing --runs 3     # three runs, to see how much the ratios move
"""

from __future__ import annotations

import gc
import tempfile
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from neardup.config import Config
from neardup.sketches.hashing import hash_strings
from neardup.sketches.lsh import band_keys_many
from neardup.sketches.minhash import kperm_sketch, oph_many
from neardup.sketches.ragged import offsets_of, segment_unique, split
from neardup.sketches.sampling import winnow_many
from neardup.sketches.shingles import combine_many
from neardup.keys.builtin import exact_keys
from neardup.signing.signer import Signer
from neardup.signing.records import Document
from neardup.sketches.simhash import agreeing_blocks, block_keys_many, token_simhash_many

from . import exchange, peers


def best_of(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def rate(n: int, seconds: float) -> dict:
    return {"seconds": seconds, "docs": n, "docs_per_s": n / seconds if seconds else None}


def stages(
    signer: Signer, docs: Sequence[Document], repeat: int
) -> tuple[dict, list[list[str]], list[np.ndarray], float]:
    """Seconds per stage of Signer.sign_batch over ``docs`` (each stage run on the previous
    one's output, over the whole batch as the signer does), and of sign_canonical."""
    c = signer.config
    cz = signer.canonicalizer
    canon = [cz.canonicalize(d.text, d.lang) for d in docs]  # the token strings, for the peers

    def text_steps() -> list[
        tuple[object, str]
    ]:  # as Signer.sign_batch: the text steps (their spans), then every language at once
        return list(
            zip(
                cz.spans_for_tokens([d.text for d in docs], [d.lang for d in docs]),
                cz.languages([d.text for d in docs], [d.lang for d in docs]),
                strict=True,
            )
        )

    texts = text_steps()
    off = offsets_of([len(x.tokens) for x in canon])
    flat_tokens = [t for x in canon for t in x.tokens]
    w = np.array([c.shingle_size_for(x.lang) for x in canon])
    th = hash_strings(flat_tokens, c.seed)
    seq, so = combine_many(th, off, w)
    sets, setoff = segment_unique(seq, so, compiled=True)
    hv = oph_many(sets, setoff, c.num_perm, c.seed)
    out = {
        "canonicalize": best_of(text_steps, repeat),  # the text steps
        "token_hashes": best_of(
            lambda: cz.token_hashes_many([t for t, _ in texts], [lang for _, lang in texts]), repeat
        ),
        "shingles": best_of(
            lambda: segment_unique(*combine_many(th, off, w), compiled=True), repeat
        ),
        "minhash": best_of(lambda: oph_many(sets, setoff, c.num_perm, c.seed), repeat),
        "simhash": best_of(
            lambda: block_keys_many(
                token_simhash_many(th, off), c.simhash_k, agreeing_blocks(c.version)
            ),
            repeat,
        ),
        "winnow": best_of(
            lambda: segment_unique(*winnow_many(seq, so, c.winnow_window), compiled=True), repeat
        ),
        "bands_exact": best_of(
            lambda: (band_keys_many(hv, c.bands, c.rows), exact_keys(th, off)), repeat
        ),
    }
    from_tokens = best_of(lambda: signer.sign_canonical(docs, canon), repeat)
    return out, [x.tokens for x in canon], split(sets, setoff), from_tokens


def neardup_entry(
    signer: Signer, docs: Sequence[Document], repeat: int
) -> tuple[dict, list[list[str]], list[np.ndarray]]:
    """neardup's signing rates on ``docs``: whole documents, from tokens, per stage, MinHash
    schemes; with the documents' tokens and shingle sets (for the peers)."""
    config = signer.config
    t_sign = best_of(lambda: signer.sign_batch(docs), repeat)
    st, tokens, sets, from_tokens = stages(signer, docs, repeat)
    entry: dict = {
        "docs": len(docs),
        "avg_chars": float(np.mean([len(d.text) for d in docs])),
        "avg_tokens": float(np.mean([len(t) for t in tokens])),
        "avg_shingles": float(np.mean([len(s) for s in sets])),
        "neardup_sign": rate(len(docs), t_sign),
        "neardup_from_tokens": rate(len(docs), from_tokens),
        "stages_us_per_doc": {k: v / len(docs) * 1e6 for k, v in st.items()},
        "minhash_stage": {
            "neardup_oph": rate(
                len(docs),
                best_of(
                    lambda: oph_many(
                        np.concatenate(sets),
                        offsets_of([len(s) for s in sets]),
                        config.num_perm,
                        config.seed,
                    ),
                    repeat,
                ),
            ),
            "neardup_kperm": rate(
                len(docs),
                best_of(
                    lambda: [kperm_sketch(s, config.num_perm, config.seed) for s in sets], repeat
                ),
            ),
        },
    }
    return entry, tokens, sets


def run(
    corpora: dict[str, list[Document]], per_corpus: int, repeat: int, use_peers: bool, log=print
) -> dict:
    config = Config()
    signer = Signer(config)
    for docs in corpora.values():  # load hazm, stop lists, digit tables once
        signer.sign_batch(docs[:5])
    result: dict = {
        "config": {
            "num_perm": config.num_perm,
            "minhash_scheme": config.minhash_scheme,
            "shingle_size": config.shingle_size,
        },
        "per_corpus": {},
    }
    for name, docs in corpora.items():
        docs = docs[:per_corpus]
        log(f"signing: {name} ({len(docs)} documents)")
        entry, tokens, sets = neardup_entry(signer, docs, repeat)
        if use_peers:
            with tempfile.TemporaryDirectory(prefix="neardup-bench-") as tmp:
                tmp = Path(tmp)
                task = {
                    "task": "signing",
                    "repeat": repeat,
                    "texts": str(exchange.write_jsonl(tmp / "texts.jsonl", [d.text for d in docs])),
                    "tokens": str(exchange.write_jsonl(tmp / "tokens.jsonl", tokens)),
                    "hashes": str(exchange.write_hashes(tmp / "hashes.npz", sets)),
                }
                try:
                    p = peers.run(task)
                    entry["peers"] = {k: p[k] for k in ("text", "tokens", "hashes")}
                    entry["minhash_stage"].update({f"peer_{k}": v for k, v in p["hashes"].items()})
                    result["peer_versions"] = p["versions"]
                except Exception as e:  # reported, the rest of the run goes on
                    entry["peers_error"] = str(e)
        nd = entry["neardup_sign"]["docs_per_s"]
        if "peers" in entry:
            txt = entry["peers"]["text"]
            entry["ratios"] = {
                "vs_datasketch_update_batch": nd / txt["datasketch_update_batch"]["docs_per_s"],
                "vs_datasketch_bulk": nd / txt["datasketch_bulk"]["docs_per_s"],
                "vs_python_shingling_rensa": nd / txt["rensa_rminhash"]["docs_per_s"],
                "vs_python_shingling_rensa_cminhash": nd / txt["rensa_cminhash"]["docs_per_s"],
                "from_tokens_vs_rensa_from_tokens": entry["neardup_from_tokens"]["docs_per_s"]
                / entry["peers"]["tokens"]["rensa_rminhash"]["docs_per_s"],
            }
        result["per_corpus"][name] = entry
    return result


def main(argv: list[str] | None = None) -> int:
    """Table 1 of ``python -m benchmarks`` alone, ``--runs`` times (the ratios of each run, then
    the tables of the last); the JSON of every run to ``--out``."""
    import argparse
    import json

    from rich.console import Console

    from neardup.runtime.allocator import keep_freed_memory

    from . import corpora, report

    ap = argparse.ArgumentParser(prog="python -m benchmarks.signing", description=main.__doc__)
    ap.add_argument(
        "--docs",
        type=int,
        default=1000,
        help="documents per corpus (default 1000, as the full run)",
    )
    ap.add_argument(
        "--repeat", type=int, default=2, help="best of this many timings of each measurement"
    )
    ap.add_argument("--runs", type=int, default=1, help="whole runs, one after the other")
    ap.add_argument("--no-peers", action="store_true", help="neardup alone")
    ap.add_argument("--out", type=Path, default=None, help="JSON file for every run's results")
    a = ap.parse_args(argv)
    keep_freed_memory()  # as neardup's command line and workers run
    console = Console()
    use_peers = not a.no_peers
    if use_peers:
        try:
            peers.ensure(with_heavy=False, log=lambda m: console.log(m))
        except Exception as e:  # reported; neardup is measured alone
            console.log(f"peers unavailable, measuring neardup alone: {e}")
            use_peers = False
    docs, runs = corpora.load_all(), []
    for k in range(a.runs):
        res = {"signing": run(docs, a.docs, a.repeat, use_peers, log=lambda m: None)}
        runs.append(res)
        ratios = {c: e["ratios"] for c, e in res["signing"]["per_corpus"].items() if "ratios" in e}
        line = "; ".join(
            f"{c} {r['vs_datasketch_update_batch']:.2f}x datasketch, "
            f"{r['vs_python_shingling_rensa']:.2f}x py+rensa"
            for c, r in ratios.items()
        )
        console.print(f"run {k + 1}: {line or 'no peers'}")
    report.print_tables({"signing": runs[-1]["signing"]}, console)
    if a.out:
        a.out.write_text(json.dumps(runs, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
