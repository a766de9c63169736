"""Kibana and OpenSearch Dashboards saved objects for a neardup index, and their import.

:func:`saved_objects` builds, for one documents index and its ``<name>-clusters`` index,
two index patterns (data views), the aggregation-based visualizations of the
"Near-duplicate clusters" dashboard and the dashboard itself. Only saved-object types
both products import and migrate (``index-pattern``, ``visualization`` with a
``visState`` JSON string, ``dashboard`` with ``panelsJSON`` + ``references``) are used.

Each object carries the migration version of the format it is written in, so the
importing product runs exactly the migrations that bring it up to date:
``visualization`` 7.10.0, ``dashboard`` 7.9.3, ``index-pattern`` 7.6.0 (the last
migrations of OpenSearch Dashboards 2.x for these types); Kibana objects also carry
``coreMigrationVersion`` 8.0.0 (Kibana 8.x and later migrate them forward).

:func:`install` posts the NDJSON to ``POST /api/saved_objects/_import?overwrite=true``.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..errors import EngineError
from ..runtime.retry import Backoff
from ..runtime.resources import load_json

TARGETS = ("kibana", "opensearch-dashboards")
DASHBOARD_TITLE = "Near-duplicate clusters"
DEFAULT_SOURCE_FIELD = "fields.source"

#: Names of the index templates under ``mappings/`` (documents, clusters).
DOCS_MAPPING = "documents.json"
CLUSTERS_MAPPING = "clusters.json"

_NAMESPACE = uuid.UUID("6f1c2d0e-8a43-4b7e-9a55-3b1f2f5e0d11")
_INDEX_REF = "kibanaSavedObjectMeta.searchSourceJSON.index"


@dataclass(frozen=True)
class Product:
    """What differs between the two products' saved objects and import API."""

    name: str
    xsrf_header: str
    core_migration_version: str | None
    migration_versions: Mapping[str, str]
    index_pattern_fields: bool  # store the field list in the index pattern


PRODUCTS: dict[str, Product] = {
    "kibana": Product(
        name="Kibana",
        xsrf_header="kbn-xsrf",
        core_migration_version="8.0.0",
        migration_versions={
            "index-pattern": "7.6.0",
            "visualization": "7.10.0",
            "dashboard": "7.9.3",
        },
        index_pattern_fields=False,
    ),
    "opensearch-dashboards": Product(
        name="OpenSearch Dashboards",
        xsrf_header="osd-xsrf",
        core_migration_version=None,
        migration_versions={
            "index-pattern": "7.6.0",
            "visualization": "7.10.0",
            "dashboard": "7.9.3",
        },
        index_pattern_fields=True,
    ),
}


class DashboardError(EngineError):
    """Saved objects could not be built or imported."""


# ---------------------------------------------------------------------------------------
# fields of the index templates


@dataclass(frozen=True)
class FieldSpec:
    """One field as the dashboards products describe it in an index pattern."""

    name: str
    es_type: str
    indexed: bool = True
    doc_values: bool = True
    parent: str | None = None  # the field this one is a multi-field of

    @property
    def kind(self) -> str:
        return _KIND.get(
            self.es_type, "string" if self.es_type in ("keyword", "text") else "unknown"
        )

    @property
    def searchable(self) -> bool:
        return self.indexed and self.es_type not in ("binary", "object")

    @property
    def aggregatable(self) -> bool:
        return self.doc_values and self.es_type not in ("text", "binary", "object")

    def to_index_pattern(self) -> dict[str, Any]:
        out = {
            "name": self.name,
            "type": self.kind,
            "esTypes": [self.es_type],
            "count": 0,
            "scripted": False,
            "searchable": self.searchable,
            "aggregatable": self.aggregatable,
            "readFromDocValues": self.aggregatable,
        }
        if self.parent:
            out["subType"] = {"multi": {"parent": self.parent}}
        return out


_KIND = {
    "integer": "number",
    "long": "number",
    "float": "number",
    "double": "number",
    "half_float": "number",
    "scaled_float": "number",
    "short": "number",
    "byte": "number",
    "unsigned_long": "number",
    "boolean": "boolean",
    "date": "date",
    "date_nanos": "date",
    "binary": "attachment",
}


