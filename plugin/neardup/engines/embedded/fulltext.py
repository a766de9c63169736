"""The embedded engine's full-text index, and how it catches up with indexing.

``fts`` is an FTS5 index over title and body (external content) for full-text search. It
indexes :func:`~neardup.canonical.search_text` of them (letters unified, ZWNJ, ё, digits,
Snowball stems) and queries are analyzed the same way; bm25 ranks by the same analyzed terms
(their counts in the index: ``detail=full``) and snippets are made from the raw text in
Python. A query keeps its first :data:`~neardup.canonical.search.MAX_QUERY_TERMS` distinct
terms; a hit holds all of them, or for a long query most of them
(:func:`~neardup.canonical.search.required_terms`), ranked by bm25. An index made with
``detail=none`` (scored on the raw words) gets its full-text index rebuilt by the next search.

It follows behind: indexing documents does not analyze their text for it; the first
full-text search after new documents adds them (``meta.fts_upto``: every document up to that
``seq`` is in it, none after), so ``index`` and ``clusters`` never pay for it. An engine made
with ``search_ready`` adds each batch's new documents as it stores them instead (their words
analyzed where they were signed, :mod:`.prepared`), while nothing is behind. Documents updated
or deleted at or below ``fts_upto`` are updated in it at once. On a file opened read-only, a
search behind builds the whole full-text index in the connection's temporary schema instead
(the same index, so the same results).

>>> fts_query(['a"b', "c"]), fts_query(["a", "b"], "OR")
('"a""b" "c"', '"a" OR "b"')
"""

from __future__ import annotations

import sqlite3
from typing import Sequence

from ...signing.records import Signed
from ..base import EngineError, Hit, SearchQuery
from .connection import Connection
from .prepared import fulltext_words
from .schema import CLUSTER, FTS_DETAIL, FTS_TABLE, TOKENIZE


def fts_query(terms: Sequence[str], operator: str = "AND") -> str:
    """Terms -> an FTS5 query: each term quoted (no operator injection), all required
    (``AND``, FTS5's implicit operator) or any of them (``OR``)."""
    joiner = " " if operator == "AND" else f" {operator} "
    return joiner.join('"' + t.replace('"', '""') + '"' for t in terms)


