"""One rule for what a document may hold, checked wherever documents enter neardup.

:func:`check_document` is pure: it returns why a document cannot be stored, or None. The
reader (:mod:`neardup.io.reading`) turns a reason into an :class:`~neardup.io.files.InputError`
naming the file and line; :meth:`neardup.signing.signer.Signer.sign_batch` turns it into a failure
of that one document. Either way no engine ever receives a document it would refuse as a whole
request (an HTTP bulk request fails entirely on one id over 512 bytes or one string that is
not valid Unicode), so one bad document never costs the others of its batch.

The rule

* ``id``: a non-empty string of at most 512 bytes in UTF-8 (Elasticsearch's and OpenSearch's
  limit, kept on the embedded engine too so an index can move between engines), with no
  control characters (C0, DEL, C1: they break terminals, CSV and logs) and no lone
  surrogates (not Unicode: it cannot be written as UTF-8).
* ``text``: a string (an empty one is wordless: stored, never a near-duplicate); ``title``: a
  string or absent; ``lang``: a string or absent.
* ``text``, ``title``, ``lang`` and every string in ``fields`` (keys too): no lone surrogates.
* ``fields``: JSON values only (objects with non-empty string keys, arrays, strings, finite
  numbers, 64-bit integers, booleans, null), nested at most :data:`MAX_DEPTH` levels
  (Elasticsearch's default ``index.mapping.depth.limit``); NaN and infinities are not JSON;
  a key may not start or end with ``.`` or hold ``..`` (Elasticsearch reads dots as paths).

Documents are refused, never repaired: a repaired id or text would silently be another
document than the one given.
"""

from __future__ import annotations

import math
import re
from typing import Any, Sequence

from ..errors import InvalidInput

MAX_ID_BYTES = 512
MAX_DEPTH = 20

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


