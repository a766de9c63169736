"""The embedded engine: the ``docs`` table (documents written, updated, deleted, read back by
column name) over the connection, postings, full-text and clusters parts of the package."""

from __future__ import annotations

import functools
import json
import os
import sqlite3
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Iterable, Iterator, Sequence

import numpy as np

from ...signing.records import Signed
from ...sketches.hashing import U64
from ...sketches.verify import UNBOUNDED
from ...config import Config
from ..base import (
    Candidate,
    CandidateQuery,
    Engine,
    Failure,
    Hit,
    PreparedBatch,
    SearchQuery,
    StoredDoc,
    TagRow,
    Tags,
)
from . import schema
from .clusters import Clusters
from .connection import Connection
from .failures import StorageError, storage_problem
from .fulltext import FullText
from .keycolumn import keys_column, keys_columns
from .postings import Postings
from .prepared import PreparedRows, prepare_rows
from ..stored_shingles import column

if TYPE_CHECKING:
    from ...signing.signer import Signer

#: Ids per ``IN (...)`` of a statement (SQLite's default limit of variables is 999).
_CHUNK_IDS = 500
#: The stored columns an update or a delete reads of a document.
_OLD = "SELECT seq, title, body, keys, shingles, exact, lang, n_shingles FROM docs WHERE id = ?"


def _member(t: Tags | None) -> bool:
    """Whether tags ``t`` make a document a member of a cluster (not its representative)."""
    return t is not None and t.is_duplicate


def _named(cursor: sqlite3.Cursor) -> sqlite3.Cursor:
    """``cursor`` with its rows decoded by column name (:class:`sqlite3.Row`)."""
    cursor.row_factory = sqlite3.Row
    return cursor


def _keys(prepared: PreparedBatch | None) -> PreparedBatch | None:
    """The keys columns of what :meth:`EmbeddedEngine.batch_preparer` made (as it is, when
    made otherwise)."""
    return prepared.keys if isinstance(prepared, PreparedRows) else prepared


def _tags(row: sqlite3.Row) -> Tags | None:
    """The tags of a ``docs`` row (None when the document has none yet)."""
    if row["is_duplicate"] is None:
        return None
    return Tags(
        cluster_id=row["id"] if row["cluster_id"] is None else row["cluster_id"],
        dup_of=row["dup_of"],
        max_resemblance=row["max_resemblance"] or 0.0,
        is_duplicate=bool(row["is_duplicate"]),
    )


