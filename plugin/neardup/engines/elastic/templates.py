"""What sets up an index of neardup's, as pure functions: the names of an index's side
indices, templates and pipeline (and the rule for an index name), the index templates and
mappings (from the JSON files under ``mappings/``), the ingest pipelines (from
``ingest_pipeline/``), the settings document and the index settings neardup puts. Only
names, ``_meta`` and the pipeline hook are filled in here.
"""

from __future__ import annotations

import copy
from typing import Any, Iterable, Mapping

from ...config import SIGNATURE_VERSION, Config
from ...runtime.resources import load_json
from .layout import OWN, ROOT, Layout

#: Placeholder in ingest_pipeline/neardup.json replaced by the index's signature version.
VERSION_MARKER = "@SIGNATURE_VERSION@"
#: OpenSearch has the fingerprint processor since 2.16; every supported Elasticsearch has it.
OPENSEARCH_FINGERPRINT_SINCE = (2, 16)


# -- names ---------------------------------------------------------------------------------
def clusters_index(index: str) -> str:
    """The index of the clusters of ``index``."""
    return f"{index}-clusters"


#: Characters an index name may not hold (Elasticsearch's create index API: \\ / * ? " < > |
#: space , #, and ':' since 7.0; OpenSearch's rule is the same).
_FORBIDDEN_IN_NAMES = frozenset('\\/*?"<>| ,#:')


def index_name_problem(index: str) -> str | None:
    """Why ``index`` cannot name an index of neardup's, or None: Elasticsearch's documented
    rule (lowercase only; none of :data:`_FORBIDDEN_IN_NAMES`; not starting with ``-``, ``_``
    or ``+``; not ``.`` or ``..``; at most 255 bytes), applied to the name and to the
    longest name made from it (:func:`state_index`).

    >>> index_name_problem("docs-2024"), index_name_problem("Docs"), index_name_problem("a,b")
    (None, 'it has uppercase letters', "it holds ','")
    """
    if not index or index in (".", ".."):
        return "it is empty, '.' or '..'"
    if index != index.lower():
        return "it has uppercase letters"
    bad = sorted(set(index) & _FORBIDDEN_IN_NAMES)
    if bad:
        return "it holds " + " ".join(repr(c) for c in bad)
    if index.startswith(("-", "_", "+")):
        return "it starts with '-', '_' or '+'"
    if len(state_index(index).encode()) > 255:
        return f"it is too long ({state_index(index)!r} would be over 255 bytes)"
    return None


def documents_template_name(index: str) -> str:
    return f"neardup-{index}-documents"


def clusters_template_name(index: str) -> str:
    return f"neardup-{index}-clusters"


def pipeline_id(index: str) -> str:
    return f"neardup-{index}"


def state_index(index: str) -> str:
    """The small index holding the write lease and the settings document of ``index``."""
    return f"{index}-neardup-state"


def state_index_body() -> dict[str, Any]:
    """Settings and mapping of the state index (mappings/state.json)."""
    return copy.deepcopy(load_json("mappings", "state.json"))


# -- templates and pipeline -------------------------------------------------------------------
def index_meta(
    config: Config,
    context: Mapping[str, Any] | None = None,
    pipeline: str | None = None,
    layout: "Layout | None" = None,
) -> dict[str, Any]:
    """The settings document of an index (``data`` of ``<index>-neardup-state/_doc/settings``):
    settings, their fingerprint, signature version, collection context (I-Match lexicon,
    frequency vocabularies: megabytes, kept out of the cluster state), and the ingest
    pipeline it was built with (None: none)."""
    return {
        "config": config.to_dict(),
        "fingerprint": config.fingerprint(),
        "signature_version": config.version,
        "context": dict(context or {}),
        "pipeline": pipeline,
        "layout": (layout or OWN).to_dict(),
    }


#: id of the settings document in the state index
SETTINGS_ID = "settings"


