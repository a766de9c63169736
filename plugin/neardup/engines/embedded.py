"""The embedded engine: one SQLite file (stdlib ``sqlite3``), no server.

Tables

* ``meta(key, value)``: the format marker, the :class:`~neardup.config.Config` and
  collection context (JSON).
* ``docs``: one row per document; ``seq`` (the rowid) is the arrival order. Small columns
  come first and the text last, so reading a document's signatures never touches the
  overflow pages of a long text. Shingle hashes are stored as a little-endian uint64 BLOB, so
  verification never re-reads raw text; ``exact`` is the 16-byte digest (a BLOB, not 32 hex
  characters), ``indexed_at`` milliseconds since the epoch (an integer), and ``cluster_id``
  is NULL when it is the document's own id (a tagged document has ``is_duplicate`` 0 or 1).
* ``postings(key, doc)``: the inverted index of signature keys, a ``WITHOUT ROWID`` b-tree:
  candidate retrieval is a term match inside SQLite (a batch's queries read the postings of
  their distinct keys in one statement and count and rank them with numpy:
  :func:`matched_documents`). See *Posting keys* below (the codecs
  are in :mod:`neardup.encoding`). The keys of the containment samples (winnowing, MOD_m:
  most of a document's keys, and no resemblance query reads them) follow behind like the
  full-text index: ``index`` stores them in the ``keys`` column only, and the first
  containment query or collision listing of those fields adds their postings
  (``meta.samples_upto``: every document up to that ``seq`` has them, none after; a
  document updated at or below it gets them at once). On a file opened read-only, that
  query copies the postings into the temporary schema with the samples added.
* ``fts``: an FTS5 index over title and body (external content) for full-text search. It
  indexes :func:`~neardup.canonical.search_text` of them (letters unified, ZWNJ, ё, digits,
  Snowball stems) and queries are analyzed the same way; bm25 ranks by the same analyzed
  terms (their counts in the index: ``detail=full``) and snippets are made from the raw text
  in Python. An index made with ``detail=none`` (scored on the raw words) gets its
  full-text index rebuilt by the next search.
  It follows behind: indexing documents does not analyze their text for it; the first
  full-text search after new documents adds them (``meta.fts_upto``: every document up to
  that ``seq`` is in it, none after), so ``index`` and ``clusters`` never pay for it.
  Documents updated or deleted at or below ``fts_upto`` are updated in it at once. On a file
  opened read-only, a search behind builds the whole full-text index in the connection's
  temporary schema instead (the same index, so the same results).
* ``clusters``: the last N-to-N clustering.

Every batch is a savepoint of a transaction that ``index`` commits every ``commit_every``
seconds (2) and at its end: a crash mid-ingest loses nothing committed (at most the last
seconds of work), and ingesting again upserts by id. :meth:`EmbeddedEngine.refresh` folds
the write-ahead log back into the file and truncates it.

Size (target: under 1.5 KB per document beyond the stored text)

* Posting keys. A posting stores ``(field << 44) | (key mod 2**44)`` as one integer: the
  field and the low 44 bits of the key. Values below 2**47 take 6 bytes in a SQLite record
  instead of 8 for the key plus a column for the field (8 fields fit; more still work, at 8
  bytes). Postings only propose candidates, and every candidate is verified exactly on its
  shingles, so the truncation can only add a false candidate: a query key meets a different
  stored key of its field with probability (keys of that field in the index) / 2**44, about
  1e-6 per key at a million documents. ``collisions`` may likewise report a few groups that
  share 44 bits but not 64; ``pairs`` verifies them and drops them.
* The ``keys`` column holds every signature key of the document (for deletes, upserts and
  :class:`~neardup.engines.base.StoredDoc.keys`) in a compact form that depends only on
  bytes stored in the same row, never on signing code that may change between versions:
  keys that are a sorted subset of the document's own shingle hashes (winnowing
  fingerprints, MOD_m samples) are a bitmap over the stored shingles (1 bit per shingle
  instead of 8 bytes per key); the ``exact`` key, when it is the first 8 bytes of the stored
  digest, is a 1-byte tag; anything else (MinHash bands, SimHash blocks, extended signatures)
  is raw uint64. Each form is checked on write, so every field round-trips exactly.
* Full-text search uses FTS5 with ``detail=none``: the index keeps which documents hold a
  term, not the columns or positions (a third of the ``detail=full`` size). Ranking is
  unchanged: FTS5 rebuilds positions for a matched row from its text, so ``bm25`` and
  ``snippet`` give the same results; searches on very common words cost more (each matching
  row's text is tokenized to rank it). Phrase and NEAR queries and column filters are not
  available; :meth:`search` takes words, each split into tokens by the table's own tokenizer,
  and every token is required (``e-mail`` finds documents with both ``e`` and ``mail``).
* Pages are 64 KiB (a new file's; a file keeps the page size it was made with). Rows are
  appended in ``seq`` order and a page is closed when the next row does not fit, so each page
  of ``docs`` leaves unused up to one row's size: a row of a 550-word document (its text, 8
  bytes per shingle hash, its keys) is 7-9 KB, so a 16 KiB page held one or two of them and
  left about 2.2 KB per document unused; a 64 KiB page holds seven or eight and leaves about
  0.8 KB (``python -m benchmarks.engine --long``: 5,492 instead of 6,955 bytes per document
  beyond the text at 50k documents). Short documents lose little either way.
* A batch inserts its postings at the end, in key order, so each b-tree page is changed once.
* :meth:`refresh` checkpoints and truncates the write-ahead log (it held up to one batch's
  pages, tens of MB, next to the file), and ``journal_size_limit`` caps what a checkpoint
  leaves behind.

Opening a file of an older format raises :class:`EngineError` asking to index the documents
again into a new file (``FORMAT``: ``neardup-sqlite/1`` had ``postings(field, key, doc)``,
full FTS5 detail, hex ``exact``, ISO ``indexed_at`` and raw keys).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import os
import re
import sqlite3
import time
import dataclasses
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from ..canonical.search import search_text, snippet
from ..config import CONTAINMENT_SAMPLES, Config
from ..encoding import (
    KEY_BITS,
    KEY_MASK,
    joined_keys,
    pack_keys_many,
    posting_array,
    posting_keys,
    unpack_keys,
)
from ..hashing import U64
from ..ragged import join
from ..retry import Backoff
from ..signer import Signed
from ..verify import UNBOUNDED
from .base import (
    Candidate,
    CandidateQuery,
    ClusterRecord,
    Engine,
    EngineError,
    Failure,
    Hit,
    KeyGroup,
    StoredDoc,
    TagRow,
    Tags,
)

FORMAT = "neardup-sqlite/2"
PAGE_SIZE = 65536
_TOKENIZE = "unicode61 remove_diacritics 2"
#: The full-text index keeps each term's positions, so bm25() counts the terms the index holds
#: (the analyzed words, stems) in the index itself; with ``detail=none`` FTS5 would count
#: them in the raw text of the content table, where a stem is not found ("elect" in
#: "elections"): the same words matched but scored 0.
_FTS_DETAIL = "detail=full"

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs(
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
);
CREATE INDEX IF NOT EXISTS docs_dup_of ON docs(dup_of) WHERE dup_of IS NOT NULL;
CREATE TABLE IF NOT EXISTS postings(
    key INTEGER NOT NULL,
    doc INTEGER NOT NULL,
    PRIMARY KEY(key, doc)
) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    title, body, content='docs', content_rowid='seq', tokenize='{_TOKENIZE}', {_FTS_DETAIL}
);
CREATE TABLE IF NOT EXISTS clusters(
    cluster_id TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    representative_id TEXT NOT NULL,
    representative_title TEXT,
    members TEXT NOT NULL,
    min_resemblance REAL, mean_resemblance REAL, max_resemblance REAL,
    languages TEXT,
    first_seen TEXT, last_seen TEXT, updated_at TEXT
);
"""

