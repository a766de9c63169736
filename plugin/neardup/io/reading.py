"""Reading documents: JSON Lines, CSV, Parquet, plain text files, directories of them,
standard input.

Records (JSONL lines, CSV rows, Parquet rows) need a text field (``text``, or the one
:class:`~neardup.io.fields.RecordFields` names); ``id`` defaults to ``<file name>:<line>``
(``<file name>:<row>`` for CSV and Parquet); ``title`` and ``lang`` are optional; every
other field is kept in :attr:`Document.fields`. A bad record raises :class:`InputError`
naming the file and line (or, with ``skip_bad``, is reported through ``on_error`` and
skipped). Every record is checked by :func:`neardup.signing.validate.check_document` here
(:func:`~neardup.io.fields.record_document`), so a document no engine can store
is reported with its file and line.

What is read

* ``.jsonl``, ``.ndjson``, ``.json``: one JSON object per line (UTF-8 unless ``encoding``
  says otherwise; a byte order mark and CRLF line ends are accepted); ``-`` reads JSON Lines
  from standard input.
* ``.csv`` (comma-separated) and ``.tsv`` (tab-separated): a header row naming the fields,
  then one record per row (quoted fields may hold line breaks); an empty cell of ``id``,
  ``title`` or ``lang`` counts as absent.
* ``.parquet``: one record per row (needs pyarrow: ``pip install 'neardup[parquet]'``).
* ``.txt``, ``.text``, ``.md``, ``.html``, ``.htm`` and files without a suffix: one document
  per file (UTF-8, or UTF-16 with a byte order mark, unless ``encoding`` says otherwise).
* Any of those but Parquet compressed with gzip, bzip2 or xz (``docs.jsonl.gz``).
* A file named on the command line is read whatever its suffix (as text unless it is one of
  the record formats).
* In directories (walked in name order): files of the kinds above. Every other entry is
  left out *and reported* (hidden files and directories, other suffixes, symbolic links to
  directories); those reports never stop a run.

Ids do not depend on how a path was typed: a text file's id is its path relative to the
directory named (``sub/a.txt`` for ``corpus/sub/a.txt`` whether ``corpus``, ``./corpus/`` or
``/abs/corpus`` was given), or its file name when the file itself was named; a record's
default id is its file's name and line. ``id`` must be a non-empty string or an integer
(stored as its decimal string); ``true``, ``1.5``, ``null``, lists and objects are refused.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import lzma
import os
import re
import sys
import zlib
from pathlib import Path
from typing import IO, Callable, Iterable, Iterator

from ..signing.records import Document
from ..signing.validate import check_document
from .fields import DEFAULT_FIELDS, MAX_CHARS, RecordFields, check_text, record_document
from .files import (
    COMPRESSED,
    CSV_SUFFIXES,
    InputError,
    STDIN,
    UNSUPPORTED,
    _not_document,
    _os_problem,
    _size,
    iter_sources,
    kind_of,
)

_BOM = b"\xef\xbb\xbf"
_UTF16 = (b"\xff\xfe", b"\xfe\xff")
_CORRUPT = (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError)


def read_documents(
    paths: Iterable[str | os.PathLike],
    *,
    skip_bad: bool = False,
    on_error: Callable[[InputError], None] | None = None,
    on_bytes: Callable[[int], None] | None = None,
    fields: RecordFields = DEFAULT_FIELDS,
    encoding: str | None = None,
) -> Iterator[Document]:
    """Documents from JSONL, CSV, Parquet and text files (directories are walked, ``-`` is
    standard input, JSON Lines); ``fields`` names the fields of records, ``encoding`` the
    character encoding of every file but Parquet (default UTF-8, or UTF-16 with a byte order
    mark for text files).

    A bad record or unreadable file raises :class:`InputError`, or with ``skip_bad`` goes to
    ``on_error`` and reading goes on; entries of directories that are left out always go to
    ``on_error``.
    """
    if encoding is not None:
        # (LookupError for an unknown one: checked by the caller)
        encoding = codecs.lookup(encoding).name
    for f, name in iter_sources(paths):
        for item in _read_source(f, name, on_bytes, fields, encoding):
            if isinstance(item, InputError):
                if item.fatal and not skip_bad:
                    raise item
                if on_error:
                    on_error(item)
            else:
                yield item


def _read_source(
    f: Path | InputError,
    name: str,
    on_bytes: Callable[[int], None] | None,
    fields: RecordFields,
    encoding: str | None,
) -> Iterable[Document | InputError]:
    """The documents (and problems) of one source of :func:`iter_sources`, read as its kind
    says: standard input as JSON Lines."""
    if isinstance(f, InputError):
        return (f,)
    if str(f) == STDIN:
        return _read_jsonl_stream(
            sys.stdin.buffer, "<stdin>", "stdin", on_bytes, fields=fields, encoding=encoding
        )
    kind = kind_of(f)
    if kind == "jsonl":
        return _read_jsonl(f, name, on_bytes, fields, encoding)
    if kind == "csv":
        return _read_csv(f, name, on_bytes, fields, encoding)
    if kind == "parquet":
        return _read_parquet(f, name, on_bytes, fields)
    return _read_text(f, name, on_bytes, encoding)


def check_encoding(encoding: str) -> str | None:
    """Why ``encoding`` cannot be used to read documents, or None."""
    try:
        info = codecs.lookup(encoding)
    except LookupError:
        return f"unknown encoding {encoding!r} (e.g. utf-8, cp1251, koi8-r, windows-1256, latin-1)"
    try:
        codecs.decode(b"", info.name)
    except (TypeError, ValueError, LookupError):
        return f"{encoding!r} is not a text encoding"
    return None


def _line_encoding_problem(encoding: str | None) -> str | None:
    """Why JSON Lines in ``encoding`` cannot be read line by line, or None."""
    if encoding is None or "\n".encode(encoding) == b"\n" and "{".encode(encoding) == b"{":
        return None
    return (
        f"JSON Lines in {encoding} cannot be read (its line ends are not single bytes): "
        "convert the file to UTF-8"
    )


def _open(path: Path) -> tuple[IO[bytes], IO[bytes]]:
    """(stream of the file's bytes, raw file for progress); decompressed when compressed."""
    raw = open(path, "rb")
    opener = COMPRESSED.get(path.suffix.lower())
    if opener is None:
        return raw, raw
    return opener(raw), raw


def _read_jsonl(
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
        stream, raw = _open(path)
    except OSError as e:
        yield InputError(str(path), f"cannot read ({_os_problem(e)})")
        return
    with raw, stream:
        yield from _read_jsonl_stream(
            stream, str(path), name, on_bytes, raw, fields=fields, encoding=encoding
        )


def _read_jsonl_stream(
    stream: IO[bytes],
    where_name: str,
    id_name: str,
    on_bytes: Callable[[int], None] | None,
    raw: IO[bytes] | None = None,
    *,
    fields: RecordFields = DEFAULT_FIELDS,
    encoding: str | None = None,
) -> Iterator[Document | InputError]:
    problem = _line_encoding_problem(encoding)
    if problem:
        yield InputError(where_name, problem)
        return
    lineno = 0
    done = pos = 0  # bytes reported to on_bytes, and read
    lines = iter(stream)
    while True:
        try:
            line = next(lines, None)
        except _CORRUPT as e:
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
        yield from _parse_line(
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
    if first.startswith(_UTF16):
        return (
            "the file is UTF-16 (it starts with a UTF-16 byte order mark): JSON Lines must be "
            "UTF-8 (convert it, e.g. iconv -f UTF-16 -t UTF-8)"
        )
    head = first[len(_BOM) :] if first.startswith(_BOM) else first
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


def _parse_line(
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
    if raw.startswith(_BOM) and encoding in (None, "utf-8"):
        raw = raw[len(_BOM) :]
    if not raw.strip():
        return _BLANK
    try:
        line = raw.decode(encoding or "utf-8")
    except UnicodeDecodeError as e:
        return InputError(where, _not_decodable(encoding, e))
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
    stream, raw = _open(Path(path))
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


def _not_decodable(encoding: str | None, e: UnicodeDecodeError) -> str:
    if encoding is None:
        return (
            f"not valid UTF-8 (byte {e.start}); if the file is in another encoding, name it "
            "with --encoding (e.g. --encoding cp1251)"
        )
    return f"not valid {encoding} (byte {e.start})"


#: A JSON escape of a surrogate code point: the only way a line decoded as UTF-8 (which has
#: none) gives a string holding one.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _read_csv(
    path: Path,
    name: str,
    on_bytes: Callable[[int], None] | None,
    fields: RecordFields = DEFAULT_FIELDS,
    encoding: str | None = None,
) -> Iterator[Document | InputError]:
    """Records of a CSV (TSV) file: a header row, then one record per row."""
    base = path.name[: -len(path.suffix)] if path.suffix.lower() in COMPRESSED else path.name
    delimiter = CSV_SUFFIXES.get(Path(base).suffix.lower(), ",")
    try:
        stream, raw = _open(path)
    except OSError as e:
        yield InputError(str(path), f"cannot read ({_os_problem(e)})")
        return
    csv.field_size_limit(max(csv.field_size_limit(), MAX_CHARS))
    with raw, stream:
        text = io.TextIOWrapper(stream, encoding=encoding or "utf-8-sig", newline="")
        reader = csv.reader(text, delimiter=delimiter)
        line = [1]
        try:
            yield from _csv_records(reader, path, name, fields, line)
        except UnicodeDecodeError as e:
            yield InputError(f"{path}:{line[0]}", _not_decodable(encoding, e))
        except csv.Error as e:
            yield InputError(f"{path}:{line[0]}", f"not readable CSV ({e})")
        except _CORRUPT as e:
            yield InputError(f"{path}:{line[0]}", f"cannot read ({e})")
    if on_bytes:
        on_bytes(_size(path))


def _csv_records(
    reader, path: Path, name: str, fields: RecordFields, line: list[int]
) -> Iterator[Document | InputError]:
    """The records of the rows of a CSV ``reader`` (a header row first); ``line[0]`` is kept
    at the line of the row being read, for the place of an error reading it."""
    header = next(reader, None)
    if header is None:
        return
    problem = _header_problem(header, fields)
    if problem:
        yield InputError(f"{path}:1", problem)
        return
    line[0] = reader.line_num + 1
    row_no = 0
    for row in reader:
        row_no += 1
        where = f"{path}:{line[0]}"
        line[0] = reader.line_num + 1
        if not row or row == [""]:
            continue
        if len(row) != len(header):
            yield InputError(where, f"row has {len(row)} fields, the header {len(header)}")
            continue
        yield record_document(
            dict(zip(header, row, strict=True)),
            where,
            f"{name}:{row_no}",
            fields=fields,
            blank_is_absent=True,
        )


def _header_problem(header: list[str], fields: RecordFields) -> str | None:
    """Why a CSV file with this header row cannot be read as records, or None."""
    if len(set(header)) != len(header):
        twice = sorted({h for h in header if header.count(h) > 1})
        return f"the header names a field twice ({', '.join(twice)})"
    if fields.text not in header:
        return (
            f"the header has no {fields.text!r} column "
            f"(columns: {', '.join(map(repr, header[:12]))}; "
            "name the text column with --text-field)"
        )
    return None


def _read_parquet(
    path: Path,
    name: str,
    on_bytes: Callable[[int], None] | None,
    fields: RecordFields = DEFAULT_FIELDS,
) -> Iterator[Document | InputError]:
    """Records of a Parquet file, one per row (read with pyarrow, a row group at a time)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        yield InputError(
            str(path),
            "reading Parquet needs pyarrow: pip install 'neardup[parquet]' "
            "(or pip install pyarrow)",
        )
        return
    row = [0]
    try:
        yield from _parquet_records(pq.ParquetFile(path), path, name, fields, row)
    except OSError as e:
        yield InputError(_row_place(path, row[0]), f"cannot read as Parquet ({e})")
        return
    except Exception as e:  # noqa: BLE001 - pyarrow's errors of a damaged file (ArrowInvalid and others)
        yield InputError(
            _row_place(path, row[0]), f"cannot read as Parquet ({type(e).__name__}: {e})"
        )
        return
    if on_bytes:
        on_bytes(_size(path))


def _parquet_records(
    pf, path: Path, name: str, fields: RecordFields, row: list[int]
) -> Iterator[Document | InputError]:
    """The records of the rows of Parquet file ``pf``, a row group at a time; ``row[0]`` is
    kept at the rows read, for the place of an error reading the next."""
    names = pf.schema_arrow.names
    if fields.text not in names:
        yield InputError(
            str(path),
            f"no {fields.text!r} column (columns: {', '.join(map(repr, names[:12]))}; "
            "name the text column with --text-field)",
        )
        return
    for batch in pf.iter_batches(batch_size=1024):
        for rec in batch.to_pylist():
            row[0] += 1
            rec = {k: v if k in fields.names() else _jsonable(v) for k, v in rec.items()}
            yield record_document(rec, f"{path}:row {row[0]}", f"{name}:{row[0]}", fields=fields)


def _row_place(path: Path, rows_read: int) -> str:
    """Where reading a Parquet file failed: the file, and the row after ``rows_read``."""
    return f"{path}" + (f":row {rows_read + 1}" if rows_read else "")


def _jsonable(v: object) -> object:
    """A Parquet value as JSON can hold it: dates and times in ISO 8601, decimals and other
    values as their text, bytes as text when UTF-8 (else hexadecimal)."""
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return v.hex()
    iso = getattr(v, "isoformat", None)
    return iso() if callable(iso) else str(v)


def _read_text(
    path: Path, name: str, on_bytes: Callable[[int], None] | None, encoding: str | None = None
) -> Iterator[Document | InputError]:
    if path.suffix.lower() in UNSUPPORTED:
        yield InputError(str(path), _not_document(path))
        return
    data = _file_bytes(path)
    if isinstance(data, InputError):
        yield data
        return
    if on_bytes:
        on_bytes(_size(path))
    text = _file_text(data, encoding)
    problem = text if isinstance(text, _Unreadable) else check_text(text)
    if problem:
        yield InputError(str(path), problem)
        return
    plain = path.name[: -len(path.suffix)] if path.suffix.lower() in COMPRESSED else path.name
    doc = Document(id=name, text=text, title=Path(plain).stem, lang=None, fields={"path": name})
    problem = check_document(doc)
    yield InputError(str(path), problem) if problem else doc


def _file_bytes(path: Path) -> bytes | InputError:
    """The bytes of a text file (decompressed), up to one more than its limit; or why they
    cannot be read."""
    try:
        stream, raw = _open(path)
        with raw, stream:
            return stream.read(4 * MAX_CHARS + 1)
    except OSError as e:
        return InputError(str(path), f"cannot read ({_os_problem(e)})")
    except _CORRUPT as e:
        return InputError(str(path), f"compressed data is corrupt or truncated ({e})")


class _Unreadable(str):
    """Why a file's bytes are no text."""


def _file_text(data: bytes, encoding: str | None) -> str | _Unreadable:
    """The text of a text file's bytes in ``encoding`` (default UTF-8, or UTF-16 where they
    start with its byte order mark), or why they are none."""
    if len(data) > 4 * MAX_CHARS:
        return _Unreadable(
            f"file is larger than {4 * MAX_CHARS:,} bytes "
            f"(the limit is {MAX_CHARS:,} characters of text)"
        )
    utf16 = encoding is None and data.startswith(_UTF16)
    if encoding is None and not utf16 and b"\x00" in data[:8192]:
        return _Unreadable("binary file (contains NUL bytes)")
    try:
        return data.decode(_text_codec(encoding, utf16))
    except UnicodeDecodeError as e:
        return _Unreadable(
            f"not valid UTF-16 (byte {e.start})" if utf16 else _not_decodable(encoding, e)
        )


def _text_codec(encoding: str | None, utf16: bool) -> str:
    """The codec a text file is decoded with: ``encoding`` where given (UTF-8 with or without
    a byte order mark for "utf-8"), else UTF-16 where it starts with its byte order mark,
    else UTF-8."""
    if encoding and encoding != "utf-8":
        return encoding
    return "utf-16" if utf16 else "utf-8-sig"


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
                _read_csv(f, name, None, fields, encoding)
                if kind == "csv"
                else _read_parquet(f, name, None, fields)
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
        stream, raw = _open(f)
        with raw, stream:
            for lineno, line in enumerate(stream, 1):
                items = _parse_line(line, f"{f}:{lineno}", f"{name}:{lineno}", fields, encoding)
                out.update((doc_id, f"{f}:{lineno}") for doc_id in _ids_among(items, want))
    except _CORRUPT:
        pass
    return out
