"""The embedded SQLite engine: creation, settings stored with the index, upserts, crash safety."""

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import Config, ConfigMismatch, Document, NearDup
from neardup.engines.base import CandidateQuery, EngineError, KeyGroup
from neardup.keys.encoding import posting_key
from neardup.engines.embedded.keycolumn import joined_keys, pack_keys, pack_keys_many, unpack_keys
from neardup.sketches.loops import interpreted_loops
from neardup.sketches.ragged import join
from neardup.engines.embedded import EmbeddedEngine, connection

TEXT = "the quick brown fox jumps over the lazy dog while the cat watches from the old wooden fence"


def run_sql(path, statement: str) -> None:
    con = sqlite3.connect(path)
    con.execute(statement)
    con.commit()
    con.close()


def test_settings_are_stored_and_used_on_reopen(tmp_path):
    db = tmp_path / "x.db"
    NearDup.open(str(db), Config(threshold=0.6, shingle_size=3)).close()
    with NearDup.open(str(db)) as nd:
        assert nd.config.threshold == 0.6 and nd.config.shingle_size == 3


def test_the_file_is_read_through_a_memory_map(tmp_path):
    """Lookups read the file's pages through SQLite's memory map (up to its build's cap), not
    by copying every page missed into the page cache."""
    with NearDup.open(str(tmp_path / "x.db")) as nd:
        nd.index([Document("a", TEXT)])
        db = nd.engine.connection.require()
        assert db.execute("PRAGMA mmap_size").fetchone()[0] >= min(connection.MMAP_SIZE, 1 << 28)


def test_reopening_with_other_settings_is_refused(tmp_path):
    db = str(tmp_path / "x.db")
    NearDup.open(db, Config(threshold=0.6)).close()
    with pytest.raises(ConfigMismatch, match="threshold"):
        NearDup.open(db, Config(threshold=0.9))


def test_a_file_that_is_not_an_index_is_refused(tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"hello, not a database at all" * 10)
    with pytest.raises(EngineError, match="not a neardup index"):
        NearDup.open(str(junk))
    other = tmp_path / "other.db"
    run_sql(other, "CREATE TABLE t(x)")
    with pytest.raises(EngineError, match="SQLite database but not a neardup index"):
        NearDup.open(str(other))


def test_missing_index_without_create(tmp_path):
    with pytest.raises(EngineError, match="no such neardup index"):
        NearDup.open(str(tmp_path / "none.db"), create=False)


def test_a_refused_open_keeps_no_connection_and_create_false_creates_nothing(tmp_path):
    from neardup.engines.embedded import EmbeddedEngine

    path = tmp_path / "x.db"
    with pytest.raises(EngineError, match="no such neardup index"):
        EmbeddedEngine(path).open(create=False)
    assert not path.exists()
    with EmbeddedEngine(path) as created:
        created.open(Config(threshold=0.7))
    eng = EmbeddedEngine(path)
    with pytest.raises(ConfigMismatch, match="threshold"):
        eng.open(Config(threshold=0.9))
    with pytest.raises(EngineError, match="not open"):
        eng.count()
    # a SQLite file without tables is not an index to open without creating it; with create it
    # becomes one
    empty = tmp_path / "empty.db"
    run_sql(empty, "PRAGMA user_version=1")
    with pytest.raises(EngineError, match="no such neardup index"):
        EmbeddedEngine(empty).open(create=False)
    with EmbeddedEngine(empty) as made:
        assert made.open() == Config() and made.count() == 0


def test_upsert_by_id_replaces_postings_and_text(tmp_path):
    with NearDup.open(str(tmp_path / "x.db")) as nd:
        nd.index(
            [
                Document("a", TEXT),
                Document("b", "completely different words about databases and sqlite files"),
            ],
            progress=None,
        )
        nd.index(
            [
                Document(
                    "a", "entirely new content on astronomy telescopes and distant galaxies tonight"
                )
            ],
            progress=None,
        )
        assert nd.count() == 2
        assert nd.query(TEXT) == []
        assert [
            m.id
            for m in nd.query(
                "entirely new content on astronomy telescopes and distant galaxies tonight"
            )
        ] == ["a"]
        assert [h.id for h in nd.search("telescopes")] == ["a"] and nd.search("fox") == []
        assert nd.engine.delete(["a", "zzz"]) == 1 and nd.count() == 1
        assert nd.search("telescopes") == []


def test_candidate_query_groups_min_match_and_length(tmp_path):
    eng = EmbeddedEngine(str(tmp_path / "x.db"))
    eng.open(Config())
    nd = NearDup(eng, eng.config)
    nd.index([Document("a", TEXT)], progress=None)
    s = nd.signer.sign(Document("q", TEXT))
    keys = tuple(int(k) for k in s.keys["winnow"])
    hit = eng.candidates([CandidateQuery((KeyGroup("winnow", keys, len(keys)),), 0, 10**6)])[0]
    assert [c.id for c in hit] == ["a"] and hit[0].matched == frozenset({"winnow"})
    assert eng.candidates(
        [CandidateQuery((KeyGroup("winnow", keys, len(keys) + 1),), 0, 10**6)]
    ) == [[]]
    assert eng.candidates(
        [CandidateQuery((KeyGroup("winnow", keys, 1),), s.n_shingles + 1, 10**6)]
    ) == [[]]
    assert eng.candidates(
        [CandidateQuery((KeyGroup("winnow", keys, 1),), 0, 10**6, exclude_id="a")]
    ) == [[]]