class FullText:
    """Full-text search of the embedded engine, through the connection ``conn``."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._tokenizer_ready = False
        self._fts_copy = False  # a read-only file's full-text index, made in the temp schema

    def reset(self) -> None:
        """Forget what was made in the connection just closed (its temporary tables)."""
        self._tokenizer_ready = self._fts_copy = False

    #: Documents read at a time when the full-text index catches up (more than one chunk
    #: behind: the catch-up says so through ``on_wait``).
    fulltext_chunk = 2000

    def search(self, query: SearchQuery, size: int = 10) -> list[Hit]:
        # (imported on first use: an index opened to be read loads no canonicalization)
        from ...canonical.search import query_words, required_terms, search_text, snippet

        if not isinstance(query, str):
            raise EngineError(
                "the embedded engine takes words, not a query in an engine's own language"
            )
        if not self.conn.fulltext:
            raise EngineError(f"{self.conn.path} was opened without full-text search")
        terms = list(dict.fromkeys(self._tokens(search_text(query_words(query)))))
        if not terms:
            return []
        t = self._fulltext_table()
        need = required_terms(len(terms))
        where, args = f"{t} MATCH ?", [fts_query(terms)]
        if need < len(terms):  # most of the terms: any of them, in rows holding ``need``
            where += (
                f" AND {t}.rowid IN (SELECT rowid FROM ("
                + " UNION ALL ".join([f"SELECT rowid FROM {t} WHERE {t} MATCH ?"] * len(terms))
                + ") GROUP BY rowid HAVING count(*) >= ?)"
            )
            args = [fts_query(terms, "OR"), *(fts_query([x]) for x in terms), need]
        # The index holds search_text, the content table the raw text: FTS5's snippet() would
        # tokenize the raw text against the index's positions, so the snippet is made here.
        rows = (
            self.conn.require()
            .execute(
                f"SELECT d.id, bm25({t}) AS score, d.title, d.body, {CLUSTER} "
                f"FROM {t} JOIN docs d ON d.seq = {t}.rowid WHERE {where} "
                "ORDER BY score LIMIT ?",
                (*args, size),
            )
            .fetchall()
        )
        return [
            Hit(id=i, score=-score, title=title, snippet=snippet(body, terms), cluster_id=cid)
            for i, score, title, body, cid in rows
        ]

    def fulltext_behind(self) -> int:
        """Documents not in the full-text index yet (the next search adds them)."""
        return self.conn.behind("fts_upto")

    def _fulltext_table(self) -> str:
        """The full-text table to search, with every document in it: ``fts`` after adding
        the documents that follow ``fts_upto``; on a read-only file with some behind, a copy
        of the whole index in this connection's temporary schema (made once)."""
        if self._fts_copy:
            return "fts_all"
        stale = self._fts_scored_on_raw_text()
        if not stale and not self.fulltext_behind():
            return "fts"
        if self.conn.read_only:
            db = self.conn.require()
            db.execute(
                "CREATE VIRTUAL TABLE temp.fts_all USING fts5(title, body, content='', "
                f"tokenize='{TOKENIZE}', {FTS_DETAIL})"
            )
            self._add_to_fulltext(db, "temp.fts_all", 0)
            self._fts_copy = True
            return "fts_all"
        if stale:  # made by an earlier version: built again, from the first document
            with self.conn.tx() as db:
                db.execute("DROP TABLE fts")
                db.execute(FTS_TABLE)
                db.execute("INSERT OR REPLACE INTO meta VALUES('fts_upto', '0')")
        self.conn.catch_up("fts_upto", lambda db, upto: self._add_to_fulltext(db, "fts", upto))
        return "fts"

    def _fts_scored_on_raw_text(self) -> bool:
        """Whether the stored full-text index keeps no positions (``detail=none``, before
        :data:`~.schema.FTS_DETAIL`), so its bm25() would count the terms in the raw text."""
        row = (
            self.conn.require()
            .execute("SELECT sql FROM sqlite_master WHERE name = 'fts'")
            .fetchone()
        )
        return row is not None and FTS_DETAIL not in row[0]

    def _add_to_fulltext(self, db: sqlite3.Connection, table: str, after: int) -> None:
        """:func:`search_text` of the title and body of every document after ``seq``
        ``after``, into ``table``."""
        from ...canonical.search import search_text

        chunks = self.conn.rows_after(
            db,
            "title, body",
            after,
            self.fulltext_chunk,
            "words to the full-text index",
            "the first search",
        )
        for rows in chunks:
            db.executemany(
                f"INSERT INTO {table}(rowid, title, body) VALUES (?,?,?)",
                [(seq, search_text(title), search_text(body)) for seq, title, body in rows],
            )

    def add_new(
        self,
        db: sqlite3.Connection,
        fresh: Sequence[tuple[int, Signed]],
        words: dict[str, tuple[str, str]],
    ) -> None:
        """Add new documents ((seq, signed document) in ``seq`` order) to ``fts``: their
        (title, body) words from ``words`` (by id, :func:`~.prepared.fulltext_words`) where
        made in advance, else analyzed here."""
        todo = [s for _, s in fresh if s.id not in words]
        made = {**words, **fulltext_words(todo)} if todo else words
        db.executemany(
            "INSERT INTO fts(rowid, title, body) VALUES (?,?,?)",
            [(seq, *made[s.id]) for seq, s in fresh],
        )

    def delete(self, db: sqlite3.Connection, seq: int, title, body) -> None:
        """Take document ``seq`` (its stored title and body) out of the full-text index."""
        from ...canonical.search import search_text

        db.execute(
            "INSERT INTO fts(fts, rowid, title, body) VALUES('delete', ?, ?, ?)",
            (seq, search_text(title), search_text(body)),
        )

    def insert(self, db: sqlite3.Connection, seq: int, title, body) -> None:
        from ...canonical.search import search_text

        db.execute(
            "INSERT INTO fts(rowid, title, body) VALUES (?,?,?)",
            (seq, search_text(title), search_text(body)),
        )

    def holds(self, db: sqlite3.Connection, seq: int) -> bool:
        """Whether document ``seq`` is in the full-text index (at or below ``fts_upto``)."""
        return self.conn.fulltext and seq <= self.conn.upto(db, "fts_upto")

    def _tokens(self, words: str) -> list[str]:
        """``words`` split into terms by the full-text tokenizer itself (an FTS5 table in the
        connection's temp schema and its fts5vocab view), so every term is one token."""
        db = self.conn.require()
        if not self._tokenizer_ready:
            db.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.neardup_q "
                f"USING fts5(q, tokenize='{TOKENIZE}')"
            )
            db.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.neardup_q_terms "
                "USING fts5vocab('temp', 'neardup_q', 'instance')"
            )
            self._tokenizer_ready = True
        db.execute("DELETE FROM temp.neardup_q")
        db.execute("INSERT INTO temp.neardup_q(rowid, q) VALUES (1, ?)", (words,))
        terms = [t for (t,) in db.execute("SELECT term FROM temp.neardup_q_terms ORDER BY offset")]
        db.execute("DELETE FROM temp.neardup_q")
        return terms
