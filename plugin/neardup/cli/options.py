"""Options shared by every command that opens an index, and output helpers."""

from __future__ import annotations

import functools
import math
import sys
from typing import Any, Callable

import click

from ..engines import DEFAULT_DB
from ..runtime.redact import add_secret, add_url_secrets
from .output import clean, json_text


# -- numbers: every numeric option takes one of these types, so each is bounded and finite -----
#: The largest count or size an option takes (a 32-bit signed integer: safe in SQLite and in
#: every field and parameter of Elasticsearch/OpenSearch).
MAX_INT = 2**31 - 1
#: The most results one query or search returns: Elasticsearch's and OpenSearch's default
#: ``index.max_result_window``, so that the same number works on both engines.
MAX_RESULTS = 10_000
#: The most documents in one batch.
MAX_BATCH = 100_000
#: The longest time an option takes, in seconds (a day).
MAX_SECONDS = 86_400.0


class Finite(click.FloatRange):
    """A float in a range, never NaN or infinite (``FloatRange`` lets NaN through: every
    comparison with it is false).

    >>> Finite(0, 1).convert("0.5", None, None)
    0.5
    >>> Finite(0, 1).convert("nan", None, None)
    Traceback (most recent call last):
    click.exceptions.BadParameter: 'nan' is not a finite number.
    """

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        rv = click.types.FloatParamType.convert(self, value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return super().convert(rv, param, ctx)


def count(min: int = 1, max: int = MAX_INT) -> click.IntRange:
    """An integer option from ``min`` to ``max`` (inclusive)."""
    return click.IntRange(min, max)


#: A resemblance threshold: in (0, 1].
THRESHOLD = Finite(0, 1, min_open=True)
#: Seconds (a timeout, an interval): more than 0, at most a day.
SECONDS = Finite(0, MAX_SECONDS, min_open=True)
#: Documents per batch.
BATCH_SIZE = count(1, MAX_BATCH)
#: Results of one query or search.
RESULTS = count(1, MAX_RESULTS)


def tls_options(fn: Callable, envvar: str | None = None) -> Callable:
    """--ca-certs (also from ``envvar`` when given) and --no-verify-certs, for an HTTP
    engine or a dashboards server."""
    fn = click.option(
        "--no-verify-certs", is_flag=True, help="Do not verify TLS certificates (testing only)."
    )(fn)
    return click.option(
        "--ca-certs",
        type=click.Path(exists=True, dir_okay=False),
        envvar=envvar,
        default=None,
        help="CA bundle to verify the server's certificate"
        + (f" (env {envvar})." if envvar else "."),
    )(fn)


def engine_tls_options(fn: Callable) -> Callable:
    """:func:`tls_options` of an HTTP engine: its CA bundle also from NEARDUP_CA_CERTS."""
    return tls_options(fn, envvar="NEARDUP_CA_CERTS")


def engine_options(fn: Callable) -> Callable:
    """--engine and the connection options of HTTP engines, passed on as ``engine_opts``."""

    @click.option(
        "--engine",
        "-e",
        "target",
        envvar="NEARDUP_URL",
        default=DEFAULT_DB,
        show_default=True,
        help="SQLite file of the embedded engine, or an Elasticsearch/OpenSearch URL "
        "(env NEARDUP_URL).",
    )
    @click.option(
        "--index",
        "index_name",
        envvar="NEARDUP_INDEX",
        default="neardup",
        show_default=True,
        help="Index name on an HTTP engine (its clusters go to NAME-clusters).",
    )
    @click.option(
        "--api-key",
        envvar="NEARDUP_API_KEY",
        default=None,
        help="API key for an HTTP engine (env NEARDUP_API_KEY).",
    )
    @click.option(
        "--user", envvar="NEARDUP_USER", default=None, help="Basic-auth user for an HTTP engine."
    )
    @click.option(
        "--password",
        envvar="NEARDUP_PASSWORD",
        default=None,
        help="Basic-auth password (env NEARDUP_PASSWORD).",
    )
    @engine_tls_options
    @click.option(
        "--timeout",
        type=SECONDS,
        default=30.0,
        show_default=True,
        help="Seconds per request to an HTTP engine.",
    )
    @functools.wraps(fn)
    def wrapper(
        *args: Any,
        target: str,
        index_name: str,
        api_key: str | None,
        user: str | None,
        password: str | None,
        ca_certs: str | None,
        no_verify_certs: bool,
        timeout: float,
        **kwargs: Any,
    ) -> Any:
        opts: dict[str, Any] = {}
        for secret in (api_key, password):
            add_secret(secret)
        add_url_secrets(target)
        if target.startswith(("http://", "https://")):
            opts = {
                "index": index_name,
                "api_key": api_key,
                "basic_auth": (user, password) if user else None,
                "ca_certs": ca_certs,
                "verify_certs": not no_verify_certs,
                "request_timeout": timeout,
            }
        return fn(*args, target=target, engine_opts=opts, **kwargs)

    return wrapper


class LanguageCode(click.ParamType):
    """A language code option: two or three letters (en, fa, ru, de, ar, zh, ...), kept as
    its language (:func:`neardup.config.language_of_code`)."""

    name = "CODE"

    def convert(self, value: Any, param: Any, ctx: Any) -> str:
        from ..config import is_language_code, language_of_code

        if not is_language_code(value):
            self.fail(
                f"{value!r} is no language code "
                "(two or three letters: en, fa, ru, de, ar, zh, ...)",
                param,
                ctx,
            )
        return language_of_code(value)


LANGUAGE = LanguageCode()


def signing_options(fn: Callable) -> Callable:
    """``--batch-size`` and ``--workers``: how documents are signed and stored (index, dedup)."""
    fn = click.option(
        "--workers",
        "-j",
        type=count(0, 1024),
        default=None,
        help="Processes that canonicalize and sign while this one tags and stores (and signs "
        "whenever it would wait for them); 0 signs here too. [default: one per idle CPU (CPUs "
        "less the load average) less one, none on a busy machine or one CPU; input of one "
        "batch is signed here]",
    )(fn)
    return click.option(
        "--batch-size",
        type=BATCH_SIZE,
        default=500,
        show_default=True,
        help="Documents signed and tagged together (one bulk request on an HTTP engine).",
    )(fn)


def input_options(fn: Callable) -> Callable:
    """--text-field, --id-field, --title-field, --lang-field and --encoding of the commands
    that read files, passed on as ``record_fields`` (a :class:`neardup.io.fields.RecordFields`) and
    ``encoding``."""

    def check_encoding(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        from ..io.encodings import check_encoding as problem_of

        problem = None if value is None else problem_of(value)
        if problem:
            raise click.BadParameter(problem)
        return value

    @click.option(
        "--text-field",
        default="text",
        show_default=True,
        metavar="NAME",
        help="Field (column) of records holding the text.",
    )
    @click.option(
        "--id-field",
        default="id",
        show_default=True,
        metavar="NAME",
        help="Field of records holding the document id (records without one get FILE:LINE).",
    )
    @click.option(
        "--title-field",
        default="title",
        show_default=True,
        metavar="NAME",
        help="Field of records holding the title.",
    )
    @click.option(
        "--lang-field",
        default="lang",
        show_default=True,
        metavar="NAME",
        help="Field of records holding the language code (en, ru, fa, de, ar, zh, ...; "
        "detected when absent).",
    )
    @click.option(
        "--encoding",
        default=None,
        metavar="NAME",
        callback=check_encoding,
        help="Character encoding of the files (e.g. cp1251, koi8-r, windows-1256). "
        "[default: UTF-8; text files with a UTF-16 byte order mark as UTF-16]",
    )
    @functools.wraps(fn)
    def wrapper(
        *args: Any, text_field: str, id_field: str, title_field: str, lang_field: str, **kwargs: Any
    ) -> Any:
        from ..io.fields import RecordFields

        names = {
            "--text-field": text_field,
            "--id-field": id_field,
            "--title-field": title_field,
            "--lang-field": lang_field,
        }
        if len(set(names.values())) < len(names):
            raise click.UsageError(
                f"two of {', '.join(names)} name the same field: "
                f"{', '.join(f'{k} {v}' for k, v in names.items())}"
            )
        return fn(
            *args,
            record_fields=RecordFields(
                text=text_field, id=id_field, title=title_field, lang=lang_field
            ),
            **kwargs,
        )

    return wrapper


def json_option(fn: Callable) -> Callable:
    return click.option(
        "--json", "as_json", is_flag=True, help="Print JSON for machines instead of a table."
    )(fn)


def echo_json(obj: Any) -> None:
    """Print ``obj`` as JSON: credentials redacted, terminal controls as ``\\u`` escapes."""
    click.echo(json_text(obj, default=_default))


def _default(o: Any) -> Any:
    if hasattr(o, "to_dict"):
        return o.to_dict()
    if hasattr(o, "__dict__"):
        return o.__dict__
    if hasattr(o, "tolist"):
        return o.tolist()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def fail(message: str, code: int = 1) -> None:
    """Print a clear error (no traceback; credentials redacted, control characters shown) and
    exit."""
    click.echo(click.style("error: ", fg="red", bold=True) + clean(message), err=True)
    sys.exit(code)


def wordless_query(
    nd: Any, text: str | None, doc_id: str | None, lang: str | None, signed: Any = None
) -> str | None:
    """Why a query can have no near-duplicate because it has no words, or None. ``signed``:
    the query text signed already (not signed again)."""
    from ..signing.records import Document

    if text is not None:
        if (signed or nd.signer.sign(Document("", text, lang=lang))).wordless:
            return (
                "the query text has no words (after canonicalization: only punctuation, markup "
                "or stop words), "
                "so nothing is its near-duplicate"
            )
        return None
    stored = nd.engine.get([doc_id], shingles=False).get(doc_id) if doc_id is not None else None
    if stored is not None and stored.n_shingles == 0:
        return f"document {doc_id!r} has no words, so nothing is its near-duplicate"
    return None