def test_keys_blob_round_trip():
    fields = ("exact", "minhash", "winnow", "modm")
    shingles = np.array(
        sorted({(i * 0x9E3779B97F4A7C15) % 2**64 for i in range(1, 100)}), dtype=np.uint64
    )
    exact = bytes(range(16))
    keys = {
        "exact": np.array([int.from_bytes(exact[:8], "big")], dtype=np.uint64),
        "minhash": np.array([2**64 - 1, 5], dtype=np.uint64),
        "winnow": shingles[[0, 7, 8, 50, 98]],
    }
    blob = pack_keys(fields, keys, shingles, exact)
    # exact: 1 tag byte; minhash raw: tag, count, 2 x 8 bytes; winnow: tag and a 99-bit map;
    # modm: tag, count 0
    assert len(blob) == 1 + (2 + 16) + (1 + 13) + 2
    out = unpack_keys(fields, blob, shingles, exact)
    assert out["exact"].tolist() == keys["exact"].tolist() and out["minhash"].tolist() == [
        2**64 - 1,
        5,
    ]
    assert (
        out["winnow"].tolist() == keys["winnow"].tolist()
        and out["modm"].tolist() == []
        and out["winnow"].dtype == np.uint64
    )
    # whatever does not fit a compact form is kept raw, so every field round-trips exactly
    odd = {
        "exact": np.array([3], dtype=np.uint64),
        "winnow": shingles[[9, 2]],
        "modm": np.array([shingles[4], 11], dtype=np.uint64),
    }
    out = unpack_keys(fields, pack_keys(fields, odd, shingles, "not-hex"), shingles, "not-hex")
    assert {f: out[f].tolist() for f in odd} == {f: odd[f].tolist() for f in odd} and out[
        "minhash"
    ].tolist() == []


