"""JSON Lines read into documents: one JSON object per line (a byte order mark and CRLF line
ends accepted), a file, a compressed file or standard input; files that are JSON but not JSON
Lines (an array, pretty-printed records) refused with how to convert them; and
:func:`json_records`, the objects of a JSON Lines file as they are."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import IO, Callable, Iterator

from ..signing.records import Document
from .encodings import BOM, CORRUPT, UTF16, line_encoding_problem, not_decodable, open_bytes
from .fields import DEFAULT_FIELDS, RecordFields, record_document
from .files import UNSUPPORTED, InputError, _not_document, _os_problem


def read_jsonl(
    path: Path,
    name: str,
    on_bytes: Callable[[int], None] | None,
    fields: RecordFields = DEFAULT_FIELDS,
    encoding: str | None = None,
) -> Iterator[Document | InputError]:
    if path.suffix.lower() in UNSUPPORTED:
        yield InputError(str(path), _not_document(path))
        return
    try:
        stream, raw = open_bytes(path)
    except OSError as e:
        yield InputError(str(path), f"cannot read ({_os_problem(e)})")
        return
    with raw, stream:
        yield from read_jsonl_stream(
            stream, str(path), name, on_bytes, raw, fields=fields, encoding=encoding
        )


def read_jsonl_stream(
    stream: IO[bytes],
    where_name: str,
    id_name: str,
    on_bytes: Callable[[int], None] | None,
    raw: IO[bytes] | None = None,
    *,
    fields: RecordFields = DEFAULT_FIELDS,
    encoding: str | None = None,
) -> Iterator[Document | InputError]:
    problem = line_encoding_problem(encoding)
    if problem:
        yield InputError(where_name, problem)
        return
    lineno = 0
    done = pos = 0  # bytes reported to on_bytes, and read
    lines = iter(stream)
    while True:
        try:
            line = next(lines, None)
        except CORRUPT as e:
            yield InputError(f"{where_name}:{lineno + 1}", _stream_problem(e, raw, stream))
            return
        if line is None:
            if on_bytes and pos > done:
                on_bytes(pos - done)
            return
        lineno += 1
        problem = _not_json_lines(line) if lineno == 1 else None
        if problem:
            yield InputError(f"{where_name}:1", problem)
            return
        if on_bytes:
            pos = _bytes_read(raw, stream, pos, line)
            done = _report_bytes(on_bytes, pos, done, lineno == 1)
        yield from parse_line(
            line, f"{where_name}:{lineno}", f"{id_name}:{lineno}", fields, encoding
        )


def _stream_problem(e: BaseException, raw: IO[bytes] | None, stream: IO[bytes]) -> str:
    """What reading a JSON Lines stream met: ``e`` reading the file, or corrupt compressed
    data (``raw``, the compressed file beneath ``stream``)."""
    what = (
        "cannot read" if raw is stream or raw is None else "compressed data is corrupt or truncated"
    )
    return f"{what} ({_os_problem(e) if isinstance(e, OSError) else e})"


def _bytes_read(raw: IO[bytes] | None, stream: IO[bytes], pos: int, line: bytes) -> int:
    """The bytes of the file read after ``line``: where ``raw``, the compressed file beneath
    ``stream``, is; else ``pos`` and the line."""
    return raw.tell() if raw is not None and raw is not stream else pos + len(line)


def _report_bytes(on_bytes: Callable[[int], None], pos: int, done: int, first: bool) -> int:
    """Tell ``on_bytes`` of the bytes read up to ``pos`` since ``done`` once they are
    :data:`_PROGRESS_BYTES` or more (or after the first line); the bytes told of so far."""
    if pos - done >= _PROGRESS_BYTES or first:
        on_bytes(pos - done)
        return pos
    return done


#: Bytes read between two reports to ``on_bytes`` (a progress bar need not hear of every line).
_PROGRESS_BYTES = 1 << 16


def _not_json_lines(first: bytes) -> str | None:
    """Why a file whose first line is ``first`` is not JSON Lines at all, or None."""
    if first.startswith(UTF16):
        return (
            "the file is UTF-16 (it starts with a UTF-16 byte order mark): JSON Lines must be "
            "UTF-8 (convert it, e.g. iconv -f UTF-16 -t UTF-8)"
        )
    head = first[len(BOM) :] if first.startswith(BOM) else first
    # an array of records, pretty-printed or on one line
    if head.strip() == b"[" or re.match(rb"\s*\[\s*\{", head):
        return (
            "the file is one JSON array, not JSON Lines (one object per line): convert it, "
            "e.g. jq -c '.[]' FILE > FILE.jsonl"
        )
    if head.strip() == b"{":
        return (
            "records span several lines (pretty-printed JSON), not JSON Lines (one object per "
            "line): convert it, e.g. jq -c . FILE > FILE.jsonl"
        )
    return None


def parse_line(
    raw: bytes,
    where: str,
    default_id: str,
    fields: RecordFields = DEFAULT_FIELDS,
    encoding: str | None = None,
) -> Iterator[Document | InputError]:
    rec = _json_value(raw, where, encoding)
    if isinstance(rec, InputError):
        yield rec
    elif rec is not _BLANK:
        yield record_document(rec, where, default_id, _SURROGATE_ESCAPE.search(raw) is None, fields)


#: What :func:`_json_value` gives for a blank line.
_BLANK = object()


def _json_value(raw: bytes, where: str, encoding: str | None = None) -> object:
    """The JSON value of one line of JSON Lines, :data:`_BLANK` for a blank line, or the
    :class:`InputError` saying why it cannot be read."""
    if raw.startswith(BOM) and encoding in (None, "utf-8"):
        raw = raw[len(BOM) :]
    if not raw.strip():
        return _BLANK
    try:
        line = raw.decode(encoding or "utf-8")
    except UnicodeDecodeError as e:
        return InputError(where, not_decodable(encoding, e))
    try:
        return json.loads(line)
    except json.JSONDecodeError as e:
        return InputError(where, f"not JSON ({e.msg} at column {e.colno})")
    except RecursionError:
        return InputError(
            where,
            "record is nested too deeply to read (JSON arrays or objects inside each other "
            "hundreds of levels deep)",
        )
    except ValueError as e:  # e.g. an integer of more than 4300 digits
        return InputError(where, f"not readable JSON ({e})")


def json_records(path: str | os.PathLike, limit: int | None = None) -> Iterator[tuple[int, dict]]:
    """(line number, object) of each non-blank line of a JSON Lines file (compressed ones
    too), the first ``limit`` lines only when given; a line that is not a JSON object raises
    :class:`InputError` naming the file and line.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    ...     _ = f.write('{"id": "a"}\\n\\n{"id": "b"}\\n[1]\\n')
    >>> records = json_records(f.name)
    >>> next(records), next(records)
    ((1, {'id': 'a'}), (3, {'id': 'b'}))
    >>> next(records)
    Traceback (most recent call last):
    neardup.io.files.InputError: ...:4: a record must be a JSON object
    >>> os.unlink(f.name)
    """
    stream, raw = open_bytes(Path(path))
    with raw, stream:
        for n, line in enumerate(stream, 1):
            if limit is not None and n > limit:
                return
            problem = _not_json_lines(line) if n == 1 else None
            rec = InputError(f"{path}:1", problem) if problem else _json_value(line, f"{path}:{n}")
            if isinstance(rec, InputError):
                raise rec
            if rec is _BLANK:
                continue
            if not isinstance(rec, dict):
                raise InputError(f"{path}:{n}", "a record must be a JSON object")
            yield n, rec


#: A JSON escape of a surrogate code point: the only way a line decoded as UTF-8 (which has
#: none) gives a string holding one.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
