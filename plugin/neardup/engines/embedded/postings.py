"""The embedded engine's postings: the inverted index of signature keys, and candidates.

``postings(key, doc)`` is a ``WITHOUT ROWID`` b-tree of posting keys
(:mod:`~neardup.engines.embedded.keycolumn`); candidate retrieval is a term match inside
SQLite. Candidates have two forms, tested equal: the reference, one SQL statement per query
(:meth:`Postings.candidates_sql`: the definition, readable), and a batch's queries together
(:meth:`Postings.candidates_batched`: the postings of their distinct keys read in one
statement, counted and ranked with numpy by :func:`matched_documents`). ``candidate_form``
chooses: "sql", "batched", or "auto" (batched from :data:`BATCHED_FROM` queries on).

The keys of the containment samples (winnowing, MOD_m: most of a document's keys, and no
resemblance query reads them) follow behind: ``index`` stores them in the ``keys`` column
only, and the first containment query or collision listing of those fields adds their
postings (``meta.samples_upto``: every document up to that ``seq`` has them, none after; a
document updated at or below it gets them at once). An engine made with ``search_ready``
writes them with the batch instead, from the keys in hand, while nothing is behind. On a
file opened read-only, that query copies the postings into the temporary schema with the
samples added.

New postings go to ``recent_postings``, a table of the same layout kept small (up to
:data:`RECENT_PER_DOC` rows per stored document, between :data:`RECENT_MIN` and
:data:`RECENT_MAX`), so that inserting keys at random places touches pages that stay in the
page cache; once it is full it is merged into ``postings`` in key order (each page of
``postings`` read and written once per merge, not once per commit) and emptied, in the
transaction of the batch that filled it. (Its pages, freed, are reused by the next
postings: the file keeps that much free space, a quarter of the postings' size at most.)
The sample catch-up, a sorted run of many documents, goes straight into ``postings``. Every
read matches both tables (a document's postings are in one of them, never both), so
candidates are the same whenever the merges happen.

A posting of a document tagged as a member of a cluster holds ``-seq`` (files of
:data:`~.schema.FORMAT`), the others ``seq``: a representatives-only query (the cluster rule's)
reads the range ``doc > 0`` of each key and never the members' postings, so any number of
copies of one text cost it one posting per key, their representative's. The other queries
read both signs. A member that becomes a representative again has its postings turned to
``seq`` (:meth:`Postings.promote`); a representative that becomes a member keeps ``seq``
(correct: candidates are filtered by their tags as well).

A posting keeps the low 44 bits of a key, so a query key meets a different stored key of its
field with probability (keys of that field in the index) / 2**44, about 1e-6 per key at a
million documents: only a false candidate, which verification drops.
"""

from __future__ import annotations

import contextlib
import enum
import json
import sqlite3
from typing import Any, Iterable, Iterator, Literal, Sequence

import numpy as np

from ...keys.encoding import KEY_BITS, KEY_MASK, posting_array
from ...sketches.ragged import join
from ...signing.records import Signed
from ...sketches.verify import UNBOUNDED
from ..base import Candidate, CandidateQuery, EngineError, KeyGroup
from .connection import Connection
from .keycolumn import posting_jsons, unpack_keys
from . import schema
from .schema import CLUSTER, unsigned64

#: From this many queries on, "auto" matches them together (:meth:`Postings.candidates_batched`).
BATCHED_FROM = 8
#: Rows of ``recent_postings`` from which they are merged into ``postings``: this many per
#: stored document (a quarter of the 31 postings a document adds as indexed), at least
#: :data:`RECENT_MIN` and at most :data:`RECENT_MAX` (about 65,000 documents' MinHash,
#: SimHash and exact keys: 32 MB of pages, within the 64 MB page cache).
RECENT_PER_DOC = 8
#: The postings a document adds as indexed without its containment samples (MinHash bands,
#: SimHash blocks, exact key), which :data:`RECENT_PER_DOC` is a quarter of; a batch whose
#: documents bring more (their samples too) scales it up, so ``recent_postings`` stays about
#: a quarter of ``postings`` between merges.
POSTINGS_PER_DOC = 31
RECENT_MIN = 1 << 16
RECENT_MAX = 1 << 21


