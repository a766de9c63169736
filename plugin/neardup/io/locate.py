"""Where documents were read: each id's file and line, found by reading the files again (for
naming the documents an engine refused after they were read)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Iterator

from ..signing.records import Document
from .encodings import CORRUPT, open_bytes
from .fields import DEFAULT_FIELDS, RecordFields
from .files import STDIN, InputError, iter_sources, kind_of
from .jsonl import parse_line
from .tables import read_csv, read_parquet


def locate(
    paths: Iterable[str | os.PathLike],
    ids: Iterable[str],
    fields: RecordFields = DEFAULT_FIELDS,
    encoding: str | None = None,
) -> dict[str, str]:
    """Where each of ``ids`` was read (``file:line`` of JSON Lines, else the file; the last
    place for an id read more than once), found by reading the files again: for naming the
    documents an engine refused after they were read. Standard input is not read again."""
    want = set(ids)
    out: dict[str, str] = {}
    for f, name in iter_sources(paths):
        if isinstance(f, InputError) or str(f) == STDIN:
            continue
        kind = kind_of(f)
        if kind == "text":
            if name in want:
                out[name] = str(f)
        elif kind in ("csv", "parquet"):
            reader = (
                read_csv(f, name, None, fields, encoding)
                if kind == "csv"
                else read_parquet(f, name, None, fields)
            )
            out.update((doc_id, str(f)) for doc_id in _ids_among(reader, want))
        else:
            out.update(_jsonl_places(f, name, want, fields, encoding))
    return out


def _ids_among(items: Iterable[Document | InputError], want: set[str]) -> Iterator[str]:
    """The ids of the documents among ``items`` that are in ``want``."""
    return (item.id for item in items if isinstance(item, Document) and item.id in want)


def _jsonl_places(
    f: Path, name: str, want: set[str], fields: RecordFields, encoding: str | None
) -> dict[str, str]:
    """``file:line`` of each of ``want`` read from JSON Lines file ``f`` (the last line for
    an id read more than once; those before a corrupt part where the file has one)."""
    out: dict[str, str] = {}
    try:
        stream, raw = open_bytes(f)
        with raw, stream:
            for lineno, line in enumerate(stream, 1):
                items = parse_line(line, f"{f}:{lineno}", f"{name}:{lineno}", fields, encoding)
                out.update((doc_id, f"{f}:{lineno}") for doc_id in _ids_among(items, want))
    except CORRUPT:
        pass
    return out
