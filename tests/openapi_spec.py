"""A small validator of request bodies against the OpenSearch API specification (OpenAPI 3.1
YAML split over many files, cross-referenced with ``$ref``).

Every YAML file is registered under its ``file://`` URI in a ``referencing`` registry, so
relative ``$ref`` between files resolve as written; an operation's request body schema is
then validated with jsonschema (draft 2020-12, which OpenAPI 3.1 schemas are).

Overlapping ``oneOf`` alternatives are read as ``anyOf`` (see :func:`_relax_one_of`).
The specification's objects are open, so a misspelled option is not caught here; the
tests check option names against the documented ones separately where it matters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import yaml
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _relax_one_of(node: Any) -> Any:
    """``oneOf`` -> ``anyOf``: the specification's object schemas are open (no
    ``additionalProperties: false``), so its ``oneOf`` alternatives overlap and a valid body
    such as ``{"seq": {"order": "asc"}}`` in ``sort`` matches two of them; "at least one"
    is what the alternatives mean."""
    if isinstance(node, list):
        return [_relax_one_of(x) for x in node]
    if not isinstance(node, dict):
        return node
    return {("anyOf" if k == "oneOf" else k): _relax_one_of(v) for k, v in node.items()}


class Spec:
    """The specification under ``root`` (the ``spec`` folder)."""

    def __init__(self, root: Path):
        self.root = root.resolve()
        self.docs: dict[str, Any] = {}
        resources = []
        for f in sorted(self.root.rglob("*.yaml")):
            doc = yaml.load(f.read_text(encoding="utf-8"), Loader=_Loader)
            uri = f.as_uri()
            self.docs[uri] = doc
            resources.append(
                (uri, Resource.from_contents(_relax_one_of(doc), default_specification=DRAFT202012))
            )
        self.registry = Registry().with_resources(resources)

    def operation(self, path: str, method: str) -> tuple[str, dict[str, Any]]:
        for uri, doc in self.docs.items():
            if "/namespaces/" not in uri:
                continue
            op = ((doc or {}).get("paths") or {}).get(path, {}).get(method.lower())
            if op:
                return uri, op
        raise KeyError(f"no operation {method.upper()} {path} in the specification")

    def body_schema_ref(self, path: str, method: str) -> str:
        uri, op = self.operation(path, method)
        body = op.get("requestBody")
        if body is None:
            raise KeyError(f"{method.upper()} {path} takes no request body")
        ref = body["$ref"] if "$ref" in body else None
        base = f"{uri}{ref}" if ref and ref.startswith("#") else ref
        resolved = self.registry.resolver().lookup(base).contents if base else body
        media = (
            "application/x-ndjson"
            if "application/x-ndjson" in resolved["content"]
            else "application/json"
        )
        if base is None:
            raise KeyError("inline request bodies are not used by the operations neardup calls")
        return f"{base}/content/{media.replace('/', '~1')}/schema"

    def errors(self, path: str, method: str, body: Any) -> list[str]:
        """Validation errors of ``body`` for the operation (empty when valid)."""
        return self.errors_for({"$ref": self.body_schema_ref(path, method)}, body)

    def errors_for(self, schema: dict[str, Any], body: Any) -> list[str]:
        v = jsonschema.Draft202012Validator(schema, registry=self.registry)
        return [
            f"{'/'.join(map(str, e.absolute_path)) or '<body>'}: {e.message[:300]}"
            for e in v.iter_errors(body)
        ]

    def component(self, file: str, name: str) -> dict[str, Any]:
        """A ``$ref`` to ``schemas/<file>.yaml#/components/schemas/<name>``."""
        uri = (self.root / "schemas" / (file + ".yaml")).as_uri()
        return {"$ref": f"{uri}#/components/schemas/{name}"}