_INSERT_COLUMNS = "id, lang, n_tokens, n_shingles, too_short, simhash, cluster_id, dup_of, max_resemblance, is_duplicate, indexed_at, exact, fields, shingles, keys, title, body"
_INSERT_MARKS = ",".join("?" * 17)
_DOC_COLUMNS = (
    "seq, id, lang, n_shingles, simhash, cluster_id, dup_of, max_resemblance, is_duplicate, indexed_at, exact, fields, "
    "shingles, keys, title, too_short"
)
#: A document's cluster; NULL in the row when it is the document's own id (most documents).
_CLUSTER = "CASE WHEN d.is_duplicate IS NULL THEN NULL ELSE coalesce(d.cluster_id, d.id) END"
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_HEX32 = re.compile(r"[0-9a-f]{32}")


def matched_documents(
    keys: np.ndarray,
    key_group: np.ndarray,
    hit_keys: np.ndarray,
    hit_docs: np.ndarray,
    group_query: np.ndarray,
    need: np.ndarray,
    group_field: np.ndarray,
    after: np.ndarray,
    before: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Which documents each query matches, from the postings of its key groups, ranked.

    Group g holds the posting keys ``keys[key_group == g]`` of query ``group_query[g]``;
    ``(hit_keys, hit_docs)`` are the postings of those keys. A document matches a group when
    it holds at least ``need[g]`` of its distinct keys (as SQL's ``IN``) and its seq
    lies strictly between the query's ``after`` and ``before``; it matches a query when it
    matches one of its groups. Returns, per (query, document) matched, sorted by query, then
    score descending, then document: the query, the document, the score (keys matched in
    the groups it matches) and a bitmask of the groups' ``group_field`` numbers.

    >>> keys, key_group = np.array([5, 6, 7, 5]), np.array([0, 0, 0, 1])
    >>> r = matched_documents(keys, key_group, np.array([5, 5, 6, 7]), np.array([10, 11, 10, 10]),
    ...                       np.array([0, 1]), np.array([2, 1]), np.array([0, 1]), np.array([0, 0]), np.array([99, 99]))
    >>> [x.tolist() for x in r]
    [[0, 1, 1], [10, 10, 11], [3, 1, 1], [1, 2, 2]]
    """
    order = np.lexsort((key_group, keys))  # each distinct key of a group once, in key order
    keep = order[_run_starts(keys[order], key_group[order])]
    keys, key_group = keys[keep], key_group[keep]
    lo, hi = np.searchsorted(keys, hit_keys, "left"), np.searchsorted(keys, hit_keys, "right")
    n = hi - lo
    hit = np.repeat(np.arange(len(hit_keys)), n)  # each (hit, group key) pair with the same key
    start = np.repeat(lo - np.concatenate(([0], np.cumsum(n)[:-1])), n)
    group, doc = key_group[start + np.arange(len(hit))], hit_docs[hit]
    q = group_query[group]
    inside = (doc > after[q]) & (doc < before[q])
    group, doc = group[inside], doc[inside]
    order = np.lexsort((doc, group))  # keys matched per (group, document)
    group, doc = group[order], doc[order]
    first = _run_starts(group, doc)
    count = np.diff(np.append(first, len(group)))
    group, doc = group[first], doc[first]
    ok = count >= need[group]
    group, doc, count = group[ok], doc[ok], count[ok]
    q = group_query[group]
    order = np.lexsort((doc, q))  # per (query, document): the sum of the counts, the fields
    q, doc, count, field = q[order], doc[order], count[order], group_field[group[order]]
    first = _run_starts(q, doc)
    if not len(first):
        return q, doc, count, field
    score = np.add.reduceat(count, first)
    fields = np.bitwise_or.reduceat(np.left_shift(1, field), first)
    q, doc = q[first], doc[first]
    order = np.lexsort((doc, -score, q))
    return q[order], doc[order], score[order], fields[order]


def _run_starts(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where each run of equal pairs (a[i], b[i]) starts."""
    if not len(a):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate(([True], (a[1:] != a[:-1]) | (b[1:] != b[:-1]))))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


@functools.lru_cache(maxsize=4096)  # a batch's documents share one indexed_at
def _iso(ms: int | str | None) -> str | None:
    if ms is None or isinstance(ms, str):
        return ms
    return (_EPOCH + timedelta(milliseconds=ms)).isoformat(timespec="milliseconds")


def _own_cluster(cluster_id: str, doc_id: str) -> str | None:
    return None if cluster_id == doc_id else cluster_id


def _signed64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _exact_value(exact: str) -> bytes | str:
    """The digest as 16 bytes when it is 32 lowercase hex characters (as the signer makes it)."""
    return bytes.fromhex(exact) if isinstance(exact, str) and _HEX32.fullmatch(exact) else exact


@dataclass(frozen=True)
class EncodedKeys:
    """A document's keys column made in advance, and the fields it was made for."""

    fields: tuple[str, ...]
    blob: bytes


def keys_column(fields: tuple[str, ...], s: Signed) -> bytes:
    """The keys column of a signed document for ``fields`` (:func:`keys_columns` of one)."""
    return keys_columns(fields, [s])[0]


def keys_columns(fields: tuple[str, ...], signed: Sequence[Signed]) -> list[bytes]:
    """The keys column of each signed document for ``fields``
    (:func:`~neardup.encoding.pack_keys`): the one made in advance where it was made for the
    same fields, the others made together (:func:`_keys_columns`)."""
    out: list[bytes | None] = [
        s.encoded_keys.blob
        if isinstance(s.encoded_keys, EncodedKeys) and s.encoded_keys.fields == fields
        else None
        for s in signed
    ]
    todo = [i for i, b in enumerate(out) if b is None]
    if todo:
        rest = [signed[i] for i in todo]
        for i, b in zip(
            todo,
            _keys_columns(fields, rest, joined_keys(fields, [s.keys for s in rest])),
            strict=True,
        ):
            out[i] = b
    return out  # type: ignore[return-value]


def _keys_columns(
    fields: tuple[str, ...],
    signed: Sequence[Signed],
    keys: Mapping[str, tuple[np.ndarray, np.ndarray]],
) -> list[bytes]:
    """:func:`~neardup.encoding.pack_keys_many` of ``signed``, whose keys ``keys`` holds by field."""
    return pack_keys_many(
        fields,
        keys,
        join([np.ascontiguousarray(s.shingles, dtype="<u8") for s in signed]),
        [_exact_value(s.exact) for s in signed],
    )


def encode_keys(fields: tuple[str, ...], signed: Sequence[Signed]) -> None:
    """Set ``encoded_keys`` of each signed document to its keys column for ``fields``:
    :meth:`EmbeddedEngine.key_encoder`."""
    for s, blob in zip(
        signed,
        _keys_columns(fields, signed, joined_keys(fields, [s.keys for s in signed])),
        strict=True,
    ):
        s.encoded_keys = EncodedKeys(fields, blob)


def posting_jsons(field_id: int, values: np.ndarray, offsets: np.ndarray) -> list[str]:
    """For each document's keys (ragged: ``values[offsets[i] : offsets[i + 1]]``) of field
    number ``field_id``: its distinct posting keys in order, as a JSON array (for
    ``json_each``), all made in one numpy pass.

    >>> posting_jsons(1, *join([np.array([5, 7, 5], dtype=np.uint64), np.array([], dtype=np.uint64)]))
    ['[17592186044421, 17592186044423]', '[]']
    """
    flat = posting_keys(field_id, values)
    # (a list of ints prints as its JSON array)
    return [
        str(list(dict.fromkeys(flat[lo:hi]))) for lo, hi in itertools.pairwise(offsets.tolist())
    ]


def _exact_text(value: bytes | str) -> str:
    return value.hex() if isinstance(value, bytes) else value


class EmbeddedEngine(Engine):
    """Engine on a SQLite file. ``path=":memory:"`` keeps everything in memory."""

    #: Documents read at a time when the full-text index or the sample postings catch up
    #: (more than one chunk behind: the catch-up says so through ``on_wait``).
    fulltext_chunk = 2000
    samples_chunk = 5000

    def __init__(
        self,
        path: str | os.PathLike = "neardup.db",
        *,
        fulltext: bool = True,
        timeout: float = 30.0,
        commit_every: float = 2.0,
    ):
        self.path = str(path)
        self.location = self.path
        self.fulltext = fulltext
        self._timeout = timeout
        self._db: sqlite3.Connection | None = None
        self._config: Config | None = None
        self._fields: tuple[str, ...] = ()
        self._field_ids: dict[str, int] = {}
        self._tokenizer_ready = False
        self._fts_copy = False  # a read-only file's full-text index, made in the temp schema
        self._postings_copy = (
            False  # a read-only file's postings with the samples, in the temp schema
        )
        self._later: frozenset[str] = frozenset()  # fields whose postings follow behind
        self._read_only = False
        #: seconds a transaction may run on over writer sessions inside :meth:`writes_in_a_row`
        self.commit_every = commit_every
        self._in_a_row = False
        self._open_since: float | None = None  # when the open transaction of writer sessions began
        self._writer: sqlite3.Connection | None = None
        self.on_wait: Callable[[str], None] | None = None  # (Engine.on_wait)

    # -- lifecycle -------------------------------------------------------------------------
    _rebuild_hint = "re-sign by indexing the source documents again into a new file (neardup index SOURCE -e new.db)"

    def open(self, config: Config | None = None, *, create: bool = True) -> Config:
        """:meth:`Engine.open`; while another process holds the file's lock (it is creating
        the index, or switching it to WAL), wait and try again, up to the connection timeout."""
        try:
            return _lock_wait(self._timeout, 1.0).call(
                functools.partial(super().open, config, create=create),
                retry_if=lambda e: isinstance(e, _Locked),
            )
        except _Locked as e:
            raise EngineError(f"{self.path}: cannot open: {e.args[0]}") from None

    # The protocol (read, create when absent, refuse another signature version, compare
    # settings) is Engine.open; these are its SQLite steps.
    def _read_config(self) -> Config | None:
        """An existing file is checked through a read-only connection first, so a file that
        is not a neardup index of this format is refused before anything is written to it;
        a file on read-only storage (the file or its folder not writable) is opened
        read-only, without switching it to WAL. A missing or empty file: None, nothing opened."""
        if (
            self.path == ":memory:"
            or not Path(self.path).exists()
            or Path(self.path).stat().st_size == 0
        ):
            return None
        folder_writable = os.access(Path(self.path).resolve().parent, os.W_OK)
        read_only = not (folder_writable and os.access(self.path, os.W_OK))
        ro_uri = _check_sqlite_file(self.path)
        try:
            peek = sqlite3.connect(ro_uri, uri=True, timeout=self._timeout)
            try:
                self._read_stored_config(peek)
            finally:
                peek.close()
        except sqlite3.DatabaseError as e:
            _raise_if_locked(e)
            raise _not_an_index(self.path, e) from None
        self._connect(ro_uri if read_only else None, new=False)
        return self._read_stored_config()

    def _create_index(self, config: Config) -> Config:
        """The tables and the settings, in one transaction; another process may have created
        the index since it was read: the first one wins (INSERT OR IGNORE, then read again)."""
        if self._db is None:  # no file yet (an existing one without tables is open already)
            if self.path != ":memory:" and not os.access(Path(self.path).resolve().parent, os.W_OK):
                raise EngineError(
                    f"{self.path}: cannot create an index there: the folder {Path(self.path).resolve().parent} "
                    "is not writable (read-only storage?)"
                )
            self._connect(None, new=True)
            stored = self._read_stored_config()
            if stored is not None:
                return stored
        db = self._require()
        with self._tx():
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    db.execute(stmt)
            db.execute("INSERT OR IGNORE INTO meta VALUES('format', ?)", (FORMAT,))
            db.execute("INSERT OR IGNORE INTO meta VALUES('config', ?)", (config.to_json(),))
            db.execute(
                "INSERT OR IGNORE INTO meta VALUES('fingerprint', ?)", (config.fingerprint(),)
            )
            db.execute("INSERT OR IGNORE INTO meta VALUES('fts_upto', '0')")
            db.execute("INSERT OR IGNORE INTO meta VALUES('samples_upto', '0')")
        stored = self._read_stored_config()
        if stored is None:
            raise EngineError(f"{self.path}: the index could not be created")
        return stored

    def _after_open(self, created: bool) -> None:
        self._fields = tuple(self.config.signatures)
        self._field_ids = {f: i for i, f in enumerate(self._fields)}
        self._later = frozenset(f for f in CONTAINMENT_SAMPLES if f in self._field_ids)

    def _connect(self, ro_uri: str | None, *, new: bool) -> None:
        """The connection of this engine: read-only through ``ro_uri``, else read-write in
        WAL mode (a ``new`` file gets the page size before its first write)."""
        try:
            db = (
                sqlite3.connect(ro_uri, uri=True, timeout=self._timeout, isolation_level=None)
                if ro_uri
                else sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None)
            )
        except sqlite3.Error as e:
            raise StorageError(
                storage_problem(self.path, e) or f"{self.path}: cannot open: {e}"
            ) from None
        self._db, self._read_only = db, bool(ro_uri)
        try:
            if not ro_uri:
                if new:
                    db.execute(f"PRAGMA page_size={PAGE_SIZE}")  # before the first write fixes it
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("PRAGMA journal_size_limit=67108864")
            db.execute("PRAGMA foreign_keys=OFF")
            db.execute("PRAGMA cache_size=-65536")
        except sqlite3.DatabaseError as e:
            _raise_if_locked(e)
            raise _not_an_index(self.path, e) from None

    def _read_stored_config(self, db: sqlite3.Connection | None = None) -> Config | None:
        """The stored config (None for a database without tables); refuses a database that is
        not a neardup index of this format. ``db``: another connection to read through."""
        db = db or self._require()
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if not tables:
                return None
            if "meta" not in tables or "docs" not in tables:
                raise EngineError(
                    f"{self.path} is a SQLite database but not a neardup index (tables: {', '.join(sorted(tables)) or 'none'})"
                )
            meta = dict(
                db.execute(
                    "SELECT key, value FROM meta WHERE key IN ('format', 'config')"
                ).fetchall()
            )
        except sqlite3.DatabaseError as e:
            _raise_if_locked(e)
            raise _not_an_index(self.path, e) from None
        found = meta.get("format")
        if found != FORMAT:
            raise EngineError(_format_message(self.path, found))
        return Config.from_json(meta["config"])

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
            self._tokenizer_ready = self._fts_copy = self._postings_copy = False

    def refresh(self) -> None:
        """Writes are visible at once; this folds the write-ahead log into the file and
        truncates it (best effort: skipped while another connection is reading)."""
        db = self._require()
        if self.path == ":memory:" or db.in_transaction:
            return
        try:
            db.execute("PRAGMA busy_timeout=200")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.Error:
            pass
        finally:
            db.execute(f"PRAGMA busy_timeout={int(self._timeout * 1000)}")

    def _require(self) -> sqlite3.Connection:
        if self._db is None:
            raise EngineError("engine is not open")
        return self._db

    def _tx(self):
        if self._writer is not None:  # inside a writer session: its transaction holds the lock
            return contextlib.nullcontext(self._writer)
        return _Transaction(self._require())

    @contextlib.contextmanager
    def writer(self) -> Iterator[None]:
        """One ``BEGIN IMMEDIATE`` transaction for the whole session: SQLite's write lock
        serializes neardup processes, and every read inside sees this session's writes.
        A session that has to wait for another process says so once through ``on_wait``.

        Inside :meth:`writes_in_a_row` the transaction goes on over the sessions that follow
        and is committed once ``commit_every`` seconds have passed since it began (and at the
        end): each commit writes the postings pages the sessions touched, all over the index,
        so fewer commits make a large index grow faster. Each session is a savepoint: one that
        fails is undone alone, the sessions before it are committed, then the error is raised."""
        if self._writer is not None:
            yield
            return
        db = self._require()
        if self._read_only:
            raise StorageError(
                f"{self.path} is on read-only storage (the file or its folder is not writable): {_READ_ONLY_HINT}"
            )
        if self._open_since is None:
            _Transaction(db, self.path, self.on_wait).__enter__()
            self._open_since = time.monotonic()
            db.execute(
                "CREATE INDEX IF NOT EXISTS docs_dup_of ON docs(dup_of) WHERE dup_of IS NOT NULL"
            )
        db.execute("SAVEPOINT neardup_session")
        self._writer = db
        try:
            yield
        except BaseException:
            self._writer, self._open_since = None, None
            if db.in_transaction:  # (SQLite may have rolled back itself: a full disk)
                db.execute("ROLLBACK TO neardup_session")
                db.execute("RELEASE neardup_session")
                db.execute("COMMIT")
            raise
        self._writer = None
        db.execute("RELEASE neardup_session")
        if not self._in_a_row or time.monotonic() - self._open_since >= self.commit_every:
            self._commit()

    def _commit(self) -> None:
        self._open_since = None
        self._require().execute("COMMIT")

    @contextlib.contextmanager
    def writes_in_a_row(self) -> Iterator[None]:
        """Writer sessions inside share transactions, committed every ``commit_every``
        seconds and at the end (see :meth:`writer`); a crash loses at most that much work,
        which running the same command again redoes."""
        if self._in_a_row:
            yield
            return
        self._in_a_row = True
        try:
            yield
        finally:
            self._in_a_row = False
            if self._open_since is not None and self._db is not None and self._db.in_transaction:
                self._commit()
            self._open_since = None

    # -- meta ------------------------------------------------------------------------------
    def get_meta(self, key: str) -> Any | None:
        row = (
            self._require()
            .execute("SELECT value FROM meta WHERE key = ?", ("user:" + key,))
            .fetchone()
        )
        return json.loads(row[0]) if row else None

    def put_meta(self, key: str, value: Any) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT OR REPLACE INTO meta VALUES(?, ?)",
                ("user:" + key, json.dumps(value, ensure_ascii=False)),
            )

    # -- writes ----------------------------------------------------------------------------
    def put(self, docs: Sequence[Signed], tags: dict[str, Tags] | None = None) -> list[Failure]:
        tags = tags or {}
        failures: list[Failure] = []
        now = _now_ms()
        pending: dict[
            int, dict[str, np.ndarray]
        ] = {}  # seq -> keys, their postings inserted in key order at the end
        with self._tx() as db:
            if not self._put_new(db, docs, tags, now, pending):
                for s in docs:
                    try:
                        self._put_one(db, s, tags.get(s.id), now, pending)
                    except (sqlite3.Error, ValueError, OverflowError) as e:
                        self._check_batch_alive(db, e)
                        failures.append(Failure(s.id, f"{type(e).__name__}: {e}"))
            db.executemany(
                "INSERT OR IGNORE INTO postings(key, doc) VALUES (?,?)",
                self._posting_rows(pending, self._upto(db, "samples_upto")),
            )
        return failures

    def _check_batch_alive(self, db: sqlite3.Connection, e: BaseException) -> None:
        """A refused row fails its document alone; but when SQLite itself rolled the batch
        back (a full disk, an I/O error: ``SQLITE_FULL``, ``SQLITE_IOERR``, ``SQLITE_CORRUPT``)
        nothing of the batch may be written one by one outside it: the batch fails whole."""
        problem = storage_problem(self.path, e)
        if problem is not None:  # the storage, not this document: the batch stops whole, said once
            raise StorageError(f"{problem}; this batch was not stored") from None
        if not db.in_transaction:
            raise StorageError(
                f"{self.path}: {e}; this batch was not stored, and what was committed before it is "
                "(is the disk full?); free space and run the same command again: it resumes"
            ) from None

    def _put_new(
        self,
        db: sqlite3.Connection,
        docs: Sequence[Signed],
        tags: dict[str, Tags],
        now: int,
        pending: dict[int, dict[str, np.ndarray]],
    ) -> bool:
        """A batch of documents none of which is stored yet, in three ``executemany``; False
        (and nothing written) when some id is already stored or a row is refused, so that
        the caller goes document by document."""
        ids = [s.doc.id for s in docs]
        for i in range(0, len(ids), 900):
            chunk = ids[i : i + 900]
            if db.execute(
                f"SELECT 1 FROM docs WHERE id IN ({','.join('?' * len(chunk))}) LIMIT 1", chunk
            ).fetchone():
                return False
        seq = self._next_seq(db)
        rows, postings = [], {}
        try:
            for s, keys in zip(docs, keys_columns(self._fields, docs), strict=True):
                rows.append((seq, *self._doc_row(s, tags.get(s.id), now, keys)))
                postings[seq] = s.keys
                seq += 1
            db.execute("SAVEPOINT put_new")
            try:
                db.executemany(
                    f"INSERT INTO docs(seq, {_INSERT_COLUMNS}) VALUES (?,{_INSERT_MARKS})", rows
                )
            except BaseException:
                db.execute("ROLLBACK TO put_new")
                raise
            finally:
                db.execute("RELEASE put_new")
        except (sqlite3.Error, ValueError, OverflowError) as e:
            self._check_batch_alive(db, e)
            return False
        pending.update(postings)
        return True

    def key_encoder(self) -> functools.partial:
        """The keys column of each document (:func:`encode_keys` with this index's fields)."""
        return functools.partial(encode_keys, self._fields)

    def _doc_row(self, s: Signed, t: Tags | None, now: int, keys: bytes | None = None) -> tuple:
        """The ``docs`` row of a document (``_INSERT_COLUMNS``); ``keys``: its keys column, if made."""
        d = s.doc
        shingles = np.ascontiguousarray(s.shingles, dtype="<u8")
        exact = _exact_value(s.exact)
        keys = keys_column(self._fields, s) if keys is None else keys
        return (
            d.id,
            s.lang,
            s.n_tokens,
            s.n_shingles,
            int(s.too_short),
            _signed64(s.simhash),
            _own_cluster(t.cluster_id, d.id) if t else None,
            t.dup_of if t else None,
            t.max_resemblance if t else None,
            (1 if t.is_duplicate else 0) if t else None,
            now,
            exact,
            json.dumps(d.fields, ensure_ascii=False) if d.fields else None,
            shingles.tobytes(),
            keys,
            d.title,
            d.text,
        )

    def _posting_rows(
        self, pending: dict[int, dict[str, np.ndarray]], upto: int
    ) -> Iterable[tuple[int, int]]:
        """(key, doc) rows of ``pending`` (seq -> keys) in key order, one field at a time in
        numpy; the sample fields only of documents at or below ``upto`` (``samples_upto``)."""
        keys, docs = [], []
        for f, fid in self._field_ids.items():
            seqs = [
                q for q, ks in pending.items() if f in ks and (q <= upto or f not in self._later)
            ]
            if seqs:
                parts = [pending[q][f].ravel() for q in seqs]
                keys.append(posting_array(fid, np.concatenate(parts)))
                docs.append(np.repeat(np.array(seqs, dtype=np.int64), [len(x) for x in parts]))
        if not keys:
            return iter(())
        k, d = np.concatenate(keys), np.concatenate(docs)
        order = np.lexsort((d, k))
        return zip(k[order].tolist(), d[order].tolist(), strict=True)

    def _keys_of(
        self, blob: bytes, shingles: np.ndarray, exact: bytes | str
    ) -> dict[str, np.ndarray]:
        """A stored document's keys (:func:`~neardup.encoding.unpack_keys` of its keys column)."""
        try:
            return unpack_keys(self._fields, blob, shingles, exact)
        except (ValueError, IndexError) as e:
            raise EngineError(
                f"{self.path}: {e}; the index is damaged: index the documents again into a new one"
            ) from None

    def _put_one(
        self,
        db: sqlite3.Connection,
        s: Signed,
        t: Tags | None,
        now: int,
        pending: dict[int, dict[str, np.ndarray]],
    ) -> None:
        d = s.doc
        old = db.execute(
            "SELECT seq, title, body, keys, shingles, exact FROM docs WHERE id = ?", (d.id,)
        ).fetchone()
        row = self._doc_row(s, t, now)
        if old is None:
            seq = self._next_seq(db)
            db.execute(
                f"INSERT INTO docs(seq, {_INSERT_COLUMNS}) VALUES (?,{_INSERT_MARKS})", (seq, *row)
            )
        else:
            seq, old_title, old_body, old_keys, old_shingles, old_exact = old
            self._delete_postings(db, seq, old_keys, old_shingles, old_exact, pending)
            in_fts = self.fulltext and seq <= self._upto(db, "fts_upto")
            if in_fts:
                db.execute(
                    "INSERT INTO fts(fts, rowid, title, body) VALUES('delete', ?, ?, ?)",
                    (seq, search_text(old_title), search_text(old_body)),
                )
            db.execute(
                "UPDATE docs SET id=?, lang=?, n_tokens=?, n_shingles=?, too_short=?, simhash=?, cluster_id=?, dup_of=?, max_resemblance=?, "
                "is_duplicate=?, indexed_at=?, exact=?, fields=?, shingles=?, keys=?, title=?, body=? WHERE seq=?",
                (*row, seq),
            )
            if in_fts:
                db.execute(
                    "INSERT INTO fts(rowid, title, body) VALUES (?,?,?)",
                    (seq, search_text(d.title), search_text(d.text)),
                )
        pending[seq] = s.keys

    def _next_seq(self, db: sqlite3.Connection) -> int:
        """The ``seq`` of the next new document: after every stored one and after ``fts_upto``
        (a deleted last document's ``seq`` is not given again while the full-text index
        counts it as indexed)."""
        top = db.execute("SELECT max(seq) FROM docs").fetchone()[0] or 0
        return max(top, self._upto(db, "fts_upto")) + 1

    def _upto(self, db: sqlite3.Connection, key: str) -> int:
        """``meta.fts_upto`` or ``meta.samples_upto``: the ``seq`` up to which the full-text
        index, or the postings of the sample fields, hold every document; an index made
        before the key was kept holds them all."""
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        if row is not None:
            return int(row[0])
        return db.execute("SELECT coalesce(max(seq), 0) FROM docs").fetchone()[0]

    def _delete_postings(
        self,
        db: sqlite3.Connection,
        seq: int,
        blob: bytes,
        shingles: bytes,
        exact: bytes | str,
        pending: dict[int, dict[str, np.ndarray]] | None = None,
    ) -> None:
        if pending is not None:
            pending.pop(seq, None)  # stored earlier in this batch: not in the table yet
        keys = self._keys_of(blob, np.frombuffer(shingles, dtype="<u8").astype(U64), exact)
        db.executemany(
            "DELETE FROM postings WHERE key=? AND doc=?", self._posting_rows({seq: keys}, UNBOUNDED)
        )

    def delete(self, ids: Iterable[str]) -> int:
        n = 0
        with self._tx() as db:
            for i in ids:
                row = db.execute(
                    "SELECT seq, title, body, keys, shingles, exact FROM docs WHERE id=?", (i,)
                ).fetchone()
                if row is None:
                    continue
                seq, title, body, keys, shingles, exact = row
                self._delete_postings(db, seq, keys, shingles, exact)
                if self.fulltext and seq <= self._upto(db, "fts_upto"):
                    db.execute(
                        "INSERT INTO fts(fts, rowid, title, body) VALUES('delete', ?, ?, ?)",
                        (seq, search_text(title), search_text(body)),
                    )
                db.execute("DELETE FROM docs WHERE seq=?", (seq,))
                n += 1
        return n

    def update_tags(self, tags: dict[str, Tags]) -> None:
        with self._tx() as db:
            db.executemany(
                "UPDATE docs SET cluster_id=?, dup_of=?, max_resemblance=?, is_duplicate=? WHERE id=?",
                (
                    (
                        _own_cluster(t.cluster_id, i),
                        t.dup_of,
                        t.max_resemblance,
                        int(t.is_duplicate),
                        i,
                    )
                    for i, t in tags.items()
                ),
            )

    # -- reads -----------------------------------------------------------------------------
    def candidates(self, queries: Sequence[CandidateQuery]) -> list[list[Candidate]]:
        table = self._postings_table({g.field for q in queries for g in q.groups})
        if len(queries) < 8:
            return [self._candidates(q, table) for q in queries]
        return self._candidates_many(queries, table)

    def _candidates_many(
        self, queries: Sequence[CandidateQuery], table: str = "postings"
    ) -> list[list[Candidate]]:
        """:meth:`_candidates` of many queries: the postings of all their keys read in one
        statement (each distinct key once, in key order), then matched to the key groups,
        counted and ranked with numpy (:func:`matched_documents`); the columns of the
        documents found read once, and filtered."""
        db = self._require()
        groups = [(qi, g) for qi, q in enumerate(queries) for g in q.groups if self._matchable(g)]
        out: list[list[Candidate]] = [[] for _ in queries]
        if not groups:
            return out
        keys, key_group = self._group_posting_keys([g for _, g in groups])
        found = db.execute(
            f"SELECT group_concat(key || ' ' || doc, ' ') FROM {table} WHERE key IN (SELECT value FROM json_each(?))",
            (json.dumps(np.unique(keys).tolist()),),
        ).fetchone()[0]  # (one string: a row apiece costs twice the lookups)
        hits = np.fromstring(found or "", dtype=np.int64, sep=" ").reshape(-1, 2)
        group_query = np.array([qi for qi, _ in groups], dtype=np.int64)
        need = np.array([max(1, g.min_match) for _, g in groups], dtype=np.int64)
        field_names = sorted({g.field for _, g in groups})
        group_field = np.array([field_names.index(g.field) for _, g in groups], dtype=np.int64)
        after = np.array([q.after_seq or 0 for q in queries], dtype=np.int64)
        before = np.array(
            [UNBOUNDED if q.before_seq is None else q.before_seq for q in queries], dtype=np.int64
        )
        q_of, doc, score, fields = matched_documents(
            keys, key_group, hits[:, 0], hits[:, 1], group_query, need, group_field, after, before
        )
        if not len(doc):
            return out
        rows = {
            r[0]: r[1:]
            for r in db.execute(
                f"SELECT d.seq, d.id, d.n_shingles, d.simhash, {_CLUSTER}, d.is_duplicate FROM docs d WHERE d.seq IN (SELECT value FROM json_each(?))",
                (json.dumps(np.unique(doc).tolist()),),
            )
        }
        names = [
            frozenset(f for b, f in enumerate(field_names) if m >> b & 1)
            for m in range(1 << len(field_names))
        ]
        for qi, d, sc, fs in zip(
            q_of.tolist(), doc.tolist(), score.tolist(), fields.tolist(), strict=True
        ):
            q = queries[qi]
            row = rows.get(d)
            if row is None or len(out[qi]) >= q.limit:
                continue
            i, n, sh, cid, is_dup = row
            if (
                q.min_shingles <= n <= min(q.max_shingles, UNBOUNDED)
                and i != (q.exclude_id or "")
                and (not q.representatives or is_dup == 0)
            ):
                out[qi].append(
                    Candidate(
                        id=i,
                        n_shingles=n,
                        simhash=sh & 0xFFFFFFFFFFFFFFFF,
                        score=float(sc),
                        cluster_id=cid,
                        matched=names[fs],
                        seq=d,
                    )
                )
        return out

    def _group_posting_keys(self, groups: Sequence[KeyGroup]) -> tuple[np.ndarray, np.ndarray]:
        """The posting keys of each key group (:func:`~neardup.encoding.posting_array`), all
        in one array (those of a field made together), and the group each came from."""
        by_field: dict[str, list[int]] = {}
        for i, g in enumerate(groups):
            by_field.setdefault(g.field, []).append(i)
        keys, owner = [], []
        for f, at in by_field.items():
            values, offsets = join([groups[i].keys for i in at])
            keys.append(posting_array(self._field_ids[f], values))
            owner.append(np.repeat(np.array(at, dtype=np.int64), np.diff(offsets)))
        return np.concatenate(keys), np.concatenate(owner)

    def _matchable(self, g: KeyGroup) -> bool:
        """A key group this index can match: a field it stores, and some keys."""
        return g.field in self._field_ids and len(g.keys) > 0

    def _posting_jsons(self, groups: Sequence[KeyGroup]) -> list[str]:
        """The :func:`posting_jsons` of each key group, those of a field made together."""
        out: list[str] = [""] * len(groups)
        by_field: dict[str, list[int]] = {}
        for i, g in enumerate(groups):
            by_field.setdefault(g.field, []).append(i)
        for f, at in by_field.items():
            for i, made in zip(
                at,
                posting_jsons(self._field_ids[f], *join([groups[i].keys for i in at])),
                strict=True,
            ):
                out[i] = made
        return out

    def _candidates(self, q: CandidateQuery, table: str = "postings") -> list[Candidate]:
        db = self._require()
        parts, params = [], []
        groups = list(filter(self._matchable, q.groups))
        for g, keys in zip(groups, self._posting_jsons(groups), strict=True):
            parts.append(
                f"SELECT doc, COUNT(*) AS c, ? AS f FROM {table} WHERE key IN (SELECT value FROM json_each(?)) "
                "AND doc > ? AND doc < ? GROUP BY doc HAVING COUNT(*) >= ?"
            )
            params += [
                g.field,
                keys,
                q.after_seq or 0,
                UNBOUNDED if q.before_seq is None else q.before_seq,
                max(1, g.min_match),
            ]
        if not parts:
            return []
        reps = "AND d.is_duplicate = 0 " if q.representatives else ""
        sql = (
            f"WITH m(doc, c, f) AS ({' UNION ALL '.join(parts)}) "
            f"SELECT d.id, d.n_shingles, d.simhash, {_CLUSTER}, SUM(m.c), group_concat(m.f), d.seq FROM m JOIN docs d ON d.seq = m.doc "
            f"WHERE d.n_shingles BETWEEN ? AND ? AND d.id != ? {reps}GROUP BY d.seq ORDER BY SUM(m.c) DESC, d.seq LIMIT ?"
        )
        params += [q.min_shingles, min(q.max_shingles, UNBOUNDED), q.exclude_id or "", q.limit]
        return [
            Candidate(
                id=i,
                n_shingles=n,
                simhash=sh & 0xFFFFFFFFFFFFFFFF,
                score=float(score),
                cluster_id=cid,
                matched=frozenset(fs.split(",")),
                seq=seq,
            )
            for i, n, sh, cid, score, fs, seq in db.execute(sql, params)
        ]

    def get(
        self, ids: Iterable[str], *, text: bool = False, keys: bool = True
    ) -> dict[str, StoredDoc]:
        db = self._require()
        ids = list(dict.fromkeys(ids))
        out: dict[str, StoredDoc] = {}
        cols = _DOC_COLUMNS + (", body" if text else "")
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            for row in db.execute(
                f"SELECT {cols} FROM docs WHERE id IN ({','.join('?' * len(chunk))})", chunk
            ):
                d = self._row(row, text, keys)
                out[d.id] = d
        return out

    def _row(self, row: tuple, text: bool, keys: bool = True) -> StoredDoc:
        (
            seq,
            id_,
            lang,
            n_sh,
            simhash,
            cid,
            dup,
            maxr,
            isdup,
            at,
            exact,
            fields,
            shingles,
            blob,
            title,
            short,
        ) = row[:16]
        tags = (
            Tags(id_ if cid is None else cid, dup, maxr or 0.0, bool(isdup))
            if isdup is not None
            else None
        )
        sh = np.frombuffer(shingles, dtype="<u8").astype(U64)
        return StoredDoc(
            id=id_,
            lang=lang,
            n_shingles=n_sh,
            shingles=sh,
            simhash=simhash & 0xFFFFFFFFFFFFFFFF,
            exact=_exact_text(exact),
            keys=self._keys_of(blob, sh, exact) if keys else {},
            tags=tags,
            title=title,
            text=row[16] if text else None,
            fields=json.loads(fields) if fields else {},
            indexed_at=_iso(at),
            seq=seq,
            too_short=bool(short),
        )

    def scan(self, *, text: bool = False, batch_size: int = 1000) -> Iterator[StoredDoc]:
        db = self._require()
        cols = _DOC_COLUMNS + (", body" if text else "")
        last = 0
        while True:
            rows = db.execute(
                f"SELECT {cols} FROM docs WHERE seq > ? ORDER BY seq LIMIT ?", (last, batch_size)
            ).fetchall()
            if not rows:
                return
            for row in rows:
                yield self._row(row, text)
            last = rows[-1][0]

    def scan_tags(self, *, batch_size: int = 5000) -> Iterator[TagRow]:
        db = self._require()
        last = 0
        while True:
            rows = db.execute(
                "SELECT seq, id, cluster_id, dup_of, max_resemblance, is_duplicate, title, lang, indexed_at FROM docs "
                "WHERE seq > ? ORDER BY seq LIMIT ?",
                (last, batch_size),
            ).fetchall()
            if not rows:
                return
            for seq, id_, cid, dup, maxr, isdup, title, lang, at in rows:
                tags = (
                    Tags(id_ if cid is None else cid, dup, maxr or 0.0, bool(isdup))
                    if isdup is not None
                    else None
                )
                yield TagRow(id_, seq, tags, title, lang, _iso(at))
            last = rows[-1][0]

    def members(self, representatives: Iterable[str]) -> dict[str, list[str]]:
        db = self._require()
        reps = list(dict.fromkeys(representatives))
        out: dict[str, list[str]] = {}
        for i in range(0, len(reps), 500):
            chunk = reps[i : i + 500]
            for dup, id_ in db.execute(
                f"SELECT dup_of, id FROM docs WHERE dup_of IN ({','.join('?' * len(chunk))}) ORDER BY seq",
                chunk,
            ):
                out.setdefault(dup, []).append(id_)
        return out

    def count(self) -> int:
        return self._require().execute("SELECT COUNT(*) FROM docs").fetchone()[0]

    def collisions(self, fields: Sequence[str] = ("minhash",)) -> Iterator[list[str]]:
        db = self._require()
        for f in fields:
            if f not in self._field_ids:
                continue
            table = self._postings_table({f})
            lo = self._field_ids[f] << KEY_BITS
            # the shared keys first (a count over the key order, no join), then their documents
            cur = db.execute(
                f"SELECT (SELECT group_concat(d.id, char(31)) FROM {table} p JOIN docs d ON d.seq = p.doc WHERE p.key = k.key) "
                f"FROM (SELECT key FROM {table} WHERE key BETWEEN ? AND ? GROUP BY key HAVING COUNT(*) > 1) k",
                (lo, lo | KEY_MASK),
            )
            for (ids,) in cur:
                yield ids.split("\x1f")

    def samples_behind(self) -> int:
        """Documents whose sample postings (winnowing, MOD_m) are not in ``postings`` yet
        (the next containment query adds them); 0 when the index has no sample field."""
        return self._behind("samples_upto") if self._later else 0

    def _postings_table(self, fields: Iterable[str]) -> str:
        """The postings table to match ``fields`` in, with every document's keys in it:
        ``postings`` after adding the sample postings of the documents that follow
        ``samples_upto`` (when ``fields`` has a sample field); on a read-only file with some
        behind, a copy in this connection's temporary schema with them added (made once)."""
        if self._postings_copy:
            return "temp.nd_postings"
        if not self._later.intersection(fields) or not self.samples_behind():
            return "postings"
        if self._read_only:
            db = self._require()
            db.execute(
                "CREATE TEMP TABLE nd_postings(key INTEGER NOT NULL, doc INTEGER NOT NULL, PRIMARY KEY(key, doc)) WITHOUT ROWID"
            )
            db.execute("INSERT INTO temp.nd_postings SELECT key, doc FROM postings")
            self._add_samples(db, "temp.nd_postings", self._upto(db, "samples_upto"))
            self._postings_copy = True
            return "temp.nd_postings"
        self._catch_up("samples_upto", lambda db, upto: self._add_samples(db, "postings", upto))
        return "postings"

    def _add_samples(self, db: sqlite3.Connection, table: str, after: int) -> None:
        """The sample postings of every document after ``seq`` ``after``, into ``table``."""
        what = "containment samples to the postings"
        for rows in self._rows_after(
            db,
            "keys, shingles, exact",
            after,
            self.samples_chunk,
            what,
            "the first containment query",
        ):
            pending = {}
            for seq, blob, shingles, exact in rows:
                keys = self._keys_of(blob, np.frombuffer(shingles, dtype="<u8").astype(U64), exact)
                pending[seq] = {f: ks for f, ks in keys.items() if f in self._later}
            db.executemany(
                f"INSERT OR IGNORE INTO {table}(key, doc) VALUES (?,?)",
                self._posting_rows(pending, UNBOUNDED),
            )

    # -- what follows behind indexing: the full-text index and the sample postings ----------------
    def _behind(self, key: str) -> int:
        """Documents after ``meta.<key>`` (``fts_upto``, ``samples_upto``)."""
        db = self._require()
        return db.execute(
            "SELECT COUNT(*) FROM docs WHERE seq > ?", (self._upto(db, key),)
        ).fetchone()[0]

    def _catch_up(self, key: str, add: Any) -> None:
        """``add(db, upto)`` the documents after ``meta.<key>`` and move it to the last one, in
        one write transaction (another process may have done it meanwhile: ``key`` is read
        again inside)."""
        with self._tx() as db:
            top = db.execute("SELECT coalesce(max(seq), 0) FROM docs").fetchone()[0]
            upto = self._upto(db, key)
            add(db, upto)
            db.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (key, str(max(top, upto))))

    def _rows_after(
        self, db: sqlite3.Connection, columns: str, after: int, chunk: int, what: str, when: str
    ) -> Iterator[list[tuple]]:
        """``(seq, columns...)`` of the documents after ``seq`` ``after``, ``chunk`` rows at a
        time; says "adding N documents' <what> (once, for <when> after indexing)" when many."""
        behind = db.execute("SELECT COUNT(*) FROM docs WHERE seq > ?", (after,)).fetchone()[0]
        if behind > chunk and self.on_wait is not None:
            self.on_wait(
                f"adding {behind:,} documents' {what} of {self.path} (once, for {when} after indexing)"
            )
        while True:
            rows = db.execute(
                f"SELECT seq, {columns} FROM docs WHERE seq > ? ORDER BY seq LIMIT ?",
                (after, chunk),
            ).fetchall()
            if not rows:
                return
            yield rows
            after = rows[-1][0]

    def search(self, query: str | dict, size: int = 10) -> list[Hit]:
        if not isinstance(query, str):
            raise EngineError("the embedded engine takes words, not a query-DSL body")
        if not self.fulltext:
            raise EngineError(f"{self.path} was opened without full-text search")
        terms = self._tokens(search_text(query))
        match = _fts_query(terms)
        if not match:
            return []
        table = self._fulltext_table()
        # The index holds search_text, the content table the raw text: FTS5's snippet() would
        # tokenize the raw text against the index's positions, so the snippet is made here.
        rows = (
            self._require()
            .execute(
                f"SELECT d.id, bm25({table}) AS score, d.title, d.body, {_CLUSTER} "
                f"FROM {table} JOIN docs d ON d.seq = {table}.rowid WHERE {table} MATCH ? ORDER BY score LIMIT ?",
                (match, size),
            )
            .fetchall()
        )
        return [
            Hit(i, -score, title, snippet(body, terms), cid) for i, score, title, body, cid in rows
        ]

    def fulltext_behind(self) -> int:
        """Documents not in the full-text index yet (the next search adds them)."""
        return self._behind("fts_upto")

    def _fulltext_table(self) -> str:
        """The full-text table to search, with every document in it: ``fts`` after adding
        the documents that follow ``fts_upto``; on a read-only file with some behind, a copy
        of the whole index in this connection's temporary schema (made once)."""
        if self._fts_copy:
            return "fts_all"
        stale = self._fts_scored_on_raw_text()
        if not stale and not self.fulltext_behind():
            return "fts"
        if self._read_only:
            db = self._require()
            db.execute(
                f"CREATE VIRTUAL TABLE temp.fts_all USING fts5(title, body, content='', tokenize='{_TOKENIZE}', {_FTS_DETAIL})"
            )
            self._add_to_fulltext(db, "temp.fts_all", 0)
            self._fts_copy = True
            return "fts_all"
        if stale:
            with (
                self._tx() as db
            ):  # made by an earlier version: built again, from the first document
                db.execute("DROP TABLE fts")
                db.execute(
                    next(
                        stmt
                        for stmt in _SCHEMA.split(";")
                        if "VIRTUAL TABLE IF NOT EXISTS fts " in stmt
                    )
                )
                db.execute("INSERT OR REPLACE INTO meta VALUES('fts_upto', '0')")
        self._catch_up("fts_upto", lambda db, upto: self._add_to_fulltext(db, "fts", upto))
        return "fts"

    def _fts_scored_on_raw_text(self) -> bool:
        """Whether the stored full-text index keeps no positions (``detail=none``, before
        :data:`_FTS_DETAIL`), so its bm25() would count the terms in the raw text."""
        row = self._require().execute("SELECT sql FROM sqlite_master WHERE name = 'fts'").fetchone()
        return row is not None and _FTS_DETAIL not in row[0]

    def _add_to_fulltext(self, db: sqlite3.Connection, table: str, after: int) -> None:
        """:func:`search_text` of the title and body of every document after ``seq`` ``after``, into ``table``."""
        for rows in self._rows_after(
            db,
            "title, body",
            after,
            self.fulltext_chunk,
            "words to the full-text index",
            "the first search",
        ):
            db.executemany(
                f"INSERT INTO {table}(rowid, title, body) VALUES (?,?,?)",
                [(seq, search_text(title), search_text(body)) for seq, title, body in rows],
            )

    def _tokens(self, words: str) -> list[str]:
        """``words`` split into terms by the full-text tokenizer itself (an FTS5 table in the
        connection's temp schema and its fts5vocab view), so every term is one token."""
        db = self._require()
        if not self._tokenizer_ready:
            db.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.neardup_q USING fts5(q, tokenize='{_TOKENIZE}')"
            )
            db.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.neardup_q_terms USING fts5vocab('temp', 'neardup_q', 'instance')"
            )
            self._tokenizer_ready = True
        db.execute("DELETE FROM temp.neardup_q")
        db.execute("INSERT INTO temp.neardup_q(rowid, q) VALUES (1, ?)", (words,))
        terms = [t for (t,) in db.execute("SELECT term FROM temp.neardup_q_terms ORDER BY offset")]
        db.execute("DELETE FROM temp.neardup_q")
        return terms

    # -- clusters --------------------------------------------------------------------------
    def write_clusters(self, clusters: Sequence[ClusterRecord]) -> None:
        now = _now()
        with self._tx() as db:
            db.execute("DELETE FROM clusters")
            db.executemany(
                "INSERT INTO clusters VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    (
                        c.cluster_id,
                        c.size,
                        c.representative_id,
                        c.representative_title,
                        json.dumps(c.members, ensure_ascii=False),
                        c.min_resemblance,
                        c.mean_resemblance,
                        c.max_resemblance,
                        json.dumps(c.languages),
                        c.first_seen,
                        c.last_seen,
                        now,
                    )
                    for c in clusters
                ),
            )

    def read_clusters(self, limit: int | None = None) -> list[ClusterRecord]:
        names = [f.name for f in dataclasses.fields(ClusterRecord)]
        rows = (
            self._require()
            .execute(
                f"SELECT {', '.join(names)} FROM clusters ORDER BY size DESC, cluster_id LIMIT ?",
                (-1 if limit is None else limit,),
            )
            .fetchall()
        )
        out = []
        for r in rows:  # (rows decoded by name)
            c = dict(zip(names, r, strict=True))
            out.append(
                ClusterRecord(
                    **{
                        **c,
                        "members": json.loads(c["members"]),
                        "languages": json.loads(c["languages"] or "[]"),
                    }
                )
            )
        return out


