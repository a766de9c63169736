"""Strict models of the ingest pipeline parsers of Elasticsearch and OpenSearch.

The OpenAPI specification of OpenSearch is open (unknown keys pass), so it accepted a
pipeline body with ``_meta`` that every OpenSearch node refuses. These models encode what
the servers' parsers actually do, from their documentation and source:

* OpenSearch ``Pipeline.create`` reads ``description``, ``version``, ``processors`` and
  ``on_failure`` and refuses anything left with a ``parse_exception`` "pipeline [ID]
  doesn't support one or more provided configuration parameters [KEYS]" (HTTP 400).
* Elasticsearch reads the same keys plus ``_meta`` (since 7.14) and ``deprecated``
  (since 8.x).
* Both: ``processors`` is required ("[processors] required property is missing"); each
  processor is an object with exactly one key, the processor type, which must exist on
  that engine ("No processor type exists with name [TYPE]"), and the processor refuses
  options it does not read ("processor [TYPE] doesn't support one or more provided
  configuration parameters [KEYS]"). OpenSearch has ``fingerprint`` since 2.16.
"""

from __future__ import annotations

from typing import Any

#: options every processor reads
COMMON = {"if", "tag", "description", "ignore_failure", "on_failure"}

#: options of the processors neardup uses, per engine
PROCESSORS: dict[str, dict[str, set[str]]] = {
    "elasticsearch": {
        "fail": {"message"},
        "set": {"field", "value", "copy_from", "override", "ignore_empty_value", "media_type"},
        "remove": {"field", "keep", "ignore_missing"},
        "fingerprint": {"fields", "target_field", "salt", "method", "ignore_missing"},
    },
    "opensearch": {
        "fail": {"message"},
        "set": {"field", "value", "copy_from", "override", "ignore_empty_value", "media_type"},
        "remove": {"field", "exclude_field", "ignore_missing"},
        "fingerprint": {
            "fields",
            "exclude_fields",
            "hash_method",
            "target_field",
            "ignore_missing",
        },
    },
}

TOP_LEVEL = {
    "elasticsearch": {"description", "version", "processors", "on_failure", "_meta", "deprecated"},
    "opensearch": {"description", "version", "processors", "on_failure"},
}

OPENSEARCH_FINGERPRINT_SINCE = (2, 16)


def parse_error(pipeline_id: str, reason: str) -> dict[str, Any]:
    """The 400 body both engines answer with for a pipeline they cannot parse."""
    cause = {"type": "parse_exception", "reason": reason}
    return {
        "error": {"root_cause": [cause], "type": "parse_exception", "reason": reason},
        "status": 400,
    }


def pipeline_errors(
    product: str, version: tuple[int, ...], pipeline_id: str, body: Any
) -> list[str]:
    """Reasons the engine's parser refuses ``body`` (empty: it is accepted)."""
    if not isinstance(body, dict):
        return ["request body is required"]
    unknown = sorted(set(body) - TOP_LEVEL[product])
    errors = []
    if unknown:
        errors.append(
            f"pipeline [{pipeline_id}] doesn't support one or more provided configuration "
            f"parameters [{', '.join(unknown)}]"
        )
    if "processors" not in body:
        errors.append("[processors] required property is missing")
    for key in ("processors", "on_failure"):
        items = body.get(key, [])
        if not isinstance(items, list):
            errors.append(f"[{key}] property isn't a list, but of type [{type(items).__name__}]")
            continue
        for p in items:
            errors += _processor_errors(product, version, p)
    return errors


def _processor_errors(product: str, version: tuple[int, ...], p: Any) -> list[str]:
    if not isinstance(p, dict) or len(p) != 1:
        return [f"processor definition must be an object with exactly one key, the type: {p!r}"]
    kind, opts = next(iter(p.items()))
    known = dict(PROCESSORS[product])
    if product == "opensearch" and tuple(version[:2]) < OPENSEARCH_FINGERPRINT_SINCE:
        known.pop("fingerprint")
    if kind not in known:
        return [f"No processor type exists with name [{kind}]"]
    if not isinstance(opts, dict):
        return [f"processor [{kind}] configuration must be an object"]
    extra = sorted(set(opts) - known[kind] - COMMON)
    errors = []
    if extra:
        errors.append(
            f"processor [{kind}] doesn't support one or more provided configuration "
            f"parameters [{', '.join(extra)}]"
        )
    for sub in opts.get("on_failure", []) or []:
        errors += _processor_errors(product, version, sub)
    return errors
