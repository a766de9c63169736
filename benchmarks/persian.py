"""Persian segmentation invariance: ZWNJ written as a space, left out, or varied with letters.

    python -m benchmarks.persian            # about 3 minutes on one core
    python -m benchmarks.persian --quick    # fewer documents

From real texts of ``fa.jsonl`` that hold a ZWNJ (documents split by id into a development
half, used to choose the rules, and a held-out half, measured here) it builds:

* the all-spaces copy (every ZWNJ a space) and the all-joined copy (every ZWNJ removed);
* the mixed copy: Arabic letter forms (ي ك), Arabic-Indic / Persian / ASCII digits, added
  diacritics and each ZWNJ kept, a space or removed, all at once (seeded).

For each way of canonicalizing Persian it reports the resemblance of each copy to its
original (word 5-shingles of the default config), how many of 100 held-out texts cluster
with both copies, how many of 150 mixed copies a query finds, and, on the whole Persian
corpus, the pairs at r >= 0.5 and r >= t: new pairs against "before" are judged by character 8-gram
Jaccard over the text with every separator removed (>= 0.5: a true copy; else a false
positive). Ways compared (the settings ``fa_segmentation`` and ``fa_join_rules`` of ``Config``):

* ``before``: ZWNJ removed between letters, no joining (the previous canonical tokens);
* ``lexicon``: and words written apart joined when, joined, they are a word of hazm's lexicon;
* ``lexicon+second``: and when the second is a productive second part ("سازی", "نشین");
* ``lexicon+first+second``: and when the first is a productive first part ("بی", "هم");
* ``anchors`` (chosen): each run of Persian words without its spaces, cut again before
  content-defined anchors (:func:`neardup.canonical.persian.anchor_pieces`);
* ``chars``: character 8-shingles over the canonical text with every separator removed (no
  joining needed; resemblance only, as the signer shingles tokens).

Writes ``persian.json`` and ``persian.md`` to ``--out`` (default ``benchmarks/results``).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import xxhash

from neardup import Config, Document, NearDup
from neardup.canonical import Canonicalizer
from neardup.signing.signer import Signer
from neardup.sketches.verify import similarity

from .corpora import corpora_dir

HERE = Path(__file__).resolve().parent
ZWNJ = "\u200c"
#: The lower threshold at which corpus pairs are also counted (a finer view of false positives).
LOW = 0.5
METHODS = {
    "before": ("none", frozenset()),
    "lexicon": ("join", frozenset({"lexicon"})),
    "lexicon+second": ("join", frozenset({"lexicon", "second"})),
    "lexicon+first+second": ("join", frozenset({"lexicon", "first", "second"})),
    "anchors": ("anchors", frozenset()),
}
_DIACRITICS = "\u064e\u064f\u0650\u0651"
_DIGITS = (
    {c: i for i, c in enumerate("۰۱۲۳۴۵۶۷۸۹")}
    | {c: i for i, c in enumerate("٠١٢٣٤٥٦٧٨٩")}
    | {c: i for i, c in enumerate("0123456789")}
)
_DIGIT_FORMS = ("۰۱۲۳۴۵۶۷۸۹", "٠١٢٣٤٥٦٧٨٩", "0123456789")


def corpus_path(name: str) -> Path:
    return corpora_dir() / name


def load_fa() -> list[dict]:
    with open(corpus_path("fa.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def held_out(rec: dict) -> bool:
    """The held-out half: by a hash of the id (the other half chose the rules)."""
    return xxhash.xxh64_intdigest(rec["id"].encode()) % 2 == 1


def all_spaces(text: str) -> str:
    return text.replace(ZWNJ, " ")


def all_joined(text: str) -> str:
    return text.replace(ZWNJ, "")


def mixed(text: str, rng: random.Random) -> str:
    """Letters, digits, diacritics and ZWNJ varied at once."""
    digits = rng.choice(_DIGIT_FORMS)
    out = []
    for ch in text:
        if ch == ZWNJ:
            out.append(rng.choice((ZWNJ, " ", "")))
        elif ch == "ی" and rng.random() < 0.5:
            out.append("ي")
        elif ch == "ک" and rng.random() < 0.5:
            out.append("ك")
        elif ch in _DIGITS:
            out.append(digits[_DIGITS[ch]])
        else:
            out.append(ch)
            if "\u0628" <= ch <= "\u06cc" and rng.random() < 0.05:
                out.append(rng.choice(_DIACRITICS))
    return "".join(out)


def config_of(method: str, **settings) -> Config:
    """The config of a way compared: its segmentation and joining rules (:data:`METHODS`)."""
    segmentation, which = METHODS.get(method, ("none", frozenset()))
    return Config(fa_segmentation=segmentation, fa_join_rules=tuple(which), **settings)


def char_set(canon: Canonicalizer, text: str, n: int = 8) -> set[int]:
    """Hashes of the character n-grams of the canonical text with every separator removed."""
    s = "".join(canon.text(text).split()).replace(ZWNJ, "")
    return (
        {xxhash.xxh64_intdigest(s[i : i + n].encode()) for i in range(max(1, len(s) - n + 1))}
        if s
        else set()
    )


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def summary(rs: list[float]) -> dict:
    a = np.array(rs)
    return {
        "n": len(a),
        "median": round(float(np.median(a)), 4),
        "min": round(float(a.min()), 4),
        "p05": round(float(np.quantile(a, 0.05)), 4),
        "ge_095": int((a >= 0.95).sum()),
        "eq_1": int((a >= 1.0 - 1e-12).sum()),
    }


def resemblances(method: str, texts: list[str], copies: dict[str, list[str]]) -> dict:
    if method == "chars":
        canon = Canonicalizer(config_of(method))
        orig = [char_set(canon, t) for t in texts]
        return {
            k: summary([jaccard(o, char_set(canon, c)) for o, c in zip(orig, v, strict=True)])
            for k, v in copies.items()
        }
    signer = Signer(config_of(method))
    orig = [signer.sign(t, "fa").shingles for t in texts]
    return {
        k: summary(
            [
                similarity(o, signer.sign(c, "fa").shingles).resemblance
                for o, c in zip(orig, v, strict=True)
            ]
        )
        for k, v in copies.items()
    }


def clustering(method: str, texts: list[str], t: float) -> dict:
    """Original, all-spaces and all-joined copy of each text indexed together: of the three
    pairs per text, how many land in one cluster at threshold t."""
    with tempfile.TemporaryDirectory() as d:
        nd = NearDup.open(str(Path(d) / "c.db"), config_of(method, threshold=t))
        docs = [
            Document(f"{i}/{k}", f(x), lang="fa")
            for i, x in enumerate(texts)
            for k, f in (("o", lambda s: s), ("s", all_spaces), ("j", all_joined))
        ]
        nd.index(docs, progress=None)
        cluster_of = {m: c.cluster_id for c in nd.clusters(t) for m in c.members}
        nd.close()
    ok = sum(
        1
        for i in range(len(texts))
        for a, b in (("o", "s"), ("o", "j"), ("s", "j"))
        if f"{i}/{a}" in cluster_of and cluster_of.get(f"{i}/{a}") == cluster_of.get(f"{i}/{b}")
    )
    return {"pairs": 3 * len(texts), "clustered": ok}


def found_by_query(method: str, texts: list[str], variants: list[str], t: float) -> dict:
    """Originals indexed; each variant queried: found when its original is among the matches."""
    with tempfile.TemporaryDirectory() as d:
        nd = NearDup.open(str(Path(d) / "q.db"), config_of(method, threshold=t))
        nd.index(
            [Document(str(i), x, lang="fa") for i, x in enumerate(texts)], progress=None, tag=False
        )
        found = sum(
            1 for i, v in enumerate(variants) if str(i) in {m.id for m in nd.query(v, lang="fa")}
        )
        nd.close()
    return {"variants": len(variants), "found": found}


def corpus_pairs(method: str, recs: list[dict], t: float) -> dict[tuple[str, str], float]:
    """Every pair of the corpus with resemblance >= t (exact, over an inverted index of
    shingles)."""
    signer = Signer(config_of(method))
    sets = {r["id"]: signer.sign(r["text"], "fa").shingles for r in recs}
    posting: dict[int, list[str]] = defaultdict(list)
    for i, s in sets.items():
        for h in s.tolist():
            posting[h].append(i)
    cands = {
        (a, b) for ids in posting.values() if 1 < len(ids) <= 200 for a in ids for b in ids if a < b
    }
    out = {}
    for a, b in cands:
        r = similarity(sets[a], sets[b]).resemblance
        if r >= t:
            out[(a, b)] = r
    return out


def run(quick: bool, t: float = 0.8) -> dict:
    recs = load_fa()
    ho = [r for r in recs if held_out(r) and ZWNJ in r["text"] and len(r["text"].split()) >= 20]
    rng = random.Random(14)
    n = 60 if quick else 200
    sample = rng.sample(ho, n)
    texts = [r["text"] for r in sample]
    copies = {
        "all_spaces": [all_spaces(x) for x in texts],
        "all_joined": [all_joined(x) for x in texts],
        "mixed": [mixed(x, random.Random(i)) for i, x in enumerate(texts)],
    }
    out: dict = {"threshold": t, "held_out_texts": n, "methods": {}}
    by_id = {r["id"]: r["text"] for r in recs}
    base_pairs = None
    for name in [*METHODS, "chars"]:
        t0 = time.perf_counter()
        m: dict = {}
        m["resemblance"] = resemblances(name, texts, copies)
        if name != "chars":
            m["clustering"] = clustering(name, texts[: 30 if quick else 100], t)
            mix = [mixed(x, random.Random(1000 + i)) for i, x in enumerate(texts[:150])]
            m["mixed_found"] = found_by_query(name, texts[:150], mix, t)
            if not quick:
                pairs = corpus_pairs(name, recs, LOW)
                if base_pairs is None:
                    base_pairs = pairs
                canon = Canonicalizer(config_of(name))
                for at in (LOW, t):
                    now = {p for p, r in pairs.items() if r >= at}
                    base = {p for p, r in base_pairs.items() if r >= at}
                    new = now - base
                    fp = [
                        p
                        for p in new
                        if jaccard(char_set(canon, by_id[p[0]]), char_set(canon, by_id[p[1]])) < 0.5
                    ]
                    m[f"corpus_{at:g}"] = {
                        "pairs": len(now),
                        "new": len(new),
                        "false_positives": len(fp),
                        "lost": len(base - now),
                    }
        m["seconds"] = round(time.perf_counter() - t0, 1)
        out["methods"][name] = m
        print(name, json.dumps(m, ensure_ascii=False))
    return out


def markdown(res: dict) -> str:
    t = res["threshold"]
    lines = [
        f"# Persian segmentation invariance ({res['held_out_texts']} held-out texts of "
        f"fa.jsonl with a ZWNJ; t = {t})",
        "",
        "Resemblance of each copy to its original: median / minimum / copies >= 0.95 / "
        "copies = 1.0.",
        "",
        f"Corpus: pairs of fa.jsonl at r >= {LOW:g} and >= {t:g} / new against before / "
        "of them false positives / lost.",
        "",
        "| method | all-spaces | all-joined | mixed (letters, digits, diacritics, ZWNJ) "
        "| clustered pairs | mixed found | "
        f"corpus r >= {LOW:g} | corpus r >= {t:g} |",
        "|---|---|---|---|---:|---:|---|---|",
    ]
    for name, m in res["methods"].items():
        cells = []
        for k in ("all_spaces", "all_joined", "mixed"):
            s = m["resemblance"][k]
            n = s["n"]
            cells.append(
                f"{s['median']:.3f} / {s['min']:.3f} / {s['ge_095']}/{n} / {s['eq_1']}/{n}"
            )
        cl = m.get("clustering")
        mf = m.get("mixed_found")
        cells += [
            f"{cl['clustered']}/{cl['pairs']}" if cl else "–",
            f"{mf['found']}/{mf['variants']}" if mf else "–",
        ]
        for at in (LOW, t):
            c = m.get(f"corpus_{at:g}")
            cells.append(
                f"{c['pairs']} / {c['new']} / {c['false_positives']} / {c['lost']}" if c else "–"
            )
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(HERE / "results"))
    args = ap.parse_args()
    res = run(args.quick)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "persian.json").write_text(
        json.dumps(res, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (out / "persian.md").write_text(markdown(res), encoding="utf-8")
    print(markdown(res))


if __name__ == "__main__":
    main()
