"""The embedded engine's file: its format version, tables, and how values are written in them.

A file records its format in ``meta.format``; opening a file of another format names what to
do (:func:`format_message`). ``neardup-sqlite/1`` had ``postings(field, key, doc)``, full FTS5
detail, hex ``exact``, ISO ``indexed_at`` and raw keys; ``/2`` files (shingle hashes always
stored), ``/3`` files (no ``recent_postings``) and ``/4`` files (every posting's ``doc`` is
the document's ``seq``) are opened and written as before (:data:`READS`). From ``/5`` on, a
posting of a document tagged as a member of a cluster holds ``-seq`` (:mod:`.postings`).

>>> format_message("x.db", "neardup-sqlite/1").split(" (")[0]
'x.db was written by an older neardup'
>>> iso(0)
'1970-01-01T00:00:00.000+00:00'
"""

from __future__ import annotations

import functools
import os
import re
import time
from datetime import datetime, timedelta, timezone
from urllib.parse import quote

from ..base import EngineError

FORMAT = "neardup-sqlite/5"
#: Formats whose shingles column holds a marker where the text makes the hashes again
#: (:mod:`~neardup.engines.stored_shingles`); ``/2`` stores every document's shingle hashes.
MARKERS = ("neardup-sqlite/3", "neardup-sqlite/4", FORMAT)
#: Formats this version opens. Only ``/4`` and later put new postings in ``recent_postings``
#: first, and only ``/5`` stores members' postings under ``-seq``: an older file keeps its
#: layout (hashes stored; every posting in ``postings``; every ``doc`` a ``seq``), so the
#: neardup that made it still opens it and finds every candidate in it.
READS = ("neardup-sqlite/2", "neardup-sqlite/3", "neardup-sqlite/4", FORMAT)
#: Formats with ``recent_postings``.
RECENT = ("neardup-sqlite/4", FORMAT)
#: A new file's page size (a file keeps the page size it was made with).
PAGE_SIZE = 65536
TOKENIZE = "unicode61 remove_diacritics 2"
#: The full-text index keeps each term's positions, so bm25() counts the terms the index holds
#: (the analyzed words, stems) in the index itself; with ``detail=none`` FTS5 would count
#: them in the raw text of the content table, where a stem is not found ("elect" in
#: "elections"): the same words matched but scored 0.
FTS_DETAIL = "detail=full"

FTS_TABLE = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(title, body, content='docs', "
    f"content_rowid='seq', tokenize='{TOKENIZE}', {FTS_DETAIL})"
)
#: The postings of the latest documents (:mod:`.postings`): small, so that inserting keys at
#: random places stays within the page cache; merged into ``postings`` in key order.
RECENT_TABLE = """CREATE TABLE IF NOT EXISTS recent_postings(
    key INTEGER NOT NULL,
    doc INTEGER NOT NULL,
    PRIMARY KEY(key, doc)
) WITHOUT ROWID"""
#: The columns a candidate is filtered by (:meth:`.postings.Postings._filtered`), in a narrow
#: index of a few tens of bytes per document: ruling a candidate out reads this index, not its
#: ``docs`` row, which shares its page with the texts. Made in new files only.
FILTER_INDEX = (
    "CREATE INDEX IF NOT EXISTS docs_filter "
    "ON docs(seq, n_shingles, simhash, is_duplicate, id, cluster_id)"
)
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS docs(
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    lang TEXT,
    n_tokens INTEGER NOT NULL,
    n_shingles INTEGER NOT NULL,
    too_short INTEGER NOT NULL DEFAULT 0,
    simhash INTEGER NOT NULL,
    cluster_id TEXT,
    dup_of TEXT,
    max_resemblance REAL,
    is_duplicate INTEGER,
    indexed_at INTEGER NOT NULL,
    exact BLOB NOT NULL,
    fields TEXT,
    shingles BLOB NOT NULL,
    keys BLOB NOT NULL,
    title TEXT,
    body TEXT
)""",
    "CREATE INDEX IF NOT EXISTS docs_dup_of ON docs(dup_of) WHERE dup_of IS NOT NULL",
    FILTER_INDEX,
    """CREATE TABLE IF NOT EXISTS postings(
    key INTEGER NOT NULL,
    doc INTEGER NOT NULL,
    PRIMARY KEY(key, doc)
) WITHOUT ROWID""",
    RECENT_TABLE,
    FTS_TABLE,
    """CREATE TABLE IF NOT EXISTS clusters(
    cluster_id TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    representative_id TEXT NOT NULL,
    representative_title TEXT,
    members TEXT NOT NULL,
    min_resemblance REAL, mean_resemblance REAL, max_resemblance REAL,
    languages TEXT,
    first_seen TEXT, last_seen TEXT, updated_at TEXT
)""",
)

#: The columns a document is written with (:meth:`EmbeddedEngine._doc_row` gives them in order).
INSERT_COLUMNS = (
    "id",
    "lang",
    "n_tokens",
    "n_shingles",
    "too_short",
    "simhash",
    "cluster_id",
    "dup_of",
    "max_resemblance",
    "is_duplicate",
    "indexed_at",
    "exact",
    "fields",
    "shingles",
    "keys",
    "title",
    "body",
)
INSERT_DOC = (
    f"INSERT INTO docs(seq, {', '.join(INSERT_COLUMNS)}) "
    f"VALUES (?,{','.join('?' * len(INSERT_COLUMNS))})"
)
UPDATE_DOC = f"UPDATE docs SET {', '.join(c + '=?' for c in INSERT_COLUMNS)} WHERE seq=?"
#: The columns a stored document is read from (rows decoded by these names).
DOC_COLUMNS = (
    "seq, id, lang, n_shingles, simhash, cluster_id, dup_of, max_resemblance, is_duplicate, "
    "indexed_at, exact, fields, shingles, keys, title, too_short"
)
#: A document's cluster; NULL in the row when it is the document's own id (most documents).
CLUSTER = "CASE WHEN d.is_duplicate IS NULL THEN NULL ELSE coalesce(d.cluster_id, d.id) END"
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_HEX32 = re.compile(r"[0-9a-f]{32}")
#: Unsigned 64-bit values as SQLite's signed integers and back.
_U64_MASK = 0xFFFFFFFFFFFFFFFF


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@functools.lru_cache(maxsize=4096)  # a batch's documents share one indexed_at
def iso(ms: int | str | None) -> str | None:
    """``indexed_at`` (milliseconds since the epoch) as ISO 8601."""
    if ms is None or isinstance(ms, str):
        return ms
    return (_EPOCH + timedelta(milliseconds=ms)).isoformat(timespec="milliseconds")


def own_cluster(cluster_id: str, doc_id: str) -> str | None:
    """The ``cluster_id`` column: NULL when it is the document's own id."""
    return None if cluster_id == doc_id else cluster_id


