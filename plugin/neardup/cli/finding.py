"""``neardup query``, ``compare`` and ``search``: near-duplicates of a text, two documents side by
side, and full-text search with copies folded."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from .options import (
    LANGUAGE,
    RESULTS,
    THRESHOLD,
    count,
    echo_json,
    engine_options,
    fail,
    json_option,
    wordless_query,
)
from .output import clean, one_line, safe
from .session import announce_waits, console, opened, recall_note, slow_notice


#: What a query or comparison may wait for the first time.
_SIGNING = "signing and verifying"


@click.command("query")
@click.argument("text", required=False)
@engine_options
@click.option(
    "--file",
    "-f",
    "file_",
    type=click.Path(exists=True, dir_okay=False, allow_dash=True),
    help="Read the query text from a file ('-': standard input).",
)
@click.option("--id", "doc_id", help="Query with a stored document.")
@click.option("--lang", type=LANGUAGE, help="Language code of the query text (default: detect).")
@click.option(
    "--containment",
    is_flag=True,
    help="Rank by containment c(query, doc): how much of the query is inside each document.",
)
@click.option(
    "--threshold", "-t", type=THRESHOLD, help="Minimum similarity (default: the index's threshold)."
)
@click.option(
    "--top-k", "-k", type=RESULTS, default=10, show_default=True, help="How many matches."
)
@json_option
def query_cmd(
    text: str | None,
    target: str,
    engine_opts: dict,
    file_: str | None,
    doc_id: str | None,
    lang: str | None,
    containment: bool,
    threshold: float | None,
    top_k: int,
    as_json: bool,
) -> None:
    """Near-duplicates of a text, a file or a stored document, with exact similarities.

    Each match has its resemblance to the query, "containment" c(query, match) (how much
    of the query is inside the match) and "containment_ba" c(match, query): the names
    'neardup compare' uses, with the query as A.

    \b
    Examples:
      neardup query "text of a news item ..."
      neardup query --file draft.txt --containment -t 0.5
      neardup query --id doc-42 -k 20 --json
    """
    text = _query_text(text, file_, doc_id)
    mode = "containment" if containment else "resemblance"
    with opened(target, engine_opts) as nd:
        # (the embedded engine says when it adds the containment samples' postings)
        announce_waits(nd.engine)
        with slow_notice(_SIGNING):
            from ..signing.records import Document

            # signed once: the wordless check below reads the same signature
            signed = None if text is None else nd.signer.sign(Document("", text, lang=lang))
            matches = nd.query(
                signed if signed is not None else text,
                id=doc_id,
                lang=lang,
                mode=mode,
                threshold=threshold,
                top_k=top_k,
            )
        _note_recall(nd, mode, threshold)
        note = None if matches else wordless_query(nd, text, doc_id, lang, signed)
        if note:
            click.echo(clean(note), err=True)
        if as_json:
            echo_json([m.to_dict() for m in matches])
            return
        _print_matches(matches, f"{mode} >= {threshold or nd.config.threshold}")


def _note_recall(nd: Any, mode: str, threshold: float | None) -> None:
    """Below the index's threshold, say how many of the resembling pairs the band keys find
    (:func:`recall_note`)."""
    if mode == "resemblance" and threshold is not None and threshold < nd.config.threshold:
        click.echo(recall_note(nd, threshold, nd.expected_recall(threshold)), err=True)


def _query_text(text: str | None, file_: str | None, doc_id: str | None) -> str | None:
    """The text of ``query``: TEXT, or the file's, or None for --id; a clear error unless
    exactly one is given, or for an empty text."""
    if sum(x is not None for x in (text, file_, doc_id)) != 1:
        fail("give exactly one of TEXT, --file or --id")
    if file_:
        text = _read_text(file_)
    if text is not None and not text.strip():
        fail("the query text is empty")
    return text


def _print_matches(matches: list, by: str) -> None:
    """The matches of ``query`` as a table; ``by``: the rule and threshold they passed."""
    from rich.table import Table

    t = Table(title=f"{len(matches)} near-duplicate(s) by {by}")
    for col in (
        "id",
        "resemblance",
        "containment q⊂d",
        "containment_ba d⊂q",
        "shared",
        "title",
    ):
        t.add_column(col, overflow="fold")
    for m in matches:
        t.add_row(
            safe(m.id),
            f"{m.resemblance:.3f}",
            f"{m.containment:.3f}",
            f"{m.containment_ba:.3f}",
            str(m.intersection),
            safe(m.title or ""),
        )
    console().print(t)


@click.command("compare")
@click.argument("a")
@click.argument("b")
@engine_options
@click.option(
    "--ids",
    is_flag=True,
    help="A and B are stored document ids (default: files, or ids when no such file).",
)
@click.option(
    "--show", type=count(0), default=10, show_default=True, help="How many shared passages to show."
)
@click.option(
    "--lang",
    type=LANGUAGE,
    help="Language of both texts (a code such as en, de, ar, zh; default: detect by script). "
    "Without an index only.",
)
@click.option(
    "--shingle-size",
    "-w",
    type=click.IntRange(1, 10),
    help="Words per shingle (default 5). Without an index only.",
)
@click.option(
    "--threshold",
    "-t",
    type=THRESHOLD,
    help="Resemblance of near-duplicates (default 0.8). Without an index only.",
)
@click.option(
    "--no-stopwords",
    is_flag=True,
    help="Keep the function words (articles, prepositions, ...). Without an index only.",
)
@json_option
def compare_cmd(
    a: str,
    b: str,
    target: str,
    engine_opts: dict,
    ids: bool,
    show: int,
    lang: str | None,
    shingle_size: int | None,
    threshold: float | None,
    no_stopwords: bool,
    as_json: bool,
) -> None:
    """Explain one pair: resemblance, containment, shared passages, colliding signatures.

    A and B are text files (or stored ids with --ids). With an index, settings come from
    it, so the comparison is exactly what the index would compute; with no index (no
    such file), from the options here and the defaults. The shared passages are A's own
    text behind the shingles it shares with B (long ones shortened); --json also gives the
    canonical shingles ("shared_shingles").

    A text with fewer canonical tokens than twice the shingle size is "too short": one
    changed word changes all its shingles, so its resemblance only says "same canonical
    words" or "not", and it is called an exact copy only of the same raw words.
    "containment" is c(A, B), how much of A is inside B, and "containment_ba" c(B, A), as in
    'neardup query'.

    \b
    Examples:
      neardup compare a.txt b.txt
      neardup compare a.txt b.txt -w 3 --threshold 0.7
      neardup compare --ids doc-1 doc-7 --json
    """
    from ..errors import DocumentNotFound

    use_ids = ids or not (Path(a).is_file() and Path(b).is_file())
    settings = {
        "lang": lang,
        "shingle_size": shingle_size,
        "threshold": threshold,
        "no_stopwords": no_stopwords,
    }
    if not use_ids and not target.startswith(("http://", "https://")) and not Path(target).exists():
        target, engine_opts = ":memory:", {}  # no index: a throwaway one with the settings given
        config = _compare_config(settings)
    else:
        config = None
        if any(settings.values()):
            fail(
                "--lang, --shingle-size, --threshold and --no-stopwords are for comparing "
                "without an index; "
                f"{target} has its own settings (see neardup info)"
            )
    with opened(target, engine_opts, config=config, create=config is not None) as nd:
        try:
            with slow_notice(_SIGNING):
                cmp = _comparison(nd, a, b, use_ids, lang)
        except DocumentNotFound as e:
            fail(f"{e} (and no such file)")
        if as_json:
            echo_json(cmp.to_dict())
            return
        _print_comparison(cmp, nd.config.threshold, show)


def _comparison(nd: Any, a: str, b: str, use_ids: bool, lang: str | None) -> Any:
    """The comparison of stored documents ``a`` and ``b`` (``use_ids``), else of the files."""
    from ..signing.records import Document

    if use_ids:
        return nd.compare(a, b, ids=True)
    return nd.compare(
        *(Document(id=p, text=_read_text(p), title=Path(p).name, lang=lang) for p in (a, b))
    )


def _print_comparison(cmp: Any, threshold: float, show: int) -> None:
    """A comparison for the terminal: the similarities, the estimates, whether a text is too
    short, the signature keys shared and the first ``show`` shared passages."""
    con = console()
    con.print(f"[bold]{safe(cmp.a)}[/] vs [bold]{safe(cmp.b)}[/]")
    con.print(
        f"  resemblance      {cmp.resemblance:.4f}   ({cmp.intersection} shared of "
        f"{cmp.shingles_a} + {cmp.shingles_b} shingles)"
    )
    con.print(f"  containment    a⊂b {cmp.containment:.4f}")
    con.print(f"  containment_ba b⊂a {cmp.containment_ba:.4f}")
    con.print(
        f"  length filter    {'passes' if cmp.passes_length_filter else 'fails'} at t = {threshold}"
    )
    con.print(
        f"  MinHash estimate {cmp.minhash_estimate:.4f}   "
        f"SimHash Hamming distance {cmp.simhash_hamming}   "
        f"exact copy: {'yes' if cmp.exact_equal else 'no'}"
    )
    for name, short, n in (
        (cmp.a, cmp.too_short_a, cmp.tokens_a),
        (cmp.b, cmp.too_short_b, cmp.tokens_b),
    ):
        if short:
            con.print(
                f"  [yellow]too short[/]: {safe(name)} has {n} canonical tokens, fewer "
                "than twice the shingle size: its resemblance is all or nothing, and it is "
                "an exact copy only of the same raw words",
                highlight=False,
                soft_wrap=True,
            )
    con.print(
        "  signature keys shared: "
        + ", ".join(f"{f} {v['shared']}/{v['of']}" for f, v in cmp.collisions.items())
    )
    if cmp.shared_passages:
        con.print(f"  shared passages of {safe(cmp.a)}:")
    for s in cmp.shared_passages[:show]:
        # (the terminal wraps it)
        con.print(f"    · {safe(_shortened(s))}", highlight=False, soft_wrap=True)
    if len(cmp.shared_passages) > show:
        con.print(f"    ... {len(cmp.shared_passages) - show} more shared passages")


def _compare_config(settings: dict):
    """The settings of a comparison without an index: the defaults and the options given."""
    from ..config import Config, ConfigError

    kw: dict = {}
    if settings["lang"]:
        kw["default_lang"] = settings["lang"]
    if settings["shingle_size"]:
        kw["shingle_size"] = settings["shingle_size"]
    if settings["threshold"] is not None:
        kw["threshold"] = settings["threshold"]
    if settings["no_stopwords"]:
        kw["stopwords"] = False
    try:
        return Config(**kw)
    except ConfigError as e:
        fail(str(e))


def _shortened(passage: str, keep: int = 120) -> str:
    """A passage on one line, its middle left out when it is longer than 2 * ``keep`` characters."""
    text = " ".join(passage.split())
    if len(text) <= 2 * keep + 20:
        return text
    return f"{text[:keep]} … [{len(text) - 2 * keep} characters] … {text[-keep:]}"


def _json_kind(v: object) -> str:
    """The JSON name of a parsed value's kind, for a message.

    >>> [_json_kind(v) for v in ([], None, 1, 2.5, "x", True, {})]
    ['an array', 'null', 'a number', 'a number', 'a string', 'a boolean', 'an object']
    """
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    return "an array" if isinstance(v, list) else "an object"


def _read_text(path: str) -> str:
    """A text file's content ('-': standard input), UTF-8 with or without a BOM, CRLF as LF."""
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
        return data.decode("utf-8-sig").replace("\r\n", "\n")
    except UnicodeDecodeError as e:
        fail(f"{'standard input' if path == '-' else path}: not valid UTF-8 (byte {e.start})")
    except OSError as e:
        fail(f"{path}: cannot read ({e.strerror})")
    raise AssertionError


