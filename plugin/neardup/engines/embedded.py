"""The embedded engine: one SQLite file (stdlib ``sqlite3``), no server.

Tables

* ``meta(key, value)``: the format marker, the :class:`~neardup.config.Config` and
  collection context (JSON).
* ``docs``: one row per document; ``seq`` (the rowid) is the arrival order. Shingle hashes
  are stored as a little-endian uint64 BLOB, so verification never re-reads raw text.
* ``postings(field, key, doc)``: the inverted index of signature keys, a ``WITHOUT ROWID``
  b-tree on (field, key, doc): candidate retrieval is a term match inside SQLite.
* ``fts``: an FTS5 index over title and body (external content) for full-text search.
* ``clusters``: the last N-to-N clustering.

Every batch is one transaction: a crash mid-ingest loses nothing committed, and ingesting
again upserts by id.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from ..config import Config
from ..hashing import U64
from ..signer import Signed
from .base import Candidate, CandidateQuery, ClusterRecord, Engine, EngineError, Failure, Hit, StoredDoc, Tags

FORMAT = "neardup-sqlite/1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs(
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    lang TEXT,
    title TEXT,
    body TEXT,
    fields TEXT,
    n_tokens INTEGER NOT NULL,
    n_shingles INTEGER NOT NULL,
    exact TEXT NOT NULL,
    simhash INTEGER NOT NULL,
    shingles BLOB NOT NULL,
    keys BLOB NOT NULL,
    cluster_id TEXT,
    dup_of TEXT,
    max_resemblance REAL,
    is_duplicate INTEGER,
    indexed_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_cluster ON docs(cluster_id);
CREATE TABLE IF NOT EXISTS postings(
    field INTEGER NOT NULL,
    key INTEGER NOT NULL,
    doc INTEGER NOT NULL,
    PRIMARY KEY(field, key, doc)
) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    title, body, content='docs', content_rowid='seq', tokenize='unicode61 remove_diacritics 2'
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

_DOC_COLUMNS = "seq, id, lang, title, fields, n_tokens, n_shingles, exact, simhash, shingles, keys, cluster_id, dup_of, max_resemblance, is_duplicate, indexed_at"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _signed64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def pack_keys(fields: Sequence[str], keys: dict[str, np.ndarray]) -> bytes:
    """Keys of all fields as one BLOB: uint32 counts (one per field, in ``fields`` order), then the uint64 keys."""
    arrays = [np.asarray(keys.get(f, ()), dtype="<u8") for f in fields]
    counts = np.array([len(a) for a in arrays], dtype="<u4")
    return counts.tobytes() + b"".join(a.tobytes() for a in arrays)


def unpack_keys(fields: Sequence[str], blob: bytes) -> dict[str, np.ndarray]:
    n = len(fields)
    counts = np.frombuffer(blob, dtype="<u4", count=n)
    values = np.frombuffer(blob, dtype="<u8", offset=4 * n)
    out, at = {}, 0
    for f, c in zip(fields, counts):
        out[f] = values[at : at + int(c)].astype(U64)
        at += int(c)
    return out


class EmbeddedEngine(Engine):
    """Engine on a SQLite file. ``path=":memory:"`` keeps everything in memory."""

    def __init__(self, path: str | os.PathLike = "neardup.db", *, fulltext: bool = True, timeout: float = 30.0):
        self.path = str(path)
        self.location = self.path
        self.fulltext = fulltext
        self._timeout = timeout
        self._db: sqlite3.Connection | None = None
        self._config: Config | None = None
        self._fields: tuple[str, ...] = ()
        self._field_ids: dict[str, int] = {}

    # -- lifecycle -------------------------------------------------------------------------
    def open(self, config: Config | None = None, *, create: bool = True) -> Config:
        exists = self.path != ":memory:" and Path(self.path).exists() and Path(self.path).stat().st_size > 0
        if not exists and not create:
            raise EngineError(f"{self.path}: no such neardup index (run 'neardup index' to create it)")
        if exists:
            _check_sqlite_file(self.path)
        try:
            db = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None)
        except sqlite3.Error as e:
            raise EngineError(f"{self.path}: cannot open: {e}") from None
        self._db = db
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=OFF")
            stored = self._read_stored_config(exists)
        except sqlite3.DatabaseError as e:
            db.close()
            self._db = None
            raise EngineError(f"{self.path} is not a neardup index ({e})") from None
        if stored is None:
            config = config or Config()
            with self._tx():
                for stmt in _SCHEMA.split(";"):
                    if stmt.strip():
                        db.execute(stmt)
                db.execute("INSERT INTO meta VALUES('format', ?)", (FORMAT,))
                db.execute("INSERT INTO meta VALUES('config', ?)", (config.to_json(),))
                db.execute("INSERT INTO meta VALUES('fingerprint', ?)", (config.fingerprint(),))
            self._config = config
        else:
            if config is not None:
                config.check_same(stored, self.path)
            self._config = stored
        self._fields = tuple(self._config.signatures)
        self._field_ids = {f: i for i, f in enumerate(self._fields)}
        return self._config

    def _read_stored_config(self, exists: bool) -> Config | None:
        db = self._require()
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables:
            return None
        if "meta" not in tables or "docs" not in tables:
            raise EngineError(f"{self.path} is a SQLite database but not a neardup index (tables: {', '.join(sorted(tables)) or 'none'})")
        meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('format', 'config')").fetchall())
        if meta.get("format") != FORMAT:
            raise EngineError(f"{self.path} is not a neardup index of this format (found {meta.get('format')!r}, expected {FORMAT!r})")
        return Config.from_json(meta["config"])

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _require(self) -> sqlite3.Connection:
        if self._db is None:
            raise EngineError("engine is not open")
        return self._db

    def _tx(self):
        return _Transaction(self._require())

    # -- meta ------------------------------------------------------------------------------
    def get_meta(self, key: str) -> Any | None:
        row = self._require().execute("SELECT value FROM meta WHERE key = ?", ("user:" + key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put_meta(self, key: str, value: Any) -> None:
        with self._tx() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", ("user:" + key, json.dumps(value, ensure_ascii=False)))

    # -- writes ----------------------------------------------------------------------------
    def put(self, docs: Sequence[Signed], tags: dict[str, Tags] | None = None) -> list[Failure]:
        tags = tags or {}
        failures: list[Failure] = []
        now = _now()
        with self._tx() as db:
            for s in docs:
                try:
                    self._put_one(db, s, tags.get(s.id), now)
                except (sqlite3.Error, ValueError, OverflowError) as e:
                    failures.append(Failure(s.id, f"{type(e).__name__}: {e}"))
        return failures

    def _put_one(self, db: sqlite3.Connection, s: Signed, t: Tags | None, now: str) -> None:
        d = s.doc
        old = db.execute("SELECT seq, title, body, keys FROM docs WHERE id = ?", (d.id,)).fetchone()
        shingles = np.ascontiguousarray(s.shingles, dtype="<u8").tobytes()
        keys = pack_keys(self._fields, s.keys)
        row = (d.id, s.lang, d.title, d.text, json.dumps(d.fields, ensure_ascii=False) if d.fields else None, s.n_tokens,
               s.n_shingles, s.exact, _signed64(s.simhash), shingles, keys,
               t.cluster_id if t else None, t.dup_of if t else None, t.max_resemblance if t else None,
               (1 if t.is_duplicate else 0) if t else None, now)
        if old is None:
            cur = db.execute("INSERT INTO docs(id, lang, title, body, fields, n_tokens, n_shingles, exact, simhash, shingles, keys, "
                             "cluster_id, dup_of, max_resemblance, is_duplicate, indexed_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", row)
            seq = cur.lastrowid
        else:
            seq, old_title, old_body, old_keys = old
            self._delete_postings(db, seq, old_keys)
            if self.fulltext:
                db.execute("INSERT INTO fts(fts, rowid, title, body) VALUES('delete', ?, ?, ?)", (seq, old_title, old_body))
            db.execute("UPDATE docs SET id=?, lang=?, title=?, body=?, fields=?, n_tokens=?, n_shingles=?, exact=?, simhash=?, "
                       "shingles=?, keys=?, cluster_id=?, dup_of=?, max_resemblance=?, is_duplicate=?, indexed_at=? WHERE seq=?", (*row, seq))
        db.executemany("INSERT OR IGNORE INTO postings(field, key, doc) VALUES (?,?,?)",
                       ((self._field_ids[f], _signed64(int(k)), seq) for f, ks in s.keys.items() if f in self._field_ids for k in ks))
        if self.fulltext:
            db.execute("INSERT INTO fts(rowid, title, body) VALUES (?,?,?)", (seq, d.title, d.text))

    def _delete_postings(self, db: sqlite3.Connection, seq: int, blob: bytes) -> None:
        for f, ks in unpack_keys(self._fields, blob).items():
            db.executemany("DELETE FROM postings WHERE field=? AND key=? AND doc=?", ((self._field_ids[f], _signed64(int(k)), seq) for k in ks))

    def delete(self, ids: Iterable[str]) -> int:
        n = 0
        with self._tx() as db:
            for i in ids:
                row = db.execute("SELECT seq, title, body, keys FROM docs WHERE id=?", (i,)).fetchone()
                if row is None:
                    continue
                seq, title, body, keys = row
                self._delete_postings(db, seq, keys)
                if self.fulltext:
                    db.execute("INSERT INTO fts(fts, rowid, title, body) VALUES('delete', ?, ?, ?)", (seq, title, body))
                db.execute("DELETE FROM docs WHERE seq=?", (seq,))
                n += 1
        return n

    def update_tags(self, tags: dict[str, Tags]) -> None:
        with self._tx() as db:
            db.executemany("UPDATE docs SET cluster_id=?, dup_of=?, max_resemblance=?, is_duplicate=? WHERE id=?",
                           ((t.cluster_id, t.dup_of, t.max_resemblance, int(t.is_duplicate), i) for i, t in tags.items()))

    # -- reads -----------------------------------------------------------------------------
    def candidates(self, queries: Sequence[CandidateQuery]) -> list[list[Candidate]]:
        return [self._candidates(q) for q in queries]

    def _candidates(self, q: CandidateQuery) -> list[Candidate]:
        db = self._require()
        parts, params = [], []
        for g in q.groups:
            if g.field not in self._field_ids or not g.keys:
                continue
            parts.append("SELECT doc, COUNT(*) AS c, ? AS f FROM postings WHERE field = ? AND key IN (SELECT value FROM json_each(?)) "
                         "GROUP BY doc HAVING COUNT(*) >= ?")
            params += [g.field, self._field_ids[g.field], json.dumps([_signed64(int(k)) for k in g.keys]), max(1, g.min_match)]
        if not parts:
            return []
        sql = (f"WITH m(doc, c, f) AS ({' UNION ALL '.join(parts)}) "
               "SELECT d.id, d.n_shingles, d.simhash, d.cluster_id, SUM(m.c), group_concat(m.f) FROM m JOIN docs d ON d.seq = m.doc "
               "WHERE d.n_shingles BETWEEN ? AND ? AND d.id != ? GROUP BY d.seq ORDER BY SUM(m.c) DESC, d.seq LIMIT ?")
        params += [q.min_shingles, min(q.max_shingles, 2**62), q.exclude_id or "", q.limit]
        return [Candidate(i, n, sh & 0xFFFFFFFFFFFFFFFF, float(score), None, cid, frozenset(fs.split(",")))
                for i, n, sh, cid, score, fs in db.execute(sql, params)]

    def get(self, ids: Iterable[str], *, text: bool = False) -> dict[str, StoredDoc]:
        db = self._require()
        ids = list(dict.fromkeys(ids))
        out: dict[str, StoredDoc] = {}
        cols = _DOC_COLUMNS + (", body" if text else "")
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            for row in db.execute(f"SELECT {cols} FROM docs WHERE id IN ({','.join('?' * len(chunk))})", chunk):
                d = self._row(row, text)
                out[d.id] = d
        return out

    def _row(self, row: tuple, text: bool) -> StoredDoc:
        (seq, id_, lang, title, fields, _n_tokens, n_sh, exact, simhash, shingles, keys, cid, dup, maxr, isdup, at) = row[:16]
        tags = Tags(cid, dup, maxr or 0.0, bool(isdup)) if cid is not None else None
        return StoredDoc(id=id_, lang=lang, n_shingles=n_sh, shingles=np.frombuffer(shingles, dtype="<u8").astype(U64),
                         simhash=simhash & 0xFFFFFFFFFFFFFFFF, exact=exact, keys=unpack_keys(self._fields, keys), tags=tags,
                         title=title, text=row[16] if text else None, fields=json.loads(fields) if fields else {}, indexed_at=at, seq=seq)

    def scan(self, *, text: bool = False, batch_size: int = 1000) -> Iterator[StoredDoc]:
        db = self._require()
        cols = _DOC_COLUMNS + (", body" if text else "")
        last = 0
        while True:
            rows = db.execute(f"SELECT {cols} FROM docs WHERE seq > ? ORDER BY seq LIMIT ?", (last, batch_size)).fetchall()
            if not rows:
                return
            for row in rows:
                yield self._row(row, text)
            last = rows[-1][0]

    def count(self) -> int:
        return self._require().execute("SELECT COUNT(*) FROM docs").fetchone()[0]

    def collisions(self, fields: Sequence[str] = ("minhash",)) -> Iterator[list[str]]:
        db = self._require()
        for f in fields:
            if f not in self._field_ids:
                continue
            cur = db.execute("SELECT group_concat(d.id, char(31)) FROM postings p JOIN docs d ON d.seq = p.doc "
                             "WHERE p.field = ? GROUP BY p.key HAVING COUNT(*) > 1", (self._field_ids[f],))
            for (ids,) in cur:
                yield ids.split("\x1f")

    def search(self, query: str | dict, size: int = 10) -> list[Hit]:
        if not isinstance(query, str):
            raise EngineError("the embedded engine takes words, not a query-DSL body")
        if not self.fulltext:
            raise EngineError(f"{self.path} was opened without full-text search")
        match = _fts_query(query)
        if not match:
            return []
        rows = self._require().execute(
            "SELECT d.id, bm25(fts) AS score, d.title, snippet(fts, 1, '[', ']', ' … ', 16), d.cluster_id "
            "FROM fts JOIN docs d ON d.seq = fts.rowid WHERE fts MATCH ? ORDER BY score LIMIT ?", (match, size)).fetchall()
        return [Hit(i, -score, title, snip, cid) for i, score, title, snip, cid in rows]

    # -- clusters --------------------------------------------------------------------------
    def write_clusters(self, clusters: Sequence[ClusterRecord]) -> None:
        now = _now()
        with self._tx() as db:
            db.execute("DELETE FROM clusters")
            db.executemany("INSERT INTO clusters VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", (
                (c.cluster_id, c.size, c.representative_id, c.representative_title, json.dumps(c.members, ensure_ascii=False),
                 c.min_resemblance, c.mean_resemblance, c.max_resemblance, json.dumps(c.languages), c.first_seen, c.last_seen, now)
                for c in clusters))

    def read_clusters(self, limit: int | None = None) -> list[ClusterRecord]:
        rows = self._require().execute(
            "SELECT cluster_id, size, representative_id, representative_title, members, min_resemblance, mean_resemblance, "
            "max_resemblance, languages, first_seen, last_seen FROM clusters ORDER BY size DESC, cluster_id LIMIT ?",
            (-1 if limit is None else limit,)).fetchall()
        return [ClusterRecord(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6], r[7], json.loads(r[8] or "[]"), r[9], r[10]) for r in rows]


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on error (retries a locked database briefly)."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        for attempt in range(5):
            try:
                self.db.execute("BEGIN IMMEDIATE")
                return self.db
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) or attempt == 4:
                    raise EngineError(f"cannot write: {e}") from None
                time.sleep(0.2 * 2**attempt)
        raise AssertionError("unreachable")

    def __exit__(self, exc_type, exc, tb) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")


def _check_sqlite_file(path: str) -> None:
    with open(path, "rb") as f:
        head = f.read(16)
    if head != b"SQLite format 3\x00":
        raise EngineError(f"{path} is not a neardup index (not a SQLite database)")


def _fts_query(words: str) -> str:
    """User words -> an FTS5 query: each word quoted (no operator injection), all required."""
    toks = [t for t in words.replace('"', " ").split() if t]
    return " ".join(f'"{t}"' for t in toks)