class CandidateForm(str, enum.Enum):
    """How :meth:`Postings.candidates` matches queries: one SQL statement each (the
    reference), a batch together (tested equal), or batched from :data:`BATCHED_FROM` on.

    >>> [CandidateForm(f).batched(10) for f in ("sql", "batched", "auto")]
    [False, True, True]
    """

    SQL = "sql"
    BATCHED = "batched"
    AUTO = "auto"

    def batched(self, n_queries: int) -> bool:
        """Whether ``n_queries`` queries are matched together."""
        if self is CandidateForm.AUTO:
            return n_queries >= BATCHED_FROM
        return self is CandidateForm.BATCHED


def _union(tables: Sequence[str], select: str, where: str) -> str:
    """``SELECT select FROM t WHERE where`` for each of ``tables``, as one UNION ALL (its
    parameters repeat per table: :func:`_repeat`); SQLite does not push an ``IN`` down into
    a view of the union, so each table is searched by its own key.

    >>> _union(["a", "b"], "doc", "key = ?")
    '(SELECT doc FROM a WHERE key = ? UNION ALL SELECT doc FROM b WHERE key = ?)'
    """
    return "(" + " UNION ALL ".join(f"SELECT {select} FROM {t} WHERE {where}" for t in tables) + ")"


def _repeat(tables: Sequence[str], params: Sequence[Any]) -> list[Any]:
    """The parameters of :func:`_union`: ``params`` once per table."""
    return list(params) * len(tables)


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
    >>> hits = np.array([5, 5, 6, 7]), np.array([10, 11, 10, 10])
    >>> r = matched_documents(keys, key_group, *hits, np.array([0, 1]), np.array([2, 1]),
    ...                       np.array([0, 1]), np.array([0, 0]), np.array([99, 99]))
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


def _admits(q: CandidateQuery, doc_id: str, n: int, is_dup: int | None) -> bool:
    """Whether a document (its id, shingle count, is_duplicate) passes the filters of ``q``
    that the postings do not: length range, excluded id, representatives only (as the
    ``WHERE`` of :meth:`Postings.candidates_sql`)."""
    return (
        q.min_shingles <= n <= min(q.max_shingles, UNBOUNDED)
        and doc_id != (q.exclude_id or "")
        and (not q.representatives or is_dup == 0)
    )


def _bounds(q: CandidateQuery) -> tuple[int, int]:
    """The seqs a query's candidates lie strictly between."""
    return q.after_seq or 0, UNBOUNDED if q.before_seq is None else q.before_seq


def _doc_ranges(q: CandidateQuery) -> tuple[str, list[int]]:
    """The ``WHERE`` on a posting's ``doc`` of a query, and its parameters: the seqs between
    its bounds, and for a query not limited to representatives the members' ``-seq`` too."""
    lo, hi = _bounds(q)
    if q.representatives:
        return "doc > ? AND doc < ?", [lo, hi]
    return "(doc > ? AND doc < ? OR doc > ? AND doc < ?)", [lo, hi, -hi, -lo]


