"""What the arrival-order tagging rule needs from the HTTP engine, against osmem: candidate
filters on ``seq`` and representatives, the light tag scan, members of representatives,
deletes that count, and the write lease that serializes writers across processes."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from neardup.config import Config
from neardup.engines.base import CandidateQuery, EngineError, KeyGroup, Tags
from neardup.engines.elastic import ElasticEngine
from neardup.engines.elastic.lease import LeaseLost
from neardup.signing.signer import Signer
from neardup.signing.records import Document

from .conftest import http_pipeline
from .test_elastic_engine import _texts

pytestmark = pytest.mark.http
DUP_OF_D01 = Tags(cluster_id="d01", dup_of="d01", max_resemblance=0.9, is_duplicate=True)

from .corpora import NEARDUP_PATH

PLUGIN = NEARDUP_PATH  # the neardup under test, for child processes


def _engine(url: str, **kw) -> ElasticEngine:
    opts = {"index": "tg", "pipeline": http_pipeline(), "max_retries": 2, "initial_backoff": 0.01}
    opts.update(kw)
    return ElasticEngine.from_options(url, **opts)


@pytest.fixture
def loaded(url):
    """An engine holding 24 documents: even positions duplicates of d00, odd ones
    representatives."""
    eng = _engine(url)
    eng.open(Config())
    signer = Signer(eng.config)
    signed = [signer.sign(d) for d in _texts()]
    tags = {s.id: (Tags(cluster_id=s.id) if i % 2 else DUP_OF_D01) for i, s in enumerate(signed)}
    tags["d00"] = Tags(cluster_id="d00")
    tags["d04"] = Tags(cluster_id="d03", dup_of="d03", max_resemblance=0.85, is_duplicate=True)
    assert eng.put(signed[:10], tags) == [] and eng.put(signed[10:], tags) == []
    yield eng, signed, tags
    eng.close()


def _query(s) -> CandidateQuery:
    return CandidateQuery(
        tuple(
            KeyGroup(f, tuple(int(k) for k in s.keys[f]), 1)
            for f in ("exact", "minhash", "simhash")
        )
    )


def test_candidates_filter_on_arrival_order_and_representatives(loaded):
    eng, signed, tags = loaded
    seqs = {d.id: d.seq for d in eng.scan()}
    assert sorted(seqs.values()) == list(range(1, 25))
    base = eng.candidates([_query(s) for s in signed])
    assert any(len(c) > 2 for c in base)
    for cands in base:
        assert all(c.seq == seqs[c.id] for c in cands)  # Candidate.seq is filled
        # most matching keys first, then arrival order
        assert [(-c.score, c.seq) for c in cands] == sorted((-c.score, c.seq) for c in cands)
    for cut in (5, 12, 20):
        for flt in (
            {"before_seq": cut},
            {"after_seq": cut},
            {"representatives": True},
            {"before_seq": cut, "representatives": True},
            {"before_seq": cut + 3, "after_seq": cut - 3},
        ):
            qs = [CandidateQuery(_query(s).groups, **flt) for s in signed]
            got = eng.candidates(qs)
            for cands, ref in zip(got, base, strict=True):
                want = [c for c in ref if _keeps(c, flt, tags)]
                assert [(c.id, c.seq, c.score) for c in cands] == [
                    (c.id, c.seq, c.score) for c in want
                ], flt
    reps = eng.candidates(
        [CandidateQuery(_query(signed[4]).groups, representatives=True, limit=2)]
    )[0]
    assert len(reps) <= 2 and all(not tags[c.id].is_duplicate for c in reps)


def _keeps(c, flt, tags) -> bool:
    if "before_seq" in flt and not c.seq < flt["before_seq"]:
        return False
    if "after_seq" in flt and not c.seq > flt["after_seq"]:
        return False
    return not (flt.get("representatives") and tags[c.id].is_duplicate)


def test_scan_tags_and_members(loaded):
    eng, signed, tags = loaded
    rows = list(eng.scan_tags(batch_size=5))
    full = list(eng.scan(batch_size=7))
    assert [(r.id, r.seq, r.tags, r.title, r.lang, r.indexed_at) for r in rows] == [
        (d.id, d.seq, d.tags, d.title, d.lang, d.indexed_at) for d in full
    ]
    assert [r.id for r in rows] == [s.id for s in signed] and all(
        r.tags == tags[r.id] for r in rows
    )
    eng.remote.paging = dataclasses.replace(eng.remote.paging, page_size=3)  # members: search_after
    got = eng.members(["d01", "d03", "d00", "nobody"])
    want: dict[str, list[str]] = {}
    for r in rows:
        if r.tags.dup_of in ("d01", "d03", "d00"):
            want.setdefault(r.tags.dup_of, []).append(r.id)
    assert got == want and len(got["d01"]) == 10 and got["d03"] == ["d04"]


def test_delete_counts_what_it_deleted(loaded):
    eng, signed, _ = loaded
    assert eng.delete(["d01", "d02", "d02", "absent"]) == 2
    assert eng.delete([]) == 0 and eng.delete(["absent"]) == 0
    assert eng.count() == 22 and not eng.get(["d01", "d02"])


def test_writes_in_a_session_are_seen_by_the_next_batch(url):
    eng = _engine(url)
    eng.open(Config())
    signer = Signer(eng.config)
    first, second = _texts(6), _texts(6, seed=11)
    with eng.writer():
        assert eng.put([signer.sign(d) for d in first]) == []
        s = signer.sign(Document("again", first[2].text))
        assert first[2].id in [c.id for c in eng.candidates([_query(s)])[0]]
        assert eng.put([signer.sign(Document(f"x{d.id}", d.text)) for d in second]) == []
    assert [d.seq for d in eng.scan()] == list(range(1, 13))
    assert (
        eng.sessions.lease is not None
        and not eng.sessions.lease.held
        and eng.sessions.lease.holder() is None
    )
    eng.close()


def test_lease_waits_for_the_holder_then_takes_turn(url):
    a, b = _engine(url), _engine(url)
    a.open(Config())
    b.open()
    waits: list = []
    b.on_wait = waits.append
    order: list[str] = []
    held = threading.Event()

    def hold() -> None:
        with a.writer():
            held.set()
            order.append("a in")
            time.sleep(0.6)
            order.append("a out")

    t = threading.Thread(target=hold)
    t.start()
    held.wait(5)
    with b.writer():
        order.append("b in")
    t.join()
    assert order == ["a in", "a out", "b in"]
    assert len(waits) == 1  # once per writer waited for, however long
    assert waits[0].startswith(
        f"waiting for another writer (owner {socket.gethostname()} pid {os.getpid()}, since "
    )
    a.close()
    b.close()


def test_expired_lease_is_taken_over_and_the_stalled_writer_stops(url):
    a = _engine(
        url, lease_duration=3.0
    )  # long enough that opening b never outlasts it, even on a busy machine
    a.open(Config())
    stalled = a.sessions.lease_of()
    stalled.acquire()  # a writer that never releases (killed, or stalled)
    taken = time.monotonic()
    b = _engine(url, lease_timeout=0.2)
    b.open()
    with pytest.raises(EngineError, match="another writer holds the write lease.*pid"):
        with b.writer():
            pass
    time.sleep(max(0.0, taken + 3.2 - time.monotonic()))  # the stalled lease has expired
    b.remote.lease_times = dataclasses.replace(b.remote.lease_times, timeout=None)
    with b.writer():
        assert b.sessions.lease.holder().owner == b.sessions.lease.owner
        with pytest.raises(LeaseLost, match="took it over"):
            stalled.renew(force=True)
    assert b.sessions.lease.holder() is None
    a.close()
    b.close()


_WRITER = r"""
import json, sys
from neardup.engines.elastic import ElasticEngine
from neardup.signing.signer import Document, Signer
url, name = sys.argv[1], sys.argv[2]
eng = ElasticEngine.from_options(url, index="tg", pipeline=sys.argv[3] == "1")
eng.open()
signer = Signer(eng.config)
for b in range(4):
    texts = [f"{name} writes batch {b} document {i} with words of its own" for i in range(5)]
    docs = [signer.sign(Document(f"{name}-{b}-{i}", t)) for i, t in enumerate(texts)]
    assert eng.put(docs) == []