def mapping_of(template: Mapping[str, Any], where: str = "template") -> Mapping[str, Any]:
    """The ``mappings`` of an index template, a composable template or a create-index body."""
    for candidate in (template.get("template", {}).get("mappings"), template.get("mappings")):
        if isinstance(candidate, Mapping):
            return candidate
    raise DashboardError(f"{where}: no 'mappings' (expected at 'mappings' or 'template.mappings')")


def mapped_fields(mapping: Mapping[str, Any]) -> dict[str, FieldSpec]:
    """Every concrete field of a mapping, dotted names, multi-fields included."""
    out: dict[str, FieldSpec] = {}

    def walk(props: Mapping[str, Any], prefix: str) -> None:
        for name, spec in props.items():
            full = prefix + name
            if "properties" in spec:
                walk(spec["properties"], full + ".")
                continue
            if spec.get("enabled") is False:
                continue
            es_type = spec.get("type", "object")
            if es_type == "object":
                continue
            out[full] = _spec(full, spec)
            for sub, subspec in spec.get("fields", {}).items():
                out[f"{full}.{sub}"] = _spec(f"{full}.{sub}", subspec, parent=full)

    walk(mapping.get("properties", {}), "")
    return out


def _spec(name: str, spec: Mapping[str, Any], parent: str | None = None) -> FieldSpec:
    return FieldSpec(
        name=name,
        es_type=spec.get("type", "object"),
        indexed=spec.get("index", True) is not False,
        doc_values=spec.get("doc_values", True) is not False,
        parent=parent,
    )


def _dynamic_allowed(mapping: Mapping[str, Any], name: str) -> bool:
    """Whether a new field ``name`` is mapped dynamically (``dynamic`` of its nearest object)."""
    dynamic = mapping.get("dynamic", True)
    props = mapping.get("properties", {})
    for part in name.split(".")[:-1]:
        spec = props.get(part)
        if spec is None:
            break
        dynamic = spec.get("dynamic", dynamic)
        props = spec.get("properties", {})
    return dynamic in (True, "true")


def dynamic_field(mapping: Mapping[str, Any], name: str) -> FieldSpec | None:
    """The aggregatable field a dynamically mapped string ``name`` gets in this mapping.

    A ``dynamic_templates`` entry whose ``path_match`` covers ``name`` decides its type;
    without one, dynamic mapping gives text with a ``.keyword`` subfield (the documented
    default for JSON strings), and the subfield is the one to aggregate on.
    """
    for entry in mapping.get("dynamic_templates", []):
        for tpl in entry.values():
            pattern = tpl.get("path_match") or tpl.get("match")
            target = name if "path_match" in tpl else name.rsplit(".", 1)[-1]
            if (
                pattern
                and _glob(pattern, target)
                and not (tpl.get("path_unmatch") and _glob(tpl["path_unmatch"], name))
            ):
                es_type = tpl.get("mapping", {}).get("type", "keyword")
                if es_type == "text" and "keyword" in tpl.get("mapping", {}).get("fields", {}):
                    return FieldSpec(name + ".keyword", "keyword", parent=name)
                return FieldSpec(name, es_type)
    if not _dynamic_allowed(mapping, name):
        return None
    return FieldSpec(name + ".keyword", "keyword", parent=name)


def _glob(pattern: str, name: str) -> bool:
    return re.fullmatch(".*".join(re.escape(p) for p in pattern.split("*")), name) is not None


def source_field(mapping: Mapping[str, Any], name: str) -> FieldSpec:
    """The aggregatable field for the user's source field (``fields.site`` -> itself or
    ``.keyword``)."""
    fields = mapped_fields(mapping)
    for candidate in (name, name + ".keyword"):
        spec = fields.get(candidate)
        if spec and spec.aggregatable:
            return spec
    spec = dynamic_field(mapping, name)
    if spec is None or not spec.aggregatable:
        raise DashboardError(
            f"--source-field {name!r}: not an aggregatable field of the documents mapping "
            f"(fields: {', '.join(sorted(f for f, s in fields.items() if s.aggregatable))})"
        )
    return spec


