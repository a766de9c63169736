"""Reading documents: JSON Lines, plain text files, directories of them, standard input.

JSONL records need ``text``; ``id`` defaults to ``<file>:<line>``; ``title`` and ``lang``
are optional; every other field is kept in :attr:`Document.fields`. A bad record raises
:class:`InputError` naming the file and line (or, with ``skip_bad``, is reported through
``on_error`` and skipped). Every record is checked by :func:`neardup.validate.check_document`
here, so a document no engine can store is reported with its file and line.

What is read

* ``.jsonl``, ``.ndjson``, ``.json``: one JSON object per line (UTF-8; a byte order mark and
  CRLF line ends are accepted); ``-`` reads JSON Lines from standard input.
* ``.txt``, ``.text``, ``.md``, ``.html``, ``.htm`` and files without a suffix: one document
  per file, its path as id (UTF-8, or UTF-16 with a byte order mark).
* Any of those compressed with gzip, bzip2 or xz (``docs.jsonl.gz``, ``page.html.xz``).
* A file named on the command line is read whatever its suffix (as text unless it is JSONL).
* In directories (walked in name order): files of the kinds above. Every other entry is
  left out *and reported* (hidden files and directories, other suffixes, symbolic links to
  directories); those reports never stop a run.

``id`` must be a non-empty string or an integer (stored as its decimal string); ``true``,
``1.5``, ``null``, lists and objects are refused.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import re
import stat
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Iterable, Iterator

from .config import is_language_code
from .signer import Document
from .validate import check_document

JSONL_SUFFIXES = {".jsonl", ".ndjson", ".json"}
TEXT_SUFFIXES = {".txt", ".text", ".md", ".html", ".htm", ""}
COMPRESSED = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
#: compressed or archive formats neardup cannot read: named in the message instead
UNSUPPORTED = {".zst": "zstd-compressed", ".zip": "a zip archive", ".tar": "a tar archive", ".tgz": "a tar archive",
               ".7z": "a 7-Zip archive", ".rar": "a RAR archive", ".lz4": "lz4-compressed", ".br": "brotli-compressed"}
MAX_CHARS = 50_000_000
STDIN = "-"
_BOM = b"\xef\xbb\xbf"
_UTF16 = (b"\xff\xfe", b"\xfe\xff")
_CORRUPT = (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError)


@dataclass
class InputError(ValueError):
    """A record or file neardup cannot read; ``where`` is ``file`` or ``file:line``.

    ``fatal`` False marks an entry of a directory that was left out (not a document file):
    it is reported through ``on_error`` and never stops a run.
    """

    where: str
    problem: str
    fatal: bool = True

    def __str__(self) -> str:
        return f"{self.where}: {self.problem}"


def kind_of(path: Path) -> str | None:
    """``"jsonl"``, ``"text"`` or None (not a document file), looking through a compression suffix."""
    name = path.name.lower()
    if Path(name).suffix in COMPRESSED:
        name = name[: -len(Path(name).suffix)]
    suffix = Path(name).suffix
    if suffix in JSONL_SUFFIXES:
        return "jsonl"
    return "text" if suffix in TEXT_SUFFIXES else None


def iter_files(paths: Iterable[str | os.PathLike]) -> Iterator[Path | InputError]:
    """Files named, and document files under directories named (in name order); every
    entry of a directory that is left out, and every path that cannot be read, comes out as
    an :class:`InputError` in its place. ``-`` (standard input) comes out as ``Path("-")``."""
    for p in paths:
        if str(p) == STDIN:
            yield Path(STDIN)
            continue
        p = Path(p)
        try:
            st = p.stat()
        except OSError as e:
            yield InputError(str(p), _os_problem(e, "no such file or directory"))
            continue
        if stat.S_ISDIR(st.st_mode):
            yield from _walk(p)
        else:
            yield p


def _walk(root: Path) -> Iterator[Path | InputError]:
    """Entries under ``root`` in path order (a folder's entries by name, each subfolder where
    its name falls), as :func:`sorted` of ``rglob`` gave them."""
    stack: list[Iterator[os.DirEntry]] = []
    problem = _scan(root, stack)
    if problem:
        yield problem
    while stack:
        e = next(stack[-1], None)
        if e is None:
            stack.pop()
            continue
        path = Path(e.path)
        try:
            if e.name.startswith("."):
                yield InputError(str(path), f"hidden {'directory' if e.is_dir(follow_symlinks=False) else 'file'} (not read)", fatal=False)
            elif e.is_dir(follow_symlinks=False):
                problem = _scan(path, stack)
                if problem:
                    yield problem
            elif e.is_symlink() and e.is_dir():
                yield InputError(str(path), "symbolic link to a directory (not followed)", fatal=False)
            elif not e.is_file():
                yield InputError(str(path), "broken symbolic link" if e.is_symlink() else "not a regular file", fatal=False)
            elif kind_of(path) is None:
                yield InputError(str(path), _not_document(path), fatal=False)
            else:
                yield path
        except OSError as err:
            yield InputError(str(path), f"cannot read ({_os_problem(err)})")


def _scan(d: Path, stack: list[Iterator[os.DirEntry]]) -> InputError | None:
    """Push the entries of folder ``d`` (sorted by name) onto ``stack``; or why it cannot be read."""
    try:
        with os.scandir(d) as it:
            stack.append(iter(sorted(it, key=lambda e: e.name)))
    except OSError as e:
        return InputError(str(d), f"cannot read directory ({_os_problem(e)})")
    return None


def _not_document(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in UNSUPPORTED:
        return f"{UNSUPPORTED[suffix]} file, which neardup does not read (extract it first)"
    return (f"not a JSONL or text file (suffix {path.suffix or 'none'!r}; reads {', '.join(sorted(JSONL_SUFFIXES | TEXT_SUFFIXES - {''}))}, "
            f"files without a suffix, and those compressed with {', '.join(sorted(COMPRESSED))})")


def _os_problem(e: OSError, missing: str | None = None) -> str:
    if missing and isinstance(e, FileNotFoundError):
        return missing
    return e.strerror or str(e)


def read_documents(paths: Iterable[str | os.PathLike], *, skip_bad: bool = False,
                   on_error: Callable[[InputError], None] | None = None,
                   on_bytes: Callable[[int], None] | None = None) -> Iterator[Document]:
    """Documents from JSONL and text files (directories are walked, ``-`` is standard input).

    A bad record or unreadable file raises :class:`InputError`, or with ``skip_bad`` goes to
    ``on_error`` and reading goes on; entries of directories that are left out always go to
    ``on_error``.
    """
    for f in iter_files(paths):
        items: Iterable[Document | InputError]
        if isinstance(f, InputError):
            items = (f,)
        elif str(f) == STDIN:
            items = _read_jsonl_stream(sys.stdin.buffer, "<stdin>", "stdin", on_bytes)
        else:
            items = _read_jsonl(f, on_bytes) if kind_of(f) == "jsonl" else _read_text(f, on_bytes)
        for item in items:
            if isinstance(item, InputError):
                if item.fatal and not skip_bad:
                    raise item
                if on_error:
                    on_error(item)
            else:
                yield item


def _open(path: Path) -> tuple[IO[bytes], IO[bytes]]:
    """(stream of the file's bytes, raw file for progress); decompressed when compressed."""
    raw = open(path, "rb")
    opener = COMPRESSED.get(path.suffix.lower())
    if opener is None:
        return raw, raw
    return opener(raw), raw


def _read_jsonl(path: Path, on_bytes: Callable[[int], None] | None) -> Iterator[Document | InputError]:
    if path.suffix.lower() in UNSUPPORTED:
        yield InputError(str(path), f"{UNSUPPORTED[path.suffix.lower()]} file, which neardup does not read (extract it first)")
        return
    try:
        stream, raw = _open(path)
    except OSError as e:
        yield InputError(str(path), f"cannot read ({_os_problem(e)})")
        return
    with raw, stream:
        yield from _read_jsonl_stream(stream, str(path), path.name, on_bytes, raw)


def _read_jsonl_stream(stream: IO[bytes], where_name: str, id_name: str, on_bytes: Callable[[int], None] | None,
                       raw: IO[bytes] | None = None) -> Iterator[Document | InputError]:
    lineno = 0
    done = pos = 0  # bytes reported to on_bytes, and read
    lines = iter(stream)
    while True:
        try:
            line = next(lines, None)
        except _CORRUPT as e:
            what = "cannot read" if raw is stream or raw is None else "compressed data is corrupt or truncated"
            yield InputError(f"{where_name}:{lineno + 1}", f"{what} ({_os_problem(e) if isinstance(e, OSError) else e})")
            return
        if line is None:
            if on_bytes and pos > done:
                on_bytes(pos - done)
            return
        lineno += 1
        if lineno == 1:
            problem = _not_json_lines(line)
            if problem:
                yield InputError(f"{where_name}:1", problem)
                return
        if on_bytes:
            pos = raw.tell() if raw is not None and raw is not stream else pos + len(line)
            if pos - done >= _PROGRESS_BYTES or lineno == 1:
                on_bytes(pos - done)
                done = pos
        yield from _parse_line(line, f"{where_name}:{lineno}", f"{id_name}:{lineno}")


#: Bytes read between two reports to ``on_bytes`` (a progress bar need not hear of every line).
_PROGRESS_BYTES = 1 << 16


def _not_json_lines(first: bytes) -> str | None:
    """Why a file whose first line is ``first`` is not JSON Lines at all, or None."""
    if first.startswith(_UTF16):
        return ("the file is UTF-16 (it starts with a UTF-16 byte order mark): JSON Lines must be UTF-8 "
                "(convert it, e.g. iconv -f UTF-16 -t UTF-8)")
    head = first[len(_BOM):] if first.startswith(_BOM) else first
    if head.strip() == b"[" or re.match(rb"\s*\[\s*\{", head):  # an array of records, pretty-printed or on one line
        return ("the file is one JSON array, not JSON Lines (one object per line): convert it, "
                "e.g. jq -c '.[]' FILE > FILE.jsonl")
    if head.strip() == b"{":
        return ("records span several lines (pretty-printed JSON), not JSON Lines (one object per line): "
                "convert it, e.g. jq -c . FILE > FILE.jsonl")
    return None


def _parse_line(raw: bytes, where: str, default_id: str) -> Iterator[Document | InputError]:
    if raw.startswith(_BOM):
        raw = raw[len(_BOM):]
    if not raw.strip():
        return
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        yield InputError(where, f"not valid UTF-8 (byte {e.start})")
        return
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as e:
        yield InputError(where, f"not JSON ({e.msg} at column {e.colno})")
        return
    except RecursionError:
        yield InputError(where, "record is nested too deeply to read (JSON arrays or objects inside each other "
                                "hundreds of levels deep)")
        return
    except ValueError as e:  # e.g. an integer of more than 4300 digits
        yield InputError(where, f"not readable JSON ({e})")
        return
    yield _record(rec, where, default_id, _SURROGATE_ESCAPE.search(raw) is None)


#: A JSON escape of a surrogate code point: the only way a line decoded as UTF-8 (which has
#: none) gives a string holding one.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _record(rec: object, where: str, default_id: str, no_surrogate: bool = False) -> Document | InputError:
    if not isinstance(rec, dict):
        return InputError(where, f"a record must be a JSON object, not {_json_type(rec)}")
    text = rec.get("text")
    if text is None:
        return InputError(where, "record has no 'text' field")
    if not isinstance(text, str):
        return InputError(where, f"'text' must be a string, not {_json_type(text)}")
    problem = check_text(text)
    if problem:
        return InputError(where, problem)
    lang = rec.get("lang")
    if lang is not None and not is_language_code(lang):
        return InputError(where, f"unknown language code {lang!r} (give a code of two or three letters: en, fa, ru, de, ar, zh, ...; "
                                 "or leave 'lang' out to detect)")
    doc_id = rec.get("id", default_id)
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or doc_id == "":
        return InputError(where, f"'id' must be a non-empty string or an integer, not {_json_type(doc_id)} {json.dumps(doc_id)[:40]}")
    title = rec.get("title")
    if title is None and isinstance(rec.get("meta"), dict) and isinstance(rec["meta"].get("title"), str):
        title = rec["meta"]["title"]
    if title is not None and (isinstance(title, bool) or not isinstance(title, (str, int, float))):
        return InputError(where, f"'title' must be a string, not {_json_type(title)}")
    fields = {k: v for k, v in rec.items() if k not in ("id", "text", "title", "lang")}
    doc = Document(str(doc_id), text, None if title is None else str(title), lang, fields)
    problem = check_document(doc, text_has_no_surrogate=no_surrogate)
    return InputError(where, problem) if problem else doc


def _json_type(v: object) -> str:
    if v is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array",
            dict: "an object"}.get(type(v), type(v).__name__)