#: SQLite's primary result codes (https://sqlite.org/rescode.html) -> the kind of failure.
_FAILURES = {
    3: "read-only",
    5: "busy",
    6: "busy",
    8: "read-only",
    10: "io",
    11: "damaged",
    13: "full",
    14: "cannot-open",
    26: "damaged",
}
#: SQLite's message of each of those codes (``sqlite3_errstr``): the code where Python has
#: no ``sqlite_errorcode`` (before 3.11).
_ERRSTR = {
    "database is locked": 5,
    "database table is locked": 6,
    "attempt to write a readonly database": 8,
    "disk I/O error": 10,
    "database disk image is malformed": 11,
    "database or disk is full": 13,
    "unable to open database file": 14,
    "file is not a database": 26,
    "access permission denied": 3,
}


def sqlite_failure(e: BaseException) -> str | None:
    """The kind of a SQLite failure, by its result code: "busy" (another connection holds
    the lock), "read-only", "full" (disk or quota), "io", "damaged" (not a database, or a
    malformed one), "cannot-open", "rolled-back" (a COMMIT after SQLite rolled the
    transaction back itself, on a full disk or an I/O error) or "other"; None where ``e`` is
    no ``sqlite3.Error``. The one place SQLite errors are told apart.

    >>> db = sqlite3.connect(":memory:", isolation_level=None)
    >>> try:
    ...     db.execute("COMMIT")
    ... except sqlite3.Error as e:
    ...     sqlite_failure(e)
    'rolled-back'
    """
    if not isinstance(e, sqlite3.Error):
        return None
    code = getattr(e, "sqlite_errorcode", None)
    if code is None:
        code = next((c for text, c in _ERRSTR.items() if str(e).startswith(text)), None)
    kind = _FAILURES.get(code & 0xFF) if code is not None else None
    if kind is None and "no transaction is active" in str(
        e
    ):  # (Python's message: SQLite's own code is a plain SQLITE_ERROR)
        return "rolled-back"
    return kind or "other"