def _keys_blob_by_definition(fields, keys, shingles, exact) -> bytes:
    """The keys column written out plainly: per field a tag byte; 2 (exact) for the one key
    that is the first 8 bytes of the 16-byte digest; 1 and a little-endian bitmap over the
    shingles for strictly increasing keys that are all shingles, when the bitmap is shorter
    than 8 bytes a key; else 0, a varint count and the keys as little-endian uint64."""
    out = bytearray()
    digest = (
        int.from_bytes(exact[:8], "big") if isinstance(exact, bytes) and len(exact) == 16 else None
    )
    sh = [int(x) for x in shingles]
    for f in fields:
        k = [int(x) for x in keys.get(f, [])]
        n = len(sh)
        if len(k) == 1 and k[0] == digest:
            out.append(2)
        elif (
            k
            and (n + 7) // 8 < 8 * len(k)
            and all(a < b for a, b in zip(k, k[1:], strict=False))
            and all(x in sh for x in k)
        ):
            bits = bytearray((n + 7) // 8)
            for x in k:
                i = sh.index(x)
                bits[i // 8] |= 1 << (i % 8)
            out += bytes([1]) + bits
        else:
            c, var = len(k), bytearray()
            while True:
                var.append((c & 0x7F) | (0x80 if c >> 7 else 0))
                c >>= 7
                if not c:
                    break
            out += bytes([0]) + var + b"".join(x.to_bytes(8, "little") for x in k)
    return bytes(out)


_u64 = st.integers(0, 2**64 - 1)


@st.composite
def _doc_keys(draw):
    shingles = sorted(set(draw(st.lists(st.integers(0, 300) | _u64, max_size=40))))
    exact = draw(st.one_of(st.binary(min_size=16, max_size=16), st.just("not-hex")))
    keys = {}
    for f in ("exact", "minhash", "winnow", "modm"):
        kind = draw(st.sampled_from(["none", "raw", "subset", "digest"]))
        if kind == "raw":
            keys[f] = draw(st.lists(_u64, max_size=200))
        elif kind == "subset" and shingles:
            picked = draw(st.lists(st.sampled_from(shingles), max_size=len(shingles)))
            keys[f] = picked if draw(st.booleans()) else sorted(set(picked))
        elif kind == "digest" and isinstance(exact, bytes):
            keys[f] = [int.from_bytes(exact[:8], "big")]
    return (
        {f: np.array(v, dtype=np.uint64) for f, v in keys.items()},
        np.array(shingles, dtype=np.uint64),
        exact,
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(_doc_keys(), max_size=6))
def test_keys_columns_of_a_batch_are_the_format(docs):
    """pack_keys_many (one compiled pass over a batch) writes each document's keys column as
    the format says, and unpack_keys reads every field back."""
    fields = ("exact", "minhash", "winnow", "modm")
    blobs = pack_keys_many(
        fields,
        joined_keys(fields, [k for k, _, _ in docs]),
        join([s for _, s, _ in docs]),
        [e for _, _, e in docs],
    )
    assert blobs == [_keys_blob_by_definition(fields, k, s, e) for k, s, e in docs]
    with interpreted_loops():  # the loop's interpreted form (Python)
        assert blobs == pack_keys_many(
            fields,
            joined_keys(fields, [k for k, _, _ in docs]),
            join([s for _, s, _ in docs]),
            [e for _, _, e in docs],
        )
    for blob, (k, s, e) in zip(blobs, docs, strict=True):
        back = unpack_keys(fields, blob, s, e)
        assert {f: back[f].tolist() for f in fields} == {
            f: k.get(f, np.empty(0, dtype=np.uint64)).tolist() for f in fields
        }


def test_keys_column_bitmap_only_when_shorter():
    """At the boundary: a bitmap over 64 shingles is 8 bytes, no shorter than one raw key, so
    one key is written raw; over 56 shingles (7 bytes) it is a bitmap."""
    for n, tag, size in ((64, 0, 1 + 1 + 8), (56, 1, 1 + 7)):
        shingles = np.arange(1, n + 1, dtype=np.uint64)
        blob = pack_keys_many(
            ("winnow",),
            joined_keys(("winnow",), [{"winnow": shingles[[3]]}]),
            join([shingles]),
            [b""],
        )[0]
        assert (blob[0], len(blob)) == (tag, size) and blob == _keys_blob_by_definition(
            ("winnow",), {"winnow": shingles[[3]]}, shingles, b""
        )


def test_stored_document_round_trips(tmp_path):
    with NearDup.open(str(tmp_path / "x.db")) as nd:
        nd.index(
            [Document("a", TEXT, title="T"), Document("b", "other words " * 40)], progress=None
        )
        for s in (
            nd.signer.sign(Document("a", TEXT)),
            nd.signer.sign(Document("b", "other words " * 40)),
        ):
            d = nd.engine.get([s.id])[s.id]
            assert (
                d.exact == s.exact
                and np.array_equal(d.shingles, s.shingles)
                and d.simhash == s.simhash
            )
            assert set(d.keys) == set(nd.config.signatures) and all(
                np.array_equal(d.keys[f], s.keys[f]) for f in s.keys
            )
            assert d.indexed_at and d.indexed_at.endswith("+00:00") and len(d.indexed_at) == 29


def test_an_index_of_an_older_format_asks_to_reindex(tmp_path):
    db = tmp_path / "old.db"
    NearDup.open(str(db)).close()
    run_sql(db, "UPDATE meta SET value = 'neardup-sqlite/1' WHERE key = 'format'")
    with pytest.raises(EngineError, match=r"older neardup.*neardup-sqlite/1.*re-index"):
        NearDup.open(str(db))
    run_sql(db, "UPDATE meta SET value = 'neardup-sqlite/9' WHERE key = 'format'")
    with pytest.raises(EngineError, match="newer neardup"):
        NearDup.open(str(db))


def test_search_splits_words_into_tokens(tmp_path):
    with NearDup.open(str(tmp_path / "x.db")) as nd:
        nd.index(
            [
                Document("a", "send an e-mail to the Café owner about the bank"),
                Document("b", "the bank bank bank of the river"),
                Document("c", "nothing relevant here at all"),
            ],
            progress=None,
        )
        assert [h.id for h in nd.search("e-mail")] == ["a"] and [
            h.id for h in nd.search("CAFE")
        ] == ["a"]
        assert [h.id for h in nd.search("bank")] == ["b", "a"]  # bm25: more occurrences rank first
        assert "[bank]" in nd.search("bank")[0].snippet
        assert nd.search('" OR -') == [] and nd.search("bank NOT") == []


def test_refresh_truncates_the_write_ahead_log(tmp_path):
    db = tmp_path / "x.db"
    with NearDup.open(str(db)) as nd:
        nd.index((Document(f"d{i}", f"document {i} " + TEXT) for i in range(50)), progress=None)
        nd.engine.refresh()
        assert not os.path.exists(f"{db}-wal") or os.path.getsize(f"{db}-wal") == 0
        assert nd.count() == 50


def test_postings_keep_44_bits_and_the_field(tmp_path):
    eng = EmbeddedEngine(str(tmp_path / "x.db"))
    eng.open(Config())
    nd = NearDup(eng, eng.config)
    nd.index([Document("a", TEXT)], progress=None)
    s = nd.signer.sign(Document("a", TEXT))
    stored = {k for k, _ in _postings(eng)}
    want = {
        posting_key(i, int(k))
        for i, f in enumerate(eng.config.signatures)
        for k in s.keys.get(f, ())
    }
    assert stored == {
        posting_key(i, int(k))
        for i, f in enumerate(eng.config.signatures)
        if f != "winnow"
        for k in s.keys.get(f, ())
    }
    assert (
        eng.postings.samples_behind() == 1
        and eng.postings.tables_for({"winnow"}) == ("postings", "recent_postings")
        and eng.postings.samples_behind() == 0
    )
    stored = {k for k, _ in _postings(eng)}
    assert stored == want and max(stored) < 2**47
    eng.delete(["a"])
    assert _postings(eng) == []
    # the same id twice in one batch: only the last version's postings remain
    v2 = nd.signer.sign(
        Document("a", "entirely new content on astronomy telescopes and distant galaxies tonight")
    )
    assert eng.put([s, v2]) == []
    stored = {k for k, _ in _postings(eng)}
    assert stored == {
        posting_key(i, int(k))
        for i, f in enumerate(eng.config.signatures)
        for k in v2.keys.get(f, ())
    }
    assert [
        c.id
        for c in eng.candidates([nd.candidate_query(s.keys, s.n_shingles, "resemblance", 0.8)])[0]
    ] == []


def test_reading_error_midway_keeps_what_was_read(tmp_path):
    def docs():
        for i in range(7):
            yield Document(f"d{i}", f"document number {i} " + TEXT)
        raise ValueError("broken input")

    with NearDup.open(str(tmp_path / "x.db")) as nd:
        with pytest.raises(ValueError, match="broken input"):
            nd.index(docs(), batch_size=3, progress=None)
        assert nd.count() == 7


def test_killed_ingest_loses_nothing_committed_and_resumes(tmp_path):
    db = tmp_path / "x.db"
    marker = tmp_path / "batches"
    script = textwrap.dedent(f"""
        import os, time
        from neardup import NearDup, Document
        nd = NearDup.open({str(db)!r})
        def docs():
            for i in range(100000):
                if i and i % 50 == 0:
                    with open({str(marker)!r}, "a") as f:
                        f.write("x")
                yield Document(f"d{{i}}", f"document {{i}} " + {TEXT!r})
        nd.index(docs(), batch_size=50, progress=None)
    """)
    import time

    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        first = None
        for _ in range(1200):
            if marker.exists():
                first = first or time.monotonic()
                if (
                    len(marker.read_text()) >= 4 and time.monotonic() - first > 3.0
                ):  # past a commit (every 2 s)
                    break
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    with NearDup.open(str(db)) as nd:
        n = nd.count()
        assert n >= 50 and n % 50 == 0  # whole batches only, as committed
        nd.index(
            (Document(f"d{i}", f"document {i} " + TEXT) for i in range(n + 20)),
            batch_size=50,
            progress=None,
        )
        assert nd.count() == n + 20


def test_a_row_sqlite_refuses_fails_alone_and_the_rest_of_the_batch_is_stored(tmp_path):
    # a lone surrogate cannot be stored as UTF-8 text: the batch insert falls back to one
    # document at a time, so only that document is reported
    with NearDup.open(str(tmp_path / "x.db")) as nd:
        docs = [
            Document(f"d{i}", f"document {i} about topic {i} and more words here") for i in range(5)
        ]
        docs.insert(2, Document("bad", "a title", fields={"note": "broken \ud800 text"}))
        report = nd.index(docs, progress=None)
        assert [f.id for f in report.failed] == ["bad"] and "surrogate" in report.failed[0].reason
        assert report.indexed == 5 and nd.count() == 5


def test_an_index_of_another_signature_version_is_refused(tmp_path):
    from ._indexes import index_of_signature_version

    path = index_of_signature_version(tmp_path / "old.db", 2)
    with pytest.raises(EngineError, match="signature version 2"):
        NearDup.open(str(path))


def _mixed_queries(nd, docs):
    import random

    rng = random.Random(5)
    out = []
    for d in docs:
        q = nd.rule.query(
            d.keys,
            d.n_shingles,
            exclude_id=d.id,
            limit=rng.choice([1, 2, 3, 1000]),
            before_seq=rng.choice([None, d.seq]),
            after_seq=rng.choice([None, None, max(0, d.seq - 40)]),
            representatives=rng.random() < 0.5,
        )
        out.append(q)
    out.append(CandidateQuery((KeyGroup("minhash", ()),)))  # a query without keys finds nothing
    return out


def test_many_candidate_queries_at_once_equal_one_at_a_time(tmp_path):
    """The batch (one statement for the postings of every key, matched and ranked with
    numpy) returns what one statement per query returns: same candidates, order, limits and
    filters; and inside a writer session it leaves the session's transaction open."""
    import json

    from .corpora import SAMPLE

    recs = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    with NearDup.open(str(tmp_path / "c.db")) as nd:
        nd.index([Document(r["id"], r["text"]) for r in recs])
        e = nd.engine
        queries = _mixed_queries(nd, list(e.scan()))
        one = [e.postings.candidates_sql(q) for q in queries]  # the reference form
        assert (
            sum(map(len, one)) > 50 and sum(len(r) > 1 for r in one) > 5
        )  # the queries do find candidates
        assert len(queries) >= 8 and e.candidates(queries) == one  # "auto": batched
        assert e.postings.candidates_batched(queries) == one
        e.postings.candidate_form = "sql"
        assert e.candidates(queries[:9]) == one[:9]
        e.postings.candidate_form = "batched"
        assert e.candidates(queries[:2]) == one[:2]
        with e.writer():
            assert e.candidates(queries) == one
            assert e.connection.require().in_transaction
            e.put_meta("probe", 1)
        assert e.get_meta("probe") == 1


def _hits(nd, words):
    return sorted((h.id, round(h.score, 9)) for h in nd.search(words, size=100))


def test_the_full_text_index_follows_behind_and_equals_one_made_at_once(tmp_path):
    """Indexing leaves new documents out of the full-text index; the first search adds
    them. Updates and deletes before and after that point keep it exact: its results are
    those of a fresh index of the surviving documents."""
    texts = {
        f"d{i}": f"alpha{i % 5} beta{i % 7} gamma{i % 3} common words here number{i}"
        for i in range(60)
    }
    with NearDup.open(str(tmp_path / "live.db")) as nd:
        nd.index([Document(i, t) for i, t in list(texts.items())[:40]])
        assert nd.engine.fulltext_index.fulltext_behind() == 40
        assert {h for h, _ in _hits(nd, "alpha1")} == {f"d{i}" for i in range(40) if i % 5 == 1}
        assert nd.engine.fulltext_index.fulltext_behind() == 0
        nd.index([Document(i, t) for i, t in list(texts.items())[40:]])
        assert nd.engine.fulltext_index.fulltext_behind() == 20
        texts["d3"] = (
            "replaced text with zeta words only"  # in the full-text index: updated at once
        )
        texts["d45"] = "another zeta replacement"  # not in it yet
        nd.index([Document("d3", texts["d3"]), Document("d45", texts["d45"])])
        nd.delete(["d7", "d59"])  # one in it, the last one not (its seq is not given again)
        del texts["d7"], texts["d59"]
        nd.index([Document("d60", "zeta newcomer alpha1")])
        texts["d60"] = "zeta newcomer alpha1"
        with NearDup.open(str(tmp_path / "fresh.db")) as ref:
            ref.index([Document(i, t) for i, t in texts.items()])
            for words in ("alpha1", "zeta", "beta3 gamma0", "number7", "number59", "common"):
                assert _hits(nd, words) == _hits(ref, words), words
        assert {h for h, _ in _hits(nd, "zeta")} == {"d3", "d45", "d60"}
        # the last document is in the full-text index now; delete it and add another: the
        # newcomer must not take its seq (the index would count it as already added)
        nd.delete(["d60"])
        nd.index([Document("d61", "omega arrives late")])
        assert _hits(nd, "omega") and _hits(nd, "newcomer") == []


def _postings(engine):
    """Every posting, as (key, seq): those merged and the recent ones (a document's are in one
    table; a member's hold ``-seq``)."""
    return sorted(
        engine.connection.require().execute(
            "SELECT key, abs(doc) FROM postings UNION ALL SELECT key, abs(doc) FROM recent_postings"
        )
    )


def _all_postings(engine):
    """(key, seq) of every key of every stored document: what ``postings`` holds when no field
    is behind."""
    return sorted(
        (posting_key(engine.connection.field_ids[f], int(k)), d.seq)
        for d in engine.scan()
        for f, ks in d.keys.items()
        for k in ks
    )


def test_the_sample_postings_follow_behind_and_equal_ones_made_at_once(tmp_path):
    """Indexing leaves the winnowing postings out; the first containment query adds them.
    Updates and deletes before and after that point keep ``postings`` exact (every key of
    every stored document), and containment queries find what a fresh index finds."""
    texts = {
        f"d{i}": f"{TEXT} part {i % 4} of the story, told again by writer {i % 9} in words {i}"
        for i in range(60)
    }
    with NearDup.open(str(tmp_path / "live.db")) as nd:
        e = nd.engine
        nd.index([Document(i, t) for i, t in list(texts.items())[:40]])
        assert e.postings.samples_behind() == 40 and _postings(e) != _all_postings(e)
        assert [m.id for m in nd.query(id="d1", mode="containment", threshold=0.3)]
        assert e.postings.samples_behind() == 0 and _postings(e) == _all_postings(e)
        nd.index([Document(i, t) for i, t in list(texts.items())[40:]])
        assert e.postings.samples_behind() == 20
        # below samples_upto: at once
        texts["d3"] = "replaced text with zeta words only, nothing of the story at all here"
        texts["d45"] = (
            "another zeta replacement with words of its own, far from the story"  # not yet
        )
        nd.index([Document("d3", texts["d3"]), Document("d45", texts["d45"])])
        nd.delete(["d7", "d59"])
        del texts["d7"], texts["d59"]
        with NearDup.open(str(tmp_path / "fresh.db")) as ref:
            ref.index([Document(i, t) for i, t in texts.items()])
            for q in ("d1", "d3", "d45", "d50"):
                got = [
                    (m.id, m.containment)
                    for m in nd.query(id=q, mode="containment", threshold=0.3, top_k=100)
                ]
                assert got == [
                    (m.id, m.containment)
                    for m in ref.query(id=q, mode="containment", threshold=0.3, top_k=100)
                ], q
        assert e.postings.samples_behind() == 0 and _postings(e) == _all_postings(e)
        nd.index(
            [Document("d3", texts["d3"] + " and a new ending")]
        )  # an update at or below samples_upto
        assert _postings(e) == _all_postings(e)


def test_collisions_on_a_sample_field_add_its_postings_first(tmp_path):
    with NearDup.open(str(tmp_path / "x.db")) as nd:
        nd.index([Document(f"d{i}", f"{TEXT} and a tail of its own number {i}") for i in range(12)])
        assert nd.engine.postings.samples_behind() == 12
        found = nd.pairs(threshold=0.3, fields=["winnow"])
        assert found and nd.engine.postings.samples_behind() == 0
        assert nd.pairs(threshold=0.3, fields=["winnow"]) == found


def test_catching_up_reads_the_documents_behind_in_chunks_and_says_so_when_many(tmp_path):
    with NearDup.open(str(tmp_path / "x.db")) as nd:
        nd.index([Document(f"d{i}", f"word{i} shared text") for i in range(5)])
        e, said = nd.engine, []
        e.on_wait = said.append
        chunks = list(
            e.connection.rows_after(e.connection.require(), "id", 1, 2, "things", "the first look")
        )
        assert [[i for _, i in rows] for rows in chunks] == [["d1", "d2"], ["d3", "d4"]]
        assert said == [
            f"adding 4 documents' things of {e.path} (once, for the first look after indexing)"
        ]
        assert (
            list(
                e.connection.rows_after(
                    e.connection.require(), "id", 1, 4, "things", "the first look"
                )
            )
            and len(said) == 1
        )  # 4 is not many


def test_the_first_search_adds_the_documents_once(tmp_path):
    path = str(tmp_path / "x.db")
    with NearDup.open(path) as nd:
        nd.index([Document(f"d{i}", f"word{i} shared text") for i in range(30)])
    with NearDup.open(path) as nd:
        assert len(nd.search("shared", size=50)) == 30
        upto = (
            nd.engine.connection.require()
            .execute("SELECT value FROM meta WHERE key = 'fts_upto'")
            .fetchone()[0]
        )
        assert int(upto) == 30 and nd.engine.fulltext_index.fulltext_behind() == 0
    with NearDup.open(path) as nd:  # already added: nothing to do
        assert nd.engine.fulltext_index.fulltext_behind() == 0 and len(nd.search("word7")) == 1


def _signed(nd, ids):
    return [nd.signer.sign(Document(i, f"{i} has words of its own: {TEXT}")) for i in ids]


def _seen_by_another_connection(path) -> int:
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT COUNT(*) FROM docs").fetchone()[0]
    finally:
        con.close()


def test_writes_in_a_row_commit_every_few_seconds_and_at_the_end(tmp_path):
    path = str(tmp_path / "row.db")
    with NearDup.open(path) as nd:
        e = nd.engine
        e.connection.commit_every = 3600.0
        with e.writes_in_a_row():
            for b in range(3):
                with e.writer():
                    e.put(_signed(nd, [f"b{b}-{i}" for i in range(4)]))
            assert _seen_by_another_connection(path) == 0  # one transaction so far
        assert _seen_by_another_connection(path) == 12  # committed at the end
        e.connection.commit_every = 0.0
        with e.writes_in_a_row():
            with e.writer():
                e.put(_signed(nd, ["c0"]))
            assert _seen_by_another_connection(path) == 13  # committed after the session


def test_a_failing_session_in_a_row_is_undone_alone_and_the_ones_before_are_committed(tmp_path):
    path = str(tmp_path / "fail.db")
    with NearDup.open(path) as nd:
        e = nd.engine
        e.connection.commit_every = 3600.0
        with pytest.raises(RuntimeError, match="boom"):
            with e.writes_in_a_row():
                with e.writer():
                    e.put(_signed(nd, ["kept-1", "kept-2"]))
                with e.writer():
                    e.put(_signed(nd, ["lost"]))
                    raise RuntimeError("boom")
        assert _seen_by_another_connection(path) == 2
        assert set(e.get(["kept-1", "kept-2", "lost"])) == {"kept-1", "kept-2"}
        with e.writer():  # and the next session starts a transaction of its own
            e.put(_signed(nd, ["after"]))
        assert _seen_by_another_connection(path) == 3


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3),
            st.lists(st.integers(0, 6), max_size=5),
            st.integers(1, 3),
            st.integers(0, 2),
        ),
        max_size=6,
    ),
    st.lists(st.tuples(st.integers(0, 6), st.integers(1, 9)), max_size=25, unique=True),
    st.integers(0, 4),
    st.integers(5, 10),
)
def test_matched_documents_are_the_definition(groups, postings, after, before):
    """Groups (query, keys, need, field) against postings (key, doc): per (query, document)
    the keys matched in the groups it matches (at least ``need`` distinct keys of a group,
    seq strictly between after and before), ranked by query, score descending, document."""
    from neardup.engines.embedded import matched_documents

    keys = np.array([k for _, ks, _, _ in groups for k in ks], dtype=np.int64)
    owner = np.array([g for g, (_, ks, _, _) in enumerate(groups) for _ in ks], dtype=np.int64)
    hk = np.array([k for k, _ in postings], dtype=np.int64)
    hd = np.array([d for _, d in postings], dtype=np.int64)
    n_q = 4
    got = matched_documents(
        keys,
        owner,
        hk,
        hd,
        np.array([q for q, *_ in groups], dtype=np.int64),
        np.array([n for _, _, n, _ in groups], dtype=np.int64),
        np.array([f for *_, f in groups], dtype=np.int64),
        np.full(n_q, after),
        np.full(n_q, before),
    )
    want: dict[tuple[int, int], list[int]] = {}
    for q, ks, need, field in groups:
        for doc in sorted({d for _, d in postings}):
            c = sum(
                1 for k in set(ks) for pk, pd in postings if pk == k and pd == doc
            )  # distinct keys, as SQL's IN
            if after < doc < before and c >= need:
                s = want.setdefault((q, doc), [0, 0])
                s[0] += c
                s[1] |= 1 << field
    expect = sorted(
        ((q, d, s, f) for (q, d), (s, f) in want.items()), key=lambda r: (r[0], -r[2], r[1])
    )
    assert list(zip(*[x.tolist() for x in got], strict=True)) == expect