class EmbeddedEngine(Clusters, Engine):
    """Engine on a SQLite file. ``path=":memory:"`` keeps everything in memory.

    Made of parts that each hold the one :class:`~.connection.Connection` (opening,
    transactions, what the open file is): :class:`~.postings.Postings` (the inverted index
    and candidates), :class:`~.fulltext.FullText` and :class:`~.clusters.Clusters`; the
    ``docs`` table is read and written here. ``timeout``: seconds to wait for another
    process's lock when opening; ``commit_every``: see :meth:`writes_in_a_row`;
    ``search_ready``: each batch adds its new documents to the full-text index (their words
    analyzed where they were signed, :mod:`.prepared`) and writes their winnowing postings,
    so the first search and containment query after indexing find them there, rather than
    leaving both to those (the default: ``index`` and ``clusters`` never pay for search)."""

    backend = "embedded (SQLite)"
    # -- what it holds (set by __init__; no other name can be set, Engine.__setattr__) ----------
    connection: Connection
    postings: Postings
    fulltext_index: FullText
    path: str
    fulltext: bool
    search_ready: bool
    _rebuild_hint = (
        "re-sign by indexing the source documents again into a new file "
        "(neardup index SOURCE -e new.db)"
    )

    def __init__(
        self,
        path: str | os.PathLike = "neardup.db",
        *,
        fulltext: bool = True,
        timeout: float = 30.0,
        commit_every: float = 2.0,
        search_ready: bool = False,
    ):
        self.search_ready = search_ready
        self.connection = Connection(
            path, fulltext=fulltext, timeout=timeout, commit_every=commit_every
        )
        self.path = self.connection.path
        self.location = self.path
        self.fulltext = fulltext
        self.postings = Postings(self.connection)
        self.fulltext_index = FullText(self.connection)
        #: told what the engine waits for (another process's lock, a catch-up)
        self.on_wait: Callable[[str], None] | None = None
        self.connection.on_wait = self._waits

    def _waits(self, message: str) -> None:
        """What the connection waits for, told to :attr:`on_wait` as it is now."""
        if self.on_wait is not None:
            self.on_wait(message)

    # -- opening and the connection ---------------------------------------------------------
    def open(self, config: Config | None = None, *, create: bool = True) -> Config:
        """:meth:`Engine.open`; while another process holds the file's lock (it is creating
        the index, or switching it to WAL), wait and try again, up to the connection timeout."""
        opened = self.connection.open_when_unlocked(
            functools.partial(super().open, config, create=create)
        )
        self.connection.opened(opened)
        return opened

    # The protocol (read, create when absent, refuse another signature version, compare
    # settings) is Engine.open; its SQLite steps are the connection's.
    def _read_config(self) -> Config | None:
        return self.connection.read_config()

    def _create_index(self, config: Config) -> Config:
        return self.connection.create_index(config)

    def use_signer(self, signer: Signer) -> None:
        self.connection.shingles.use(signer)

    def close(self) -> None:
        self.connection.close()
        self.postings.reset()
        self.fulltext_index.reset()

    def refresh(self) -> None:
        """Writes are visible at once; this folds the write-ahead log into the file
        (:meth:`~.connection.Connection.refresh`)."""
        self.connection.refresh()

    def writer(self) -> ContextManager[None]:
        """One transaction for the session (:meth:`~.connection.Connection.writer`)."""
        return self.connection.writer()

    def writes_in_a_row(self) -> ContextManager[None]:
        """Sessions share transactions (:meth:`~.connection.Connection.writes_in_a_row`)."""
        return self.connection.writes_in_a_row()

    def get_meta(self, key: str) -> Any | None:
        db = self.connection.require()
        row = db.execute("SELECT value FROM meta WHERE key = ?", ("user:" + key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put_meta(self, key: str, value: Any) -> None:
        """Store ``value`` (JSON) under ``key`` with the index."""
        with self.connection.tx() as db:
            db.execute(
                "INSERT OR REPLACE INTO meta VALUES(?, ?)",
                ("user:" + key, json.dumps(value, ensure_ascii=False)),
            )

    # -- the parts ---------------------------------------------------------------------------
    def candidates(self, queries: Sequence[CandidateQuery]) -> list[list[Candidate]]:
        return self.postings.candidates(queries)

    def collisions(self, fields: Sequence[str] = ("minhash",)) -> Iterator[list[str]]:
        return self.postings.collisions(fields)

    def search(self, query: SearchQuery, size: int = 10) -> list[Hit]:
        return self.fulltext_index.search(query, size)

    # -- writes ----------------------------------------------------------------------------
    def put(
        self,
        docs: Sequence[Signed],
        tags: dict[str, Tags] | None = None,
        *,
        prepared: PreparedBatch | None = None,
    ) -> list[Failure]:
        tags = tags or {}
        failures: list[Failure] = []
        now = schema.now_ms()
        # seq -> keys, their postings inserted in key order at the end
        pending: dict[int, dict[str, np.ndarray]] = {}
        fresh: list[tuple[int, Signed]] = []  # the new documents, with their seqs
        with self.connection.tx() as db:
            # search_ready: what holds every document so far takes the new ones at once
            top = db.execute("SELECT coalesce(max(seq), 0) FROM docs").fetchone()[0]
            samples_upto = self.connection.upto(db, "samples_upto")
            fts_current = (
                self.search_ready and self.fulltext and self.connection.upto(db, "fts_upto") >= top
            )
            if not self._put_new(db, docs, tags, now, pending, fresh, prepared):
                for s in docs:
                    try:
                        self._put_one(db, s, tags.get(s.id), now, pending, fresh, prepared)
                    except (sqlite3.Error, ValueError, OverflowError) as e:
                        self._check_batch_alive(db, e)
                        failures.append(Failure(s.id, f"{type(e).__name__}: {e}"))
            samples_current = self.search_ready and samples_upto >= top
            self.postings.insert_recent(
                db,
                self.postings.posting_rows(pending, UNBOUNDED if samples_current else samples_upto),
                len(pending),
            )
            if fresh:
                last = fresh[-1][0]
                if samples_current:
                    self.connection.move_upto(db, "samples_upto", last)
                if fts_current:
                    words = prepared.words if isinstance(prepared, PreparedRows) else {}
                    self.fulltext_index.add_new(db, fresh, words)
                    self.connection.move_upto(db, "fts_upto", last)
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
                f"{self.path}: {e}; this batch was not stored, and what was committed before it "
                "is (is the disk full?); free space and run the same command again: it resumes"
            ) from None

    def _any_stored(self, db: sqlite3.Connection, ids: list[str]) -> bool:
        for i in range(0, len(ids), 900):
            chunk = ids[i : i + 900]
            marks = ",".join("?" * len(chunk))
            if db.execute(f"SELECT 1 FROM docs WHERE id IN ({marks}) LIMIT 1", chunk).fetchone():
                return True
        return False

    def _put_new(
        self,
        db: sqlite3.Connection,
        docs: Sequence[Signed],
        tags: dict[str, Tags],
        now: int,
        pending: dict[int, dict[str, np.ndarray]],
        fresh: list[tuple[int, Signed]],
        prepared: PreparedBatch | None = None,
    ) -> bool:
        """A batch of documents none of which is stored yet, in three ``executemany``; False
        (and nothing written) when some id is already stored or a row is refused, so that
        the caller goes document by document. ``fresh``: (seq, document) of each one written
        is added to it. ``prepared``: as for :meth:`put`."""
        if self._any_stored(db, [s.doc.id for s in docs]):
            return False
        seq = first = self._next_seq(db)
        rows, postings = [], {}
        try:
            for s, keys in zip(
                docs, keys_columns(self.connection.fields, docs, _keys(prepared)), strict=True
            ):
                rows.append((seq, *self._doc_row(s, tags.get(s.id), now, keys)))
                postings[self.postings.posting_doc(seq, member=_member(tags.get(s.id)))] = s.keys
                seq += 1
            db.execute("SAVEPOINT put_new")
            try:
                db.executemany(schema.INSERT_DOC, rows)
            except BaseException:
                db.execute("ROLLBACK TO put_new")
                raise
            finally:
                db.execute("RELEASE put_new")
        except (sqlite3.Error, ValueError, OverflowError) as e:
            self._check_batch_alive(db, e)
            return False
        pending.update(postings)
        fresh.extend(enumerate(docs, first))
        for s in docs:
            self.postings.remember_shingles(s)
        return True

    def batch_preparer(self) -> functools.partial:
        """The keys column of each document, and its full-text words when new documents go
        to the full-text index as stored (:func:`~.prepared.prepare_rows` with this index's
        fields)."""
        return functools.partial(
            prepare_rows, self.connection.fields, self.fulltext and self.search_ready
        )

    def _doc_row(self, s: Signed, t: Tags | None, now: int, keys: bytes | None = None) -> tuple:
        """The ``docs`` row of a document (:data:`~.schema.INSERT_COLUMNS`); ``keys``: its
        keys column, if made."""
        d = s.doc
        return (
            d.id,
            s.lang,
            s.n_tokens,
            s.n_shingles,
            int(s.too_short),
            schema.signed64(s.simhash),
            schema.own_cluster(t.cluster_id, d.id) if t else None,
            t.dup_of if t else None,
            t.max_resemblance if t else None,
            (1 if t.is_duplicate else 0) if t else None,
            now,
            schema.exact_value(s.exact),
            json.dumps(d.fields, ensure_ascii=False) if d.fields else None,
            column(s)
            if self.connection.shingle_markers
            else np.ascontiguousarray(s.shingles, dtype="<u8").tobytes(),
            keys_column(self.connection.fields, s) if keys is None else keys,
            d.title,
            d.text,
        )

    def _put_one(
        self,
        db: sqlite3.Connection,
        s: Signed,
        t: Tags | None,
        now: int,
        pending: dict[int, dict[str, np.ndarray]],
        fresh: list[tuple[int, Signed]],
        prepared: PreparedBatch | None = None,
    ) -> None:
        d = s.doc
        old = _named(db.execute(_OLD, (d.id,))).fetchone()
        row = self._doc_row(
            s, t, now, keys_columns(self.connection.fields, [s], _keys(prepared))[0]
        )
        if old is None:
            seq = self._next_seq(db)
            db.execute(schema.INSERT_DOC, (seq, *row))
            fresh.append((seq, s))
        else:
            seq = old["seq"]
            self.postings.delete_postings(db, seq, old, pending)
            in_fts = self.fulltext_index.holds(db, seq)
            if in_fts:
                self.fulltext_index.delete(db, seq, old["title"], old["body"])
            db.execute(schema.UPDATE_DOC, (*row, seq))
            if in_fts:
                self.fulltext_index.insert(db, seq, d.title, d.text)
        pending[self.postings.posting_doc(seq, member=_member(t))] = s.keys
        self.postings.remember_shingles(s)

    def _next_seq(self, db: sqlite3.Connection) -> int:
        """The ``seq`` of the next new document: after every stored one and after ``fts_upto``
        (a deleted last document's ``seq`` is not given again while the full-text index
        counts it as indexed)."""
        top = db.execute("SELECT max(seq) FROM docs").fetchone()[0] or 0
        return max(top, self.connection.upto(db, "fts_upto")) + 1

    def delete(self, ids: Iterable[str]) -> int:
        n = 0
        with self.connection.tx() as db:
            for i in ids:
                row = _named(db.execute(_OLD, (i,))).fetchone()
                if row is None:
                    continue
                seq = row["seq"]
                self.postings.delete_postings(db, seq, row)
                if self.fulltext_index.holds(db, seq):
                    self.fulltext_index.delete(db, seq, row["title"], row["body"])
                db.execute("DELETE FROM docs WHERE seq=?", (seq,))
                n += 1
        return n

    def update_tags(self, tags: dict[str, Tags]) -> None:
        with self.connection.tx() as db:
            self.postings.promote(
                db, self._members_among(db, [i for i, t in tags.items() if not t.is_duplicate])
            )
            db.executemany(
                "UPDATE docs SET cluster_id=?, dup_of=?, max_resemblance=?, is_duplicate=? "
                "WHERE id=?",
                (
                    (
                        schema.own_cluster(t.cluster_id, i),
                        t.dup_of,
                        t.max_resemblance,
                        int(t.is_duplicate),
                        i,
                    )
                    for i, t in tags.items()
                ),
            )

    def _members_among(self, db: sqlite3.Connection, ids: list[str]) -> list[sqlite3.Row]:
        """The rows (:data:`_OLD`) of the documents of ``ids`` stored as members."""
        out: list[sqlite3.Row] = []
        for i in range(0, len(ids), _CHUNK_IDS):
            chunk = ids[i : i + _CHUNK_IDS]
            marks = ",".join("?" * len(chunk))
            out += _named(
                db.execute(
                    f"{_OLD[: _OLD.index(' WHERE')]} WHERE is_duplicate = 1 AND id IN ({marks})",
                    chunk,
                )
            ).fetchall()
        return out

    # -- reads -----------------------------------------------------------------------------
    def get(
        self, ids: Iterable[str], *, text: bool = False, keys: bool = True, shingles: bool = True
    ) -> dict[str, StoredDoc]:
        db = self.connection.require()
        ids = list(dict.fromkeys(ids))
        out: dict[str, StoredDoc] = {}
        cols = schema.DOC_COLUMNS + ", body"  # (the text makes the shingles of a marker)
        for i in range(0, len(ids), _CHUNK_IDS):
            chunk = ids[i : i + _CHUNK_IDS]
            marks = ",".join("?" * len(chunk))
            rows = _named(db.execute(f"SELECT {cols} FROM docs WHERE id IN ({marks})", chunk))
            for d in self._stored_many(rows.fetchall(), text, keys, shingles):
                out[d.id] = d
        return out

    def texts(self, ids: Iterable[str]) -> dict[str, str]:
        """The ``body`` column of ``ids``: no shingles made again, no keys unpacked."""
        db = self.connection.require()
        ids = list(dict.fromkeys(ids))
        out: dict[str, str] = {}
        for i in range(0, len(ids), _CHUNK_IDS):
            chunk = ids[i : i + _CHUNK_IDS]
            marks = ",".join("?" * len(chunk))
            out.update(
                db.execute(
                    f"SELECT id, body FROM docs WHERE id IN ({marks}) AND body IS NOT NULL", chunk
                )
            )
        return out

    def _stored_many(
        self, rows: Sequence[sqlite3.Row], text: bool, keys: bool = True, shingles: bool = True
    ) -> list[StoredDoc]:
        """:meth:`_stored` of ``docs`` rows (:data:`~.schema.DOC_COLUMNS` and ``body``), the
        shingles that are made again made together; ``shingles=False``: none made, and no
        keys (:meth:`get`)."""
        if not shingles:
            return [self._stored(row, np.empty(0, dtype=U64), text, False) for row in rows]
        return [
            self._stored(row, sh, text, keys)
            for row, sh in zip(rows, self.postings.shingle_sets(rows), strict=True)
        ]

    def _stored(self, row: sqlite3.Row, sh: np.ndarray, text: bool, keys: bool = True) -> StoredDoc:
        """The stored document of a ``docs`` row with its shingles ``sh``."""
        return StoredDoc(
            id=row["id"],
            lang=row["lang"],
            n_shingles=row["n_shingles"],
            shingles=sh,
            simhash=schema.unsigned64(row["simhash"]),
            exact=schema.exact_text(row["exact"]),
            keys=self.postings.keys_of(row["keys"], sh, row["exact"]) if keys else {},
            tags=_tags(row),
            title=row["title"],
            text=row["body"] if text else None,
            fields=json.loads(row["fields"]) if row["fields"] else {},
            indexed_at=schema.iso(row["indexed_at"]),
            seq=row["seq"],
            too_short=bool(row["too_short"]),
        )

    def scan(self, *, text: bool = False, batch_size: int = 1000) -> Iterator[StoredDoc]:
        db = self.connection.require()
        cols = schema.DOC_COLUMNS + ", body"
        last = 0
        while True:
            rows = _named(
                db.execute(
                    f"SELECT {cols} FROM docs WHERE seq > ? ORDER BY seq LIMIT ?",
                    (last, batch_size),
                )
            ).fetchall()
            if not rows:
                return
            yield from self._stored_many(rows, text)
            last = rows[-1]["seq"]

    def scan_tags(self, *, batch_size: int = 5000) -> Iterator[TagRow]:
        db = self.connection.require()
        last = 0
        while True:
            rows = _named(
                db.execute(
                    "SELECT seq, id, cluster_id, dup_of, max_resemblance, is_duplicate, title, "
                    "lang, indexed_at FROM docs WHERE seq > ? ORDER BY seq LIMIT ?",
                    (last, batch_size),
                )
            ).fetchall()
            if not rows:
                return
            for r in rows:
                yield TagRow(
                    id=r["id"],
                    seq=r["seq"],
                    tags=_tags(r),
                    title=r["title"],
                    lang=r["lang"],
                    indexed_at=schema.iso(r["indexed_at"]),
                )
            last = rows[-1]["seq"]

    def members(self, representatives: Iterable[str]) -> dict[str, list[str]]:
        db = self.connection.require()
        reps = list(dict.fromkeys(representatives))
        out: dict[str, list[str]] = {}
        for i in range(0, len(reps), _CHUNK_IDS):
            chunk = reps[i : i + _CHUNK_IDS]
            marks = ",".join("?" * len(chunk))
            for dup, id_ in db.execute(
                f"SELECT dup_of, id FROM docs WHERE dup_of IN ({marks}) ORDER BY seq", chunk
            ):
                out.setdefault(dup, []).append(id_)
        return out

    def count(self) -> int:
        return self.connection.require().execute("SELECT COUNT(*) FROM docs").fetchone()[0]