def live_mappings(engine: Any) -> tuple[Mapping[str, Any], Mapping[str, Any], str]:
    """The documents and clusters mappings as the cluster has them (an adopted index has the
    user's own fields), and the time field: the index's order field when it is a date
    (``neardup attach --order-field``), else ``neardup.indexed_at``. ``engine`` is an open
    :class:`~neardup.engines.elastic.ElasticEngine`."""

    from ..engines.transport import response_body

    def mapping(index: str) -> Mapping[str, Any]:
        m = response_body(engine.client.indices.get_mapping(index=index))
        return next(iter(m.values()))["mappings"]

    docs, clusters = mapping(engine.index), mapping(engine.clusters_index)
    order = engine.layout.order if engine.layout is not None else None
    spec = mapped_fields(docs).get(order) if order else None
    return (
        docs,
        clusters,
        order if spec is not None and spec.kind == "date" else "neardup.indexed_at",
    )


def load_mappings() -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """The documents and clusters mappings from the templates under ``mappings/``."""
    return (
        mapping_of(load_json("mappings", DOCS_MAPPING), f"mappings/{DOCS_MAPPING}"),
        mapping_of(load_json("mappings", CLUSTERS_MAPPING), f"mappings/{CLUSTERS_MAPPING}"),
    )


# ---------------------------------------------------------------------------------------
# saved objects


def object_id(index: str, role: str) -> str:
    """A stable id per index and object, so re-importing overwrites instead of duplicating."""
    return str(uuid.uuid5(_NAMESPACE, f"neardup/{index}/{role}"))


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _search_source(query: str = "") -> str:
    return _dumps(
        {"query": {"query": query, "language": "kuery"}, "filter": [], "indexRefName": _INDEX_REF}
    )


def _agg(agg_id: str, agg_type: str, schema: str, **params: Any) -> dict[str, Any]:
    return {"id": agg_id, "enabled": True, "type": agg_type, "schema": schema, "params": params}


def _terms(
    agg_id: str,
    schema: str,
    field: str,
    size: int,
    label: str,
    order_by: str = "1",
    other: bool = False,
) -> dict[str, Any]:
    return _agg(
        agg_id,
        "terms",
        schema,
        field=field,
        size=size,
        order="desc",
        orderBy=order_by,
        otherBucket=other,
        otherBucketLabel="Other",
        missingBucket=False,
        missingBucketLabel="Missing",
        customLabel=label,
    )


def _xy_params(
    chart: str, y_title: str, *, mode: str = "normal", stacked: bool = False, legend: bool = True
) -> dict[str, Any]:
    """Parameters of a vislib bar ("histogram") or area chart, as the 7.10 editor saves them."""
    return {
        "type": chart,
        "grid": {"categoryLines": False},
        "addTooltip": True,
        "addLegend": legend,
        "legendPosition": "right",
        "times": [],
        "addTimeMarker": False,
        "labels": {"show": False},
        "thresholdLine": {
            "show": False,
            "value": 10,
            "width": 1,
            "style": "full",
            "color": "#E7664C",
        },
        "categoryAxes": [
            {
                "id": "CategoryAxis-1",
                "type": "category",
                "position": "bottom",
                "show": True,
                "style": {},
                "scale": {"type": "linear"},
                "labels": {"show": True, "filter": True, "truncate": 100},
                "title": {},
            }
        ],
        "valueAxes": [
            {
                "id": "ValueAxis-1",
                "name": "LeftAxis-1",
                "type": "value",
                "position": "left",
                "show": True,
                "style": {},
                "scale": {"type": "linear", "mode": mode},
                "labels": {"show": True, "rotate": 0, "filter": False, "truncate": 100},
                "title": {"text": y_title},
            }
        ],
        "seriesParams": [
            {
                "show": True,
                "type": chart,
                "mode": "stacked" if stacked else "normal",
                "data": {"label": y_title, "id": "1"},
                "valueAxis": "ValueAxis-1",
                "drawLinesBetweenPoints": True,
                "lineWidth": 2,
                "showCircles": True,
                "interpolate": "linear",
            }
        ],
    }


@dataclass(frozen=True)
class Visualization:
    role: str
    title: str
    description: str
    on_clusters: bool  # which index pattern it reads
    vis_type: str
    params: dict[str, Any]
    aggs: list[dict[str, Any]]
    query: str = ""  # KQL filter of the visualization


def _metric_params() -> dict[str, Any]:
    """visState params of a plain metric panel."""
    return {
        "addTooltip": True,
        "addLegend": False,
        "type": "metric",
        "metric": {
            "percentageMode": False,
            "useRanges": False,
            "colorSchema": "Green to Red",
            "metricColorMode": "None",
            "colorsRange": [{"from": 0, "to": 10000}],
            "labels": {"show": True},
            "invertColors": False,
            "style": {
                "bgFill": "#000",
                "bgColor": False,
                "labelColor": False,
                "subText": "",
                "fontSize": 36,
            },
        },
    }


