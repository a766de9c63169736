"""Why a user's index cannot be attached, told before anything changes: the fields named
for it (:func:`check_fields`), what its name resolves to (:func:`target_problem`), its
``_source`` (:func:`source_problem`) and its settings (:func:`settings_problem`).

Pure functions of response bodies (dicts), used by :class:`~neardup.engines.elastic.attach.Attach`
and :class:`~neardup.engines.elastic.ElasticEngine`.
"""

from __future__ import annotations

import fnmatch
from typing import Any

from ..base import EngineError
from .hits import field_mapping
from .layout import Layout, ROOT


def check_fields(location: str, mappings: dict[str, Any], layout: Layout) -> None:
    """The fields named for attach exist with usable types; ``neardup`` is free."""
    if ROOT in (mappings.get("properties") or {}):
        raise EngineError(
            f"{location}: the index already has a field named '{ROOT}'; neardup keeps its "
            "fields under it"
        )
    wanted = {
        "--text-field": (layout.text, {"text", "keyword", "match_only_text"}),
        "--title-field": (layout.title, {"text", "keyword", "match_only_text"}),
        "--lang-field": (layout.lang, {"keyword", "text"}),
        "--order-field": (
            layout.order,
            {
                "date",
                "date_nanos",
                "long",
                "integer",
                "short",
                "byte",
                "double",
                "float",
                "half_float",
                "scaled_float",
                "unsigned_long",
                "keyword",
            },
        ),
    }
    for option, (path, types) in wanted.items():
        if not path:
            continue
        spec = field_mapping(mappings, path)
        if spec is None:
            raise EngineError(f"{location}: {option} {path}: no such field in the index mapping")
        if spec.get("type", "object") not in types:
            raise EngineError(
                f"{location}: {option} {path} is of type {spec.get('type', 'object')}; "
                f"expected one of {', '.join(sorted(types))}"
            )


def count_fields(properties: dict[str, Any]) -> int:
    """The fields a mapping's ``properties`` count against ``index.mapping.total_fields.limit``
    as the engines count them: every field and object, and every multi-field, at any depth.

    >>> count_fields({"a": {"type": "text", "fields": {"raw": {"type": "keyword"}}},
    ...               "b": {"properties": {"c": {"type": "long"}}}})
    4
    """
    n = 0
    for spec in properties.values():
        n += 1 + count_fields(spec.get("properties") or {})
        n += count_fields(spec.get("fields") or {})
    return n


def target_problem(location: str, resolved: dict[str, Any]) -> str | None:
    """Why ``attach`` cannot serve what a name resolves to (``_resolve/index``), or None: it
    signs documents in place, one index at a time, so an alias over several indices, a data
    stream and a closed index are refused; a missing name too.

    >>> target_problem("u/a", {"aliases": [{"name": "a", "indices": ["new", "old"]}]})[:45]
    'u/a is an alias over 2 indices (new, old): at'
    >>> target_problem("u/a", {"indices": [{"name": "a", "attributes": ["open"]}]}) is None
    True
    """
    aliases = resolved.get("aliases") or []
    indices = resolved.get("indices") or []
    problem = (
        _stream_problem(location, resolved.get("data_streams") or [])
        or _alias_problem(location, aliases)
        or _closed_problem(location, indices)
    )
    if problem is None and not (aliases or indices):
        return f"{location}: no such index to attach"
    return problem


def _stream_problem(location: str, streams: list[dict[str, Any]]) -> str | None:
    """A data stream cannot be attached (:func:`target_problem`)."""
    if not streams:
        return None
    backing = ", ".join(streams[0].get("backing_indices") or [])
    return (
        f"{location} is a data stream: attach adds neardup's fields to documents in place, "
        f"one index at a time, and a data stream only appends; attach its backing indices "
        f"by their names ({backing}) instead"
    )


def _alias_problem(location: str, aliases: list[dict[str, Any]]) -> str | None:
    """An alias over several indices cannot be attached (:func:`target_problem`)."""
    for alias in aliases:
        members = sorted(alias.get("indices") or [])
        if len(members) > 1:
            return (
                f"{location} is an alias over {len(members)} indices ({', '.join(members)}): "
                "attach signs every document in place, in the index that holds it, one index "
                f"at a time; attach each of them by its own name (neardup attach {members[0]} "
                "...), nothing was changed"
            )
    return None


def _closed_problem(location: str, indices: list[dict[str, Any]]) -> str | None:
    """A closed index cannot be attached (:func:`target_problem`)."""
    for each in indices:
        if "closed" in (each.get("attributes") or []):
            return (
                f"{location} is closed: open it (POST {each.get('name')}/_open) and attach again; "
                "nothing was changed"
            )
    return None


