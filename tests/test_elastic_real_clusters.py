"""Clusters as their users run them: each engine's real pipeline parser, read-only users,
settings out of the cluster state, and documents written by other clients."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from neardup.cli import main
from neardup.config import Config
from neardup.engines.elastic import templates
from neardup.engines.elastic import ElasticEngine
from neardup.signing.signer import Signer

from .ingest_parsers import pipeline_errors
from .test_elastic_engine import _texts

pytestmark = pytest.mark.http

VERSIONS = [
    ("elasticsearch", (8, 12, 0)),
    ("elasticsearch", (8, 19, 0)),
    ("elasticsearch", (9, 1, 0)),
    ("opensearch", (2, 11, 0)),
    ("opensearch", (2, 16, 0)),
    ("opensearch", (2, 19, 0)),
    ("opensearch", (3, 1, 0)),
]


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


# -- 1. pipeline bodies against each engine's parser ----------------------------------------------
@pytest.mark.parametrize("product,version", VERSIONS)
def test_pipeline_body_passes_the_engines_own_parser(product, version):
    body = templates.pipeline_body(product, version)
    assert pipeline_errors(product, version, "neardup-x", body) == []
    assert ("_meta" in body) == (product == "elasticsearch")


@pytest.mark.parametrize("product,version", VERSIONS)
def test_parser_model_refuses_what_the_engine_refuses(product, version):
    body = templates.pipeline_body(product, version)
    wrong = {**body, "_meta": {"managed_by": "neardup"}, "owner": "x"}
    errors = pipeline_errors(product, version, "p", wrong)
    want = "[_meta, owner]" if product == "opensearch" else "[owner]"
    assert errors == [
        f"pipeline [p] doesn't support one or more provided configuration parameters {want}"
    ]
    assert pipeline_errors(product, version, "p", {"description": "no processors"}) == [
        "[processors] required property is missing"
    ]
    other = "opensearch" if product == "elasticsearch" else "elasticsearch"
    fp = [p for p in templates.pipeline_body(other, (9, 0, 0))["processors"] if "fingerprint" in p]
    assert any(
        "doesn't support" in e or "No processor type" in e
        for e in pipeline_errors(product, version, "p", {"processors": fp})
    )  # the other engine's options


def test_init_with_its_pipeline_runs_end_to_end_on_opensearch(os_ingest, tmp_path):
    url = os_ingest.url
    r = _run("init", "--engine", url, "--index", "news", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert any("ingest pipeline neardup-news installed" in a for a in data["actions"])
    stored = os_ingest.pipelines["neardup-news"]
    assert (
        "_meta" not in stored
        and stored["processors"][0]["fail"]["tag"] == "neardup-require-signature"
    )
    assert (
        os_ingest.default_pipelines["neardup-news-documents"] == "neardup-news"
    )  # the template's default_pipeline
    again = _run("init", "--engine", url, "--index", "news")
    assert again.exit_code == 0 and "kept" in again.output
    src = tmp_path / "docs.jsonl"
    src.write_text("\n".join(json.dumps({"id": d.id, "text": d.text}) for d in _texts(9)))
    assert _run("index", str(src), "--engine", url, "--index", "news", "-q").exit_code == 0
    r = _run("query", "--engine", url, "--index", "news", "--id", "d03", "--json")
    assert r.exit_code == 0, r.output


def test_the_old_pipeline_body_is_refused_by_the_front(os_ingest):
    import urllib.error
    import urllib.request

    body = {
        **templates.pipeline_body("opensearch", os_ingest.ingest),
        "_meta": {"managed_by": "neardup"},
    }
    req = urllib.request.Request(
        f"{os_ingest.url}/_ingest/pipeline/p",
        json.dumps(body).encode(),
        method="PUT",
        headers={"content-type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req)
    answer = json.loads(err.value.read())
    assert err.value.code == 400 and answer["error"]["type"] == "parse_exception"
    assert (
        answer["error"]["reason"]
        == "pipeline [p] doesn't support one or more provided configuration parameters [_meta]"
    )


# -- 3. least privilege ----------------------------------------------------------------------------
def _writes(log) -> list[tuple[str, str]]:
    """Requests that change something (a read-only API key would get 403 for them)."""
    out = []
    for method, path, _ in log:
        bare = path.split("?")[0]
        reads = (
            "/_search",
            "/_msearch",
            "/_mget",
            "/_count",
            "/_search/point_in_time",
            "/_pit",
            "/_search/scroll",
            "/_pit/close",
        )
        if method in ("GET", "HEAD"):
            continue
        if (
            method in ("POST", "DELETE")
            and bare.endswith(reads)
            or "/_search/point_in_time" in bare
            or "/_search/scroll" in bare
        ):
            continue
        out.append((method, path))
    return out


def reading_commands(index: str, tmp_path) -> list[list[str]]:
    """The reading commands on ``index`` (a stored document ``d03``, ``d01``, ``d02``), each
    without its connection options: the caller adds ``--engine URL`` and credentials
    (``dashboards export`` takes them from the environment). tests/test_security_real.py runs
    the same against the security plugin with a read-only role."""
    return [
        ["query", "--index", index, "--id", "d03", "--json"],
        ["query", "--index", index, "river stone light market paper"],
        ["search", "--index", index, "river", "--json"],
        ["search", "--index", index, "river", "--dedupe"],
        ["clusters", "--index", index, "--no-write", "--json"],
        ["show", "d03", "--index", index, "--json"],
        ["export", "--index", index, "-o", str(tmp_path / "export.jsonl"), "-q"],
        ["info", "--index", index, "--json"],
        ["report", "--index", index, "-o", str(tmp_path / "r.html"), "-q"],
        ["compare", "--index", index, "--ids", "d01", "d02"],
        ["dashboards", "export", "--index", index, "--source-field", "neardup.lang"],
    ]


@pytest.mark.parametrize("proxy", ["fault_proxy", "es_proxy"])
def test_reading_commands_send_no_write(request, proxy, tmp_path):
    p = request.getfixturevalue(proxy)
    url = p.url
    src = tmp_path / "docs.jsonl"
    src.write_text(
        "\n".join(json.dumps({"id": d.id, "text": d.text, "title": d.title}) for d in _texts(12))
    )
    common = ["--engine", url, "--index", "ro"]
    assert _run("init", *common, "--no-pipeline").exit_code == 0
    assert _run("index", str(src), *common, "-q").exit_code == 0
    assert _run("clusters", *common, "--json").exit_code == 0  # writes the clusters (allowed)
    p.log.clear()
    for args in reading_commands("ro", tmp_path):
        before = len(p.log)
        r = _run(*args, "--engine", url)
        assert r.exit_code == 0, (args, r.output)
        assert len(p.log) > before, args  # it did talk to the server
        assert _writes(p.log[before:]) == [], args


def test_the_write_classifier_can_fail(fault_proxy):
    log = [
        ("PUT", "/_index_template/x", 200),
        ("POST", "/x/_bulk", 200),
        ("POST", "/x/_refresh", 200),
        ("DELETE", "/x/_doc/1", 200),
        ("POST", "/x/_search", 200),
        ("DELETE", "/_search/point_in_time", 200),
    ]
    assert _writes(log) == [
        ("PUT", "/_index_template/x"),
        ("POST", "/x/_bulk"),
        ("POST", "/x/_refresh"),
        ("DELETE", "/x/_doc/1"),
    ]


# -- 7. documents of other clients -----------------------------------------------------------------
def test_documents_without_neardup_fields_are_skipped_and_counted(osmem_clone):
    eng = ElasticEngine.from_options(
        osmem_clone.url, index="mixed", pipeline=False, max_retries=1, initial_backoff=0.01
    )
    eng.open(Config())
    signer = Signer(eng.config)
    eng.put([signer.sign(d) for d in _texts(6)])
    for i in range(
        3
    ):  # another client writes plain documents (the mapping has no `dynamic: strict` on them)
        eng.remote.client.index(
            index="mixed",
            id=f"plain{i}",
            body={"body": f"a plain document {i}", "title": "x"},
            refresh="true",
        )
    assert [d.id for d in eng.scan()] == [d.id for d in _texts(6)]
    assert [r.id for r in eng.scan_tags()] == [d.id for d in _texts(6)]
    assert eng.unsigned() == 3 and eng.count() == 6
    assert eng.get(["plain0", "d01"]).keys() == {"d01"}
    from neardup.api import NearDup

    nd = NearDup(eng, eng.config)
    ref = NearDup.open(":memory:")  # the same six documents alone, tagged by the one rule
    ref.index(_texts(6), progress=None)
    want = {r.id: r.tags for r in ref.engine.scan_tags()}
    assert nd.retag() == sum(t.is_duplicate for t in want.values()) >= 1
    assert {r.id: r.tags for r in eng.scan_tags()} == want  # (the plain documents: no tags)
    assert eng.unsigned() == 3
    r = _run("report", "--engine", osmem_clone.url, "--index", "mixed", "-o", "/dev/null", "-q")
    assert r.exit_code == 0, r.output


# -- 2. one install for Elasticsearch 8 and 9 ------------------------------------------------------
_ES_CLIENT_RUN = r"""
import json, sys
import elasticsearch
from neardup.config import Config
from neardup.engines.elastic import ElasticEngine
from neardup.signing.signer import Document, Signer
eng = ElasticEngine.from_options(
    sys.argv[1], index=sys.argv[2], pipeline=False, max_retries=1, initial_backoff=0.01
)
eng.open(Config())
signer = Signer(eng.config)
text = "the river carries stones and light down to the market by the old paper mill every spring"
two = [signer.sign(Document("a", text)), signer.sign(Document("b", text + " again"))]
assert eng.put(two) == []
print(json.dumps({"client": elasticsearch.__versionstr__, "server": eng.remote.server.number,
                  "count": eng.count(), "scan": [d.id for d in eng.scan()]}))