def signed64(v: int) -> int:
    """A uint64 as the int64 SQLite stores (:func:`unsigned64` back).

    >>> unsigned64(signed64(2**64 - 1)) == 2**64 - 1
    True
    """
    return v - (1 << 64) if v >= 1 << 63 else v


def unsigned64(v: int) -> int:
    return v & _U64_MASK


def exact_value(exact: str) -> bytes | str:
    """The digest as 16 bytes when it is 32 lowercase hex characters (as the signer makes it)."""
    return bytes.fromhex(exact) if isinstance(exact, str) and _HEX32.fullmatch(exact) else exact


def exact_text(value: bytes | str) -> str:
    """The stored ``exact`` column as the signer wrote it (:func:`exact_value` back)."""
    return value.hex() if isinstance(value, bytes) else value


def check_sqlite_file(path: str) -> str:
    """Refuse ``path`` unless it starts like a SQLite database; return the URI that reads it
    without writing anything: ``mode=ro``, and ``immutable=1`` when its folder is not
    writable and it has no write-ahead log to read (SQLite could not create one)."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError as e:
        raise EngineError(f"{path}: cannot read ({e.strerror or e})") from None
    if head != b"SQLite format 3\x00":
        raise EngineError(f"{path} is not a neardup index (not a SQLite database)")
    full = os.path.abspath(path)
    uri = f"file:{quote(full)}?mode=ro"
    if not os.access(os.path.dirname(full), os.W_OK) and not (
        os.path.exists(full + "-wal") and os.path.exists(full + "-shm")
    ):
        uri += "&immutable=1"
    return uri


def format_message(path: str, found: str | None) -> str:
    """Why a file whose ``meta.format`` is ``found`` is not opened, and what to do."""
    prefix = FORMAT.rsplit("/", 1)[0] + "/"
    version = found[len(prefix) :] if isinstance(found, str) and found.startswith(prefix) else ""
    if version.isdigit() and int(version) < int(FORMAT[len(prefix) :]):
        return (
            f"{path} was written by an older neardup (index format {found!r}; this version "
            f"reads {FORMAT!r}, whose tables are laid out differently): re-index the documents "
            "into a new file with 'neardup index'"
        )
    if version.isdigit():
        return (
            f"{path} was written by a newer neardup (index format {found!r}; this version "
            f"reads {FORMAT!r}): upgrade neardup"
        )
    return f"{path} is not a neardup index of this format (found {found!r}, expected {FORMAT!r})"
