"""How the answers of Elasticsearch and OpenSearch become neardup's records: hits as
candidates, stored documents, tag rows and search hits; a document's own fields read from an
adopted index's layout; mappings checked; shard failures and error reasons told.

Pure functions of response bodies (dicts), used by :class:`~neardup.engines.elastic.ElasticEngine`.
"""

from __future__ import annotations

import base64
import fnmatch
import json
from datetime import datetime, timezone
from typing import Any

import numpy as np

from ...keys.encoding import parse_keys
from ..stored_shingles import given_lang, is_marker, stored_hashes
from .key_match import Entry
from . import dsl
from .layout import Layout, ROOT
from ..base import Candidate, ClusterRecord, EngineError, Hit, TagRow, Tags


def cluster_record(s: dict[str, Any]) -> ClusterRecord:
    return ClusterRecord(
        cluster_id=s["cluster_id"],
        size=int(s["size"]),
        representative_id=s["representative_id"],
        representative_title=s.get("representative_title"),
        members=list(s.get("members") or []),
        min_resemblance=s.get("min_resemblance"),
        mean_resemblance=s.get("mean_resemblance"),
        max_resemblance=s.get("max_resemblance"),
        languages=list(s.get("languages") or []),
        first_seen=s.get("first_seen"),
        last_seen=s.get("last_seen"),
    )


def field_mapping(mappings: dict[str, Any], path: str) -> dict[str, Any] | None:
    """The mapping of a (dotted) field, multi-fields included; None if unmapped."""
    props, spec = mappings.get("properties") or {}, None
    parts = path.split(".")
    for i, part in enumerate(parts):
        spec = props.get(part)
        if spec is None:
            parent = field_mapping(mappings, ".".join(parts[:i])) if i else None
            return (parent or {}).get("fields", {}).get(".".join(parts[i:])) if parent else None
        props = spec.get("properties") or {}
    return spec


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


def neardup_part(src: dict[str, Any] | None) -> dict[str, Any]:
    """The ``neardup`` object of a ``_source`` ({} for documents without one)."""
    v = (src or {}).get(ROOT)
    return v if isinstance(v, dict) else {}


def found_seq(doc: dict[str, Any]) -> tuple[bool, int | None]:
    """(found, its arrival number or None) of a document of an ``_mget`` answer.

    >>> found_seq({"found": True, "_source": {"neardup": {"seq": 7}}}), found_seq({})
    ((True, 7), (False, None))
    """
    found = bool(doc.get("found"))
    seq = neardup_part(doc.get("_source")).get("seq") if found else None
    return found, int(seq) if seq is not None else None


def order_date(value: Any) -> str | None:
    """A date of an order field as ISO 8601 in UTC (``YYYY-MM-DDTHH:MM:SSZ``), or None where
    ``value`` is not one: an ISO 8601 date or date-time string (a ``Z`` or offset, or none:
    UTC, as Elasticsearch reads it), or a number of milliseconds since 1970.

    >>> order_date("2026-03-01T10:00:00+02:00"), order_date("2026-03-01"), order_date(0)
    ('2026-03-01T08:00:00Z', '2026-03-01T00:00:00Z', '1970-01-01T00:00:00Z')
    >>> order_date("tuesday") is None and order_date(None) is None and order_date(True) is None
    True
    """

    if isinstance(value, bool) or value is None:
        return None
    try:
        if isinstance(value, (int, float)):
            d = datetime.fromtimestamp(value / 1000, tz=timezone.utc)
        elif isinstance(value, str):
            text = value.strip()
            text = text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text
            d = datetime.fromisoformat(text)
        else:
            return None
    except (ValueError, OverflowError, OSError):
        return None
    if d.tzinfo is None:
        d = d.replace(tzinfo=timezone.utc)
    return d.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def source_field(src: dict[str, Any], path: str | None) -> Any:
    """A (possibly dotted) field of a ``_source``, as stored (None when absent)."""
    if not path:
        return None
    v: Any = src
    for part in path.split("."):
        if not isinstance(v, dict):
            return None
        v = v.get(part)
    return v