def _lock_wait(seconds: float, maximum: float) -> Backoff:
    """The retry policy while another process holds a SQLite file's lock: from 50 ms,
    doubling up to ``maximum``, for ``seconds`` in all."""
    return Backoff(max_retries=None, initial=0.05, maximum=maximum, deadline=seconds)


_READ_ONLY_HINT = "it can be read (query, search, info, show, export, clusters --no-write, report) but not written"
_KEPT_HINT = (
    "what was committed before is kept (whole batches only); make room and run the same command again: documents "
    "are upserted by id, so nothing is stored twice"
)


def storage_problem(path: str, e: BaseException) -> str | None:
    """What a SQLite error says about the storage of ``path`` (one line: what is kept and
    what to do), by its kind (:func:`sqlite_failure`), or None when it is about the data (a
    row refused, a query): a full disk or read-only storage is never called a damaged index.

    >>> storage_problem("x.db", sqlite3.OperationalError("attempt to write a readonly database")).split(":")[0]
    'x.db is on read-only storage (attempt to write a readonly database)'
    """
    kind = sqlite_failure(e)
    if kind == "full":
        return f"{path}: the disk is full ({e}): {_KEPT_HINT}"
    if kind in ("io", "rolled-back"):
        return f"{path}: disk I/O error ({e}): the disk may be full or failing: {_KEPT_HINT}"
    if kind == "read-only":
        return f"{path} is on read-only storage ({e}): {_READ_ONLY_HINT}"
    if kind == "busy":
        return (
            f"{path} is busy ({e}): another process is writing it; run again when it has finished"
        )
    if kind == "cannot-open":
        return f"{path}: cannot open ({e}): is its folder there and readable?"
    if kind == "damaged":
        return f"{path} may be damaged, or is not a neardup index ({e})"
    return None


