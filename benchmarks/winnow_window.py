"""The winnowing window: keys per document against the containment candidates of copied
passages.

Winnowing with a window of w shingles (Schleimer, Wilkerson and Aiken 2003) keeps about
2 / (w + 1) of a document's shingle hashes, and two texts sharing a run of w shingles always
share one. The keys are most of what an engine indexes for a document (about 96 of 127 on
documents of about 550 words at w = 8), and they serve containment queries only. For each
window this signs documents of the shared corpora (150 words or more; ``--corpus synthetic``:
the whole path's synthetic documents of about 550 words, :mod:`benchmarks.wholepath_corpus`)
and passages cut from them (:data:`PASSAGES`: 60 and 100 words, some with words replaced by
other corpus words), and counts, as the candidate rule's containment query at
``--threshold`` asks (:meth:`neardup.matching.candidates.CandidateRule.query`:
``ceil(f * t * |L(A)|)`` of the passage's winnowing keys, or the groups of the other
fields), the passages whose document is a candidate: what a window costs the engine, in
keys, and what it keeps of the candidates.

    python -m benchmarks.winnow_window --out benchmarks/results/winnow-window.json
    python -m benchmarks.winnow_window --corpus synthetic --out /tmp/winnow-window-synth.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np

from neardup.config import Config
from neardup.matching.candidates import CandidateRule
from neardup.signing.records import Document, Signed
from neardup.signing.signer import Signer

from . import corpora
from .provenance import provenance, provenance_line

#: (words in the passage, words replaced in it)
PASSAGES = ((60, 0), (60, 1), (60, 2), (100, 0), (100, 3))


def cut(doc: Document, words: int, edits: int, vocab: list[str], rnd: random.Random) -> str:
    """A passage of ``words`` consecutive words of ``doc``, ``edits`` of them replaced by
    words of ``vocab``.

    >>> cut(Document("a", "one two three four"), 2, 0, [], random.Random(1))
    'one two'
    """
    w = doc.text.split()
    start = rnd.randrange(0, len(w) - words + 1)
    p = w[start : start + words]
    for _ in range(edits):
        p[rnd.randrange(words)] = rnd.choice(vocab)
    return " ".join(p)


def is_candidate(rule: CandidateRule, passage: Signed, doc: Signed, threshold: float) -> bool:
    """Whether ``doc`` answers the containment query of ``passage`` by its keys (the length
    filter aside: a document holding the passage is never shorter)."""
    q = rule.query(passage.keys, passage.n_shingles, mode="containment", threshold=threshold)
    return any(
        np.intersect1d(g.keys, doc.keys.get(g.field, np.zeros(0, np.uint64))).size >= g.min_match
        for g in q.groups
    )


def measure(docs: list[Document], windows: list[int], threshold: float, seed: int) -> list[dict]:
    rnd = random.Random(seed)
    vocab = [w for d in docs[:50] for w in d.text.split()]
    cases = [(i, n, e, cut(d, n, e, vocab, rnd)) for i, d in enumerate(docs) for n, e in PASSAGES]
    rows = []
    for w in windows:
        config = Config(winnow_window=w)
        signer, rule = Signer(config), CandidateRule(config)
        signed = signer.sign_batch(docs)
        asked = signer.sign_batch([Document(f"p{k}", c[3]) for k, c in enumerate(cases)])
        found: dict[str, list[bool]] = {}
        for (i, n, e, _), p in zip(cases, asked, strict=True):
            found.setdefault(f"{n} words, {e} replaced", []).append(
                is_candidate(rule, p, signed[i], threshold)
            )
        rows.append(
            {
                "window": w,
                "winnow_keys_per_doc": float(np.mean([len(s.keys["winnow"]) for s in signed])),
                "keys_per_doc": float(
                    np.mean([sum(len(k) for k in s.keys.values()) for s in signed])
                ),
                "candidates": {k: float(np.mean(v)) for k, v in found.items()},
            }
        )
    return rows


def documents(corpus: str, n: int, seed: int) -> list[Document]:
    """``n`` documents of the shared corpora of 150 words or more, shuffled, or ``n`` of the
    synthetic corpus (collages of corpus sentences and their edited copies)."""
    if corpus == "synthetic":
        from .synth import Generator

        gen = Generator(
            corpora.load("en") + corpora.load("ru"),
            seed=seed,
            dup_rate=0.3,
            langs=("en", "ru"),
            sentences=(40, 72),
        )
        gen.count = len(gen.base)  # collages and their edited copies only
        return [next(gen).doc for _ in range(n)]
    every = [d for docs in corpora.load_all().values() for d in docs]
    docs = [d for d in every if len(d.text.split()) >= 150]
    random.Random(seed).shuffle(docs)
    return docs[:n]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.winnow_window", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--windows", default="8,16,24,32,40")
    ap.add_argument("--docs", type=int, default=400, help="documents (150 words or more)")
    ap.add_argument("--corpus", choices=("shared", "synthetic"), default="shared")
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    docs = documents(a.corpus, a.docs, a.seed)
    windows = [int(x) for x in a.windows.split(",") if x]
    res = {
        "command": "python -m benchmarks.winnow_window "
        + " ".join(sys.argv[1:] if argv is None else argv),
        **provenance(),
        "corpus": a.corpus,
        "docs": len(docs),
        "words_per_doc": float(np.mean([len(d.text.split()) for d in docs])),
        "threshold": a.threshold,
        "windows": measure(docs, windows, a.threshold, a.seed),
    }
    a.out.write_text(json.dumps(res, indent=1))
    print(provenance_line(res))
    for r in res["windows"]:
        found = ", ".join(f"{k}: {v:.3f}" for k, v in r["candidates"].items())
        print(
            f"w={r['window']:>2}: {r['winnow_keys_per_doc']:5.1f} winnowing keys, "
            f"{r['keys_per_doc']:5.1f} keys a document; candidates {found}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