def _read_text(path: Path, on_bytes: Callable[[int], None] | None) -> Iterator[Document | InputError]:
    if path.suffix.lower() in UNSUPPORTED:
        yield InputError(str(path), f"{UNSUPPORTED[path.suffix.lower()]} file, which neardup does not read (extract it first)")
        return
    try:
        stream, raw = _open(path)
        with raw, stream:
            data = stream.read(4 * MAX_CHARS + 1)
    except OSError as e:
        yield InputError(str(path), f"cannot read ({_os_problem(e)})")
        return
    except _CORRUPT as e:
        yield InputError(str(path), f"compressed data is corrupt or truncated ({e})")
        return
    if on_bytes:
        on_bytes(_size(path))
    if len(data) > 4 * MAX_CHARS:
        yield InputError(str(path), f"file is larger than {4 * MAX_CHARS:,} bytes (the limit is {MAX_CHARS:,} characters of text)")
        return
    utf16 = data.startswith(_UTF16)
    if not utf16 and b"\x00" in data[:8192]:
        yield InputError(str(path), "binary file (contains NUL bytes)")
        return
    try:
        text = data.decode("utf-16" if utf16 else "utf-8-sig")
    except UnicodeDecodeError as e:
        yield InputError(str(path), f"not valid {'UTF-16' if utf16 else 'UTF-8'} (byte {e.start})")
        return
    problem = check_text(text)
    if problem:
        yield InputError(str(path), problem)
        return
    name = path.name[: -len(path.suffix)] if path.suffix.lower() in COMPRESSED else path.name
    doc = Document(str(path), text, Path(name).stem, None, {"path": str(path)})
    problem = check_document(doc)
    yield InputError(str(path), problem) if problem else doc