def leaf_fields(properties: dict[str, Any], prefix: str = "") -> list[str]:
    """The dotted names of a mapping's fields that hold values (objects opened).

    >>> leaf_fields({"a": {"type": "text"}, "b": {"properties": {"c": {"type": "long"}}}})
    ['a', 'b.c']
    """
    out = []
    for name, spec in properties.items():
        inner = spec.get("properties")
        out += leaf_fields(inner, f"{prefix}{name}.") if inner else [prefix + name]
    return out


def source_problem(
    location: str, mappings: dict[str, Any], text_field: str, own: dict[str, Any]
) -> str | None:
    """Why the index's ``_source`` cannot serve ``attach`` (None: it can): neardup reads the
    text from ``_source`` and keeps its fields there (``own``: the mapping of ``neardup``), and
    the engine indexes a partially updated document again from ``_source`` alone, so
    ``_source`` disabled, or filtered so that the text field or any field of ``neardup`` is left
    out, is refused. A pattern names a field and everything under it, as the engines' source
    filters read it.

    >>> own = {"properties": {"keys": {"properties": {"minhash": {"type": "keyword"}}}}}
    >>> source_problem("u/a", {"_source": {"enabled": False}}, "body", own)[:33]
    'u/a has _source disabled: neardup'
    >>> source_problem("u/a", {"_source": {"excludes": ["bo*"]}}, "body", own)[:40]
    "u/a leaves body out of _source ('bo*'): "
    >>> source_problem("u/a", {"_source": {"excludes": ["neardup.keys"]}}, "body", own)[:56]
    "u/a leaves neardup.keys.minhash out of _source ('neardup"
    >>> source_problem("u/a", {"_source": {"includes": ["body", "neardup"]}}, "body", own)
    >>> source_problem("u/a", {}, "body", own) is None
    True
    """
    src = mappings.get("_source") or {}
    if src.get("enabled") is False:
        return (
            f"{location} has _source disabled: neardup reads each document's text from _source "
            "and keeps its own fields there, and _source can only be enabled when an index is "
            "made: reindex into an index with _source enabled and attach that; nothing was changed"
        )
    includes, excludes = list(src.get("includes") or []), list(src.get("excludes") or [])
    for field in (text_field, *leaf_fields({ROOT: own})):
        dropped = _left_out(field, includes, excludes)
        if dropped:
            return (
                f"{location} leaves {field} out of _source ({', '.join(map(repr, dropped))}): "
                "neardup reads the text and keeps its own fields there, and a partial update "
                "keeps only what _source holds; nothing was changed"
            )
    return None


def _left_out(field: str, includes: list[str], excludes: list[str]) -> list[str]:
    """Why a ``_source`` filter leaves ``field`` out: the excludes that match it or an object
    above it, or its absence from the includes (none: it is kept)."""

    def names(pattern: str) -> bool:
        return fnmatch.fnmatchcase(field, pattern) or fnmatch.fnmatchcase(field, pattern + ".*")

    if includes and not any(map(names, includes)):
        return [f"not in includes {includes}"]
    return [p for p in excludes if names(p)]


def flat_settings(settings: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Index settings as dotted keys, whether the engine answered them nested or flat.

    >>> flat_settings({"index": {"blocks": {"write": "true"}}, "index.number_of_shards": "1"})
    {'index.blocks.write': 'true', 'index.number_of_shards': '1'}
    """
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if isinstance(value, dict):
            out.update(flat_settings(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


#: Index blocks that stop ``attach`` (it changes the mapping and writes every document).
ATTACH_BLOCKS = ("read_only", "read_only_allow_delete", "write", "metadata")


def settings_problem(
    location: str, index: str, settings: dict[str, Any], adds: int, has: int
) -> str | None:
    """Why the index's settings (flat, defaults included) stop ``attach`` (None: they do
    not): a block on writes or on the mapping, or a field limit the ``adds`` fields neardup
    maps would pass with the ``has`` the index maps.

    >>> settings_problem("u/a", "a", {"index.mapping.total_fields.limit": "50"}, 40, 20)[:60]
    'u/a maps 20 fields and attach adds 40 under neardup.*, over '
    >>> settings_problem("u/a", "a", {"index.blocks.write": "true"}, 40, 20)[:52]
    'u/a has the block index.blocks.write: lift it with P'
    """
    for block in ATTACH_BLOCKS:
        if str(settings.get(f"index.blocks.{block}", "false")).lower() == "true":
            return (
                f"{location} has the block index.blocks.{block}: lift it with PUT "
                f'{index}/_settings {{"index.blocks.{block}": null}} and attach again; nothing '
                "was changed"
            )
    limit = int(settings.get("index.mapping.total_fields.limit") or 1000)
    if has + adds > limit:
        return (
            f"{location} maps {has} fields and attach adds {adds} under {ROOT}.*, over its "
            f"index.mapping.total_fields.limit of {limit}: raise it (PUT {index}/_settings "
            f'{{"index.mapping.total_fields.limit": {has + adds}}}) and attach again; nothing '
            "was changed"
        )
    return None