class InvalidDocument(InvalidInput):
    """A document neardup refuses to store; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def check_id(doc_id: object) -> str | None:
    """Why ``doc_id`` cannot be a document id, or None."""
    if not isinstance(doc_id, str):
        return f"id must be a string, not {type(doc_id).__name__}"
    if doc_id == "":
        return "id is empty"
    at = _surrogate_at(doc_id)
    if at is not None:
        return f"id is not valid Unicode (lone surrogate U+{ord(doc_id[at]):04X} at character {at})"
    m = _CONTROL.search(doc_id)
    if m:
        return f"id contains a control character (U+{ord(m.group()):04X} at character {m.start()})"
    n = len(doc_id) if doc_id.isascii() else len(doc_id.encode("utf-8"))
    if n > MAX_ID_BYTES:
        return f"id is {n:,} bytes in UTF-8, more than the limit of {MAX_ID_BYTES}"
    return None


def _surrogate_at(value: str) -> int | None:
    """Index of the first lone surrogate of ``value``, or None (fast: ASCII, then the UTF-8
    codec)."""
    if value.isascii():
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        return e.start
    return None


def check_string(name: str, value: str) -> str | None:
    """Why the string ``value`` of ``name`` cannot be stored (a lone surrogate), or None."""
    at = _surrogate_at(value)
    if at is not None:
        return (
            f"{name} is not valid Unicode (lone surrogate U+{ord(value[at]):04X} at character {at})"
        )
    return None


def check_fields(fields: object) -> str | None:
    """Why ``fields`` (the document's other fields) cannot be stored, or None. Iterative, so
    any depth is checked without recursion; names of fields are only made for a message."""
    if fields is None:
        return None
    if not isinstance(fields, dict):
        return f"fields must be an object, not {type(fields).__name__}"
    stack: list[tuple[Any, tuple, int]] = [(fields, (), 0)]
    while stack:
        container, path, depth = stack.pop()
        is_dict = isinstance(container, dict)
        for k, v in container.items() if is_dict else enumerate(container):
            problem = (_key_problem(path, k) if is_dict else None) or _value_problem(
                path + (k,), depth, v
            )
            if problem:
                return problem
            if isinstance(v, (dict, list, tuple)):
                stack.append((v, path + (k,), depth + 1))
    return None


def _key_problem(path: tuple, key: object) -> str | None:
    """Why ``key``, a key of the object at ``path`` of the fields, cannot be stored, or None."""
    return _check_key(f"a key in field {_name(path)!r}" if path else "field", key)


def _value_problem(path: tuple, depth: int, value: object) -> str | None:
    """Why ``value``, at ``path`` of the fields inside ``depth`` containers, cannot be
    stored, or None: too deep a container, or a scalar no engine stores."""
    if isinstance(value, (dict, list, tuple)):
        if depth + 1 >= MAX_DEPTH:
            return f"field {_name(path)!r} is nested more than {MAX_DEPTH} levels deep"
        return None
    if type(value) is str and value.isascii():
        return None
    problem = _check_scalar(value)
    return f"field {_name(path)!r} {problem}" if problem else None


def _name(path: tuple) -> str:
    return "".join(
        f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p) for i, p in enumerate(path)
    )


def _check_scalar(value: object) -> str | None:
    if isinstance(value, str):
        at = _surrogate_at(value)
        return (
            None
            if at is None
            else f"is not valid Unicode (lone surrogate U+{ord(value[at]):04X} at character {at})"
        )
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return (
            None
            if -(2**63) <= value < 2**63
            else f"is {value}, outside the 64-bit integers an engine can store"
        )
    if isinstance(value, float):
        return None if math.isfinite(value) else f"is {value!r}, which is not a JSON number"
    return f"holds a {type(value).__name__}, which is not a JSON value"


def _plain_key(key: object) -> bool:
    """Whether ``key`` is a name of ASCII characters, not blank, without a dot at either end
    or two together: the common case, storable as it is."""
    return bool(
        type(key) is str
        and key.isascii()
        and key.strip()
        and key[0] != "."
        and key[-1] != "."
        and ".." not in key
    )


def _check_key(what: str, key: object) -> str | None:
    if _plain_key(key):
        return None
    if not isinstance(key, str):
        return f"{what} has a key that is not a string ({key!r})"
    if not key.strip():
        return f"{what} has an empty name"
    if key.startswith(".") or key.endswith(".") or ".." in key:
        return (
            f"{what} has the name {key!r}: a name may not start or end with '.' or hold '..' "
            "(dots are object paths)"
        )
    return check_string(f"{what} name", key)


def check_document(
    doc: Any, *, text_has_no_surrogate: bool = False, id_checked: bool = False
) -> str | None:
    """Why ``doc`` (a :class:`~neardup.signing.records.Document`) cannot be stored, or None.
    ``text_has_no_surrogate``: the caller knows its text holds no lone surrogate (read from
    UTF-8 JSON without a surrogate escape), so that scan is skipped; ``id_checked``: it knows
    the id is valid (:func:`check_documents`)."""
    problem = None if id_checked else check_id(doc.id)
    if problem:
        return problem
    if not isinstance(doc.text, str):
        return f"text must be a string, not {type(doc.text).__name__}"
    for name, value in (("text", doc.text), ("title", doc.title), ("lang", doc.lang)):
        problem = _string_problem(name, value, name == "text" and text_has_no_surrogate)
        if problem:
            return problem
    return check_fields(doc.fields)


def _string_problem(name: str, value: object, no_surrogate: bool) -> str | None:
    """Why ``value``, the text, title or language of a document, cannot be stored, or None
    (a title or language may be None; ``no_surrogate``: known to hold no lone surrogate)."""
    if value is None and name != "text":
        return None
    if not isinstance(value, str):
        return f"{name} must be a string, not {type(value).__name__}"
    return None if no_surrogate else check_string(name, value)


def check_documents(docs: Sequence[Any], text_has_no_surrogate: Sequence[bool]) -> list[str | None]:
    """:func:`check_document` of each document (``text_has_no_surrogate[i]`` of document i):
    where every id is a non-empty ASCII string of at most :data:`MAX_ID_BYTES` without a
    control character, which is the common case, the ids are checked together (their
    concatenation scanned once), the rest document by document.

    >>> from types import SimpleNamespace as D
    >>> a = D(id="a", text="x", title=None, lang=None, fields={})
    >>> b = D(id="b", text=3, title=None, lang=None, fields={})
    >>> check_documents([a, b], [True, True])
    [None, 'text must be a string, not int']
    """
    ids = [d.id for d in docs]
    joined = "".join(ids) if all(type(i) is str for i in ids) else None
    plain = (
        joined is not None
        and all(ids)
        and joined.isascii()
        and max(map(len, ids), default=0) <= MAX_ID_BYTES
        and _CONTROL.search(joined) is None
    )
    return [
        check_document(d, text_has_no_surrogate=t, id_checked=plain)
        for d, t in zip(docs, text_has_no_surrogate, strict=True)
    ]
