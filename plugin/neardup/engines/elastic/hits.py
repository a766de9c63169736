"""How the answers of Elasticsearch and OpenSearch become neardup's records: hits as
candidates, stored documents, tag rows and search hits; a document's own fields read from an
adopted index's layout; shard failures and error reasons told. (Whether an index can be
attached is :mod:`.attach_checks`.)

Pure functions of response bodies (dicts), used by :class:`~neardup.engines.elastic.ElasticEngine`.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime, timezone
from typing import Any

import numpy as np

from ...keys.encoding import parse_keys
from ..stored_shingles import given_lang, is_marker, stored_hashes
from .key_match import Entry
from . import dsl
from .index import set_key
from .layout import Layout, ROOT
from ..base import Candidate, ClusterRecord, Hit, TagRow, Tags


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


def shingle_row(src: dict[str, Any], layout: Layout) -> tuple[Any, bytes, int, str | None]:
    """What :meth:`~neardup.engines.stored_shingles.StoredShingles.sets` reads of a signed
    ``_source`` read with its text: (cache key, shingles column, shingle count, text).

    >>> from neardup.engines.elastic.layout import OWN
    >>> src = {"body": "a b", ROOT: {"exact": "e1", "lang": "en", "shingles": "VA==",
    ...                              "n_shingles": 20}}
    >>> shingle_row(src, OWN)
    (('e1', 'en'), b'T', 20, 'a b')
    """
    nd = src[ROOT]
    return (
        set_key(nd.get("exact"), nd.get("lang")),
        base64.b64decode(nd["shingles"]),
        int(nd.get("n_shingles") or 0),
        stored_text(src, layout, layout.text),
    )


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


def entry_of(h: dict[str, Any], version: int) -> Entry:
    """A hit of :func:`~neardup.engines.elastic.dsl.keys_body` as the matcher holds it (its
    keys written as an index of signature ``version`` holds them)."""
    nd = neardup_part(h.get("_source"))
    keys = nd.get("keys") or {}
    return Entry(
        id=h["_id"],
        seq=int(nd.get("seq") or 0),
        n_shingles=int(nd.get("n_shingles") or 0),
        simhash=int(nd.get("simhash") or "0", 16),
        keys={f: parse_keys(f, v, version) for f, v in keys.items()},
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
