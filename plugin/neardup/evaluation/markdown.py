"""An evaluation as Markdown: Kosinov's tables (003), one per method with a row per
threshold, the AC1 agreement of each two methods, recall, precision and F1 per length band,
and each method's time (the scores are :mod:`.evaluate`'s)."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from .evaluate import MIN_WORDS_LEVENSHTEIN, Counts, Evaluation


def _f(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---:" if i else "---" for i in range(len(header))) + "|",
    ]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def to_markdown(ev: Evaluation) -> str:
    """Kosinov's tables: one per method, AC1 agreement, length bands, times."""
    truth_name = {
        "jaccard": "Jaccard similarity of shingles >= threshold",
        "levenshtein": "Levenshtein similarity >= threshold "
        f"(documents of >= {MIN_WORDS_LEVENSHTEIN} words)",
        "labels": "labelled pairs",
    }[ev.truth_kind]
    out = [
        f"## Evaluation of {ev.corpus or 'corpus'}",
        f"{ev.documents} documents ({ev.scope} scored, {ev.pairs} pairs); "
        f"ground truth: {truth_name}. "
        f"Canonicalizing and shingling: {ev.prepare_seconds:.1f} s; "
        f"ground truth: {ev.truth_seconds:.1f} s.",
    ]
    for name, rows in ev.rows.items():
        out.append(f"\n### {name}\n")
        out.append(_method_table(rows))
    out += _agreement_tables(ev)
    if ev.bands:
        out.append("\n### By document length (words)\n")
        out.append(_band_table(ev.bands))
    out.append("\n### Time\n")
    out.append(_table(["Method", "Seconds"], ([n, f"{s:.2f}"] for n, s in ev.seconds.items())))
    return "\n".join(out) + "\n"


def _method_table(rows: Sequence[Counts]) -> str:
    """One method's rows, one per threshold."""
    header = [
        "Threshold",
        "Truth",
        "Found",
        "Common",
        "Unique truth",
        "Unique method",
        "Recall",
        "Precision",
        "F1",
        "Accuracy",
        "HFM",
        "Separation",
    ]
    return _table(
        header,
        (
            [
                _f(c.threshold),
                c.truth,
                c.found,
                c.common,
                c.unique_truth,
                c.unique_method,
                _f(c.recall),
                _f(c.precision),
                _f(c.f1),
                _f(c.accuracy, 4),
                _f(c.hfm),
                _f(c.separation),
            ]
            for c in rows
        ),
    )


def _agreement_tables(ev: Evaluation) -> list[str]:
    """The AC1 agreement of each two methods, a table per threshold (none for one method)."""
    names = list(ev.rows)
    if len(names) < 2:
        return []
    out = []
    for t in ev.thresholds:
        out.append(f"\n### Agreement between methods (AC1), threshold {_f(t)}\n")
        ag = ev.agreement[t]
        out.append(
            _table(
                ["", *names[1:]],
                (
                    [a, *(_f(ag[a][b]) if j > i else "" for j, b in enumerate(names) if j > 0)]
                    for i, a in enumerate(names[:-1])
                ),
            )
        )
    return out


def _band_table(bands: Sequence[dict[str, Any]]) -> str:
    """Recall, precision and F1 per length band, threshold and method."""
    header = [
        "Band",
        "Documents",
        "Threshold",
        "Method",
        "Truth",
        "Found",
        "Recall",
        "Precision",
        "F1",
    ]
    return _table(
        header,
        (
            [
                r["band"],
                r["documents"],
                _f(r["threshold"]),
                r["method"],
                r["truth"],
                r["found"],
                _f(r["recall"]),
                _f(r["precision"]),
                _f(r["f1"]),
            ]
            for r in bands
        ),
    )
