"""Detection that respects meaning: the stop lists and the languages, measured.

    python -m benchmarks.meaning --before /path/to/old/plugin    # about 3 minutes on one core
    python -m benchmarks.meaning --quick                         # fewer documents, no "before"

The corpora are read from ``$NEARDUP_CORPORA``, else ``../shared/corpora`` beside the repository.

Part 1, stop lists. On the shared corpora (``en``, ``ru``, ``fa``: whole documents) and on
short texts drawn from them (``*-short``: each document's title where it has one, else its
first sentence, at most 30 words), each indexed into an in-memory index with the default
settings (t = 0.8, word 5-shingles) by the code of this checkout ("after") and, with
``--before PATH``, by the code whose ``neardup`` package is in PATH ("before", e.g. a
checkout of the previous version's ``plugin`` folder), each in a process of its own:

* ground truth: the pairs whose exact Jaccard resemblance of plain word 5-shingles (the
  canonical tokens with no stop word dropped) is >= t, by PP-join;
* precision: of the (duplicate, representative) pairs the index tags, the share in the
  ground truth; recall: of the ground-truth pairs, the share whose two documents the index
  puts in one cluster;
* exact copies: pairs with the same exact key (``exact copy: yes`` in ``neardup compare``);
  "before only": pairs that were exact copies before and are not now, and of them those
  whose plain tokens differ (texts that do not say the same thing).

Part 2, languages. The sample of tests/data/languages_sample.jsonl (three news-like texts
in each of German, Turkish, Arabic, Chinese, Japanese, Korean and Thai) with two edited
copies of each (:func:`language_corpus`) is indexed in one run, no ``lang`` given; per
language: the language detected, documents, clusters found and expected, precision and
recall of the clusters' pairs.

Writes ``meaning.json`` and ``meaning.md`` to ``--out`` (default ``benchmarks/results``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any, Iterable, Sequence

from .corpora import corpora_dir

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SAMPLE = REPO / "tests" / "data" / "languages_sample.jsonl"
THRESHOLD = 0.8
_SENTENCE_END = re.compile(r"(?<=[.!?؟。！？])\s")


# -- corpora -------------------------------------------------------------------------------------
def load(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                out.append(json.loads(line))
                if limit and len(out) >= limit:
                    break
    return out


def short_text(rec: dict[str, Any], max_words: int = 30) -> str:
    """A document's title where its record has one (meta.title), else its first sentence;
    at most ``max_words`` words.

    >>> short_text({"text": "Rates rose. Then they fell.", "meta": {}}), short_text(
    ...     {"text": "x", "meta": {"title": "A B"}})
    ('Rates rose.', 'A B')
    """
    title = (rec.get("meta") or {}).get("title")
    text = (
        title
        if isinstance(title, str) and title.strip()
        else _SENTENCE_END.split(rec["text"].strip(), maxsplit=1)[0]
    )
    return " ".join(text.split()[:max_words])


def corpora(limit: int | None) -> dict[str, list[dict[str, str]]]:
    """name -> documents ({"id", "text"}): the whole documents of each shared corpus and the
    short texts drawn from them."""
    out: dict[str, list[dict[str, str]]] = {}
    for lang in ("en", "ru", "fa"):
        recs = load(corpora_dir() / f"{lang}.jsonl", limit)
        out[lang] = [{"id": r["id"], "text": r["text"]} for r in recs]
        out[f"{lang}-short"] = [{"id": r["id"], "text": short_text(r)} for r in recs]
    return out


def language_corpus(
    sample: Sequence[dict[str, Any]],
) -> tuple[list[dict[str, str]], list[list[str]]]:
    """The sample texts and two edited copies of each, and the expected clusters (each text
    with its copies): copy "a" has other spacing and punctuation and the first words of
    another text of its language appended (8 characters at most); copy "b" loses its last two
    characters (the last word shortened, or, written without spaces, its last character and
    full stop).

    >>> docs, truth = language_corpus([{"id": "x", "lang": "de", "text": "Eins zwei, drei vier."},
    ...                                {"id": "y", "lang": "de", "text": "Fünf sechs"}])
    >>> [d["text"] for d in docs[:3]]
    ['Eins zwei, drei vier.', 'Eins zwei  ; drei vier. Fünf sec', 'Eins zwei, drei vie']
    >>> truth[0]
    ['x', 'x/a', 'x/b']
    """
    by_lang: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in sample:
        by_lang[r["lang"]].append(r)
    docs: list[dict[str, str]] = []
    truth: list[list[str]] = []
    for recs in by_lang.values():
        for k, r in enumerate(recs):
            other = recs[(k + 1) % len(recs)]["text"]
            head = " ".join(other.split()[:3])[:8]
            a = r["text"].replace(", ", "  ; ").replace("，", "；") + " " + head
            b = r["text"][:-2]
            docs += [
                {"id": r["id"], "text": r["text"], "lang": r["lang"]},
                {"id": f"{r['id']}/a", "text": a, "lang": r["lang"]},
                {"id": f"{r['id']}/b", "text": b, "lang": r["lang"]},
            ]
            truth.append([r["id"], f"{r['id']}/a", f"{r['id']}/b"])
    return docs, truth


# -- one code's results (run in a process of its own, with that code's neardup) --------------------
def worker(corpus_path: str, out_path: str) -> None:
    """Index the documents of ``corpus_path`` (JSON: a list of {"id", "text"}) with the
    default settings into an in-memory index; write each document's tags and exact key."""
    from neardup import Config, Document, NearDup
    from neardup.signing.signer import Signer

    docs = json.loads(Path(corpus_path).read_text(encoding="utf-8"))
    t0 = time.perf_counter()
    nd = NearDup.open(":memory:", Config(threshold=THRESHOLD))
    nd.index([Document(d["id"], d["text"]) for d in docs], progress=None)
    tags = {r["id"]: r["neardup"]["dup_of"] for r in nd.export()}
    clusters = {r["id"]: r["neardup"]["cluster_id"] for r in nd.export()}
    nd.close()
    signed = Signer(Config(threshold=THRESHOLD)).sign_batch(
        [Document(d["id"], d["text"]) for d in docs]
    )
    exact = {s.id: s.exact for s in signed}
    Path(out_path).write_text(
        json.dumps(
            {
                "dup_of": tags,
                "cluster": clusters,
                "exact": exact,
                "seconds": time.perf_counter() - t0,
            }
        ),
        encoding="utf-8",
    )


