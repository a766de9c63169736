"""The fields of a neardup index as the dashboards products see them: read from the mapping
templates under ``mappings/`` or from the live index (an adopted index has the user's own
fields), each a :class:`FieldSpec` (type, searchable, aggregatable); and
:class:`DashboardError`, the error of everything dashboards do."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import EngineError
from ..runtime.resources import load_json

#: Names of the index templates under ``mappings/`` (documents, clusters).
DOCS_MAPPING = "documents.json"
CLUSTERS_MAPPING = "clusters.json"


class DashboardError(EngineError):
    """Saved objects could not be built or imported."""


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
            if _template_covers(tpl, name):
                es_type = tpl.get("mapping", {}).get("type", "keyword")
                if es_type == "text" and "keyword" in tpl.get("mapping", {}).get("fields", {}):
                    return FieldSpec(name + ".keyword", "keyword", parent=name)
                return FieldSpec(name, es_type)
    if not _dynamic_allowed(mapping, name):
        return None
    return FieldSpec(name + ".keyword", "keyword", parent=name)


def _template_covers(tpl: Mapping[str, Any], name: str) -> bool:
    """Whether the dynamic template ``tpl`` maps the field ``name``: its ``path_match`` (the
    dotted path) or ``match`` (the last name) covers it, and its ``path_unmatch`` does not."""
    pattern = tpl.get("path_match") or tpl.get("match")
    target = name if "path_match" in tpl else name.rsplit(".", 1)[-1]
    return bool(
        pattern
        and _glob(pattern, target)
        and not (tpl.get("path_unmatch") and _glob(tpl["path_unmatch"], name))
    )


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
        m = response_body(engine.remote.client.indices.get_mapping(index=index))
        return next(iter(m.values()))["mappings"]

    docs, clusters = mapping(engine.index), mapping(engine.clusters_index)
    order = engine.remote.layout.order
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
