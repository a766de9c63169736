"""``neardup dashboards``: Kibana / OpenSearch Dashboards saved objects (export, install)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable

import click

from .options import SECONDS, count, echo_json, fail, json_option, tls_options
from .output import clean, json_text

if TYPE_CHECKING:
    from ..dashboards.install import Destination
    from ..engines.elastic import ElasticEngine

_TARGET_HELP = "Product the saved objects are for."


def _build(
    target: str,
    index: str,
    source_field: str,
    engine_url: str | None,
    engine_opts: dict | None = None,
) -> str:
    from ..dashboards.saved_objects import export

    engine = None
    try:
        if engine_url:  # the live mappings (an attached index has the user's own fields)
            from ..engines.elastic import ElasticEngine

            engine = ElasticEngine.from_options(
                engine_url, **{**(engine_opts or {}), "index": index}
            )
            engine.open(create=False)
        return export(index, target=target, source=source_field, engine=engine)
    except FileNotFoundError as e:
        fail(str(e))
        raise AssertionError("unreachable") from None
    finally:
        if engine is not None:
            engine.close()


def _engine_from_env(url: str | None) -> dict:
    """Connection options of the Elasticsearch/OpenSearch engine (env NEARDUP_API_KEY /
    NEARDUP_USER / NEARDUP_PASSWORD, its CA bundle NEARDUP_CA_CERTS; the --api-key/--user/
    --ca-certs of install are the dashboards server's)."""
    import os

    from ..runtime.redact import add_secret

    user = os.environ.get("NEARDUP_USER")
    for secret in ("NEARDUP_API_KEY", "NEARDUP_PASSWORD"):
        add_secret(os.environ.get(secret))
    return {
        "api_key": os.environ.get("NEARDUP_API_KEY"),
        "basic_auth": (user, os.environ.get("NEARDUP_PASSWORD") or "") if user else None,
        "ca_certs": os.environ.get("NEARDUP_CA_CERTS") or None,
    }


def _engine_option(fn):
    return click.option(
        "--engine",
        "engine_url",
        envvar="NEARDUP_URL",
        default=None,
        metavar="URL",
        help="Elasticsearch/OpenSearch URL: build from the index's live mapping (its own fields, "
        "time field) instead of neardup's templates (env NEARDUP_URL; credentials from "
        "NEARDUP_API_KEY or NEARDUP_USER/NEARDUP_PASSWORD, its CA from NEARDUP_CA_CERTS).",
    )(fn)


def _index_options(fn):
    fn = click.option(
        "--source-field",
        default="fields.source",
        show_default=True,
        help="Document field for the 'duplicates by source' chart "
        "(e.g. fields.site, fields.domain).",
    )(fn)
    return click.option(
        "--index",
        "index_name",
        envvar="NEARDUP_INDEX",
        default="neardup",
        show_default=True,
        help="Documents index (its clusters are in NAME-clusters).",
    )(fn)


@click.group("dashboards")
def dashboards_group() -> None:
    """Dashboards of near-duplicate clusters for Kibana 8.x and OpenSearch Dashboards 2.x.

    One dashboard, "Near-duplicate clusters": share of duplicates over time, cluster-size
    distribution, the top clusters (size, representative title, mean resemblance),
    duplicates by language and by a source field, and the resemblance histogram; plus a
    data view (index pattern) for the documents index and one for NAME-clusters.

    \b
    Examples:
      neardup dashboards export --target kibana -o kibana.ndjson
      neardup dashboards install http://localhost:5601 --user elastic --password changeme
      neardup dashboards install https://osd:5601 --target opensearch-dashboards --index docs
    """


@dashboards_group.command("export")
@click.option(
    "--target",
    type=click.Choice(["kibana", "opensearch-dashboards"]),
    default="kibana",
    show_default=True,
    help=_TARGET_HELP,
)
@_index_options
@_engine_option
@click.option(
    "--output",
    "-o",
    type=click.File("w", encoding="utf-8"),
    default="-",
    help="NDJSON file to write (default: standard output).",
)
@json_option
def export_cmd(
    target: str, index_name: str, source_field: str, engine_url: str | None, output, as_json: bool
) -> None:
    """Write the saved objects as NDJSON, ready for Saved Objects > Import or the import API.

    \b
    Import it yourself with:
      curl -X POST "$KIBANA/api/saved_objects/_import?overwrite=true" \\
           -H "kbn-xsrf: true" --form file=@kibana.ndjson
    (OpenSearch Dashboards: header "osd-xsrf: true")

    --json prints a summary: the objects written by type (on standard error when the
    NDJSON goes to standard output).
    """
    ndjson = _build(target, index_name, source_field, engine_url, _engine_from_env(engine_url))
    output.write(ndjson)
    if as_json:
        import json
        from collections import Counter

        kinds = Counter(
            json.loads(line).get("type", "?") for line in ndjson.splitlines() if line.strip()
        )
        to_stdout = output.name == "<stdout>"
        click.echo(
            json_text(
                {
                    "output": "-" if to_stdout else output.name,
                    "target": target,
                    "index": index_name,
                    "objects": sum(kinds.values()),
                    "by_type": dict(sorted(kinds.items())),
                }
            ),
            err=to_stdout,
        )


def _destination_options(fn: Callable) -> Callable:
    """The credentials, TLS, space or tenant, timeout and retries of a dashboards server,
    with ``--target``, passed on as one ``to`` (:class:`~neardup.dashboards.install.Destination`);
    the secrets are registered for redaction first."""

    @click.option(
        "--api-key",
        envvar="NEARDUP_DASHBOARDS_API_KEY",
        default=None,
        help="API key (Authorization: ApiKey ...; env NEARDUP_DASHBOARDS_API_KEY).",
    )
    @click.option("--user", envvar="NEARDUP_DASHBOARDS_USER", default=None, help="Basic-auth user.")
    @click.option(
        "--password",
        envvar="NEARDUP_DASHBOARDS_PASSWORD",
        default=None,
        help="Basic-auth password (env NEARDUP_DASHBOARDS_PASSWORD).",
    )
    @tls_options
    @click.option(
        "--space", default=None, help="Kibana space to import into (default space if absent)."
    )
    @click.option(
        "--tenant",
        default=None,
        help="OpenSearch Dashboards security tenant to import into (e.g. global; default: "
        "the user's).",
    )
    @click.option(
        "--timeout", type=SECONDS, default=30.0, show_default=True, help="Seconds per request."
    )
    @click.option(
        "--retries",
        type=count(0, 100),
        default=5,
        show_default=True,
        help="Retries on connection errors, 429 and 5xx (exponential backoff).",
    )
    @functools.wraps(fn)
    def wrapper(
        *args: Any,
        target: str,
        api_key: str | None,
        user: str | None,
        password: str | None,
        ca_certs: str | None,
        no_verify_certs: bool,
        space: str | None,
        tenant: str | None,
        timeout: float,
        retries: int,
        **kwargs: Any,
    ) -> Any:
        from ..dashboards.install import Destination
        from ..engines.transport import Access
        from ..runtime.redact import add_secret
        from ..runtime.retry import Backoff

        for secret in (api_key, password):
            add_secret(secret)
        if user and password is None:
            fail("--user needs --password (or NEARDUP_DASHBOARDS_PASSWORD)")
        to = Destination(
            target=target,
            access=Access(
                api_key=api_key,
                basic_auth=(user, password) if user else None,
                ca_certs=ca_certs,
                verify_certs=not no_verify_certs,
            ),
            space=space,
            tenant=tenant,
            timeout=timeout,
            retry=Backoff(max_retries=retries, initial=0.5, maximum=float("inf")),
        )
        return fn(*args, to=to, **kwargs)

    return wrapper


@dashboards_group.command("install")
@click.argument("url")
@click.option(
    "--target",
    type=click.Choice(["auto", "kibana", "opensearch-dashboards"]),
    default="auto",
    show_default=True,
    help=_TARGET_HELP + " auto asks the server (/api/status).",
)
@_index_options
@_engine_option
@click.option(
    "--file",
    "ndjson_file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Import this NDJSON instead of building it (e.g. an edited export).",
)
@_destination_options
@json_option
def install_cmd(
    url: str,
    to: Destination,
    index_name: str,
    source_field: str,
    engine_url: str | None,
    ndjson_file: str | None,
    as_json: bool,
) -> None:
    """Import the saved objects into Kibana or OpenSearch Dashboards at URL.

    Posts them to /api/saved_objects/_import?overwrite=true (objects keep stable ids, so
    installing again updates them in place).

    \b
    Examples:
      neardup dashboards install http://localhost:5601
      neardup dashboards install https://kibana:5601 --api-key "$KEY" --ca-certs ca.pem --index docs
      neardup dashboards install http://localhost:5601 --user admin --password "$PW" --tenant global
    """
    from ..dashboards.install import install
    from ..runtime.redact import add_url_secrets

    add_url_secrets(url)
    if not url.startswith(("http://", "https://")):
        fail(f"URL must start with http:// or https://, not {url!r}")
    body = None
    if ndjson_file:
        with open(ndjson_file, encoding="utf-8") as f:
            body = f.read()
    engine = _source_engine(engine_url, index_name) if engine_url and body is None else None
    try:
        answer = install(url, body, to=to, index=index_name, engine=engine, source=source_field)
    except FileNotFoundError as e:
        fail(str(e))
    finally:
        if engine is not None:
            engine.close()
    if as_json:
        echo_json(answer)
    else:
        click.echo(
            clean(
                f"imported {answer.get('successCount', 0)} saved objects into {url} "
                f"({answer['target']}); "
                f'open the dashboard "Near-duplicate clusters"'
            )
        )


def _source_engine(engine_url: str, index_name: str) -> ElasticEngine:
    """The engine holding index ``index_name`` at ``engine_url`` (credentials from the
    environment), opened without creating anything: the saved objects are made for it."""
    from ..engines.elastic import ElasticEngine

    engine = ElasticEngine.from_options(
        engine_url, **{**_engine_from_env(engine_url), "index": index_name}
    )
    engine.open(create=False)
    return engine
