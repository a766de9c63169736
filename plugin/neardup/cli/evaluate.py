"""``neardup evaluate``: score methods against ground truth in Kosinov's table format."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from .options import THRESHOLD, count, echo_json, engine_options, fail, json_option
from .output import terminal_text

if TYPE_CHECKING:
    from ..config import Config


def _floats(value: str) -> list[float]:
    """Thresholds: finite numbers in [0, 1]."""
    try:
        out = [float(x) for x in value.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of numbers") from None
    bad = [x for x in out if not 0 <= x <= 1]  # (NaN is not)
    if bad:
        raise click.BadParameter(f"{value!r}: thresholds are numbers from 0 to 1, not {bad[0]}")
    return out


def _index_config(threshold: float, shingle_size: int | None) -> Config:
    """The settings the methods sign with: the defaults, ``threshold`` and the shingle size
    given."""
    from ..config import Config

    kw: dict[str, Any] = {"threshold": threshold}
    if shingle_size:
        kw["shingle_size"] = shingle_size
    return Config(**kw)


def _default_truth(labelled: bool) -> str:
    """The ground truth unless ``--truth`` says: the labels where there are any, else
    Jaccard."""
    return "labels" if labelled else "jaccard"


def _method_names(methods: str) -> list[str]:
    """The methods of ``--methods`` (comma-separated)."""
    return [m.strip() for m in methods.split(",") if m.strip()]


def _say_step(msg: str) -> None:
    """A step of the evaluation, on a terminal's standard error only."""
    if sys.stderr.isatty():
        click.echo(f"... {msg}", err=True)


def _corpus(paths: tuple[str, ...], limit: int | None):
    """The documents of ``paths``: one JSONL file as
    :func:`~neardup.evaluation.corpus.load_corpus` reads it (documents or pairs), else what
    'neardup index' reads (files and folders)."""
    from pathlib import Path

    from ..evaluation.corpus import Corpus, load_corpus
    from ..io.reading import read_documents
    from ..io.files import InputError, kind_of

    if len(paths) == 1 and Path(paths[0]).is_file() and kind_of(Path(paths[0])) == "jsonl":
        return load_corpus(paths[0], limit)
    ids, texts, langs = [], [], []
    try:
        for d in read_documents(paths):
            if limit is not None and len(ids) >= limit:
                break
            ids.append(d.id)
            texts.append(d.text)
            langs.append(d.lang)
    except InputError as e:
        fail(str(e))
    return Corpus(ids, texts, langs)


@click.command("evaluate")
@click.argument("corpus", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--truth",
    type=click.Choice(["jaccard", "levenshtein", "labels"]),
    default=None,
    help="Ground truth: exact Jaccard of shingles (default), Levenshtein similarity on documents "
    "of >= 20 words, or labels (default when CORPUS is a labelled pairs file or --labels is "
    "given).",
)
@click.option(
    "--labels",
    "labels_path",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Your own labels: a CSV with columns id_a,id_b,label (1/true: duplicates, 0/false: "
    "not; the methods are then scored on the labelled pairs only), or JSONL of true pairs "
    '{"id1","id2"[,"label"]} or clusters {"members": [...]}.',
)
@click.option(
    "--methods",
    default=None,
    show_default=False,
    help="Comma-separated: engine, engine:FIELD, a signature (super, mega, minhash84, "
    "minhash70, imatch, imatch_multi, descriptive_words, text_stats, anchor) or SIGNATURE:PART "
    "(text_stats:1..6, descriptive_words:tfidf, ...); the old names kosinov and sharapova work "
    "too.",
)
@click.option(
    "--thresholds",
    default="1.0,0.95,0.9,0.85",
    show_default=True,
    help="Similarity thresholds of the ground truth.",
)
@click.option("--limit", type=count(1), default=None, help="Use the first N records of CORPUS.")
@click.option(
    "--shingle-size",
    type=count(1, 10),
    default=None,
    help="Words per shingle (default: the index default, 5).",
)
@click.option(
    "--threshold",
    "index_threshold",
    type=THRESHOLD,
    default=None,
    help="Index threshold for signatures whose rule depends on it "
    "(default: the lowest --thresholds).",
)
@engine_options
@json_option
def evaluate_cmd(
    corpus: tuple[str, ...],
    truth: str | None,
    labels_path: str | None,
    methods: str | None,
    thresholds: str,
    limit: int | None,
    shingle_size: int | None,
    index_threshold: float | None,
    target: str,
    engine_opts: dict,
    as_json: bool,
) -> None:
    """Evaluate near-duplicate methods on CORPUS (JSONL documents, a pairs file whose both
    sides become documents, or, as for 'neardup index', files and folders of documents) in
    the format of Kosinov's tables: per method and
    threshold the true pairs, found pairs, common, unique to the truth, unique to the
    method, recall, precision, F1 and accuracy, HFM and separation; AC1 agreement between
    methods; results by document length (20-50, 51-500, 501-5000, 5001+ words); time.

    The engine method indexes CORPUS into a temporary in-memory index unless --engine is
    given explicitly (an Elasticsearch/OpenSearch URL or a SQLite file: use a scratch
    index, documents are added to it). Signature methods decide by signature equality as
    in the source documents, without verification.

    \b
    Examples:
      neardup evaluate corpus.jsonl
      neardup evaluate docs/ --labels pairs.csv          # against your own labels
      neardup evaluate corpus.jsonl --truth levenshtein --methods engine,text_stats:1,text_stats:6
      neardup evaluate pairs.jsonl --truth labels --json > report.json
      neardup evaluate corpus.jsonl --engine http://localhost:9200 --index eval-scratch
    """
    from ..evaluation.evaluate import DEFAULT_METHODS, evaluate
    from ..evaluation.markdown import to_markdown
    from ..evaluation.corpus import load_labels

    ctx = click.get_current_context()
    explicit_engine = ctx.get_parameter_source("target") in (
        click.core.ParameterSource.COMMANDLINE,
        click.core.ParameterSource.ENVIRONMENT,
    )
    ths = _floats(thresholds)
    try:
        corp = _corpus(corpus, limit)
        labels = load_labels(labels_path, corp) if labels_path else None
        kind = truth or _default_truth(labels is not None or corp.labels is not None)
        config = _index_config(index_threshold or min(ths), shingle_size)
        names = _method_names(methods) if methods else list(DEFAULT_METHODS)
        ev = evaluate(
            corp,
            methods=names,
            thresholds=ths,
            truth=kind,
            labels=labels,
            config=config,
            target=target if explicit_engine else None,
            engine_opts=engine_opts if explicit_engine else {},
            name=" ".join(corpus),
            progress=_say_step,
        )
    except (OSError, ValueError) as e:  # (a bad corpus file or argument; other errors: .errors)
        fail(str(e))
    if as_json:
        echo_json(ev.to_dict())
    else:
        click.echo(terminal_text(to_markdown(ev)))
