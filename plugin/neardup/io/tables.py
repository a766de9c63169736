"""Tables read into documents, one record per row: CSV and TSV (a header row naming the fields;
quoted fields may hold line breaks) and Parquet (with pyarrow, a row group at a time)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Callable, Iterator

from ..signing.records import Document
from .encodings import CORRUPT, not_decodable, open_bytes
from .fields import DEFAULT_FIELDS, MAX_CHARS, RecordFields, record_document
from .files import COMPRESSED, CSV_SUFFIXES, InputError, _os_problem, _size


def read_csv(
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
        stream, raw = open_bytes(path)
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
            yield InputError(f"{path}:{line[0]}", not_decodable(encoding, e))
        except csv.Error as e:
            yield InputError(f"{path}:{line[0]}", f"not readable CSV ({e})")
        except CORRUPT as e:
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


def read_parquet(
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