def visualizations(
    source: FieldSpec, source_label: str, time_field: str = "neardup.indexed_at"
) -> list[Visualization]:
    """The dashboard's panels, in display order."""
    count = _agg("1", "count", "metric", customLabel="Documents")
    dup_split = _terms("3", "group", "neardup.is_duplicate", 2, "Duplicate", order_by="_key")
    return [
        Visualization(
            role="summary",
            title="Documents and duplicates",
            description="Documents in the index, split into duplicates (true) and first copies "
            "(false).",
            on_clusters=False,
            vis_type="metric",
            params=_metric_params(),
            aggs=[
                count,
                _terms("2", "group", "neardup.is_duplicate", 2, "Duplicate", order_by="_key"),
            ],
        ),
        Visualization(
            role="cluster-summary",
            title="Clusters",
            description="Stored near-duplicate clusters, the documents in them and their mean "
            "resemblance.",
            on_clusters=True,
            vis_type="metric",
            params=_metric_params(),
            aggs=[
                _agg("1", "count", "metric", customLabel="Clusters"),
                _agg("2", "sum", "metric", field="size", customLabel="Documents in clusters"),
                _agg(
                    "3", "avg", "metric", field="mean_resemblance", customLabel="Mean resemblance"
                ),
            ],
        ),
        Visualization(
            role="share-over-time",
            title="Share of duplicates over time",
            description="Share of indexed documents tagged as near-duplicates of an earlier one, "
            "by indexing time.",
            on_clusters=False,
            vis_type="area",
            params=_xy_params("area", "Share of documents", mode="percentage", stacked=True),
            aggs=[
                count,
                _agg(
                    "2",
                    "date_histogram",
                    "segment",
                    field=time_field,
                    interval="auto",
                    drop_partials=False,
                    min_doc_count=1,
                    extended_bounds={},
                ),
                dup_split,
            ],
        ),
        Visualization(
            role="cluster-sizes",
            title="Cluster-size distribution",
            description="Number of clusters of each size (documents per cluster).",
            on_clusters=True,
            vis_type="histogram",
            params=_xy_params("histogram", "Clusters", legend=False),
            aggs=[
                _agg("1", "count", "metric", customLabel="Clusters"),
                _agg(
                    "2",
                    "histogram",
                    "segment",
                    field="size",
                    interval=1,
                    min_doc_count=False,
                    has_extended_bounds=False,
                    extended_bounds={"min": "", "max": ""},
                    customLabel="Cluster size",
                ),
            ],
        ),
        Visualization(
            role="top-clusters",
            title="Top clusters",
            description="The largest clusters: size, title of the representative document, "
            "mean resemblance.",
            on_clusters=True,
            vis_type="table",
            params={
                "perPage": 20,
                "showPartialRows": False,
                "showMetricsAtAllLevels": False,
                "showTotal": False,
                "totalFunc": "sum",
                "percentageCol": "",
                "sort": {"columnIndex": None, "direction": None},
            },
            aggs=[
                _agg("1", "max", "metric", field="size", customLabel="Size"),
                _agg(
                    "2",
                    "top_hits",
                    "metric",
                    field="representative_title.keyword",
                    aggregate="concat",
                    size=1,
                    sortField="updated_at",
                    sortOrder="desc",
                    customLabel="Representative title",
                ),
                _agg(
                    "3", "max", "metric", field="mean_resemblance", customLabel="Mean resemblance"
                ),
                _terms("4", "bucket", "cluster_id", 20, "Cluster"),
            ],
        ),
        Visualization(
            role="by-language",
            title="Duplicates by language",
            description="Documents per language, duplicates (true) stacked on first copies "
            "(false).",
            on_clusters=False,
            vis_type="histogram",
            params=_xy_params("histogram", "Documents", stacked=True),
            aggs=[
                count,
                _terms("2", "segment", "neardup.lang", 10, "Language", other=True),
                dup_split,
            ],
        ),
        Visualization(
            role="by-source",
            title=f"Duplicates by {source_label}",
            description=f"Documents per value of {source.name}, duplicates (true) stacked on first "
            "copies (false).",
            on_clusters=False,
            vis_type="histogram",
            params=_xy_params("histogram", "Documents", stacked=True),
            aggs=[
                count,
                _terms("2", "segment", source.name, 15, source_label, other=True),
                dup_split,
            ],
        ),
        Visualization(
            role="resemblance",
            title="Resemblance of duplicates",
            description="Highest verified resemblance of each duplicate to an earlier document.",
            on_clusters=False,
            vis_type="histogram",
            params=_xy_params("histogram", "Duplicates", legend=False),
            aggs=[
                _agg("1", "count", "metric", customLabel="Duplicates"),
                _agg(
                    "2",
                    "histogram",
                    "segment",
                    field="neardup.max_resemblance",
                    interval=0.05,
                    min_doc_count=False,
                    has_extended_bounds=True,
                    extended_bounds={"min": 0, "max": 1},
                    customLabel="Max resemblance",
                ),
            ],
            query="neardup.is_duplicate:true",
        ),
    ]