@click.command("search")
@click.argument("query")
@engine_options
@click.option("--size", "-n", type=RESULTS, default=10, show_default=True, help="How many results.")
@click.option(
    "--dedupe/--no-dedupe", default=False, help="Fold near-duplicates under their best hit."
)
@click.option(
    "--threshold",
    "-t",
    type=THRESHOLD,
    help="Verify copies on the fly at this resemblance (default: use index tags).",
)
@click.option("--dsl", is_flag=True, help="QUERY is a query-DSL JSON body (HTTP engines).")
@json_option
def search_cmd(
    query: str,
    target: str,
    engine_opts: dict,
    size: int,
    dedupe: bool,
    threshold: float | None,
    dsl: bool,
    as_json: bool,
) -> None:
    """Full-text search, with near-duplicates folded under their best hit (--dedupe).

    \b
    Examples:
      neardup search "apache license" --dedupe
      neardup search '{"match": {"body": "license"}}' --dsl -e http://localhost:9200 --dedupe
    """
    q: Any = _dsl_query(query) if dsl else query
    with opened(target, engine_opts, create=False) as nd:
        # (the embedded engine says when it adds documents to its full-text index)
        announce_waits(nd.engine)
        with slow_notice(
            "searching (the first search after indexing adds the new documents to the "
            "full-text index)"
        ):
            hits = nd.search(q, size=size, dedupe=dedupe, threshold=threshold)
        if as_json:
            echo_json([{**h.__dict__, "folded_count": len(h.folded)} for h in hits])
            return
        _print_hits(hits)


def _dsl_query(query: str) -> dict:
    """``--dsl``: QUERY as the JSON object it must be, else a clear error."""
    import json

    try:
        q = json.loads(query)
    except json.JSONDecodeError as e:
        fail(f"--dsl: QUERY is not JSON ({e.msg} at column {e.colno})")
    if not isinstance(q, dict):
        fail(
            f"--dsl: QUERY must be a JSON object (a query clause, or a search body with "
            f'"query"), not {_json_kind(q)}: {{"match": {{"body": "license"}}}}'
        )
    return q


def _print_hits(hits: list) -> None:
    """The hits of ``search``, numbered, with the near-copies folded under each."""
    con = console()
    if not hits:
        con.print("no results")
    for n, h in enumerate(hits, 1):
        folded = (
            f"  [magenta](+{len(h.folded)} "
            f"near-cop{'y' if len(h.folded) == 1 else 'ies'} folded)[/]"
            if h.folded
            else ""
        )
        con.print(
            f"{n:>2}. [bold]{safe(one_line(h.title or h.id))}[/]  "
            f"[dim]{safe(one_line(h.id))} score {h.score:.2f}[/]{folded}"
        )
        con.print("    " + one_line(h.snippet)[:300], highlight=False, markup=False)