def locate(paths: Iterable[str | os.PathLike], ids: Iterable[str]) -> dict[str, str]:
    """Where each of ``ids`` was read (``file:line``, or the file of a text document; the last
    place for an id read more than once), found by reading the files again: for naming the
    documents an engine refused after they were read. Standard input is not read again."""
    want = set(ids)
    out: dict[str, str] = {}
    for f in iter_files(paths):
        if isinstance(f, InputError) or str(f) == STDIN:
            continue
        if kind_of(f) != "jsonl":
            if str(f) in want:
                out[str(f)] = str(f)
            continue
        try:
            stream, raw = _open(f)
            with raw, stream:
                for lineno, line in enumerate(stream, 1):
                    for item in _parse_line(line, f"{f}:{lineno}", f"{f.name}:{lineno}"):
                        if isinstance(item, Document) and item.id in want:
                            out[item.id] = f"{f}:{lineno}"
        except _CORRUPT:
            continue
    return out


def check_text(text: str) -> str | None:
    """Why ``text`` cannot be indexed, or None."""
    if not text.strip():
        return "empty or whitespace-only text"
    if len(text) > MAX_CHARS:
        return f"text has {len(text):,} characters, more than the limit of {MAX_CHARS:,}"
    return None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def total_bytes(paths: Iterable[str | os.PathLike]) -> int:
    """Bytes of the files :func:`read_documents` reads (compressed size; standard input counts 0)."""
    return sum(_size(f) for f in iter_files(paths) if isinstance(f, Path) and str(f) != STDIN)