#: Dashboard grid (48 columns wide): role -> (x, y, w, h)
_LAYOUT = {
    "summary": (0, 0, 16, 8),
    "cluster-summary": (16, 0, 32, 8),
    "share-over-time": (0, 8, 24, 14),
    "cluster-sizes": (24, 8, 24, 14),
    "top-clusters": (0, 22, 48, 18),
    "by-language": (0, 40, 24, 14),
    "by-source": (24, 40, 24, 14),
    "resemblance": (0, 54, 48, 13),
}


def _versioned(obj: dict[str, Any], product: Product) -> dict[str, Any]:
    obj["migrationVersion"] = {obj["type"]: product.migration_versions[obj["type"]]}
    if product.core_migration_version:
        obj["coreMigrationVersion"] = product.core_migration_version
    return obj


def saved_objects(
    index: str = "neardup",
    *,
    target: str = "kibana",
    source: str = DEFAULT_SOURCE_FIELD,
    mappings: tuple[Mapping[str, Any], Mapping[str, Any]] | None = None,
    time_field: str = "neardup.indexed_at",
) -> list[dict[str, Any]]:
    """Index patterns, visualizations and the dashboard for ``index`` and ``index-clusters``
    (``mappings``: the live ones, see :func:`live_mappings`; default: the templates)."""
    if target not in PRODUCTS:
        raise DashboardError(f"unknown target {target!r}: choose one of {', '.join(TARGETS)}")
    from ..engines.dsl import clusters_index as clusters_of, index_name_problem

    problem = index_name_problem(index)
    if problem:
        raise DashboardError(
            f"index name {index!r} is not a valid Elasticsearch/OpenSearch index name: {problem}"
        )
    product = PRODUCTS[target]
    docs_mapping, clusters_mapping = mappings or load_mappings()
    src = source_field(docs_mapping, source)
    label = source.removeprefix("fields.")
    clusters_index = clusters_of(index)

    docs_fields = mapped_fields(docs_mapping)
    docs_fields.setdefault(src.name, src)
    if src.parent:
        docs_fields.setdefault(src.parent, FieldSpec(src.parent, "text", doc_values=False))
    patterns = {
        False: (object_id(index, "index-pattern"), index, time_field, docs_fields),
        True: (
            object_id(index, "clusters-index-pattern"),
            clusters_index,
            None,
            mapped_fields(clusters_mapping),
        ),
    }
    out: list[dict[str, Any]] = []
    for pid, title, pattern_time, fields in patterns.values():
        attrs: dict[str, Any] = {"title": title, "fields": "[]", "fieldFormatMap": "{}"}
        if product.index_pattern_fields:
            attrs["fields"] = _dumps([f.to_index_pattern() for _, f in sorted(fields.items())])
        if pattern_time:
            attrs["timeFieldName"] = pattern_time
        out.append(
            _versioned(
                {"id": pid, "type": "index-pattern", "attributes": attrs, "references": []}, product
            )
        )

    panels, refs = [], []
    for i, vis in enumerate(visualizations(src, label, time_field)):
        vid = object_id(index, f"vis/{vis.role}")
        vis_state = {
            "title": vis.title,
            "type": vis.vis_type,
            "params": vis.params,
            "aggs": vis.aggs,
        }
        out.append(
            _versioned(
                {
                    "id": vid,
                    "type": "visualization",
                    "attributes": {
                        "title": vis.title,
                        "description": vis.description,
                        "visState": _dumps(vis_state),
                        "uiStateJSON": "{}",
                        "version": 1,
                        "kibanaSavedObjectMeta": {"searchSourceJSON": _search_source(vis.query)},
                    },
                    "references": [
                        {
                            "name": _INDEX_REF,
                            "type": "index-pattern",
                            "id": patterns[vis.on_clusters][0],
                        }
                    ],
                },
                product,
            )
        )
        x, y, w, h = _LAYOUT[vis.role]
        panels.append(
            {
                "version": "7.10.0",
                "type": "visualization",
                "panelIndex": str(i + 1),
                "gridData": {"x": x, "y": y, "w": w, "h": h, "i": str(i + 1)},
                "embeddableConfig": {},
                "panelRefName": f"panel_{i}",
            }
        )
        refs.append({"name": f"panel_{i}", "type": "visualization", "id": vid})

    out.append(
        _versioned(
            {
                "id": object_id(index, "dashboard"),
                "type": "dashboard",
                "attributes": {
                    "title": DASHBOARD_TITLE
                    if index == "neardup"
                    else f"{DASHBOARD_TITLE} ({index})",
                    "description": (
                        f"Near-duplicate documents of the {index} index "
                        f"and the clusters in {clusters_index}."
                    ),
                    "hits": 0,
                    "version": 1,
                    "panelsJSON": _dumps(panels),
                    "optionsJSON": _dumps({"hidePanelTitles": False, "useMargins": True}),
                    "timeRestore": True,
                    "timeFrom": "now-1y",
                    "timeTo": "now",
                    "refreshInterval": {"pause": True, "value": 0},
                    "kibanaSavedObjectMeta": {
                        "searchSourceJSON": _dumps(
                            {"query": {"query": "", "language": "kuery"}, "filter": []}
                        )
                    },
                },
                "references": refs,
            },
            product,
        )
    )
    return out


