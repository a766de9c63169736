"""The embedded engine's connection: opening (lock retries, read-only storage, the stored
settings), transactions and savepoints, and the ``meta`` keys that record what follows behind.

Every batch is a savepoint of a transaction that ``index`` commits every ``commit_every``
seconds (2) and at its end: a crash mid-ingest loses nothing committed (at most the last
seconds of work), and ingesting again upserts by id. :meth:`Connection.refresh` folds the
write-ahead log back into the file and truncates it.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from pathlib import Path
from typing import Callable, ContextManager, Iterator

from ...config import CONTAINMENT_SAMPLES, Config
from ..base import EngineError
from . import schema
from .failures import (
    READ_ONLY_HINT,
    Locked,
    StorageError,
    lock_wait,
    not_an_index,
    raise_if_locked,
    sqlite_failure,
    storage_problem,
)
from ..stored_shingles import StoredShingles

#: SQLite's page cache, KiB (``PRAGMA cache_size`` takes a negative number as KiB).
CACHE_KIB = 65536
#: Bytes of the file SQLite reads through a memory map (``PRAGMA mmap_size``) rather than
#: copying each page it misses into its page cache: a candidate lookup reads a few entries of
#: a 64 KiB page, and in an index larger than the page cache (200,000 documents of ~550
#: words) the copies made a batch's lookups twice the CPU. Asked for without bound: SQLite
#: caps it at its build's SQLITE_MAX_MMAP_SIZE (2 GB in most builds), and reads a larger
#: file's remaining pages as before. Writes go through the write-ahead log as before.
MMAP_SIZE = 1 << 40


class Transaction:
    """``with Transaction(db):`` BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on error.

    While another process holds the write lock it waits (SQLite's busy timeout, then a
    backoff up to ``wait`` seconds in all), telling ``on_wait`` once that it is waiting.

    >>> db = sqlite3.connect(":memory:", isolation_level=None)
    >>> with Transaction(db) as tx:
    ...     _ = tx.execute("CREATE TABLE t(x)")
    ...     db.in_transaction
    True
    >>> db.in_transaction
    False
    """

    def __init__(
        self,
        db: sqlite3.Connection,
        path: str = "",
        on_wait: Callable[[str], None] | None = None,
        wait: float = 600.0,
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
            return lock_wait(self.wait, 2.0).call(
                begin, retry_if=lambda e: sqlite_failure(e) == "busy", on_retry=waiting
            )
        except sqlite3.OperationalError as e:
            if sqlite_failure(e) != "busy":
                raise EngineError(f"cannot write {self.path}: {e}") from None
            raise EngineError(
                f"cannot write {self.path}: another process has held the write lock for "
                f"{self.wait:.0f} s"
            ) from None

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.db.execute("COMMIT")
        elif self.db.in_transaction:  # SQLite may have rolled back itself (a full disk)
            self.db.execute("ROLLBACK")


class Connection:
    """The SQLite connection of an embedded engine, its opening and its transactions, and
    what the open file is (its format's flags, its signature fields); every part of the
    engine (:mod:`.postings`, :mod:`.fulltext`, :mod:`.clusters`, :mod:`.engine`) holds the
    same one."""

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
        #: the signature fields of the open index, numbered as its postings number them
        self.fields: tuple[str, ...] = ()
        self.field_ids: dict[str, int] = {}
        self.later: frozenset[str] = frozenset()  # fields whose postings follow behind
        self.read_only = False
        #: why writes fail where the index was opened read-only on writable storage (full)
        self.cannot_write: str | None = None
        #: the file's format stores markers for shingles its texts make (:mod:`..stored_shingles`)
        self.shingle_markers = False
        #: the file's format puts new postings in ``recent_postings`` first (:mod:`.postings`)
        self.recent_table = False
        #: members' postings hold ``-seq`` (:mod:`.postings`; files of the current format)
        self.member_postings_apart = False
        #: the file has the narrow index candidates are filtered through (``docs_filter``)
        self.filter_index = False
        self.shingles: StoredShingles | None = None  # reads the shingles column (once open)
        #: seconds a transaction may run on over writer sessions inside :meth:`writes_in_a_row`
        self.commit_every = commit_every
        self._in_a_row = False
        #: the transaction open over writer sessions (entered, not left yet), and when it began
        self._session: contextlib.ExitStack | None = None
        self._open_since: float | None = None
        self._writer: sqlite3.Connection | None = None
        self.on_wait: Callable[[str], None] | None = None  # (Engine.on_wait)

    # -- opening ---------------------------------------------------------------------------
    def open_when_unlocked(self, open_: Callable[[], Config]) -> Config:
        """``open_()`` (:meth:`Engine.open`); while another process holds the file's lock (it
        is creating the index, or switching it to WAL), wait and try again, up to the
        connection timeout."""
        try:
            return lock_wait(self._timeout, 1.0).call(
                open_, retry_if=lambda e: isinstance(e, Locked)
            )
        except Locked as e:
            raise EngineError(f"{self.path}: cannot open: {e.args[0]}") from None

    # The protocol (read, create when absent, refuse another signature version, compare
    # settings) is Engine.open; these are its SQLite steps.
    def read_config(self) -> Config | None:
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
        ro_uri = schema.check_sqlite_file(self.path)
        try:
            self._peek(ro_uri)
        except StorageError as e:
            # a full (or failing) disk where SQLite cannot make the files of the write-ahead
            # log: with none left to read, the file alone is the whole index, read as it is
            # (``immutable``); a write then fails with this same message
            wal = Path(self.path + "-wal")
            if not folder_writable or (wal.exists() and wal.stat().st_size > 0):
                raise
            ro_uri, read_only, self.cannot_write = ro_uri + "&immutable=1", True, str(e)
            self._peek(ro_uri)
        self._connect(ro_uri if read_only else None, new=False)
        return self.read_stored_config()

    def _peek(self, ro_uri: str) -> None:
        """Read the stored config through a connection of its own to ``ro_uri``, then close
        it: refuses a file that is not a neardup index of this format."""
        try:
            peek = sqlite3.connect(ro_uri, uri=True, timeout=self._timeout)
            try:
                self.read_stored_config(peek)
            finally:
                peek.close()
        except sqlite3.DatabaseError as e:
            raise_if_locked(e)
            raise not_an_index(self.path, e) from None

    def create_index(self, config: Config) -> Config:
        """The tables and the settings, in one transaction; another process may have created
        the index since it was read: the first one wins (INSERT OR IGNORE, then read again)."""
        if self._db is None:  # no file yet (an existing one without tables is open already)
            folder = Path(self.path).resolve().parent
            if self.path != ":memory:" and not os.access(folder, os.W_OK):
                raise EngineError(
                    f"{self.path}: cannot create an index there: the folder {folder} "
                    "is not writable (read-only storage?)"
                )
            self._connect(None, new=True)
            stored = self.read_stored_config()
            if stored is not None:
                return stored
        with self.tx() as db:
            for stmt in schema.SCHEMA:
                db.execute(stmt)
            for key, value in (
                ("format", schema.FORMAT),
                ("config", config.to_json()),
                ("fingerprint", config.fingerprint()),
                ("fts_upto", "0"),
                ("samples_upto", "0"),
            ):
                db.execute("INSERT OR IGNORE INTO meta VALUES(?, ?)", (key, value))
        stored = self.read_stored_config()
        if stored is None:
            raise EngineError(f"{self.path}: the index could not be created")
        return stored

    def opened(self, config: Config) -> None:
        """What the open index's settings ``config`` make of it: its fields, numbered, those
        that follow behind, and its shingle sets."""
        self.shingles = StoredShingles(config)
        self.fields = tuple(config.signatures)
        self.field_ids = {f: i for i, f in enumerate(self.fields)}
        self.later = frozenset(f for f in CONTAINMENT_SAMPLES if f in self.field_ids)

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
        self._db, self.read_only = db, bool(ro_uri)
        try:
            if not ro_uri:
                if new:  # before the first write fixes it
                    db.execute(f"PRAGMA page_size={schema.PAGE_SIZE}")
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("PRAGMA journal_size_limit=67108864")
            db.execute("PRAGMA foreign_keys=OFF")
            db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
            db.execute(f"PRAGMA mmap_size={MMAP_SIZE}")
        except sqlite3.DatabaseError as e:
            raise_if_locked(e)
            raise not_an_index(self.path, e) from None

    def read_stored_config(self, db: sqlite3.Connection | None = None) -> Config | None:
        """The stored config (None for a database without tables); refuses a database that is
        not a neardup index of this format. ``db``: another connection to read through."""
        db = db or self.require()
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            self.filter_index = (
                db.execute(
                    "SELECT 1 FROM sqlite_master WHERE type='index' AND name='docs_filter'"
                ).fetchone()
                is not None
            )
            if not tables:
                return None
            if "meta" not in tables or "docs" not in tables:
                raise EngineError(
                    f"{self.path} is a SQLite database but not a neardup index "
                    f"(tables: {', '.join(sorted(tables)) or 'none'})"
                )
            meta = dict(
                db.execute(
                    "SELECT key, value FROM meta WHERE key IN ('format', 'config')"
                ).fetchall()
            )
        except sqlite3.DatabaseError as e:
            raise_if_locked(e)
            raise not_an_index(self.path, e) from None
        found = meta.get("format")
        if found not in schema.READS:
            raise EngineError(schema.format_message(self.path, found))
        self.shingle_markers = found in schema.MARKERS
        self.recent_table = found in schema.RECENT
        self.member_postings_apart = found == schema.FORMAT
        return Config.from_json(meta["config"])

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def refresh(self) -> None:
        """Writes are visible at once; this folds the write-ahead log into the file and
        truncates it (best effort: skipped while another connection is reading)."""
        db = self.require()
        if self.path == ":memory:" or db.in_transaction:
            return
        try:
            db.execute("PRAGMA busy_timeout=200")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.Error:
            pass
        finally:
            db.execute(f"PRAGMA busy_timeout={int(self._timeout * 1000)}")

    def require(self) -> sqlite3.Connection:
        if self._db is None:
            raise EngineError("engine is not open")
        return self._db

    # -- transactions ----------------------------------------------------------------------
    def tx(self) -> ContextManager[sqlite3.Connection]:
        """A write transaction, or the writer session's when inside one (it holds the lock)."""
        if self._writer is not None:
            return contextlib.nullcontext(self._writer)
        return Transaction(self.require())

    @contextlib.contextmanager
    def writer(self) -> Iterator[None]:
        """One ``BEGIN IMMEDIATE`` transaction for the whole session: SQLite's write lock
        serializes neardup processes, and every read inside sees this session's writes.
        A session that has to wait for another process says so once through ``on_wait``.

        Inside :meth:`writes_in_a_row` the transaction goes on over the sessions that follow
        and is committed once ``commit_every`` seconds have passed since it began (and at the
        end): each commit writes the pages the sessions touched (new rows, the recent
        postings, and all of ``postings`` after a merge), so fewer commits write less. Each
        session is a savepoint: one that
        fails is undone alone, the sessions before it are committed, then the error is raised."""
        if self._writer is not None:
            yield
            return
        db = self.require()
        if self.read_only:
            raise StorageError(
                self.cannot_write
                or f"{self.path} is on read-only storage (the file or its folder is not "
                f"writable): {READ_ONLY_HINT}"
            )
        if self._session is None:
            self._begin_session(db)
        db.execute("SAVEPOINT neardup_session")
        self._writer = db
        try:
            yield
        except BaseException:
            self._writer = None
            if db.in_transaction:  # (SQLite may have rolled back itself: a full disk)
                db.execute("ROLLBACK TO neardup_session")
                db.execute("RELEASE neardup_session")
                self._commit()
            else:
                self._drop_session()
            raise
        self._writer = None
        db.execute("RELEASE neardup_session")
        if not self._in_a_row or time.monotonic() - (self._open_since or 0) >= self.commit_every:
            self._commit()

    def _begin_session(self, db: sqlite3.Connection) -> None:
        """Enter the transaction that writer sessions share (left by :meth:`_commit`)."""
        session = contextlib.ExitStack()
        session.enter_context(Transaction(db, self.path, self.on_wait))
        self._session, self._open_since = session, time.monotonic()
        db.execute(
            "CREATE INDEX IF NOT EXISTS docs_dup_of ON docs(dup_of) WHERE dup_of IS NOT NULL"
        )

    def _commit(self) -> None:
        """Leave the writer sessions' transaction: COMMIT (:meth:`Transaction.__exit__`)."""
        session, self._session, self._open_since = self._session, None, None
        if session is not None:
            session.close()

    def _drop_session(self) -> None:
        """Forget a transaction SQLite has rolled back itself (nothing left to commit)."""
        if self._session is not None:
            self._session.pop_all()
        self._session, self._open_since = None, None

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
            if self._session is not None and self._db is not None and self._db.in_transaction:
                self._commit()
            else:
                self._drop_session()

    # -- meta ------------------------------------------------------------------------------
    # -- what follows behind indexing: the full-text index and the sample postings ----------
    def upto(self, db: sqlite3.Connection, key: str) -> int:
        """``meta.fts_upto`` or ``meta.samples_upto``: the ``seq`` up to which the full-text
        index, or the postings of the sample fields, hold every document; an index made
        before the key was kept holds them all."""
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        if row is not None:
            return int(row[0])
        return db.execute("SELECT coalesce(max(seq), 0) FROM docs").fetchone()[0]

    def move_upto(self, db: sqlite3.Connection, key: str, seq: int) -> None:
        """Record that ``meta.<key>`` (``fts_upto``, ``samples_upto``) holds every document up
        to ``seq`` now (inside the transaction that added them)."""
        db.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (key, str(seq)))

    def behind(self, key: str) -> int:
        """Documents after ``meta.<key>`` (``fts_upto``, ``samples_upto``)."""
        db = self.require()
        return db.execute(
            "SELECT COUNT(*) FROM docs WHERE seq > ?", (self.upto(db, key),)
        ).fetchone()[0]

    def catch_up(self, key: str, add: Callable[[sqlite3.Connection, int], None]) -> None:
        """``add(db, upto)`` the documents after ``meta.<key>`` and move it to the last one, in
        one write transaction (another process may have done it meanwhile: ``key`` is read
        again inside)."""
        with self.tx() as db:
            top = db.execute("SELECT coalesce(max(seq), 0) FROM docs").fetchone()[0]
            upto = self.upto(db, key)
            add(db, upto)
            self.move_upto(db, key, max(top, upto))

    def rows_after(
        self, db: sqlite3.Connection, columns: str, after: int, chunk: int, what: str, when: str
    ) -> Iterator[list[tuple]]:
        """``(seq, columns...)`` of the documents after ``seq`` ``after``, ``chunk`` rows at a
        time; says "adding N documents' <what> (once, for <when> after indexing)" when many."""
        behind = db.execute("SELECT COUNT(*) FROM docs WHERE seq > ?", (after,)).fetchone()[0]
        if behind > chunk and self.on_wait is not None:
            self.on_wait(
                f"adding {behind:,} documents' {what} of {self.path} "
                f"(once, for {when} after indexing)"
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