class StorageError(EngineError):
    """The storage of the index failed (full, read-only, failing, busy, damaged), not one
    document: the whole operation stops with one message."""


def _not_an_index(path: str, e: sqlite3.Error) -> EngineError:
    """The error for a database that could not be read as a neardup index: named for the
    storage problem when it is one."""
    problem = storage_problem(path, e)
    return StorageError(problem) if problem else EngineError(f"{path} is not a neardup index ({e})")


class _Locked(EngineError):
    """The file is locked by another process for now (it may be creating the index)."""


def _raise_if_locked(e: sqlite3.DatabaseError) -> None:
    if sqlite_failure(e) == "busy":
        raise _Locked(str(e)) from None


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on error.

    While another process holds the write lock it waits (SQLite's busy timeout, then a
    backoff up to ``wait`` seconds in all), telling ``on_wait`` once that it is waiting."""

    def __init__(
        self, db: sqlite3.Connection, path: str = "", on_wait: Any = None, wait: float = 600.0
    ):
        self.db, self.path, self.on_wait, self.wait = db, path, on_wait, wait

    def __enter__(self) -> sqlite3.Connection:
        busy_ms = self.db.execute("PRAGMA busy_timeout").fetchone()[0]
        quick = True  # a first quick try, so that a wait is announced at once

        def begin() -> sqlite3.Connection:
            try:
                if quick:
                    self.db.execute("PRAGMA busy_timeout=50")
                self.db.execute("BEGIN IMMEDIATE")
                return self.db
            finally:
                self.db.execute(f"PRAGMA busy_timeout={busy_ms}")

        def waiting(attempt: int, e: Exception) -> None:
            nonlocal quick
            if attempt == 0 and self.on_wait is not None:
                self.on_wait(
                    f"waiting for another neardup process writing {self.path} to finish its batch"
                )
            quick = False

        try:
            return _lock_wait(self.wait, 2.0).call(
                begin, retry_if=lambda e: sqlite_failure(e) == "busy", on_retry=waiting
            )
        except sqlite3.OperationalError as e:
            if sqlite_failure(e) != "busy":
                raise EngineError(f"cannot write {self.path}: {e}") from None
            raise EngineError(
                f"cannot write {self.path}: another process has held the write lock for {self.wait:.0f} s"
            ) from None

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.db.execute("COMMIT")
        elif self.db.in_transaction:  # SQLite may have rolled back itself (a full disk)
            self.db.execute("ROLLBACK")


def _check_sqlite_file(path: str) -> str:
    """Refuse ``path`` unless it starts like a SQLite database; return the URI that reads it
    without writing anything: ``mode=ro``, and ``immutable=1`` when its folder is not
    writable and it has no write-ahead log to read (SQLite could not create one)."""
    from urllib.parse import quote

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


def _format_message(path: str, found: str | None) -> str:
    prefix = FORMAT.rsplit("/", 1)[0] + "/"
    version = found[len(prefix) :] if isinstance(found, str) and found.startswith(prefix) else ""
    if version.isdigit() and int(version) < int(FORMAT[len(prefix) :]):
        return (
            f"{path} was written by an older neardup (index format {found!r}; this version reads {FORMAT!r}, "
            f"whose tables are laid out differently): re-index the documents into a new file with 'neardup index'"
        )
    if version.isdigit():
        return f"{path} was written by a newer neardup (index format {found!r}; this version reads {FORMAT!r}): upgrade neardup"
    return f"{path} is not a neardup index of this format (found {found!r}, expected {FORMAT!r})"


def _fts_query(terms: Sequence[str]) -> str:
    """Terms -> an FTS5 query: each term quoted (no operator injection), all required."""
    return " ".join('"' + t.replace('"', '""') + '"' for t in terms)