eng.close()
"""


def test_two_processes_never_assign_the_same_seq(osmem_clone):
    url = osmem_clone.url
    eng = _engine(url)
    eng.open(Config())
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(PLUGIN), os.environ.get("PYTHONPATH", "")]),
    }
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, url, name, "1" if http_pipeline() else "0"],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("p", "q")
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    seqs = [d.seq for d in eng.scan_tags()]
    assert len(seqs) == 40 and sorted(seqs) == list(range(1, 41))
    by_writer = json.dumps(sorted(r.id.split("-")[0] for r in eng.scan_tags()))
    assert by_writer.count('"p"') == 20 and by_writer.count('"q"') == 20
    eng.close()


def test_a_long_session_keeps_its_lease_without_writing(url):
    a = _engine(url, lease_duration=1.2)  # (renewed every 0.4 s: margin for a busy machine)
    a.open(Config())
    b = _engine(url, lease_timeout=2.5)  # waits twice as long as the lease lasts
    b.open()
    with a.writer():  # reads for longer than the lease lasts, no write: the keep-alive renews it
        time.sleep(0.2)
        with pytest.raises(EngineError, match="another writer holds the write lease"):
            with b.writer():
                pass
        assert (
            a.sessions.lease.lost is None
            and a.sessions.lease.holder().owner == a.sessions.lease.owner
        )
        a.put(
            [
                Signer(a.config).sign(
                    Document("late", "a write at the end of a long session still holds")
                )
            ]
        )
    assert a.sessions.lease._thread is None and a.sessions.lease.holder() is None
    b.remote.lease_times = dataclasses.replace(b.remote.lease_times, timeout=None)
    with b.writer():
        assert b.sessions.lease.holder().owner == b.sessions.lease.owner
    a.close()
    b.close()


def test_a_run_matches_its_own_documents_over_every_turn_of_the_lease(url, tmp_path, monkeypatch):
    """Handing the lease over between two batches of a run (here after each one) keeps the
    run's own documents matched in this process when no other writer took the lease
    between: a run into an empty index asks the engine for no candidate, and tags as the
    embedded engine does."""
    from neardup import NearDup

    from .test_behaviour import CONFIG, sample_docs

    docs = sample_docs()
    with NearDup.open(str(tmp_path / "ref.db"), CONFIG) as ref:
        ref.index(docs, batch_size=20, progress=None)
        want = {i: d.tags for i, d in ref.engine.get([d.id for d in docs]).items()}
    opts = {"index": "turns", "pipeline": http_pipeline(), "lease_hold": 0.0}
    with NearDup.open(url, CONFIG, **opts) as nd:
        asked: list[int] = []
        monkeypatch.setattr(
            nd.engine,
            "_stored_candidates",
            lambda queries: asked.append(len(queries)) or [[] for _ in queries],
        )
        turns: list[bool] = []
        take = nd.engine.sessions.lease_of().acquire

        def acquire() -> None:
            take()
            turns.append(nd.engine.sessions.lease.resumed)

        monkeypatch.setattr(nd.engine.sessions.lease, "acquire", acquire)
        assert nd.index(docs, batch_size=20, progress=None).indexed == len(docs)
        got = {i: d.tags for i, d in nd.engine.get([d.id for d in docs]).items()}
    assert len(turns) == len(docs) // 20 and turns[1:] == [True] * (len(turns) - 1)
    assert asked == []
    assert got == want and any(t.is_duplicate for t in want.values())


def test_a_turn_of_another_writer_between_ends_what_the_run_held(url):
    """When another writer took the lease between two turns of a run, the run's next turn
    holds nothing of the last: the engine answers for every document stored before it."""
    a, b = _engine(url, lease_hold=0.0), _engine(url)
    a.open(Config())
    b.open(Config())
    signer = Signer(a.config)
    docs = [signer.sign(d) for d in _texts(9)]
    with a.writes_in_a_row():
        with a.writer():
            assert a.put(docs[:3]) == []
        with a.writer():
            assert a.sessions.turn.start_seq == 1 and len(a.sessions.turn.recent) == 3
            assert a.put(docs[3:6]) == []
        assert b.put(docs[6:7]) == []
        with a.writer():
            assert a.sessions.turn.start_seq == 8 and len(a.sessions.turn.recent) == 0
            s = signer.sign(Document("again", docs[6].doc.text))
            assert docs[6].id in [c.id for c in a.candidates([_query(s)])[0]]
            assert a.put(docs[7:]) == []
    assert [d.seq for d in a.scan()] == list(range(1, 10))
    a.close()
    b.close()


def _recorded_reads(nd, monkeypatch) -> list[tuple[str, ...]]:
    """The ids of every ``_mget`` the engine of ``nd`` sends from now on, a tuple each."""
    read: list[tuple[str, ...]] = []
    mget = nd.engine.remote.client.mget

    def recorded(**kw):
        read.append(tuple(d["_id"] for d in kw["body"]["docs"]))
        return mget(**kw)

    monkeypatch.setattr(nd.engine.remote.client, "mget", recorded)
    return read


def test_a_batch_reads_its_documents_once(url, monkeypatch):
    """A batch of ``index`` reads the stored versions of its ids once (one ``_mget``), and
    the write after it reuses what that read found."""
    from neardup import NearDup

    docs = _texts(15)
    batches = [tuple(d.id for d in docs[i : i + 5]) for i in range(0, 15, 5)]
    with NearDup.open(url, Config(), index="once", pipeline=http_pipeline()) as nd:
        read = _recorded_reads(nd, monkeypatch)
        for _ in range(2):  # new documents, then the same again (unchanged)
            read.clear()
            nd.index(docs, batch_size=5, progress=None)
            assert [read.count(b) for b in batches] == [1, 1, 1], read
        assert [d.seq for d in nd.engine.scan()] == list(range(1, 16))


@pytest.mark.parametrize("command", ["retag", "index"])
def test_the_cli_says_who_holds_the_lease_while_it_waits(osmem_clone, tmp_path, command):
    from click.testing import CliRunner

    from neardup.cli import main

    url = osmem_clone.url
    holder = _engine(url, index="cli")
    holder.open(Config())
    signer = Signer(holder.config)
    holder.put([signer.sign(d) for d in _texts(5)])
    done = threading.Event()

    def hold() -> None:
        with holder.writer():
            done.wait(10)
            time.sleep(0.5)

    t = threading.Thread(target=hold)
    t.start()
    time.sleep(0.3)
    done.set()
    docs = tmp_path / "more.jsonl"
    docs.write_text(
        '{"id": "late", "text": "a later document with words of its own"}\n', encoding="utf-8"
    )
    args = ["retag", "--json"] if command == "retag" else ["index", str(docs)]
    r = CliRunner().invoke(
        main, [*args, "--engine", url, "--index", "cli", "-q"], catch_exceptions=False
    )
    t.join()
    assert r.exit_code == 0, r.output
    assert (
        f"waiting for another writer (owner {holder.sessions.lease.owner.split(':')[0]} "
        f"pid {os.getpid()}, since" in r.stderr
    )
    holder.close()


def test_a_run_verifies_against_its_own_documents_without_reading_them(url, monkeypatch):
    """Candidates among the documents a run stored are verified with the shingles the run
    kept of them: each batch reads its own ids once (to sort out what is stored), and no
    document of an earlier batch is read again."""
    from neardup import NearDup

    from .test_behaviour import CONFIG, sample_docs

    docs = sample_docs()
    batches = [tuple(d.id for d in docs[i : i + 20]) for i in range(0, len(docs), 20)]
    with NearDup.open(url, CONFIG, index="own", pipeline=http_pipeline()) as nd:
        read = _recorded_reads(nd, monkeypatch)
        report = nd.index(docs, batch_size=20, progress=None)
    assert report.duplicates > 0
    assert read == batches


def test_a_copy_of_a_document_refused_in_the_batch_before_is_tagged_without_it(url, tmp_path):
    """The next batch is tagged while the one before is stored: when the engine refuses a
    document of it (here a field mapped as text in one document and given as an object in
    the next), a copy of that document in the next batch does not join it, and every
    stored tag is the embedded engine's for the documents stored."""
    from neardup import NearDup

    from .test_hardening import good_text

    refused = Document("refused", good_text(7), fields={"x": {"an": "object"}})
    docs = [
        Document("first", good_text(1), fields={"x": "a string"}),
        refused,
        Document("copy", good_text(7) + " once more", fields={"x": "a string"}),
        Document("other", good_text(2), fields={"x": "a string"}),
    ]
    stored = [d for d in docs if d is not refused]
    with NearDup.open(str(tmp_path / "ref.db"), Config()) as ref:
        ref.index(stored, batch_size=2, progress=None)
        want = {i: d.tags for i, d in ref.engine.get([d.id for d in stored]).items()}
    with NearDup.open(url, Config(), index="refusal", pipeline=http_pipeline()) as nd:
        report = nd.index(docs, batch_size=2, progress=None)
        got = {i: d.tags for i, d in nd.engine.get([d.id for d in docs]).items()}
    assert [f.id for f in report.failed] == ["refused"]
    assert report.indexed == 3 and report.duplicates == 0
    assert got == want and not got["copy"].is_duplicate