"""


def _es8_client_path() -> str | None:
    """Where the elasticsearch 8.x client neardup depends on can be imported from: this
    environment, or NEARDUP_ES8_CLIENT (a pip --target directory)."""
    import os

    import elasticsearch

    if elasticsearch.__versionstr__.startswith("8."):
        return ""
    return os.environ.get("NEARDUP_ES8_CLIENT")


@pytest.mark.parametrize("server", ["8.15.3", "9.1.0"])
def test_the_8x_client_serves_elasticsearch_8_and_9(es_proxy, server):
    import os
    import subprocess
    import sys

    path = _es8_client_path()
    if path is None:
        pytest.skip(
            "elasticsearch 8.x client not installed here (pyproject pins it); set "
            "NEARDUP_ES8_CLIENT to a pip --target dir"
        )
    es_proxy.es_version = server
    from .corpora import NEARDUP_PATH

    plugin = str(NEARDUP_PATH)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(x for x in (path, plugin) if x)}
    out = subprocess.run(
        [sys.executable, "-c", _ES_CLIENT_RUN, es_proxy.url, "v" + server.replace(".", "")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out.stdout.strip().splitlines()[-1])
    assert (
        data["client"].startswith("8.")
        and data["server"] == server
        and data["count"] == 2
        and data["scan"] == ["a", "b"]
    )
    sent = [a for a in es_proxy.accept if a]
    assert sent and all("compatible-with=8" in a for a in sent if "vnd.elasticsearch" in a)
    assert any("compatible-with=8" in a for a in sent)