def test_new_files_have_64_kib_pages_and_older_page_sizes_still_open(tmp_path, monkeypatch):
    """Rows of long documents (7-9 KB) fill 64 KiB pages seven or eight at a time; a file made
    with another page size keeps it, and reads and writes as before."""
    from neardup.engines.embedded import schema

    texts = [
        f"document {i} " + " ".join(f"word{(i * 7 + j) % 97}" for j in range(60)) for i in range(30)
    ]
    page = lambda p: sqlite3.connect(p).execute("PRAGMA page_size").fetchone()[0]  # noqa: E731
    new = str(tmp_path / "new.db")
    nd = NearDup.open(new)
    nd.index([Document(f"d{i}", t) for i, t in enumerate(texts)])
    nd.close()
    assert page(new) == 65536
    monkeypatch.setattr(schema, "PAGE_SIZE", 16384)
    old = str(tmp_path / "old.db")
    nd = NearDup.open(old)
    nd.index([Document(f"d{i}", t) for i, t in enumerate(texts[:15])])
    nd.close()
    monkeypatch.setattr(schema, "PAGE_SIZE", 65536)
    nd = NearDup.open(old)
    nd.index([Document(f"d{i}", t) for i, t in enumerate(texts)])
    assert nd.count() == 30 and nd.query(texts[3])[0].id == "d3"
    nd.close()
    assert page(old) == 16384


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="workers are forked on Linux only")
@pytest.mark.parametrize("search_ready", [False, True])
def test_signing_workers_prepare_the_rows_the_engine_stores(tmp_path, monkeypatch, search_ready):
    """With signing workers, each batch reaches ``put`` with the keys columns the workers
    made (for every document of it) and, for a ``search_ready`` engine, the full-text words;
    the index is the one made without them: the same documents, keys, tags and search hits."""
    from neardup.engines.embedded import KeyColumns, PreparedRows

    seen = []
    real = EmbeddedEngine.put

    def put(self, docs, tags=None, *, prepared=None):
        seen.append((prepared, [s.id for s in docs]))
        return real(self, docs, tags, prepared=prepared)

    monkeypatch.setattr(EmbeddedEngine, "put", put)
    docs = [
        Document(f"d{i}", f"{TEXT} number {i} " + "word " * (i % 5), title=f"Files {i}")
        for i in range(40)
    ]
    words = ("files", "number7", "word", "fox")
    with NearDup.open(str(tmp_path / "w.db"), search_ready=search_ready) as nd:
        nd.index(docs, batch_size=10, workers=2, progress=None)
        with_workers = [(d.id, d.keys.keys(), d.tags) for d in nd.engine.scan()]
        hits = [_hits(nd, w) for w in words]
    made = [(p, ids) for p, ids in seen if p is not None]
    assert made and all(
        isinstance(p, PreparedRows)
        and isinstance(p.keys, KeyColumns)
        and set(ids) <= set(p.keys.columns)
        and (set(ids) <= set(p.words) if search_ready else not p.words)
        for p, ids in made
    )
    monkeypatch.setattr(EmbeddedEngine, "put", real)
    with NearDup.open(str(tmp_path / "p.db")) as nd:
        nd.index(docs, batch_size=10, workers=0, progress=None)
        assert [(d.id, d.keys.keys(), d.tags) for d in nd.engine.scan()] == with_workers
        assert [_hits(nd, w) for w in words] == hits