def to_ndjson(objects: Iterable[Mapping[str, Any]]) -> str:
    """One saved object per line, keys sorted (stable output for version control)."""
    return "".join(_dumps(o) + "\n" for o in objects)


def export(
    index: str = "neardup",
    *,
    target: str = "kibana",
    source: str = DEFAULT_SOURCE_FIELD,
    engine: Any = None,
) -> str:
    """The NDJSON of :func:`saved_objects`; with an open HTTP ``engine``, from its live mappings."""
    if engine is None:
        return to_ndjson(saved_objects(index, target=target, source=source))
    docs, clusters, time_field = live_mappings(engine)
    return to_ndjson(
        saved_objects(
            engine.index,
            target=target,
            source=source,
            mappings=(docs, clusters),
            time_field=time_field,
        )
    )


# ---------------------------------------------------------------------------------------
# import


def detect_target(
    url: str, *, headers: Mapping[str, str] | None = None, http: Any = None, timeout: float = 10.0
) -> str:
    """``kibana`` or ``opensearch-dashboards``, from the ``kbn-name``/``osd-name`` header of
    ``/api/status``."""
    http = http or _pool(None, True)
    resp = _request(
        http,
        "GET",
        url.rstrip("/") + "/api/status",
        headers=dict(headers or {}),
        timeout=timeout,
        retries=2,
        what="status",
    )
    if "osd-name" in resp.headers:
        return "opensearch-dashboards"
    if "kbn-name" in resp.headers:
        return "kibana"
    raise DashboardError(
        f"{url} does not answer like Kibana or OpenSearch Dashboards (no kbn-name/osd-name "
        "header on /api/status): pass --target"
    )