def field_text(v: Any) -> str | None:
    r"""The text a JSON value of an attached document's field gives: a string itself; a
    number its JSON text; an array its strings and numbers, in order, joined with newlines
    (nulls skipped, as the engines do); anything else -- a boolean, an object, null, an
    array holding a boolean or an object -- no text (None), never Python's spelling of it.

    >>> values = ("a b", 42, 2.5, ["one", "two", None, 3], True, None, {"x": "y"}, [True, "x"])
    >>> [field_text(v) for v in (*values, [])]
    ['a b', '42', '2.5', 'one\ntwo\n3', None, None, None, None, None]
    """
    if isinstance(v, str):
        return v
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return json.dumps(v)
    if isinstance(v, list):
        return _list_text(v)
    return None


def _list_text(v: list[Any]) -> str | None:
    """The text of an array (:func:`field_text`): its strings and numbers joined with
    newlines, nulls skipped; None when it holds nothing else or anything else."""
    items = [x for x in v if x is not None]
    if not items or not all(map(_is_scalar_text, items)):
        return None
    return "\n".join(field_text(x) or "" for x in items)


def _is_scalar_text(x: Any) -> bool:
    """A string or a number (not a boolean): an array item that gives text."""
    return isinstance(x, str) or (isinstance(x, (int, float)) and not isinstance(x, bool))


def json_kind(v: Any) -> str:
    """What a field holds, for a count of the documents it gives no text: "missing",
    "null", "boolean", "object", "array", "empty"."""
    if v is None:
        return "missing or null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, dict):
        return "object"
    if isinstance(v, list):
        return "array without text"
    return "empty"


def source_text(src: dict[str, Any], path: str | None) -> Any:
    """A (possibly dotted) field of a ``_source`` as text (:func:`field_text`)."""
    return field_text(source_field(src, path))


def stored_text(src: dict[str, Any], layout: Layout, field: str | None) -> Any:
    """The text of ``field`` (the layout's ``text`` or ``title``) in a ``_source``: from the
    first of its :meth:`~neardup.engines.elastic.layout.Layout.stored` fields that gives one."""
    return next((t for f in layout.stored(field) if (t := source_text(src, f)) is not None), None)


def stored_shingles(nd: dict[str, Any]) -> np.ndarray | None:
    """The shingle hashes a ``neardup`` object holds, or None where it holds a marker instead
    (they are made again from the text, :mod:`~neardup.engines.stored_shingles`) or
    none was read.

    >>> from neardup.keys.encoding import encode_shingles
    >>> stored_shingles({"shingles": encode_shingles(np.array([3, 5])), "n_shingles": 2}).tolist()
    [3, 5]
    >>> stored_shingles({"shingles": "VGVu", "n_shingles": 20}) is None  # b"Ten": made from text
    True
    """
    value = nd.get("shingles")
    if value is None:
        return None
    blob = base64.b64decode(value)
    if is_marker(blob, int(nd.get("n_shingles") or 0)):
        return None
    return stored_hashes(blob)


def marker_lang(nd: dict[str, Any]) -> str | None:
    """The language a document was given when signed, from its shingles marker."""
    return given_lang(base64.b64decode(nd.get("shingles") or ""))


def candidate_of(h: dict[str, Any]) -> Candidate:
    nd = neardup_part(h.get("_source"))
    return Candidate(
        id=h["_id"],
        n_shingles=int(nd.get("n_shingles") or 0),
        simhash=int(nd.get("simhash") or "0", 16),
        score=float(h.get("_score") or 0.0),
        shingles=stored_shingles(nd),
        cluster_id=nd.get("cluster_id"),
        matched=frozenset(h.get("matched_queries") or ()) or None,
        seq=int(nd.get("seq") or 0),
    )


def entry_of(h: dict[str, Any]) -> Entry:
    """A hit of :func:`~neardup.engines.elastic.dsl.keys_body` as the matcher holds it."""
    nd = neardup_part(h.get("_source"))
    keys = nd.get("keys") or {}
    return Entry(
        id=h["_id"],
        seq=int(nd.get("seq") or 0),
        n_shingles=int(nd.get("n_shingles") or 0),
        simhash=int(nd.get("simhash") or "0", 16),
        keys={f: parse_keys(f, v) for f, v in keys.items()},
        tags=tags_of(nd),
        shingles=stored_shingles(nd),
    )


def is_signed(src: dict[str, Any] | None) -> bool:
    """Whether a stored document carries neardup's fields."""
    nd = neardup_part(src)
    return nd.get("seq") is not None and nd.get("id") is not None and nd.get("shingles") is not None