class Postings:
    """Postings of the embedded engine: written, deleted, matched, through the connection
    ``conn``."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._postings_copy = False  # a read-only file's postings with the samples, in temp
        self._recent_rows: int | None = None  # rows of ``recent_postings``
        self._per_doc = 1.0  # postings per document of the last batch, in POSTINGS_PER_DOC

    def reset(self) -> None:
        """Forget what was read of the connection just closed."""
        self._postings_copy = False
        self._recent_rows = None

    #: :class:`CandidateForm`: SQL (the reference), batched, or auto (the module docstring).
    candidate_form: CandidateForm | Literal["auto", "sql", "batched"] = "auto"
    #: Documents read at a time when the sample postings catch up.
    samples_chunk = 5000
    #: Rows of ``recent_postings`` from which they are merged (:data:`RECENT_MAX`).
    recent_max = RECENT_MAX

    def keys_of(
        self, blob: bytes, shingles: np.ndarray, exact: bytes | str
    ) -> dict[str, np.ndarray]:
        """A stored document's keys (:func:`~.keycolumn.unpack_keys` of its keys column)."""
        try:
            return unpack_keys(self.conn.fields, blob, shingles, exact)
        except (ValueError, IndexError) as e:
            raise EngineError(
                f"{self.conn.path}: {e}; the index is damaged: index the documents again into a "
                "new one"
            ) from None

    def shingle_sets(self, rows: Sequence[Any]) -> list[np.ndarray]:
        """The shingle hashes of ``docs`` rows (by name: exact, lang, shingles, n_shingles,
        body): stored, or made again from the text (:mod:`~neardup.engines.stored_shingles`)."""
        if self.conn.shingles is None:
            raise EngineError("engine is not open")
        return self.conn.shingles.sets(
            [
                (
                    _shingle_key(r["exact"], r["lang"]),
                    r["shingles"],
                    r["n_shingles"],
                    r["body"],
                )
                for r in rows
            ]
        )

    def remember_shingles(self, s: Signed) -> None:
        """Keep the shingles of a document as it is stored, for the reads that follow."""
        if self.conn.shingles is not None and self.conn.shingle_markers:
            self.conn.shingles.remember(
                _shingle_key(schema.exact_value(s.exact), s.lang), s.shingles
            )

    def posting_rows(
        self, pending: dict[int, dict[str, np.ndarray]], upto: int
    ) -> Iterable[tuple[int, int]]:
        """(key, doc) rows of ``pending`` (posting doc -> keys: ``seq``, or ``-seq`` for a
        member, :meth:`posting_doc`) in key order, one field at a time in numpy; the sample
        fields only of documents at or below ``upto`` (``samples_upto``)."""
        keys, docs = [], []
        for f, fid in self.conn.field_ids.items():
            seqs = [
                q
                for q, ks in pending.items()
                if f in ks and (abs(q) <= upto or f not in self.conn.later)
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

    def delete_postings(
        self,
        db: sqlite3.Connection,
        seq: int,
        row: sqlite3.Row,
        pending: dict[int, dict[str, np.ndarray]] | None = None,
    ) -> None:
        """Delete the postings of document ``seq`` (its stored ``row``: keys, exact and what
        makes its shingles); one stored earlier in this batch (``pending``) is not in the
        table yet."""
        if pending is not None:
            pending.pop(seq, None)
            pending.pop(-seq, None)
        keys = self.keys_of(row["keys"], self.shingle_sets([row])[0], row["exact"])
        rows = list(self.posting_rows({seq: keys}, UNBOUNDED))
        if self.conn.member_postings_apart:
            rows += [(k, -d) for k, d in rows]
        for t in self._main_tables():
            db.executemany(f"DELETE FROM {t} WHERE key=? AND doc=?", rows)

    def posting_doc(self, seq: int, *, member: bool) -> int:
        """The ``doc`` of a document's postings: ``-seq`` for a ``member`` of a cluster (see
        the module docstring), else ``seq``."""
        return -seq if member and self.conn.member_postings_apart else seq

    def promote(self, db: sqlite3.Connection, rows: Sequence[sqlite3.Row]) -> None:
        """Turn the postings of stored members that are representatives now (their ``docs``
        rows: seq, keys, exact and what makes their shingles) from ``-seq`` to ``seq``."""
        if not self.conn.member_postings_apart or not rows:
            return
        pending = {
            -r["seq"]: self.keys_of(r["keys"], sh, r["exact"])
            for r, sh in zip(rows, self.shingle_sets(rows), strict=True)
        }
        upto = self.conn.upto(db, "samples_upto")
        negative = list(self.posting_rows(pending, upto))
        for t in self._main_tables():
            db.executemany(f"DELETE FROM {t} WHERE key=? AND doc=?", negative)
        self.insert_recent(db, sorted((k, -d) for k, d in negative))

    # -- candidates ------------------------------------------------------------------------
    def candidates(self, queries: Sequence[CandidateQuery]) -> list[list[Candidate]]:
        tables = self.tables_for({g.field for q in queries for g in q.groups})
        if CandidateForm(self.candidate_form).batched(len(queries)):
            return self.candidates_batched(queries, tables)
        return [self.candidates_sql(q, tables) for q in queries]

    def candidates_sql(
        self, q: CandidateQuery, tables: Sequence[str] | None = None
    ) -> list[Candidate]:
        """The candidates of one query, in one statement: per key group, the documents that
        hold at least ``min_match`` of its keys; summed over the groups, ranked, filtered.
        ``tables``: the postings tables to match in (:meth:`tables_for`)."""
        tables = tables or self._main_tables()
        where, bounds = _doc_ranges(q)
        matching = _union(
            tables, "abs(doc) AS doc", f"key IN (SELECT value FROM json_each(?)) AND {where}"
        )
        parts, params = [], []
        groups = list(filter(self._matchable, q.groups))
        for g, keys in zip(groups, self._posting_jsons(groups), strict=True):
            parts.append(
                f"SELECT doc, COUNT(*) AS c, ? AS f FROM {matching} "
                "GROUP BY doc HAVING COUNT(*) >= ?"
            )
            params += [g.field, *_repeat(tables, [keys, *bounds]), g.min_match]
        if not parts:
            return []
        reps = "AND d.is_duplicate = 0 " if q.representatives else ""
        sql = (
            f"WITH m(doc, c, f) AS ({' UNION ALL '.join(parts)}) "
            f"SELECT d.id, d.n_shingles, d.simhash, {CLUSTER}, SUM(m.c), group_concat(m.f), "
            "d.seq FROM m JOIN docs d ON d.seq = m.doc "
            f"WHERE d.n_shingles BETWEEN ? AND ? AND d.id != ? {reps}"
            "GROUP BY d.seq ORDER BY SUM(m.c) DESC, d.seq LIMIT ?"
        )
        params += [q.min_shingles, min(q.max_shingles, UNBOUNDED), q.exclude_id or "", q.limit]
        return [
            Candidate(
                id=i,
                n_shingles=n,
                simhash=unsigned64(sh),
                score=float(score),
                cluster_id=cid,
                matched=frozenset(fs.split(",")),
                seq=seq,
            )
            for i, n, sh, cid, score, fs, seq in self.conn.require().execute(sql, params)
        ]

    def candidates_batched(
        self, queries: Sequence[CandidateQuery], tables: Sequence[str] | None = None
    ) -> list[list[Candidate]]:
        """:meth:`candidates_sql` of many queries: the postings of all their keys read in one
        statement (each distinct key once, in key order), then matched to the key groups,
        counted and ranked with numpy (:func:`matched_documents`); the columns of the
        documents found read once, and filtered."""
        groups = [(qi, g) for qi, q in enumerate(queries) for g in q.groups if self._matchable(g)]
        if not groups:
            return [[] for _ in queries]
        keys, key_group = self._group_posting_keys([g for _, g in groups])
        hits = self._postings_of(
            np.unique(keys),
            tables or self._main_tables(),
            representatives=all(q.representatives for q in queries),
        )
        field_names = sorted({g.field for _, g in groups})
        bounds = np.array([_bounds(q) for q in queries], dtype=np.int64).reshape(-1, 2)
        matched = matched_documents(
            keys,
            key_group,
            hits[:, 0],
            hits[:, 1],
            *_group_columns(groups, field_names),
            bounds[:, 0],
            bounds[:, 1],
        )
        return self._filtered(queries, matched, field_names)

    def _postings_of(
        self, keys: np.ndarray, tables: Sequence[str], *, representatives: bool
    ) -> np.ndarray:
        """The (key, seq) postings of the distinct posting ``keys`` in ``tables``, one row
        each, read in one statement; only those of ``doc > 0`` (no member's) when the
        queries ask for ``representatives`` alone."""
        where = "key IN (SELECT value FROM json_each(?))" + (
            " AND doc > 0" if representatives else ""
        )
        matching = _union(tables, "key, abs(doc) AS doc", where)
        found = (
            self.conn.require()
            .execute(
                f"SELECT group_concat(key || ' ' || doc, ' ') FROM {matching}",
                _repeat(tables, [json.dumps(keys.tolist())]),
            )
            .fetchone()[0]
        )  # (one string: a row apiece costs twice the lookups)
        return np.fromstring(found or "", dtype=np.int64, sep=" ").reshape(-1, 2)

    def _filtered(
        self,
        queries: Sequence[CandidateQuery],
        matched: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
        field_names: list[str],
    ) -> list[list[Candidate]]:
        """The candidates of :func:`matched_documents`' (query, document, score, fields),
        filtered by the queries' length bounds, exclusion and representatives, up to each
        query's limit."""
        q_of, doc, score, fields = matched
        out: list[list[Candidate]] = [[] for _ in queries]
        if not len(doc):
            return out
        rows = {
            r[0]: r[1:]
            for r in self.conn.require().execute(
                f"SELECT d.seq, d.id, d.n_shingles, d.simhash, {CLUSTER}, d.is_duplicate "
                f"FROM docs d {self._filter_by} WHERE d.seq IN (SELECT value FROM json_each(?))",
                (json.dumps(np.unique(doc).tolist()),),
            )
        }
        names = _field_sets(field_names)
        for qi, d, sc, fs in zip(
            q_of.tolist(), doc.tolist(), score.tolist(), fields.tolist(), strict=True
        ):
            q, row = queries[qi], rows.get(d)
            if row is None or len(out[qi]) >= q.limit:
                continue
            i, n, sh, cid, is_dup = row
            if not _admits(q, i, n, is_dup):
                continue
            out[qi].append(
                Candidate(
                    id=i,
                    n_shingles=n,
                    simhash=unsigned64(sh),
                    score=float(sc),
                    cluster_id=cid,
                    matched=names[fs],
                    seq=d,
                )
            )
        return out

    @property
    def _filter_by(self) -> str:
        """How :meth:`_filtered` reads the documents: through the narrow ``docs_filter`` index
        where the file has it (never a page of texts), else by their rows."""
        return "INDEXED BY docs_filter" if self.conn.filter_index else ""

    def _group_posting_keys(self, groups: Sequence[KeyGroup]) -> tuple[np.ndarray, np.ndarray]:
        """The posting keys of each key group (:func:`~neardup.keys.encoding.posting_array`), all
        in one array (those of a field made together), and the group each came from."""
        keys, owner = [], []
        for f, at in _by_field(groups).items():
            values, offsets = join([groups[i].keys for i in at])
            keys.append(posting_array(self.conn.field_ids[f], values))
            owner.append(np.repeat(np.array(at, dtype=np.int64), np.diff(offsets)))
        return np.concatenate(keys), np.concatenate(owner)

    def _matchable(self, g: KeyGroup) -> bool:
        """A key group this index can match: a field it stores, and some keys."""
        return g.field in self.conn.field_ids and len(g.keys) > 0

    def _posting_jsons(self, groups: Sequence[KeyGroup]) -> list[str]:
        """The :func:`~.keycolumn.posting_jsons` of each key group, a field's made together."""
        out: list[str] = [""] * len(groups)
        for f, at in _by_field(groups).items():
            made = posting_jsons(self.conn.field_ids[f], *join([groups[i].keys for i in at]))
            for i, one in zip(at, made, strict=True):
                out[i] = one
        return out

    def collisions(self, fields: Sequence[str] = ("minhash",)) -> Iterator[list[str]]:
        db = self.conn.require()
        for f in fields:
            if f not in self.conn.field_ids:
                continue
            tables = self.tables_for({f})
            if (
                tables == ("postings", "recent_postings")
                and not self.conn.read_only
                and db.execute("SELECT 1 FROM recent_postings LIMIT 1").fetchone()
            ):
                self.merge_recent()  # (one pass; a count over the union would sort every key)
                tables = ("postings",)
            lo = self.conn.field_ids[f] << KEY_BITS
            # the shared keys first (a count over the key order, no join), then their documents
            cur = db.execute(
                "SELECT (SELECT group_concat(d.id, char(31)) FROM "
                f"{_union(tables, 'doc', 'key = k.key')} p JOIN docs d ON d.seq = abs(p.doc)) "
                f"FROM (SELECT key FROM {_union(tables, 'key', 'key BETWEEN ? AND ?')} "
                "GROUP BY key HAVING COUNT(*) > 1) k",
                _repeat(tables, (lo, lo | KEY_MASK)),
            )
            for (ids,) in cur:
                yield ids.split("\x1f")

    # -- the sample postings, behind -------------------------------------------------------
    def samples_behind(self) -> int:
        """Documents whose sample postings (winnowing, MOD_m) are not in ``postings`` yet
        (the next containment query adds them); 0 when the index has no sample field."""
        return self.conn.behind("samples_upto") if self.conn.later else 0

    def _main_tables(self) -> tuple[str, ...]:
        """The file's postings tables: ``postings``, and ``recent_postings`` in a file of the
        format that has it (:data:`~.schema.READS`)."""
        return ("postings", "recent_postings") if self.conn.recent_table else ("postings",)

    def tables_for(self, fields: Iterable[str]) -> tuple[str, ...]:
        """The postings tables to match ``fields`` in, with every document's keys in them:
        :meth:`_main_tables` after adding the sample postings of the documents that follow
        ``samples_upto`` (when ``fields`` has a sample field); on a read-only file with some
        behind, a copy in this connection's temporary schema with them added (made once)."""
        if self._postings_copy:
            return ("temp.nd_postings",)
        if not self.conn.later.intersection(fields) or not self.samples_behind():
            return self._main_tables()
        if self.conn.read_only:
            db = self.conn.require()
            db.execute(
                "CREATE TEMP TABLE nd_postings(key INTEGER NOT NULL, doc INTEGER NOT NULL, "
                "PRIMARY KEY(key, doc)) WITHOUT ROWID"
            )
            for t in self._main_tables():
                db.execute(f"INSERT INTO temp.nd_postings SELECT key, doc FROM {t}")
            self._add_samples(db, "temp.nd_postings", self.conn.upto(db, "samples_upto"))
            self._postings_copy = True
            return ("temp.nd_postings",)
        self.conn.catch_up("samples_upto", lambda db, upto: self._add_samples(db, "postings", upto))
        return self._main_tables()

    def insert_recent(
        self, db: sqlite3.Connection, rows: Iterable[tuple[int, int]], docs: int = 0
    ) -> None:
        """Insert (key, doc) postings of ``docs`` documents into ``recent_postings``; merge it
        into ``postings`` once it is full (:data:`RECENT_PER_DOC` postings of
        :data:`POSTINGS_PER_DOC` per stored document, scaled by the postings a document of
        this batch brings; inside the caller's transaction)."""
        if not self.conn.recent_table:  # a file of an earlier format: straight into postings
            db.executemany("INSERT OR IGNORE INTO postings(key, doc) VALUES (?,?)", rows)
            return
        if self._recent_rows is None:  # (other processes' rows count from the next opening)
            self._recent_rows = db.execute("SELECT COUNT(*) FROM recent_postings").fetchone()[0]
        cur = db.executemany("INSERT OR IGNORE INTO recent_postings(key, doc) VALUES (?,?)", rows)
        added = max(0, cur.rowcount)
        self._recent_rows += added
        if docs and added:
            self._per_doc = max(1.0, added / docs / POSTINGS_PER_DOC)
        top = db.execute("SELECT coalesce(max(seq), 0) FROM docs").fetchone()[0]
        full = min(self.recent_max, int(max(RECENT_MIN, RECENT_PER_DOC * top) * self._per_doc))
        if self._recent_rows >= full:
            self.merge_recent(db)

    def merge_recent(self, db: sqlite3.Connection | None = None) -> None:
        """Move ``recent_postings`` into ``postings``, in key order, and empty it."""
        with contextlib.nullcontext(db) if db is not None else self.conn.tx() as db:
            db.execute(
                "INSERT OR IGNORE INTO postings(key, doc) "
                "SELECT key, doc FROM recent_postings ORDER BY key, doc"
            )
            db.execute("DELETE FROM recent_postings")
        self._recent_rows = 0

    def _add_samples(self, db: sqlite3.Connection, table: str, after: int) -> None:
        """The sample postings of every document after ``seq`` ``after``, into ``table``."""
        what = "containment samples to the postings"
        names = ("seq", "keys", "shingles", "exact", "lang", "n_shingles", "body", "is_duplicate")
        chunks = self.conn.rows_after(
            db,
            ", ".join(names[1:]),
            after,
            self.samples_chunk,
            what,
            "the first containment query",
        )
        for rows in chunks:
            pending = {}
            named = [dict(zip(names, r, strict=True)) for r in rows]
            for r, shingles in zip(named, self.shingle_sets(named), strict=True):
                keys = self.keys_of(r["keys"], shingles, r["exact"])
                doc = self.posting_doc(r["seq"], member=r["is_duplicate"] == 1)
                pending[doc] = {f: ks for f, ks in keys.items() if f in self.conn.later}
            db.executemany(
                f"INSERT OR IGNORE INTO {table}(key, doc) VALUES (?,?)",
                self.posting_rows(pending, UNBOUNDED),
            )


def _group_columns(
    groups: Sequence[tuple[int, KeyGroup]], field_names: list[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per (query, key group): its query, the keys it needs, its field's number."""
    query = np.array([qi for qi, _ in groups], dtype=np.int64)
    need = np.array([g.min_match for _, g in groups], dtype=np.int64)
    field = np.array([field_names.index(g.field) for _, g in groups], dtype=np.int64)
    return query, need, field


def _field_sets(field_names: list[str]) -> list[frozenset[str]]:
    """The fields of each bitmask over ``field_names`` (bit b: ``field_names[b]``).

    >>> [sorted(s) for s in _field_sets(["a", "b"])]
    [[], ['a'], ['b'], ['a', 'b']]
    """
    return [
        frozenset(f for b, f in enumerate(field_names) if m >> b & 1)
        for m in range(1 << len(field_names))
    ]


def _by_field(groups: Sequence[KeyGroup]) -> dict[str, list[int]]:
    """The positions of the key groups of each field."""
    out: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        out.setdefault(g.field, []).append(i)
    return out


def _shingle_key(exact: bytes | str, lang: str | None) -> tuple:
    """The cache key of a document's shingles: they follow from its tokens in order (the
    exact digest, xxh3-128 of their hashes) and its language (the shingle size), whichever
    document has them."""
    return (exact, lang)
