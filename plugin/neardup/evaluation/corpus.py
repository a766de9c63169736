"""An evaluation corpus and its ground-truth labels, read from JSON Lines (documents, or pairs
of texts with a label) and CSV label files; their errors are :class:`EvaluationError`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ..canonical import strip_html
from ..config import is_language_code
from ..errors import InvalidInput
from ..io.jsonl import json_records
from ..io.files import InputError
from ..signing.signatures.common import words


#: Two documents, by their positions in the corpus (smaller first).
Pair = tuple[int, int]
POSITIVE_LABELS = {"1", "true", "yes", "paraphrase", "duplicate", "dup", "positive"}
NEGATIVE_LABELS = {"0", "false", "no", "nonparaphrase", "different", "negative"}


class EvaluationError(InvalidInput):
    """Bad input to an evaluation (unreadable corpus, unknown method, ...)."""


# -- input -------------------------------------------------------------------------------------
@dataclass
class Corpus:
    ids: list[str]
    texts: list[str]
    langs: list[str | None]
    labels: set[Pair] | None = None  # true pairs from a pairs file or a labels file
    #: pairs labelled as not duplicates (a labels file with label 0/false): scores are then
    #: made on the labelled pairs only
    negatives: set[Pair] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def n_words(self) -> list[int]:
        return [len(words(strip_html(t))) for t in self.texts]


def _positive(label: Any) -> bool:
    return (
        label is True
        or (isinstance(label, (int, float)) and label > 0)
        or str(label).strip().lower() in POSITIVE_LABELS
    )


def load_corpus(path: str | Path, limit: int | None = None) -> Corpus:
    """Documents of a JSONL file: records with ``text`` (documents) or ``text1``/``text2``
    (pairs: both sides become documents, positive labels become true pairs).

    ``limit`` keeps the first N records.
    """
    ids: list[str] = []
    texts: list[str] = []
    langs: list[str | None] = []
    pos: dict[str, int] = {}
    labels: set[Pair] = set()
    has_pairs = False

    def add(doc_id: str, text: str, lang: str | None) -> int:
        if doc_id not in pos:
            pos[doc_id] = len(ids)
            ids.append(doc_id)
            texts.append(text)
            langs.append(lang)
        return pos[doc_id]

    for n, rec in _jsonl(path, limit):
        lang = rec.get("lang") if is_language_code(rec.get("lang")) else None
        if "text1" in rec and "text2" in rec:
            has_pairs = True
            base = str(rec.get("id", n))
            a = add(str(rec.get("id1") or f"{base}#1"), str(rec["text1"]), lang)
            b = add(str(rec.get("id2") or f"{base}#2"), str(rec["text2"]), lang)
            labels.update(_true_pair(a, b, rec.get("label")))
        elif "text" in rec:
            if not isinstance(rec["text"], str):
                raise EvaluationError(f"{path}:{n}: 'text' must be a string")
            add(str(rec.get("id", f"{Path(path).name}:{n}")), rec["text"], lang)
        else:
            raise EvaluationError(
                f"{path}:{n}: a record needs 'text' (a document) or 'text1' and 'text2' (a pair)"
            )
    return Corpus(ids=ids, texts=texts, langs=langs, labels=labels if has_pairs else None)


def _true_pair(a: int, b: int, label: object) -> list[Pair]:
    """The pair (a, b) in order where its label is positive and they are two documents."""
    return [(min(a, b), max(a, b))] if a != b and _positive(label) else []


def _label_members(rec: dict, where: str) -> list[str] | None:
    """The ids a JSONL label record says are duplicates (a cluster's members, or a pair),
    None for a pair labelled not duplicates, else an EvaluationError naming ``where``."""
    if "members" in rec:
        return [str(m) for m in rec["members"]]
    if "id1" in rec and "id2" in rec:
        if "label" in rec and not _positive(rec["label"]):
            return None
        return [str(rec["id1"]), str(rec["id2"])]
    raise EvaluationError(f"{where}: a label record needs 'id1' and 'id2', or 'members'")


def _label_columns(header: list[str], path: str | Path) -> list[int]:
    """Where the columns id_a (or id1), id_b (or id2) and label are in a labels file's
    ``header`` (lowercase), else an EvaluationError."""
    cols = [
        next((header.index(n) for n in names if n in header), None)
        for names in (("id_a", "id1"), ("id_b", "id2"), ("label",))
    ]
    if None in cols:
        raise EvaluationError(
            f"{path}:1: the header must name the columns id_a, id_b and label, not {header}"
        )
    return cols  # type: ignore[return-value]


def _label_row(
    row: list[str], cols: list[int], n_header: int, index: dict[str, int], where: str
) -> tuple[int, int, bool]:
    """One row of a labels file: the positions of its two documents (in order) and whether
    they are duplicates, else an EvaluationError naming ``where``."""
    if len(row) <= max(cols):
        raise EvaluationError(f"{where}: {len(row)} columns, the header has {n_header}")
    a, b, label = (row[c].strip() for c in cols)
    missing = [m for m in (a, b) if m not in index]
    if missing:
        raise EvaluationError(f"{where}: id(s) {missing} are not in the corpus")
    kind = label.lower()
    if kind not in POSITIVE_LABELS and kind not in NEGATIVE_LABELS:
        raise EvaluationError(
            f"{where}: label {label!r} is neither 1/true (duplicates) nor 0/false (not duplicates)"
        )
    i, j = sorted((index[a], index[b]))
    return i, j, kind in POSITIVE_LABELS


def _jsonl(path: str | Path, limit: int | None = None) -> Iterator[tuple[int, dict]]:
    """:func:`neardup.io.jsonl.json_records`, its errors as :class:`EvaluationError`."""
    try:
        yield from json_records(path, limit)
    except InputError as e:
        raise EvaluationError(str(e)) from None


def load_labels(path: str | Path, corpus: Corpus) -> set[Pair]:
    """True pairs from JSONL: ``{"id1", "id2"[, "label"]}`` (a pair; kept unless its label is
    negative) or ``{"members": [ids]}`` (a cluster: all its pairs), or from CSV
    (:func:`load_label_csv`; the pairs labelled not duplicates go to ``corpus.negatives``).
    Unknown ids are an error."""
    if Path(path).suffix.lower() in (".csv", ".tsv"):
        positives, negatives = load_label_csv(path, corpus)
        corpus.negatives = negatives
        return positives
    index = {d: i for i, d in enumerate(corpus.ids)}
    out: set[Pair] = set()
    for n, rec in _jsonl(path):
        members = _label_members(rec, f"{path}:{n}")
        if members is None:
            continue
        out.update(_pairs_of(members, index, f"{path}:{n}"))
    return out


def _pairs_of(members: list[str], index: dict[str, int], where: str) -> Iterator[Pair]:
    """Every pair of the positions of ``members`` (a < b), else an EvaluationError naming
    ``where`` for ids not in the corpus."""
    missing = [m for m in members if m not in index]
    if missing:
        raise EvaluationError(f"{where}: id(s) {missing[:3]} are not in the corpus")
    idx = sorted({index[m] for m in members})
    return ((a, b) for k, a in enumerate(idx) for b in idx[k + 1 :])


def load_label_csv(path: str | Path, corpus: Corpus) -> tuple[set[Pair], set[Pair]]:
    """(duplicates, not duplicates) from a CSV (or tab-separated) file with a header row
    naming the columns ``id_a``, ``id_b`` and ``label`` (``id1``/``id2`` work too); a label is
    1/true/yes/duplicate or 0/false/no. Errors name the file and line.

    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
    >>> _ = f.write("id_a,id_b,label\\nx,y,1\\ny,z,false\\n"); f.close()
    >>> load_label_csv(f.name, Corpus(["x", "y", "z"], ["", "", ""], [None] * 3)); os.unlink(f.name)
    ({(0, 1)}, {(1, 2)})
    """
    import csv

    index = {d: i for i, d in enumerate(corpus.ids)}
    pos: set[Pair] = set()
    neg: set[Pair] = set()
    with open(path, encoding="utf-8-sig", newline="") as fh:
        rows = csv.reader(fh, delimiter="\t" if Path(path).suffix.lower() == ".tsv" else ",")
        header = [h.strip().lower() for h in next(rows, [])]
        cols = _label_columns(header, path)
        for n, row in enumerate(rows, 2):
            if not any(cell.strip() for cell in row):
                continue
            i, j, positive = _label_row(row, cols, len(header), index, f"{path}:{n}")
            if i != j:
                (pos if positive else neg).add((i, j))
    both = pos & neg
    if both:
        i, j = min(both)
        raise EvaluationError(
            f"{path}: the pair {corpus.ids[i]}, {corpus.ids[j]} is labelled both ways"
        )
    return pos, neg
