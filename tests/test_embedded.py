"""The embedded SQLite engine: creation, settings stored with the index, upserts, crash safety."""

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from neardup import Config, ConfigMismatch, Document, NearDup
from neardup.engines.base import CandidateQuery, EngineError, KeyGroup
from neardup.engines.embedded import EmbeddedEngine, pack_keys, unpack_keys

TEXT = "the quick brown fox jumps over the lazy dog while the cat watches from the old wooden fence"


def test_settings_are_stored_and_used_on_reopen(tmp_path):
    db = tmp_path / "x.db"
    NearDup.open(str(db), Config(threshold=0.6, shingle_size=3)).close()
    with NearDup.open(str(db)) as nd:
        assert nd.config.threshold == 0.6 and nd.config.shingle_size == 3


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
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t(x)")
    con.commit()
    con.close()
    with pytest.raises(EngineError, match="SQLite database but not a neardup index"):
        NearDup.open(str(other))


def test_missing_index_without_create(tmp_path):
    with pytest.raises(EngineError, match="no such neardup index"):
        NearDup.open(str(tmp_path / "none.db"), create=False)


def test_upsert_by_id_replaces_postings_and_text(tmp_path):
    with NearDup.open(str(tmp_path / "x.db")) as nd:
        nd.index([Document("a", TEXT), Document("b", "completely different words about databases and sqlite files")], progress=None)
        nd.index([Document("a", "entirely new content on astronomy telescopes and distant galaxies tonight")], progress=None)
        assert nd.count() == 2
        assert nd.query(TEXT) == []
        assert [m.id for m in nd.query("entirely new content on astronomy telescopes and distant galaxies tonight")] == ["a"]
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
    assert eng.candidates([CandidateQuery((KeyGroup("winnow", keys, len(keys) + 1),), 0, 10**6)]) == [[]]
    assert eng.candidates([CandidateQuery((KeyGroup("winnow", keys, 1),), s.n_shingles + 1, 10**6)]) == [[]]
    assert eng.candidates([CandidateQuery((KeyGroup("winnow", keys, 1),), 0, 10**6, exclude_id="a")]) == [[]]


def test_keys_blob_round_trip():
    keys = {"exact": np.array([1], dtype=np.uint64), "minhash": np.array([2**64 - 1, 5], dtype=np.uint64)}
    out = unpack_keys(("exact", "minhash", "winnow"), pack_keys(("exact", "minhash", "winnow"), keys))
    assert out["minhash"].tolist() == [2**64 - 1, 5] and out["winnow"].tolist() == []


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
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        for _ in range(600):
            if marker.exists() and len(marker.read_text()) >= 4:
                break
            if proc.poll() is not None:
                break
            import time

            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    with NearDup.open(str(db)) as nd:
        n = nd.count()
        assert n >= 150 and n % 50 == 0  # whole batches only
        nd.index((Document(f"d{i}", f"document {i} " + TEXT) for i in range(n + 20)), batch_size=50, progress=None)
        assert nd.count() == n + 20