def install(
    url: str,
    ndjson: str | bytes | None = None,
    *,
    target: str = "auto",
    index: str = "neardup",
    engine: Any = None,
    source: str = DEFAULT_SOURCE_FIELD,
    api_key: str | None = None,
    basic_auth: tuple[str, str] | None = None,
    ca_certs: str | None = None,
    verify_certs: bool = True,
    space: str | None = None,
    tenant: str | None = None,
    timeout: float = 30.0,
    retries: int = 5,
    backoff: float = 0.5,
) -> dict[str, Any]:
    """Import saved objects with ``POST /api/saved_objects/_import?overwrite=true``.

    ``ndjson`` defaults to :func:`export` of ``index`` for the target product (``auto``:
    asked from the server). ``space`` is a Kibana space; ``tenant`` an OpenSearch security
    tenant (``global``, ``private`` or a custom one; sent as the ``securitytenant`` header).
    Retries connection errors, 429 and 5xx with exponential backoff, then raises
    :class:`DashboardError`; an import the server answers with errors raises too, naming each
    refused object. Returns the server's answer (``successCount`` ...).
    """
    headers: dict[str, str] = {}
    if api_key:
        headers["Authorization"] = f"ApiKey {api_key}"
    elif basic_auth:
        import urllib3

        headers.update(urllib3.util.make_headers(basic_auth=f"{basic_auth[0]}:{basic_auth[1]}"))
    if tenant:
        headers["securitytenant"] = tenant
    http = _pool(ca_certs, verify_certs)
    if target == "auto":
        target = detect_target(url, headers=headers, http=http, timeout=timeout)
    if target not in PRODUCTS:
        raise DashboardError(
            f"unknown target {target!r}: choose auto or one of {', '.join(TARGETS)}"
        )
    if ndjson is None:
        ndjson = export(index, target=target, source=source, engine=engine)
    headers[PRODUCTS[target].xsrf_header] = "true"
    base = url.rstrip("/") + (f"/s/{space}" if space else "")
    body = ndjson.encode() if isinstance(ndjson, str) else ndjson
    resp = _request(
        http,
        "POST",
        base + "/api/saved_objects/_import?overwrite=true",
        headers=headers,
        fields={"file": ("neardup.ndjson", body, "application/ndjson")},
        timeout=timeout,
        retries=retries,
        backoff=backoff,
        what="import",
    )
    try:
        answer = json.loads(resp.data)
    except ValueError:
        raise DashboardError(
            f"import into {url}: the answer is not JSON: {resp.data[:200]!r}"
        ) from None
    if not answer.get("success", False):
        problems = (
            "; ".join(
                f"{e.get('type')} {e.get('id')} ({e.get('title', '')}): "
                f"{json.dumps(e.get('error'))}"
                for e in answer.get("errors", [])
            )
            or json.dumps(answer)[:500]
        )
        raise DashboardError(
            f"import into {url} ({PRODUCTS[target].name}) refused objects: {problems}"
        )
    answer["target"] = target
    return answer


def _pool(ca_certs: str | None, verify_certs: bool) -> Any:
    import urllib3

    if not verify_certs:
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        return urllib3.PoolManager(cert_reqs="CERT_NONE")
    return (
        urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=ca_certs)
        if ca_certs
        else urllib3.PoolManager()
    )


_RETRY_STATUS = {429, 500, 502, 503, 504}


class _Passing(DashboardError):
    """A failure worth another attempt (connection, 429, 5xx); its message is the reason."""


def _request(
    http: Any,
    method: str,
    url: str,
    *,
    headers: dict[str, str],
    timeout: float,
    retries: int,
    what: str,
    fields: dict[str, Any] | None = None,
    backoff: float = 0.5,
) -> Any:
    import urllib3

    def attempt() -> Any:
        try:
            if fields is not None:
                resp = http.request(
                    method, url, fields=fields, headers=headers, timeout=timeout, retries=False
                )
            else:
                resp = http.request(method, url, headers=headers, timeout=timeout, retries=False)
        except urllib3.exceptions.HTTPError as e:
            raise _Passing(f"{type(e).__name__}: {e}") from None
        if resp.status in _RETRY_STATUS:
            raise _Passing(f"HTTP {resp.status}: {resp.data[:200].decode(errors='replace')}")
        return resp

    try:
        resp = Backoff(max_retries=retries, initial=backoff, maximum=float("inf")).call(
            attempt, retry_if=lambda e: isinstance(e, _Passing)
        )
    except _Passing as e:
        raise DashboardError(
            f"{what} {url}: failed after {retries + 1} attempts; last error: {e}"
        ) from None
    if 300 <= resp.status < 400:
        raise DashboardError(
            f"{what} {url}: HTTP {resp.status} redirect to {resp.headers.get('location')!r}; "
            "give that address (with its base path) instead"
        )
    if resp.status >= 400:
        hint = " (check --api-key / --user / --password)" if resp.status in (401, 403) else ""
        raise DashboardError(
            f"{what} {url}: HTTP {resp.status}{hint}: {resp.data[:300].decode(errors='replace')}"
        )
    return resp
