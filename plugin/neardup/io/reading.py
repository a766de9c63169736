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
import os
import sys
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..signing.records import Document
from .fields import DEFAULT_FIELDS, RecordFields
from .files import STDIN, InputError, iter_sources, kind_of
from .jsonl import read_jsonl, read_jsonl_stream
from .tables import read_csv, read_parquet
from .text import read_text


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
        return read_jsonl_stream(
            sys.stdin.buffer, "<stdin>", "stdin", on_bytes, fields=fields, encoding=encoding
        )
    kind = kind_of(f)
    if kind == "jsonl":
        return read_jsonl(f, name, on_bytes, fields, encoding)
    if kind == "csv":
        return read_csv(f, name, on_bytes, fields, encoding)
    if kind == "parquet":
        return read_parquet(f, name, on_bytes, fields)
    return read_text(f, name, on_bytes, encoding)