def meta_pointer(index: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    """``_meta.neardup`` of the documents index: a small pointer to the settings document
    (the mapping ``_meta`` is cluster state, sent to every node)."""
    return {
        "settings": f"{state_index(index)}/{SETTINGS_ID}",
        "fingerprint": settings.get("fingerprint"),
        "signature_version": settings.get("signature_version"),
        "layout": LAYOUT_VERSION,
    }


#: The document layout version (2: neardup fields under ``neardup.*``).
LAYOUT_VERSION = 2


def settings_source(settings: Mapping[str, Any], updated_at: str) -> dict[str, Any]:
    return {"kind": "settings", "updated_at": updated_at, "data": dict(settings)}


def neardup_mapping(signatures: Iterable[str]) -> dict[str, Any]:
    """The mapping of the ``neardup`` object (mappings/documents.json), with a keyword field
    per signature under ``neardup.keys`` (no dynamic templates: adopting an index must not
    touch the user's). Keys are searched, never sorted or aggregated (collisions are grouped
    in the client), so they keep no doc values."""
    m = copy.deepcopy(
        load_json("mappings", "documents.json")["template"]["mappings"]["properties"][ROOT]
    )
    keys = m["properties"]["keys"]
    for f in signatures:
        keys["properties"].setdefault(f, {"type": "keyword", "doc_values": False})
    return m


def documents_template(
    index: str, meta: Mapping[str, Any], pipeline: str | None, signatures: Iterable[str] = ()
) -> dict[str, Any]:
    """Composable index template for the documents index (mappings/documents.json)."""
    body = copy.deepcopy(load_json("mappings", "documents.json"))
    body["index_patterns"] = [index]
    body["template"]["mappings"]["_meta"] = {ROOT: dict(meta)}
    body["template"]["mappings"]["properties"][ROOT] = neardup_mapping(signatures)
    if pipeline:
        body["template"]["settings"].setdefault("index", {})["default_pipeline"] = pipeline
    return body


def fields_added(wanted: Mapping[str, Any], mapped: Mapping[str, Any]) -> dict[str, Any]:
    """The properties of ``wanted`` that ``mapped`` (a mapping's ``properties``) lacks, objects
    entered: a field mapped already keeps its mapping (an engine refuses to change most of
    its parameters, ``doc_values`` among them), so a mapping update names only new ones.

    >>> fields_added({"k": {"properties": {"a": {"type": "keyword", "doc_values": False},
    ...                                    "b": {"type": "keyword"}}}},
    ...              {"k": {"properties": {"a": {"type": "keyword"}}}})
    {'k': {'properties': {'b': {'type': 'keyword'}}}}
    """
    out: dict[str, Any] = {}
    for name, field in wanted.items():
        have = mapped.get(name)
        if have is None:
            out[name] = field
        elif "properties" in field:
            inner = fields_added(field["properties"], have.get("properties") or {})
            if inner:
                out[name] = {**field, "properties": inner}
    return out


def attach_mapping(
    signatures: Iterable[str], meta: Mapping[str, Any], user_meta: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The one mapping update that adopts an index: the ``neardup`` object and the pointer in
    ``_meta`` (merged into the user's own ``_meta``, which a put-mapping replaces whole).
    Nothing else of the user's mapping is named, so nothing else changes."""
    return {
        "_meta": {**dict(user_meta or {}), ROOT: dict(meta)},
        "properties": {ROOT: neardup_mapping(signatures)},
    }


def clusters_template(index: str) -> dict[str, Any]:
    """Composable index template for ``<index>-clusters`` (mappings/clusters.json)."""
    body = copy.deepcopy(load_json("mappings", "clusters.json"))
    body["index_patterns"] = [clusters_index(index)]
    body["template"]["mappings"]["_meta"] = {
        ROOT: {"documents_index": index},
        "managed_by": MANAGED_BY,
    }
    return body


#: The mark of what neardup made: ``_meta.managed_by`` of the indices it creates (the
#: documents index carries ``_meta.neardup``) and ``managed_by`` of each clusters document.
MANAGED_BY = "neardup"


def made_by_neardup(meta: Mapping[str, Any] | None) -> bool:
    """Whether an index whose mapping ``_meta`` is ``meta`` was made by neardup: it carries
    ``managed_by: neardup`` or neardup's own ``neardup`` object (indices made before the
    mark).

    >>> made_by_neardup({"managed_by": "neardup"}), made_by_neardup({"neardup": {}})
    (True, True)
    >>> made_by_neardup({}), made_by_neardup(None), made_by_neardup({"owner": "me"})
    (False, False, False)
    """
    meta = meta or {}
    return meta.get("managed_by") == MANAGED_BY or isinstance(meta.get(ROOT), dict)


def default_pipeline_settings(pipeline: str) -> dict[str, Any]:
    """Index settings that make ``pipeline`` run on every document written to the index."""
    return {"index": {"default_pipeline": pipeline}}


def supports_fingerprint(product: str, version: tuple[int, ...]) -> bool:
    return product == "elasticsearch" or tuple(version[:2]) >= OPENSEARCH_FINGERPRINT_SINCE


def pipeline_body(
    product: str, version: tuple[int, ...], signature_version: int = SIGNATURE_VERSION
) -> dict[str, Any]:
    """The ingest pipeline (ingest_pipeline/neardup.json) with the version substituted, the
    top-level keys the engine's parser reads (``_meta`` on Elasticsearch only) and, where the
    engine has it, the fingerprint processor of that product appended."""
    body = _substitute(
        load_json("ingest_pipeline", "neardup.json"), VERSION_MARKER, str(int(signature_version))
    )
    if (
        product != "elasticsearch"
    ):  # pipeline _meta is Elasticsearch's (7.14+); OpenSearch's parser refuses it
        body.pop("_meta", None)
    if supports_fingerprint(product, version):
        body["processors"].append(
            copy.deepcopy(load_json("ingest_pipeline", "fingerprint.json")[product])
        )
    return body


def attached_pipeline_body(layout: Layout) -> dict[str, Any]:
    """The pipeline of an adopted index (ingest_pipeline/attached.json), the index's
    ``final_pipeline``: a write whose text no longer hashes to ``neardup.text_hash`` (a
    document replaced, or changed with the ``_update`` API, by another client) loses its stale
    ``neardup`` fields, and ``neardup attach --watch`` signs it again."""
    body = load_json("ingest_pipeline", "attached.json")
    cond = body["processors"][0]["remove"]["if"]
    cond["params"]["path"] = layout.text.split(".")
    return body


def shard_settings(shards: int | None, replicas: int | None) -> dict[str, Any] | None:
    """The create-index body giving a new documents index its shards and replicas (None: the
    template's).

    >>> shard_settings(3, 1)
    {'settings': {'index': {'number_of_shards': 3, 'number_of_replicas': 1}}}
    """
    index = {
        k: v
        for k, v in (("number_of_shards", shards), ("number_of_replicas", replicas))
        if v is not None
    }
    return {"settings": {"index": index}} if index else None


def final_pipeline_settings(pipeline: str) -> dict[str, Any]:
    """Index settings that run ``pipeline`` last on every document written to the index."""
    return {"index": {"final_pipeline": pipeline}}


def _substitute(obj: Any, marker: str, value: str) -> Any:
    """``obj`` (parsed JSON) with every occurrence of ``marker`` in its strings replaced."""
    if isinstance(obj, str):
        return obj.replace(marker, value)
    if isinstance(obj, list):
        return [_substitute(x, marker, value) for x in obj]
    if isinstance(obj, dict):
        return {k: _substitute(v, marker, value) for k, v in obj.items()}
    return obj