def test_the_next_batch_is_read_and_tagged_while_a_batch_is_stored(url, monkeypatch):
    """A run keeps one ``_bulk`` in flight: the next batch is read (and tagged) before the
    engine has answered the batch before it."""
    from neardup import NearDup

    docs = _texts(10)
    second = {d.id for d in docs[5:]}
    with NearDup.open(url, Config(), index="overlap", pipeline=http_pipeline()) as nd:
        client, helpers = nd.engine.remote.client, nd.engine.remote.helpers
        mget = client.mget
        read_second, overlapped = threading.Event(), []

        class Helpers:  # the client's helpers, the first bulk waiting for the second read
            def __getattr__(self, name):
                return getattr(helpers, name)

            def streaming_bulk(self, *a, **kw):
                if not overlapped:
                    overlapped.append(read_second.wait(timeout=10))
                return helpers.streaming_bulk(*a, **kw)

        def recorded_mget(**kw):
            if {d["_id"] for d in kw["body"]["docs"]} == second:
                read_second.set()
            return mget(**kw)

        monkeypatch.setattr(nd.engine.remote, "helpers", Helpers())
        monkeypatch.setattr(client, "mget", recorded_mget)
        assert nd.index(docs, batch_size=5, progress=None).indexed == 10
        assert [d.seq for d in nd.engine.scan()] == list(range(1, 11))
    assert overlapped == [True]