def run_code(
    plugin: Path | None, docs: list[dict[str, str]], tmp: Path, name: str
) -> dict[str, Any]:
    """:func:`worker` of ``docs`` with the neardup of ``plugin`` (None: this checkout's)."""
    src, out = tmp / f"{name}.in.json", tmp / f"{name}.out.json"
    src.write_text(json.dumps(docs, ensure_ascii=False), encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (plugin or REPO / "plugin", REPO))
    subprocess.run(
        [sys.executable, "-m", "benchmarks.meaning", "--worker", str(src), str(out)],
        env=env,
        check=True,
        cwd=REPO,
    )
    return json.loads(out.read_text(encoding="utf-8"))


# -- scores ----------------------------------------------------------------------------------------
def truth_pairs(docs: list[dict[str, str]]) -> tuple[set[tuple[str, str]], dict[str, tuple]]:
    """Ground truth: pairs with exact Jaccard of plain word 5-shingles >= t, and each
    document's plain tokens."""
    from neardup import Config, Document
    from neardup.evaluation.evaluate import jaccard_truth
    from neardup.signing.signer import Signer

    plain = Config(threshold=THRESHOLD, stopwords=False)
    signed = Signer(plain).sign_batch([Document(d["id"], d["text"]) for d in docs])
    ids = [s.id for s in signed]
    found = jaccard_truth([s.shingles for s in signed], [THRESHOLD])[THRESHOLD]
    from neardup.canonical import Canonicalizer

    canon = Canonicalizer(plain)
    tokens = {d["id"]: tuple(canon.tokens(d["text"])) for d in docs}
    return {_pair(ids[i], ids[j]) for i, j in found}, tokens


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def exact_pairs(exact: dict[str, str]) -> set[tuple[str, str]]:
    groups: dict[str, list[str]] = defaultdict(list)
    for i, e in exact.items():
        groups[e].append(i)
    return {_pair(a, b) for g in groups.values() for a, b in combinations(g, 2)}


def scores(result: dict[str, Any], truth: set[tuple[str, str]]) -> dict[str, Any]:
    """Precision of the tagged pairs, recall of the truth's pairs by clusters."""
    tagged = {_pair(i, d) for i, d in result["dup_of"].items() if d}
    cluster = result["cluster"]
    hit = sum(
        1 for a, b in truth if cluster.get(a) is not None and cluster.get(a) == cluster.get(b)
    )
    good = len(tagged & truth)
    return {
        "tagged_pairs": len(tagged),
        "precision": good / len(tagged) if tagged else None,
        "truth_pairs": len(truth),
        "recall": hit / len(truth) if truth else None,
        "exact_pairs": len(exact_pairs(result["exact"])),
        "seconds": round(result["seconds"], 2),
    }


def stop_list_part(limit: int | None, before: Path | None, tmp: Path, say) -> list[dict[str, Any]]:
    rows = []
    for name, docs in corpora(limit).items():
        say(f"{name}: {len(docs)} documents")
        truth, tokens = truth_pairs(docs)
        row: dict[str, Any] = {
            "corpus": name,
            "documents": len(docs),
            "after": None,
            "before": None,
        }
        after = run_code(None, docs, tmp, f"{name}-after")
        row["after"] = scores(after, truth)
        if before is not None:
            old = run_code(before, docs, tmp, f"{name}-before")
            row["before"] = scores(old, truth)
            lost = exact_pairs(old["exact"]) - exact_pairs(after["exact"])
            row["exact_before_only"] = len(lost)
            row["exact_before_only_plain_tokens_differ"] = sum(
                1 for a, b in lost if tokens[a] != tokens[b]
            )
            row["examples"] = [
                [next(d["text"] for d in docs if d["id"] == x)[:160] for x in p]
                for p in sorted(lost, key=lambda p: tokens[p[0]] == tokens[p[1]])[:2]
            ]
        rows.append(row)
    return rows