def test_merging_recent_postings_changes_no_candidate_nor_tag(tmp_path):
    """New postings go to ``recent_postings`` and are merged into ``postings`` once it is
    full: with merges every few dozen postings (through indexing, an update, a delete and the
    sample catch-up) the postings, the tags, the candidates and the containment matches are
    those of an index that never merged."""
    import json

    from .corpora import SAMPLE

    recs = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    docs = [Document(r["id"], r["text"]) for r in recs]
    out = []
    for name, most in (("merged.db", 37), ("recent.db", 10**9)):
        with NearDup.open(str(tmp_path / name)) as nd:
            e = nd.engine
            e.postings.recent_max = most
            nd.index(docs[: len(docs) // 2], batch_size=7)
            nd.index(docs[len(docs) // 2 :], batch_size=7)
            nd.index([Document(docs[3].id, docs[4].text + " and a tail")])
            nd.delete([docs[5].id])
            db = e.connection.require()
            merged, recent = (
                db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                for t in ("postings", "recent_postings")
            )
            assert (merged > 0 and recent < most) if most < 10**6 else merged == 0
            assert _postings(e) == sorted(set(_postings(e))) != []
            queries = _mixed_queries(nd, list(e.scan()))
            containment = [
                [(m.id, m.containment) for m in nd.query(id=d.id, mode="containment", top_k=50)]
                for d in docs[:40:3]
            ]
            assert _postings(e) == _all_postings(e)
            out.append(
                (
                    [(t.id, t.tags) for t in e.scan_tags()],
                    e.candidates(queries),
                    [e.postings.candidates_sql(q) for q in queries],
                    containment,
                    _postings(e),
                    sorted((p.a, p.b, p.resemblance) for p in nd.pairs(0.5)),  # (merges first)
                )
            )
    assert sum(map(len, out[0][1])) > 50 and any(out[0][3]) and out[0][5]
    assert out[0] == out[1]


def test_candidates_read_through_the_narrow_index_equal_those_read_from_the_rows(tmp_path):
    """A new file filters candidates through the covering index ``docs_filter`` (never a
    ``docs`` row): after indexing, an update and a delete, the candidates equal those of the
    same file without the index (read from the rows, as in older files) and the reference
    form's; the statement reads the index alone."""
    import json

    from .corpora import SAMPLE

    recs = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    docs = [Document(r["id"], r["text"]) for r in recs]
    db_path = str(tmp_path / "f.db")
    with NearDup.open(db_path) as nd:
        nd.index(docs, batch_size=9)
        nd.index([Document(docs[3].id, docs[4].text + " and a tail")])
        nd.delete([docs[5].id])
        e = nd.engine
        queries = _mixed_queries(nd, list(e.scan()))
        seen: list[str] = []
        e.connection.require().set_trace_callback(seen.append)
        through_index = e.postings.candidates_batched(queries)
        e.connection.require().set_trace_callback(None)
        reference = [e.postings.candidates_sql(q) for q in queries]
        filtering = [s for s in seen if "INDEXED BY docs_filter" in s]
        assert e.connection.filter_index and filtering
        plan = e.connection.require().execute(f"EXPLAIN QUERY PLAN {filtering[0]}").fetchall()
        assert any("COVERING INDEX docs_filter" in row[-1] for row in plan)
    assert sum(map(len, through_index)) > 50 and through_index == reference
    run_sql(db_path, "DROP INDEX docs_filter")
    with NearDup.open(db_path) as nd:
        assert not nd.engine.connection.filter_index
        assert nd.engine.postings.candidates_batched(queries) == through_index


def _fulltext_terms(engine):
    """Every (term, document, column, position) of the full-text index."""
    db = engine.connection.require()
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.terms USING fts5vocab(main, fts, instance)")
    return sorted(db.execute("SELECT term, doc, col, offset FROM temp.terms"))


def _sample_docs():
    """The bundled sample and the test data's documents (en, ru, fa, de, ...), ids distinct."""
    import json

    from .corpora import FA_ZWNJ_SAMPLE, SAMPLE

    recs = [
        json.loads(line)
        for p in (SAMPLE, FA_ZWNJ_SAMPLE, FA_ZWNJ_SAMPLE.parent / "languages_sample.jsonl")
        for line in p.read_text(encoding="utf-8").splitlines()
    ]
    return [
        Document(r["id"], r["text"], title=r.get("title"), lang=r.get("lang"))
        for r in {r["id"]: r for r in recs}.values()
    ]


def _day(path, docs):
    """What the first searches and containment queries answer on the index at ``path``,
    with its full-text terms and postings after them."""
    words = ["license", "москва", "آلودگی هوا", "Stadtverwaltung", "the software", "работаю"]
    ids = [d.id for d in docs[:: max(1, len(docs) // 6)]]
    with NearDup.open(path) as nd:
        out = (
            [_hits(nd, w) for w in words],
            [
                [(m.id, m.containment) for m in nd.query(id=i, mode="containment", top_k=50)]
                for i in ids
            ],
            _fulltext_terms(nd.engine),
            _postings(nd.engine),
        )
        assert (
            nd.engine.fulltext_index.fulltext_behind() == nd.engine.postings.samples_behind() == 0
        )
    assert any(out[0]) and any(out[1]) and out[2]
    return out


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="workers are forked on Linux only")
def test_search_ready_indexing_leaves_what_the_catch_up_would_make(tmp_path):
    """``search_ready`` (with signing workers, as the command runs it): after ``index`` the
    full-text index and the winnowing postings hold every document, nothing is left for the
    first search or containment query, and both answer as on an index made by default and
    caught up by them: the same hits, the same terms and postings. Updates and deletes keep
    it so."""
    docs = _sample_docs()
    ready, behind = str(tmp_path / "ready.db"), str(tmp_path / "behind.db")
    with NearDup.open(ready, search_ready=True) as nd:
        nd.index(docs, batch_size=8, workers=1, progress=None)
        assert (
            nd.engine.fulltext_index.fulltext_behind() == 0
            and nd.engine.postings.samples_behind() == 0
        )
        assert _postings(nd.engine) == _all_postings(nd.engine)
    with NearDup.open(behind) as nd:
        nd.index(docs, batch_size=8, workers=1, progress=None)
        assert (
            nd.engine.fulltext_index.fulltext_behind()
            == nd.engine.postings.samples_behind()
            == len(docs)
        )
    assert _day(ready, docs) == _day(behind, docs)
    edited = [Document(docs[2].id, docs[2].text + " and a new ending"), Document("new", TEXT)]
    for path in (ready, behind):
        with NearDup.open(path, search_ready=path == ready) as nd:
            nd.index(edited, progress=None)
            nd.delete([docs[5].id])
            assert nd.engine.fulltext_index.fulltext_behind() == (0 if path == ready else 1)
    assert _day(ready, docs) == _day(behind, docs)


def test_search_ready_waits_for_a_file_left_behind(tmp_path):
    """On an index whose full-text index and winnowing postings are behind (made without
    ``search_ready``), ``search_ready`` indexing leaves new documents behind too, for the
    first search and containment query to add with the others."""
    docs = _sample_docs()
    path = str(tmp_path / "x.db")
    with NearDup.open(path) as nd:
        nd.index(docs[:10], progress=None)
    with NearDup.open(path, search_ready=True) as nd:
        nd.index(docs[10:20], progress=None)
        assert (
            nd.engine.fulltext_index.fulltext_behind() == nd.engine.postings.samples_behind() == 20
        )
        assert (
            _hits(nd, docs[12].text.split()[0]) and nd.engine.fulltext_index.fulltext_behind() == 0
        )
        nd.index(docs[20:30], progress=None)
        assert (
            nd.engine.fulltext_index.fulltext_behind() == 0
            and nd.engine.postings.samples_behind() == 30
        )
