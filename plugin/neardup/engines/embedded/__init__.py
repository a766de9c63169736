"""The embedded engine: one SQLite file (stdlib ``sqlite3``), no server.

One module a job: :mod:`.schema` (the format version, the tables, how values are written),
:mod:`.failures` (SQLite failures told apart by result code), :mod:`.connection` (opening,
lock retries, transactions and savepoints), :mod:`.keycolumn` and :mod:`.packing` (the keys
column and posting keys), :mod:`.postings` (postings and candidates, in SQL and batched),
:mod:`.prepared` (what the signing workers make of a batch: keys columns, full-text
words), :mod:`.fulltext` (the FTS5 index, and its catch-up in a file left behind),
:mod:`.clusters` (the clusters table) and :mod:`.engine` (the ``docs`` table, and
:class:`EmbeddedEngine` made of the parts). Each part holds the one
:class:`~.connection.Connection` the engine opens, rather than inheriting it.

Tables

* ``meta(key, value)``: the format marker, the :class:`~neardup.config.Config` and
  collection context (JSON).
* ``docs``: one row per document; ``seq`` (the rowid) is the arrival order. Small columns
  come first and the text last, so reading a document's signatures never touches the
  overflow pages of a long text. ``shingles`` holds a document's shingle hashes as a
  little-endian uint64 BLOB, or, in a file of format ``/3``, a marker where its text makes
  them again (:mod:`..stored_shingles`); ``exact`` is the 16-byte digest (a BLOB, not 32 hex
  characters), ``indexed_at`` milliseconds since the epoch (an integer), and ``cluster_id``
  is NULL when it is the document's own id (a tagged document has ``is_duplicate`` 0 or 1).
* ``postings(key, doc)``: the inverted index of signature keys (:mod:`.postings`), and
  ``recent_postings(key, doc)``: the latest documents' postings, merged into ``postings`` in
  key order once it holds 2**21 of them; reads match both.
* ``fts``: an FTS5 index over title and body for full-text search (:mod:`.fulltext`).
* ``clusters``: the last N-to-N clustering.

Size (target: under 1.5 KB per document beyond the stored text)

* Posting keys. A posting stores ``(field << 44) | (key mod 2**44)`` as one integer: the
  field and the low 44 bits of the key. Values below 2**47 take 6 bytes in a SQLite record
  instead of 8 for the key plus a column for the field (8 fields fit; more still work, at 8
  bytes). Postings only propose candidates, and every candidate is verified exactly on its
  shingles, so the truncation can only add a false candidate. ``collisions`` may likewise
  report a few groups that share 44 bits but not 64; ``pairs`` verifies them and drops them.
* Shingle hashes (8 bytes each, about 3.5 KB for 550 words) are not stored where the stored
  text makes them again (:mod:`..stored_shingles`): ``python -m benchmarks.engine --long
  --sizes 20000,80000`` gave 1,288 and 1,662 bytes per document beyond the text as indexed,
  against 5,299 and 5,674 with the hashes stored.
* The ``keys`` column: each field in its smallest exact form (:mod:`.keycolumn`).
* Pages are 64 KiB (a new file's; a file keeps the page size it was made with). Rows are
  appended in ``seq`` order and a page is closed when the next row does not fit, so each page
  of ``docs`` leaves unused up to one row's size: a row of a 550-word document (its text, 8
  bytes per shingle hash, its keys) is 7-9 KB, so a 16 KiB page held one or two of them and
  left about 2.2 KB per document unused; a 64 KiB page holds seven or eight and leaves about
  0.8 KB (``python -m benchmarks.engine --long``: 5,492 instead of 6,955 bytes per document
  beyond the text at 50k documents). Short documents lose little either way.
* A batch inserts its postings at the end, in key order, into the small ``recent_postings``;
  a merge adds those to ``postings`` in key order, so sorted runs fill its pages.
* :meth:`~EmbeddedEngine.refresh` checkpoints and truncates the write-ahead log (it held up
  to one batch's pages, tens of MB, next to the file), and ``journal_size_limit`` caps what a
  checkpoint leaves behind.

Opening a file of an older format raises :class:`~neardup.engines.base.EngineError` asking to
index the documents again into a new file (:func:`.schema.format_message`).
"""

from __future__ import annotations

from .connection import Transaction
from .engine import EmbeddedEngine
from .failures import StorageError, sqlite_failure, storage_problem
from .keycolumn import KeyColumns
from .postings import matched_documents
from .prepared import PreparedRows
from .schema import FORMAT

__all__ = [
    "EmbeddedEngine",
    "KeyColumns",
    "PreparedRows",
    "FORMAT",
    "StorageError",
    "Transaction",
    "matched_documents",
    "sqlite_failure",
    "storage_problem",
]