def language_part() -> list[dict[str, Any]]:
    from neardup import Config, Document, NearDup

    sample = load(SAMPLE)
    docs, truth = language_corpus(sample)
    nd = NearDup.open(":memory:", Config(threshold=THRESHOLD))
    t0 = time.perf_counter()
    report = nd.index([Document(d["id"], d["text"]) for d in docs], progress=None)
    seconds = time.perf_counter() - t0
    clusters = [sorted(c.members) for c in nd.clusters()]
    langs = {r["id"]: r["lang"] for r in nd.export()}
    nd.close()
    want = {_pair(a, b) for g in truth for a, b in combinations(g, 2)}
    got = {_pair(a, b) for g in clusters for a, b in combinations(g, 2)}
    rows = []
    for lang in dict.fromkeys(d["lang"] for d in docs):
        ids = {d["id"] for d in docs if d["lang"] == lang}
        w = {p for p in want if p[0] in ids}
        g = {p for p in got if p[0] in ids or p[1] in ids}
        rows.append(
            {
                "lang": lang,
                "detected": sorted({langs[i] for i in ids}),
                "documents": len(ids),
                "clusters": sum(1 for c in clusters if set(c) & ids),
                "expected_clusters": sum(1 for t in truth if t[0] in ids),
                "precision": len(g & w) / len(g) if g else None,
                "recall": len(g & w) / len(w) if w else None,
            }
        )
    return [{"failed": len(report.failed), "seconds": round(seconds, 2)}, *rows]


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def to_markdown(res: dict[str, Any]) -> str:
    lines = [
        f"# Meaning: stop lists and languages\n\n`{res['command']}`\n",
        "## Stop lists: clusters against exact Jaccard of plain word 5-shingles >= 0.8\n",
        "| corpus | docs | truth pairs | P before | R before | P after | R after "
        "| exact pairs before | exact pairs after | exact before only "
        "| of them, plain tokens differ |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in res["stop_lists"]:
        b, a = r["before"] or {}, r["after"]
        cells = [
            r["corpus"],
            r["documents"],
            a["truth_pairs"],
            _f(b.get("precision")),
            _f(b.get("recall")),
            _f(a["precision"]),
            _f(a["recall"]),
            b.get("exact_pairs", "-"),
            a["exact_pairs"],
            r.get("exact_before_only", "-"),
            r.get("exact_before_only_plain_tokens_differ", "-"),
        ]
        lines.append(_row(cells))
    head, *langs = res["languages"]
    lines += [
        "",
        "## Languages: one index of all of them, no lang given "
        f"({head['failed']} failed, {head['seconds']} s)\n",
        "| language | detected | docs | clusters | expected | precision | recall |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in langs:
        cells = [
            r["lang"],
            ", ".join(r["detected"]),
            r["documents"],
            r["clusters"],
            r["expected_clusters"],
            _f(r["precision"]),
            _f(r["recall"]),
        ]
        lines.append(_row(cells))
    return "\n".join(lines) + "\n"


def _row(cells: Sequence[Any]) -> str:
    """A Markdown table row.

    >>> _row(["en", 3, "0.50"])
    '| en | 3 | 0.50 |'
    """
    return "| " + " | ".join(str(c) for c in cells) + " |"


def main(argv: Iterable[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--before",
        type=Path,
        help="a folder holding the neardup package of the code to compare with (its plugin folder)",
    )
    ap.add_argument("--quick", action="store_true", help="the first 300 documents of each corpus")
    ap.add_argument("--limit", type=int, help="the first N documents of each corpus")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(list(argv) if argv is not None else None)
    if args.worker:
        worker(*args.worker)
        return
    limit = args.limit or (300 if args.quick else None)
    say = lambda msg: print(f"... {msg}", file=sys.stderr)  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        res = {
            "command": "python -m benchmarks.meaning"
            + (f" --before {args.before}" if args.before else "")
            + (f" --limit {limit}" if limit else ""),
            "stop_lists": stop_list_part(limit, args.before, Path(tmp), say),
            "languages": language_part(),
        }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "meaning.json").write_text(
        json.dumps(res, indent=1, ensure_ascii=False), encoding="utf-8"
    )
    md = to_markdown(res)
    (args.out / "meaning.md").write_text(md, encoding="utf-8")
    print(md)


if __name__ == "__main__":
    main()