def tags_of(nd: dict[str, Any]) -> Tags | None:
    cid = nd.get("cluster_id")
    if cid is None:
        return None
    return Tags(
        cluster_id=cid,
        dup_of=nd.get("dup_of"),
        max_resemblance=float(nd.get("max_resemblance") or 0.0),
        is_duplicate=bool(nd.get("is_duplicate")),
    )


def tag_row(src: dict[str, Any], layout: Layout) -> TagRow:
    nd = src[ROOT]
    return TagRow(
        id=nd["id"],
        seq=int(nd.get("seq") or 0),
        tags=tags_of(nd),
        title=stored_text(src, layout, layout.title),
        lang=nd.get("lang"),
        indexed_at=nd.get("indexed_at"),
    )


def hit_of(h: dict[str, Any], layout: Layout) -> Hit:
    s = h.get("_source") or {}
    nd = neardup_part(s)
    snippet = dsl.snippet_of(h.get("highlight"), layout, nd.get("lang"))
    return Hit(
        id=h["_id"],
        score=float(h.get("_score") or 0.0),
        title=stored_text(s, layout, layout.title),
        snippet=snippet,
        cluster_id=nd.get("cluster_id"),
    )


def missing_shards(resp: dict[str, Any]) -> str | None:
    """What a search response says of shards that did not answer, or None when all did.

    >>> missing_shards({"_shards": {"total": 3, "successful": 3, "skipped": 0, "failed": 0}})
    >>> lost = [{"reason": {"type": "no_shard_available_action_exception"}}]
    >>> missing_shards({"_shards": {"total": 3, "successful": 2, "skipped": 0, "failed": 1,
    ...                              "failures": lost}})
    '2 of 3 shards answered; no_shard_available_action_exception'
    """
    sh = resp.get("_shards") or {}
    total, ok = sh.get("total", 0), sh.get("successful", 0) + sh.get("skipped", 0)
    if not sh.get("failed") and ok >= total:
        return None
    kinds = sorted(
        {str((f.get("reason") or {}).get("type", "?")) for f in sh.get("failures") or []}
    )
    return f"{sh.get('successful', 0)} of {total} shards answered" + (
        f"; {', '.join(kinds)}" if kinds else ""
    )


def error_reason(resp: dict[str, Any]) -> str:
    err = resp.get("error")
    if isinstance(err, dict):
        root = (err.get("root_cause") or [{}])[0]
        return f"{resp.get('status')} {err.get('type')}: {root.get('reason') or err.get('reason')}"
    return f"{resp.get('status')} {err}"


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
    for ix in indices:
        if "closed" in (ix.get("attributes") or []):
            return (
                f"{location} is closed: open it (POST {ix.get('name')}/_open) and attach again; "
                "nothing was changed"
            )
    return None


def source_problem(location: str, mappings: dict[str, Any], text_field: str) -> str | None:
    """Why the index's ``_source`` cannot serve ``attach`` (None: it can): neardup reads the
    text from ``_source`` and keeps its fields there, so ``_source`` disabled, or filtered so
    that the text field or ``neardup`` is left out, is refused.

    >>> source_problem("u/a", {"_source": {"enabled": False}}, "body")[:33]
    'u/a has _source disabled: neardup'
    >>> source_problem("u/a", {"_source": {"excludes": ["bo*"]}}, "body")[:40]
    "u/a leaves body out of _source ('bo*'): "
    >>> source_problem("u/a", {}, "body") is None
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
    for field in (text_field, f"{ROOT}.shingles"):
        dropped = _left_out(field, includes, excludes)
        if dropped:
            return (
                f"{location} leaves {field} out of _source ({', '.join(map(repr, dropped))}): "
                "neardup reads the text and keeps its own fields there; nothing was changed"
            )
    return None


def _left_out(field: str, includes: list[str], excludes: list[str]) -> list[str]:
    """Why a ``_source`` filter leaves ``field`` out: the excludes that match it, or its
    absence from the includes (none: it is kept)."""
    if includes and not any(fnmatch.fnmatchcase(field, p) for p in includes):
        return [f"not in includes {includes}"]
    return [p for p in excludes if fnmatch.fnmatchcase(field, p)]


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
