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

:func:`neardup.dashboards.install.install` posts the NDJSON to ``POST
/api/saved_objects/_import?overwrite=true``.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .fields import (
    DashboardError,
    FieldSpec,
    live_mappings,
    load_mappings,
    mapped_fields,
    source_field,
)

TARGETS = ("kibana", "opensearch-dashboards")
DASHBOARD_TITLE = "Near-duplicate clusters"
DEFAULT_SOURCE_FIELD = "fields.source"


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


# ---------------------------------------------------------------------------------------
# fields of the index templates


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
    from ..engines.elastic.templates import clusters_index as clusters_of, index_name_problem

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
    out = [_index_pattern(product, *pattern) for pattern in patterns.values()]
    panels, refs = [], []
    for i, vis in enumerate(visualizations(src, label, time_field)):
        vid = object_id(index, f"vis/{vis.role}")
        out.append(_visualization(product, vid, vis, patterns[vis.on_clusters][0]))
        panels.append(_panel(i, vis.role))
        refs.append({"name": f"panel_{i}", "type": "visualization", "id": vid})
    out.append(_dashboard(product, index, clusters_index, panels, refs))
    return out


def _index_pattern(
    product: Product,
    pid: str,
    title: str,
    pattern_time: str | None,
    fields: dict[str, FieldSpec],
) -> dict[str, Any]:
    """The index pattern ``pid`` over ``title`` (its fields listed where the product asks)."""
    attrs: dict[str, Any] = {"title": title, "fields": "[]", "fieldFormatMap": "{}"}
    if product.index_pattern_fields:
        attrs["fields"] = _dumps([f.to_index_pattern() for _, f in sorted(fields.items())])
    if pattern_time:
        attrs["timeFieldName"] = pattern_time
    return _versioned(
        {"id": pid, "type": "index-pattern", "attributes": attrs, "references": []}, product
    )


def _visualization(
    product: Product, vid: str, vis: Visualization, pattern_id: str
) -> dict[str, Any]:
    """The saved visualization ``vid`` of ``vis`` over the index pattern ``pattern_id``."""
    vis_state = {
        "title": vis.title,
        "type": vis.vis_type,
        "params": vis.params,
        "aggs": vis.aggs,
    }
    return _versioned(
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
            "references": [{"name": _INDEX_REF, "type": "index-pattern", "id": pattern_id}],
        },
        product,
    )


def _panel(i: int, role: str) -> dict[str, Any]:
    """The dashboard panel ``i`` (its place by the visualization's ``role``)."""
    x, y, w, h = _LAYOUT[role]
    return {
        "version": "7.10.0",
        "type": "visualization",
        "panelIndex": str(i + 1),
        "gridData": {"x": x, "y": y, "w": w, "h": h, "i": str(i + 1)},
        "embeddableConfig": {},
        "panelRefName": f"panel_{i}",
    }


def _dashboard(
    product: Product,
    index: str,
    clusters_index: str,
    panels: list[dict[str, Any]],
    refs: list[dict[str, Any]],
) -> dict[str, Any]:
    """The dashboard of ``index`` holding ``panels``."""
    return _versioned(
        {
            "id": object_id(index, "dashboard"),
            "type": "dashboard",
            "attributes": {
                "title": DASHBOARD_TITLE if index == "neardup" else f"{DASHBOARD_TITLE} ({index})",
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
