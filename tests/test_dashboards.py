"""Kibana / OpenSearch Dashboards saved objects: structure, references, fields, import."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.dashboards.saved_objects import (
    DASHBOARD_TITLE,
    PRODUCTS,
    TARGETS,
    export,
    object_id,
    saved_objects,
    visualizations,
)
from neardup.dashboards.install import Destination, install
from neardup.engines.transport import Access
from neardup.runtime.retry import Backoff
from neardup.dashboards.fields import (
    DashboardError,
    dynamic_field,
    load_mappings,
    mapped_fields,
    source_field,
)
from neardup.runtime.resources import load_json

REPO = Path(__file__).resolve().parents[1]
COMMITTED = {
    "kibana": REPO / "docker" / "dashboards" / "kibana.ndjson",
    "opensearch-dashboards": REPO / "docker" / "dashboards" / "opensearch-dashboards.ndjson",
}

#: What each aggregation needs of its field (None: no field).
AGG_FIELD_KINDS = {
    "count": None,
    "terms": {"string", "boolean", "number", "date"},
    "histogram": {"number"},
    "date_histogram": {"date"},
    "max": {"number", "date"},
    "avg": {"number"},
    "sum": {"number"},
    "top_hits": {"string", "number", "date", "boolean"},
}


def _objects(target: str, **kw) -> list[dict]:
    text = export(target=target, **kw)
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture(params=TARGETS)
def target(request):
    return request.param


def test_ndjson_parses_and_has_the_expected_objects(target):
    objs = _objects(target)
    types = [o["type"] for o in objs]
    assert types.count("index-pattern") == 2 and types.count("dashboard") == 1
    assert types.count("visualization") == len(
        visualizations(source_field(load_mappings()[0], "fields.source"), "x")
    )
    assert len({o["id"] for o in objs}) == len(objs)
    patterns = {o["attributes"]["title"]: o for o in objs if o["type"] == "index-pattern"}
    assert set(patterns) == {"neardup", "neardup-clusters"}
    assert patterns["neardup"]["attributes"]["timeFieldName"] == "neardup.indexed_at"
    assert "timeFieldName" not in patterns["neardup-clusters"]["attributes"]
    dash = next(o for o in objs if o["type"] == "dashboard")
    assert dash["attributes"]["title"] == DASHBOARD_TITLE


def test_every_reference_resolves(target):
    objs = _objects(target)
    by_id = {o["id"]: o for o in objs}
    for o in objs:
        for ref in o["references"]:
            assert ref["id"] in by_id, f"{o['type']} {o['id']} references missing {ref}"
            assert by_id[ref["id"]]["type"] == ref["type"]
    dash = next(o for o in objs if o["type"] == "dashboard")
    panels = json.loads(dash["attributes"]["panelsJSON"])
    names = {r["name"] for r in dash["references"]}
    assert [p["panelRefName"] for p in panels] == [f"panel_{i}" for i in range(len(panels))]
    assert {p["panelRefName"] for p in panels} == names
    assert len({p["panelIndex"] for p in panels}) == len(panels)
    for p in panels:  # inside the 48-column grid, no overlaps
        g = p["gridData"]
        assert 0 <= g["x"] and g["x"] + g["w"] <= 48 and g["h"] > 0 and g["i"] == p["panelIndex"]
    cells = [
        (x, y)
        for p in panels
        for x in range(p["gridData"]["x"], p["gridData"]["x"] + p["gridData"]["w"])
        for y in range(p["gridData"]["y"], p["gridData"]["y"] + p["gridData"]["h"])
    ]
    assert len(cells) == len(set(cells))
    json.loads(dash["attributes"]["optionsJSON"])
    json.loads(dash["attributes"]["kibanaSavedObjectMeta"]["searchSourceJSON"])
    # every visualization is on the dashboard
    assert {r["id"] for r in dash["references"]} == {
        o["id"] for o in objs if o["type"] == "visualization"
    }


def _pattern_fields(objs: list[dict]) -> dict[str, dict]:
    """index-pattern id -> {field name: field type} from the mappings under mappings/."""
    docs_mapping, clusters_mapping = load_mappings()
    out = {}
    for o in objs:
        if o["type"] != "index-pattern":
            continue
        mapping = (
            clusters_mapping if o["attributes"]["title"].endswith("-clusters") else docs_mapping
        )
        out[o["id"]] = (mapping, {n: f for n, f in mapped_fields(mapping).items()})
    return out


def test_visualizations_use_only_mapped_fields(target):
    objs = _objects(target)
    patterns = _pattern_fields(objs)
    used = set()
    for o in (o for o in objs if o["type"] == "visualization"):
        vis = json.loads(o["attributes"]["visState"])
        assert vis["title"] == o["attributes"]["title"] and vis["type"] in (
            "metric",
            "area",
            "histogram",
            "table",
        )
        assert len({a["id"] for a in vis["aggs"]}) == len(vis["aggs"])
        assert any(a["schema"] == "metric" for a in vis["aggs"])
        search = json.loads(o["attributes"]["kibanaSavedObjectMeta"]["searchSourceJSON"])
        ref = next(r for r in o["references"] if r["name"] == search["indexRefName"])
        mapping, fields = patterns[ref["id"]]
        for agg in vis["aggs"]:
            kinds = AGG_FIELD_KINDS[agg["type"]]
            field = agg["params"].get("field")
            if kinds is None:
                assert field is None
                continue
            spec = fields.get(field)
            if spec is None:  # only the user's source field may be mapped dynamically
                assert field.startswith("fields."), (
                    f"{o['attributes']['title']}: {field} is not in the mapping"
                )
                spec = dynamic_field(mapping, field.removesuffix(".keyword"))
                assert spec is not None and spec.name == field
            assert spec.kind in kinds and spec.aggregatable, (
                f"{field} ({spec.es_type}) cannot feed {agg['type']}"
            )
            used.add(field)
            if agg["params"].get("sortField"):
                assert fields[agg["params"]["sortField"]].kind in ("date", "number")
        for name in re.findall(r"([A-Za-z_][\w.]*)\s*:", search["query"]["query"]):
            assert name in fields
    # the fields the dashboard is about
    assert {
        "neardup.indexed_at",
        "neardup.is_duplicate",
        "size",
        "representative_title.keyword",
        "mean_resemblance",
        "neardup.lang",
        "fields.source.keyword",
        "neardup.max_resemblance",
    } <= used


def test_mappings_have_the_contract_fields():
    docs = mapped_fields(load_mappings()[0])
    clusters = mapped_fields(load_mappings()[1])
    for name, kind in {
        "neardup.id": "string",
        "neardup.lang": "string",
        "neardup.is_duplicate": "boolean",
        "neardup.max_resemblance": "number",
        "neardup.indexed_at": "date",
        "neardup.cluster_id": "string",
        "title.keyword": "string",
    }.items():
        assert docs[name].kind == kind
    for name, kind in {
        "cluster_id": "string",
        "size": "number",
        "representative_title.keyword": "string",
        "mean_resemblance": "number",
        "updated_at": "date",
    }.items():
        assert clusters[name].kind == kind
    assert not docs["neardup.shingles"].searchable and not docs["neardup.simhash"].aggregatable


def test_index_pattern_field_lists(target):
    objs = _objects(target)
    for o in (o for o in objs if o["type"] == "index-pattern"):
        fields = json.loads(o["attributes"]["fields"])
        if not PRODUCTS[target].index_pattern_fields:
            assert fields == []  # Kibana 8 reads the fields from the cluster
            continue
        names = {f["name"]: f for f in fields}
        assert len(names) == len(fields)
        for f in fields:
            assert f["type"] in ("string", "number", "date", "boolean", "attachment")
        if o["attributes"]["title"] == "neardup":
            assert names["fields.source.keyword"]["subType"] == {
                "multi": {"parent": "fields.source"}
            }
            assert (
                names["neardup.indexed_at"]["type"] == "date"
                and names["neardup.is_duplicate"]["aggregatable"]
            )
            assert not names["body"]["aggregatable"]


def test_migration_versions(target):
    for o in _objects(target):
        assert o["migrationVersion"] == {o["type"]: PRODUCTS[target].migration_versions[o["type"]]}
        if target == "kibana":
            assert o["coreMigrationVersion"] == "8.0.0"
        else:
            assert "coreMigrationVersion" not in o
    osd = PRODUCTS["opensearch-dashboards"].migration_versions
    assert osd == {"index-pattern": "7.6.0", "visualization": "7.10.0", "dashboard": "7.9.3"}


def test_committed_files_equal_the_export(target):
    path = COMMITTED[target]
    assert path.exists(), (
        f"{path} is missing: neardup dashboards export --target {target} -o {path}"
    )
    assert path.read_text(encoding="utf-8") == export(target=target), (
        f"{path} is stale: neardup dashboards export --target {target} -o {path}"
    )


def test_other_index_and_source_field():
    objs = _objects("kibana", index="docs", source="fields.site")
    titles = {o["attributes"]["title"] for o in objs if o["type"] == "index-pattern"}
    assert titles == {"docs", "docs-clusters"}
    assert not {o["id"] for o in objs} & {o["id"] for o in _objects("kibana")}
    assert object_id("docs", "dashboard") in {o["id"] for o in objs}
    vis = [json.loads(o["attributes"]["visState"]) for o in objs if o["type"] == "visualization"]
    fields = {a["params"].get("field") for v in vis for a in v["aggs"]}
    assert "fields.site.keyword" in fields and "fields.source.keyword" not in fields
    assert any(v["title"] == "Duplicates by site" for v in vis)
    dash = next(o for o in objs if o["type"] == "dashboard")
    assert dash["attributes"]["title"] == f"{DASHBOARD_TITLE} (docs)"
    assert export("docs", source="fields.site") == export("docs", source="fields.site")


def test_source_field_resolution():
    docs = load_mappings()[0]
    assert source_field(docs, "neardup.lang").name == "neardup.lang"
    assert source_field(docs, "title").name == "title.keyword"
    assert source_field(docs, "fields.site").name == "fields.site.keyword"
    with pytest.raises(DashboardError, match="not an aggregatable field"):
        source_field(docs, "site")  # the root object is strict
    with pytest.raises(DashboardError, match="not an aggregatable field"):
        source_field(docs, "body")
    kw = {
        "dynamic_templates": [{"user": {"path_match": "fields.*", "mapping": {"type": "keyword"}}}],
        "properties": {"fields": {"type": "object"}},
    }
    assert source_field(kw, "fields.site").name == "fields.site"


def test_bad_arguments():
    with pytest.raises(DashboardError, match="unknown target"):
        saved_objects(target="grafana")
    with pytest.raises(DashboardError, match="not a valid"):
        saved_objects("bad name")


def test_mappings_are_the_templates_under_mappings():
    assert load_mappings()[0] == load_json("mappings", "documents.json")["template"]["mappings"]


# -- import ----------------------------------------------------------------------------------


class FakeDashboards:
    """A local HTTP server answering /api/status and the saved-objects import like the real
    products."""

    def __init__(
        self,
        product_header: str = "kbn-name",
        fail_first: int = 0,
        status: int = 200,
        answer: dict | None = None,
    ):
        self.requests: list[dict] = []
        self.fail_first = fail_first
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _reply(self, code: int, body: dict, headers: dict | None = None):
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                outer.requests.append(
                    {
                        "method": "GET",
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                    }
                )
                self._reply(
                    200, {"status": {"overall": {"level": "available"}}}, {product_header: "test"}
                )

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.requests.append(
                    {
                        "method": "POST",
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": body,
                    }
                )
                if outer.fail_first > 0:
                    outer.fail_first -= 1
                    return self._reply(503, {"error": "not ready"})
                n = body.count(b'{"attributes":')
                self._reply(status, answer or {"success": True, "successCount": n, "errors": []})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def posts(self) -> list[dict]:
        return [r for r in self.requests if r["method"] == "POST"]


def test_install_posts_multipart_with_xsrf_and_api_key():
    with FakeDashboards() as srv:
        to = Destination(target="kibana", access=Access(api_key="abc123"))
        answer = install(srv.url, to=to, index="docs")
    (post,) = srv.posts()
    assert post["path"] == "/api/saved_objects/_import?overwrite=true"
    assert post["headers"]["kbn-xsrf"] == "true"
    assert post["headers"]["authorization"] == "ApiKey abc123"
    assert post["headers"]["content-type"].startswith("multipart/form-data; boundary=")
    assert b'name="file"; filename="neardup.ndjson"' in post["body"]
    assert export("docs", target="kibana").encode() in post["body"]
    assert answer["success"] and answer["successCount"] == 11 and answer["target"] == "kibana"


def test_install_detects_opensearch_dashboards_and_uses_basic_auth():
    with FakeDashboards(product_header="osd-name") as srv:
        auth = Access(basic_auth=("admin", "s3cret"))
        to = Destination(access=auth, space="team", tenant="global")
        answer = install(srv.url + "/", to=to)
    get, post = srv.requests
    assert (
        get["path"] == "/api/status" and get["headers"]["authorization"] == "Basic YWRtaW46czNjcmV0"
    )
    assert post["path"] == "/s/team/api/saved_objects/_import?overwrite=true"
    assert post["headers"]["osd-xsrf"] == "true" and "kbn-xsrf" not in post["headers"]
    assert post["headers"]["securitytenant"] == "global"
    assert export(target="opensearch-dashboards").encode() in post["body"]
    assert b"coreMigrationVersion" not in post["body"]
    assert answer["target"] == "opensearch-dashboards"


def test_install_retries_unavailable_server():
    with FakeDashboards(fail_first=2) as srv:
        to = Destination(target="kibana", retry=Backoff(initial=0.01, maximum=float("inf")))
        answer = install(srv.url, "{}\n", to=to)
    assert len(srv.posts()) == 3 and answer["success"]
    with FakeDashboards(fail_first=10) as srv:
        with pytest.raises(DashboardError, match=r"failed after 3 attempts; last error: HTTP 503"):
            to = Destination(target="kibana", retry=Backoff(max_retries=2, initial=0.01))
            install(srv.url, "{}\n", to=to)


def test_install_reports_refused_objects_and_auth_errors():
    refused = {
        "success": False,
        "successCount": 0,
        "errors": [
            {
                "id": "v1",
                "type": "visualization",
                "title": "T",
                "error": {"type": "missing_references"},
            }
        ],
    }
    with FakeDashboards(answer=refused) as srv:
        with pytest.raises(
            DashboardError, match=r"refused objects: visualization v1 \(T\).*missing_references"
        ):
            install(srv.url, to=Destination(target="kibana"))
    with FakeDashboards(status=401, answer={"message": "unauthorized"}) as srv:
        with pytest.raises(DashboardError, match=r"HTTP 401 \(check --api-key"):
            install(srv.url, to=Destination(target="kibana", retry=Backoff(max_retries=0)))


def test_install_unreachable_server():
    with pytest.raises(DashboardError, match="failed after 2 attempts"):
        install(
            "http://127.0.0.1:9",
            to=Destination(target="kibana", retry=Backoff(max_retries=1, initial=0.01), timeout=2),
        )


def test_install_unknown_product():
    with FakeDashboards(product_header="x-other") as srv:
        with pytest.raises(DashboardError, match="pass --target"):
            install(srv.url)


def test_cli_export_and_install(tmp_path):
    from neardup.cli import main

    out = tmp_path / "osd.ndjson"
    res = CliRunner().invoke(
        main,
        [
            "dashboards",
            "export",
            "--target",
            "opensearch-dashboards",
            "--index",
            "docs",
            "--source-field",
            "fields.site",
            "-o",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    assert out.read_text(encoding="utf-8") == export(
        "docs", target="opensearch-dashboards", source="fields.site"
    )
    with FakeDashboards(product_header="osd-name") as srv:
        res = CliRunner().invoke(
            main, ["dashboards", "install", srv.url, "--file", str(out), "--json"]
        )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["successCount"] == 11
    assert out.read_bytes() in srv.posts()[0]["body"]
    res = CliRunner().invoke(main, ["dashboards", "export", "--source-field", "nope"])
    assert res.exit_code == 1 and "not an aggregatable field" in res.output
    res = CliRunner().invoke(main, ["dashboards", "install", "localhost:5601"])
    assert res.exit_code == 1 and "must start with http" in res.output


@pytest.mark.parametrize(
    "stack,ui,target,xsrf",
    [
        ("elasticsearch", "kibana", "kibana", "kbn-xsrf"),
        ("opensearch", "dashboards", "opensearch-dashboards", "osd-xsrf"),
    ],
)
def test_compose_loader_imports_the_committed_file(stack, ui, target, xsrf):
    import yaml

    compose = REPO / "docker" / stack / "compose.yaml"
    if not compose.exists():
        pytest.skip(f"{compose} not present")
    loader = yaml.safe_load(compose.read_text())["services"]["dashboards-loader"]
    (mount,) = loader["volumes"]
    host, container, mode = mount.split(":")
    assert (compose.parent / host).resolve() == COMMITTED[target] and mode == "ro"
    script = loader["command"][0]
    assert f"file=@{container}" in script and f'-H "{xsrf}: true"' in script
    assert f"http://{ui}:5601/api/saved_objects/_import?overwrite=true" in script
    assert "${" not in script.replace("$${", "")  # shell variables, not compose interpolation
    assert loader["depends_on"][ui]["condition"] == "service_healthy" and loader["restart"] == "no"
