"""Reading documents: JSON Lines, plain text files, and directories of them.

JSONL records need ``text``; ``id`` defaults to ``<file>:<line>``; ``title`` and ``lang``
are optional; every other field is kept in :attr:`Document.fields`. A bad record raises
:class:`InputError` naming the file and line (or, with ``skip_bad``, is reported through
``on_error`` and skipped).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from .config import LANGUAGES
from .signer import Document

JSONL_SUFFIXES = {".jsonl", ".ndjson", ".json"}
TEXT_SUFFIXES = {".txt", ".text", ".md", ".html", ".htm", ""}
MAX_CHARS = 50_000_000


@dataclass
class InputError(ValueError):
    """A record or file neardup cannot read; ``where`` is ``file`` or ``file:line``."""

    where: str
    problem: str

    def __str__(self) -> str:
        return f"{self.where}: {self.problem}"


def iter_files(paths: Iterable[str | os.PathLike]) -> Iterator[Path]:
    """Files named, and files under directories named (sorted, hidden ones skipped)."""
    for p in map(Path, paths):
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts) and \
                        f.suffix.lower() in JSONL_SUFFIXES | TEXT_SUFFIXES:
                    yield f
        elif p.is_file():
            yield p
        else:
            raise InputError(str(p), "no such file or directory")


def read_documents(paths: Iterable[str | os.PathLike], *, skip_bad: bool = False,
                   on_error: Callable[[InputError], None] | None = None,
                   on_bytes: Callable[[int], None] | None = None) -> Iterator[Document]:
    """Documents from JSONL and text files (directories are walked)."""
    for f in iter_files(paths):
        reader = _read_jsonl if f.suffix.lower() in JSONL_SUFFIXES else _read_text
        for item in reader(f, on_bytes):
            if isinstance(item, InputError):
                if not skip_bad:
                    raise item
                if on_error:
                    on_error(item)
            else:
                yield item


def _read_jsonl(path: Path, on_bytes: Callable[[int], None] | None) -> Iterator[Document | InputError]:
    with path.open("rb") as f:
        for lineno, raw in enumerate(f, 1):
            if on_bytes:
                on_bytes(len(raw))
            where = f"{path}:{lineno}"
            if not raw.strip():
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                yield InputError(where, f"not valid UTF-8 (byte {e.start})")
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                yield InputError(where, f"not JSON ({e.msg} at column {e.colno})")
                continue
            yield _record(rec, where, f"{path.name}:{lineno}")


def _record(rec: object, where: str, default_id: str) -> Document | InputError:
    if not isinstance(rec, dict):
        return InputError(where, f"a record must be a JSON object, not {type(rec).__name__}")
    text = rec.get("text")
    if text is None:
        return InputError(where, "record has no 'text' field")
    if not isinstance(text, str):
        return InputError(where, f"'text' must be a string, not {type(text).__name__}")
    problem = check_text(text)
    if problem:
        return InputError(where, problem)
    lang = rec.get("lang")
    if lang is not None and lang not in LANGUAGES:
        return InputError(where, f"unknown language code {lang!r} (use one of {', '.join(LANGUAGES)}, or leave 'lang' out to detect)")
    doc_id = rec.get("id", default_id)
    if not isinstance(doc_id, (str, int)) or doc_id == "":
        return InputError(where, f"'id' must be a non-empty string or integer, not {doc_id!r}")
    title = rec.get("title")
    fields = {k: v for k, v in rec.items() if k not in ("id", "text", "title", "lang")}
    if title is None and isinstance(rec.get("meta"), dict) and isinstance(rec["meta"].get("title"), str):
        title = rec["meta"]["title"]
    return Document(str(doc_id), text, None if title is None else str(title), lang, fields)


def _read_text(path: Path, on_bytes: Callable[[int], None] | None) -> Iterator[Document | InputError]:
    data = path.read_bytes()
    if on_bytes:
        on_bytes(len(data))
    if b"\x00" in data[:8192]:
        yield InputError(str(path), "binary file (contains NUL bytes)")
        return
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        yield InputError(str(path), f"not valid UTF-8 (byte {e.start})")
        return
    problem = check_text(text)
    if problem:
        yield InputError(str(path), problem)
        return
    yield Document(str(path), text, path.stem, None, {"path": str(path)})


def check_text(text: str) -> str | None:
    """Why ``text`` cannot be indexed, or None."""
    if not text.strip():
        return "empty or whitespace-only text"
    if len(text) > MAX_CHARS:
        return f"text has {len(text):,} characters, more than the limit of {MAX_CHARS:,}"
    return None


def total_bytes(paths: Iterable[str | os.PathLike]) -> int:
    return sum(f.stat().st_size for f in iter_files(paths))
