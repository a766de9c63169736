"""Batch signing: every ragged kernel agrees with its one-document form, and
``Signer.sign_batch`` gives what ``Signer.sign`` gives, whatever the batch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.config import Config
from neardup.sketches.hashing import KeySet, fmix64, hash_runs, hash_strings, string_seed
from neardup.sketches.minhash import oph_many, oph_sketch
from neardup.sketches.ragged import offsets_of, segment_sort, segment_unique, split
from neardup.sketches.sampling import winnow, winnow_many
from neardup.sketches.shingles import combine, combine_many
from neardup.signing.signer import Signer
from neardup.signing.records import Document
from neardup.sketches.simhash import (
    hamming,
    hamming_many,
    simhash,
    simhash_many,
    token_simhash,
    token_simhash_many,
)
from neardup.sketches.verify import passes_length_filter, passes_length_filter_many

u64 = st.integers(0, 2**64 - 1)
# small alphabets make repeats, ties and equal neighbours common
docs_of = st.lists(
    st.lists(st.sampled_from([0, 1, 2, 3, 2**63, 2**64 - 1, 12345]) | u64, max_size=40),
    min_size=1,
    max_size=6,
)


def ragged(lists):
    arrays = [np.array(x, dtype=np.uint64) for x in lists]
    return (
        (np.concatenate(arrays) if arrays else np.empty(0, dtype=np.uint64)),
        offsets_of([len(a) for a in arrays]),
        arrays,
    )


@settings(max_examples=200, deadline=None)
@given(docs_of)
def test_segment_sort_and_unique(lists):
    flat, off, arrays = ragged(lists)
    assert [x.tolist() for x in split(segment_sort(flat, off), off)] == [
        sorted(a.tolist()) for a in arrays
    ]
    u, uo, counts = segment_unique(flat, off, return_counts=True)
    for i, a in enumerate(arrays):
        ref, ref_counts = np.unique(a, return_counts=True)
        assert u[uo[i] : uo[i + 1]].tolist() == ref.tolist()
        assert counts[uo[i] : uo[i + 1]].tolist() == ref_counts.tolist()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from([0, 1, 2**63, 2**64 - 1]) | u64, min_size=40, max_size=160),
        min_size=2,
        max_size=5,
    )
)
def test_segment_sort_of_long_documents_one_by_one(lists):
    """Documents of 64 values or more on average take the one-by-one path; same answer."""
    flat, off, arrays = ragged(lists)
    assert [x.tolist() for x in split(segment_sort(flat, off), off)] == [
        sorted(a.tolist()) for a in arrays
    ]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from([0, 1, 2**63, 2**64 - 1]) | u64, max_size=300),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from([0, 50, 63]),
)
def test_segment_unique_compiled_is_the_sorts(lists, shift):
    """The compiled pass (buckets by the top bits, then an insertion sort) against numpy's
    unique, on hashes (spread over the buckets), on values shifted down (crowded into the
    first buckets: the comparison sort) and on short documents (no buckets)."""
    flat, off, arrays = ragged([[v >> shift for v in a] for a in lists])
    u, uo = segment_unique(flat, off, compiled=True)
    assert (
        u.dtype == np.uint64
        and uo.tolist() == offsets_of([len(np.unique(a)) for a in arrays]).tolist()
    )
    assert [x.tolist() for x in split(u, uo)] == [np.unique(a).tolist() for a in arrays]


def test_segment_sort_with_values_agreeing_on_their_top_bits():
    # two values of one document that differ only in the low bits the sort key drops
    flat = np.array([7, (5 << 40) | 3, (5 << 40) | 1, 2, 9], dtype=np.uint64)
    off = np.array([0, 3, 5], dtype=np.int64)
    assert segment_sort(flat, off).tolist() == [7, (5 << 40) | 1, (5 << 40) | 3, 2, 9]


@settings(max_examples=200, deadline=None)
@given(docs_of, st.integers(1, 6))
def test_combine_many_is_combine_per_document(lists, w):
    flat, off, arrays = ragged(lists)
    seq, so = combine_many(flat, off, w)
    for i, a in enumerate(arrays):
        assert seq[so[i] : so[i + 1]].tolist() == combine(a, w).tolist()


def _fmix(x: int) -> int:
    return int(fmix64(np.array([x], dtype=np.uint64))[0])


def oph_reference(s: np.ndarray, k: int, seed: int) -> list[int]:
    """One-permutation hashing written out plainly: minimum per bin, then the per-sketch
    optimal densification."""
    out = [2**64 - 1] * k
    for h in fmix64(s ^ np.uint64(seed)).tolist():
        b = ((h >> 32) * k) >> 32
        out[b] = min(out[b], h)
    if not len(s):
        return out
    base = seed ^ 0xD1B54A32D192ED03
    dense = list(out)
    for e in range(k):  # an empty bin: the first filled bin among its probes a = 1, 2, ...
        a = 1
        while dense[e] == 2**64 - 1:
            b = ((_fmix(((e << 20) + a) ^ base) >> 32) * k) >> 32
            if out[b] != 2**64 - 1:
                dense[e] = out[b]
            a += 1
    return dense


@settings(max_examples=100, deadline=None)
@given(docs_of, st.sampled_from([8, 64, 128]))
def test_oph_many_is_oph_per_document(lists, k):
    sets = [np.unique(np.array(x, dtype=np.uint64)) for x in lists]
    flat, off, _ = ragged([s.tolist() for s in sets])
    m = oph_many(flat, off, k, 3)
    for i, s in enumerate(sets):
        assert m[i].tolist() == oph_sketch(s, k, 3).tolist() == oph_reference(s, k, 3)


def test_oph_many_on_a_large_batch_of_short_documents():
    # thousands of empty bins: the path that probes one column at a time
    rng = np.random.default_rng(5)
    sets = [
        np.unique(rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64))
        for n in rng.integers(0, 40, 300)
    ]
    flat, off, _ = ragged([s.tolist() for s in sets])
    m = oph_many(flat, off, 128, 9)
    for i, s in enumerate(sets):
        assert m[i].tolist() == oph_reference(s, 128, 9)


@settings(max_examples=200, deadline=None)
@given(docs_of, st.integers(1, 9))
def test_winnow_many_is_winnow_per_document(lists, window):
    flat, off, arrays = ragged(lists)
    v, vo = winnow_many(flat, off, window)
    for i, a in enumerate(arrays):
        assert (
            v[vo[i] : vo[i + 1]].tolist()
            == winnow(a, window).tolist()
            == _winnow_by_definition(a.tolist(), window)
        )


def _winnow_by_definition(h: list[int], window: int) -> list[int]:
    """The rightmost minimum of every window of min(window, n) values, each position once:
    Python lists, one window at a time."""
    w, out, last = min(window, len(h)), [], None
    for i in range(len(h) - w + 1 if h else 0):
        m = max(range(i, i + w), key=lambda j: (-h[j], j))  # smallest value, rightmost
        if m != last:
            out.append(h[m])
            last = m
    return out


@settings(max_examples=200, deadline=None)
@given(docs_of)
def test_token_simhash_many_is_per_document_and_order_free(lists):
    flat, off, arrays = ragged(lists)
    fps = token_simhash_many(flat, off)
    for i, a in enumerate(arrays):
        assert int(fps[i]) == token_simhash(a) == token_simhash(a[::-1])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from([0, 1, 2**63, 2**64 - 1, 17, 2**32 + 16, 5]) | u64, max_size=60),
        min_size=1,
        max_size=6,
    )
)
def test_token_simhash_many_weighs_distinct_tokens_by_their_counts(lists):
    """Tokens with repeats (and colliding low bits): the SimHash of the distinct tokens
    weighted 1 + ln(tf), by the bit rule, whatever the order."""
    flat, off, arrays = ragged(lists)
    fps = token_simhash_many(flat, off)
    for i, a in enumerate(arrays):
        distinct, tf = np.unique(a, return_counts=True)
        assert int(fps[i]) == _simhash_by_definition(distinct, 1.0 + np.log(tf))


def _simhash_by_definition(hashes, weights) -> int:
    """Bit j set iff 2 * sum of the weights (in units of 2^-20) of the features with bit j set
    exceeds their total: Python integers, one bit at a time."""
    w = [round(float(x) * (1 << 20)) for x in weights]
    fp = 0
    for j in range(64):
        if 2 * sum(wi for h, wi in zip(hashes.tolist(), w, strict=True) if h >> j & 1) > sum(w):
            fp |= 1 << j
    return fp


@settings(max_examples=150, deadline=None)
@given(
    docs_of,
    st.lists(
        st.sampled_from([1.0, 1.5, 2.0, 1 + np.log(2), 1 + np.log(3), 7.25]),
        min_size=240,
        max_size=240,
    ),
)
def test_simhash_many_is_the_bit_rule_by_definition(lists, pool):
    flat, off, arrays = ragged(lists)
    weights = np.array(pool[: len(flat)], dtype=np.float64)
    fps = simhash_many(flat, weights, off)
    for i, a in enumerate(arrays):
        assert int(fps[i]) == _simhash_by_definition(a, weights[off[i] : off[i + 1]])


def test_simhash_many_over_many_documents():
    rng = np.random.default_rng(3)
    lists = [rng.integers(0, 2**64, size=rng.integers(0, 9), dtype=np.uint64) for _ in range(2600)]
    flat, off, arrays = ragged(lists)
    weights = rng.choice([1.0, 2.0, 1 + np.log(2)], size=len(flat))
    fps = simhash_many(flat, weights, off)
    for i in range(0, 2600, 97):
        assert int(fps[i]) == _simhash_by_definition(arrays[i], weights[off[i] : off[i + 1]])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 1200),
            st.sampled_from([0, 1, 2, 2**64 - 1]),
            st.lists(st.integers(0, 1199), max_size=4),
        ),
        min_size=1,
        max_size=3,
    ),
    st.sampled_from([1.0, 1 + np.log(2)]),
)
def test_simhash_many_of_long_documents_of_one_weight_but_a_few(docs, common):
    """Hundreds of values of one weight (counted 8 bits at a time, each byte emptied before
    it passes 255: all-ones values would overflow it), a few of others anywhere, the last too."""
    rng = np.random.default_rng(len(docs))
    lists, weights = [], []
    for n, fill, odd in docs:
        values = (
            rng.integers(0, 2**64, size=n, dtype=np.uint64)
            if fill == 2
            else np.full(n, fill, dtype=np.uint64)
        )
        w = np.full(n, common)
        w[[i for i in odd if i < n]] = 7.25
        lists.append(values)
        weights.append(w)
    flat, off, arrays = ragged([a.tolist() for a in lists])
    fps = simhash_many(flat, np.concatenate(weights), off)
    for i, a in enumerate(arrays):
        assert int(fps[i]) == _simhash_by_definition(a, weights[i])


def test_simhash_bit_rule():
    # bit 63 set in two features of weight 1, clear in one of weight 1.5: 2 > 1.5, so set;
    # bit 0 set only in the weight-1.5 feature: 1.5 < 2, so clear; an exact tie gives 0
    h = np.array([1 << 63, 1 << 63, 1], dtype=np.uint64)
    fp = simhash(h, np.array([1.0, 1.0, 1.5]))
    assert fp >> 63 == 1 and fp & 1 == 0
    assert simhash(np.array([1 << 63, 1], dtype=np.uint64)) == 0


TEXTS = st.lists(
    st.text(alphabet=st.sampled_from(list("ab cd ef. Ёё абв مى\u200cخ 12 <b>")), max_size=60),
    min_size=1,
    max_size=8,
)


@settings(max_examples=60, deadline=None)
@given(TEXTS, st.sampled_from(["default", "modm", "kperm", "char", "short"]))
def test_sign_batch_is_sign_per_document(texts, kind):
    cfg = {
        "default": Config(),
        "modm": Config(signatures=("exact", "minhash", "simhash", "winnow", "modm")),
        "kperm": Config(minhash_scheme="kperm", num_perm=32),
        "char": Config(shingle="char", shingle_size=4, stopwords=False),
        "short": Config(shingle_size=2, shingle_size_by_lang=(("fa", 3),), stopwords=False),
    }[kind]
    signer = Signer(cfg)
    docs = [Document(str(i), t) for i, t in enumerate(texts)]
    batch = signer.sign_batch(docs)
    for d, b in zip(docs, batch, strict=True):
        one = signer.sign(d)
        assert (b.id, b.lang, b.n_tokens, b.exact, b.simhash) == (
            one.id,
            one.lang,
            one.n_tokens,
            one.exact,
            one.simhash,
        )
        assert b.shingles.tolist() == one.shingles.tolist()
        assert {k: v.tolist() for k, v in b.keys.items()} == {
            k: v.tolist() for k, v in one.keys.items()
        }


@settings(max_examples=60, deadline=None)
@given(
    TEXTS,
    st.sampled_from(
        [
            Config(),
            Config(digits="drop"),
            Config(stopwords=False, digits="keep"),
            Config(default_lang="ru"),
        ]
    ),
)
def test_sign_batch_from_code_points_is_signing_the_token_strings(texts, cfg):
    signer = Signer(cfg)
    docs = [Document(str(i), t) for i, t in enumerate(texts)]
    assert signer._hashes_tokens(docs)
    hashed = signer.sign_batch(docs)
    strings = signer.sign_canonical(docs, [signer.canonicalizer.canonicalize(d.text) for d in docs])
    for a, b in zip(hashed, strings, strict=True):
        assert (a.lang, a.n_tokens, a.exact, a.simhash) == (b.lang, b.n_tokens, b.exact, b.simhash)
        assert a.shingles.tolist() == b.shingles.tolist()
        assert {k: v.tolist() for k, v in a.keys.items()} == {
            k: v.tolist() for k, v in b.keys.items()
        }


def _chain(units: list[int], seed: int, size: int) -> int:
    """hash_runs of one run, one unit at a time in Python integers."""
    m = (1 << 64) - 1
    acc = units[0] ^ seed
    for u in units[1:]:
        acc = int(fmix64(np.array([(acc * 0x9E3779B97F4A7C15 + u) & m], dtype=np.uint64))[0])
    return int(fmix64(np.array([acc ^ size], dtype=np.uint64))[0])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(u64, min_size=1, max_size=12), min_size=1, max_size=8),
    st.sampled_from([0, 1, 2**64 - 1]),
)
def test_hash_runs_is_the_chain_per_run(runs, seed):
    units = np.array([u for r in runs for u in r], dtype=np.uint64)
    starts = offsets_of([len(r) for r in runs])[:-1]
    got = hash_runs(units, starts, np.array([len(r) for r in runs]), seed)
    assert got.tolist() == [_chain(r, seed, len(r)) for r in runs]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=10))
def test_hash_strings_is_the_chain_over_code_points(strings):
    seed = string_seed(1)
    want = [
        _chain([ord(ch) for ch in x], seed, len(x))
        if x
        else int(fmix64(np.array([seed], dtype=np.uint64))[0])
        for x in strings
    ]
    assert hash_strings(strings, 1).tolist() == want


@settings(max_examples=200, deadline=None)
@given(st.lists(u64, max_size=300), st.lists(u64, max_size=50))
def test_key_set_contains_is_isin(keys, others):
    ks = KeySet(np.array(keys, dtype=np.uint64))
    values = np.array(keys[:50] + others + [0, 2**64 - 1], dtype=np.uint64)
    assert ks.contains(values).tolist() == np.isin(values, np.array(keys, dtype=np.uint64)).tolist()


def test_sign_batch_reports_bad_documents_and_keeps_the_rest():
    signer = Signer(Config())
    bad = Document("bad", "some text here", lang="english")
    good = Document("good", "the quick brown fox jumps over the lazy dog")
    errors = []
    out = signer.sign_batch([bad, good], on_error=lambda d, e: errors.append((d.id, str(e))))
    assert [s.id for s in out] == ["good"]
    assert errors and errors[0][0] == "bad" and "unknown language" in errors[0][1]


def test_sign_batch_reports_a_bad_document_among_many_and_signs_the_others_as_alone():
    """The texts of a batch are canonicalized together; one that fails there goes to
    on_error and the others are signed as they would be alone."""
    signer = Signer(Config())
    texts = [
        "Ёлка и дом, ДОМ и ёлка стоят",
        "the quick brown fox jumps over the lazy dog",
        "کتاب‌های دانش‌آموزان ۱۲",
        "Straße İstanbul ﬁne",
    ]
    docs = [Document(f"d{i}", t) for i, t in enumerate(texts)]
    docs.insert(2, Document("bad", "Привет, мир", lang="x_1"))
    errors = []
    out = signer.sign_batch(docs, on_error=lambda d, e: errors.append(d.id))
    assert errors == ["bad"] and [s.id for s in out] == [f"d{i}" for i in range(len(texts))]
    assert [(s.exact, s.shingles.tolist()) for s in out] == [
        (signer.sign(d).exact, signer.sign(d).shingles.tolist()) for d in docs if d.id != "bad"
    ]
    with pytest.raises(ValueError, match="unknown language"):
        signer.sign_batch(docs)


def test_sign_batch_refuses_lone_surrogates_found_by_the_text_scan():
    """Validation reads a batch's lone surrogates from the scan of the text steps (no text
    is encoded for it); the message is check_document's."""
    from neardup.signing.validate import check_document

    signer = Signer(Config())
    docs = [
        Document("a", "abc \ud800"),
        Document("b", "дом \udfff дом"),
        Document("c", "\ud83d\ude00 pair of halves"),
        Document("d", "дом и ёлка"),
        Document("e", "plain words here"),
    ]
    errors = []
    out = signer.sign_batch(docs, on_error=lambda d, e: errors.append((d.id, str(e))))
    assert [s.id for s in out] == ["d", "e"]
    assert errors == [(d.id, check_document(d)) for d in docs[:3]]


def test_index_with_worker_processes_matches_one_process(tmp_path):
    from neardup.api import NearDup

    import json

    from .corpora import SAMPLE

    recs = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    docs = [
        Document(id=r["id"], text=r["text"], title=r.get("title"), lang=r.get("lang")) for r in recs
    ]
    one = NearDup.open(str(tmp_path / "one.db"))
    r1 = one.index(docs, batch_size=17)
    two = NearDup.open(str(tmp_path / "two.db"))
    r2 = two.index(docs, batch_size=17, workers=2)
    assert (r1.indexed, r1.duplicates) == (r2.indexed, r2.duplicates) == (len(docs), r1.duplicates)
    got = lambda nd: {
        i: (d.tags, d.shingles.tolist()) for i, d in nd.engine.get([d.id for d in docs]).items()
    }  # noqa: E731
    assert got(one) == got(two)
    assert [c.members for c in one.clusters()] == [c.members for c in two.clusters()]
    # the keys columns the workers encoded in advance are those the engine makes itself
    columns = lambda nd: (
        nd.engine.connection.require().execute("SELECT id, keys FROM docs ORDER BY seq").fetchall()
    )  # noqa: E731
    assert columns(one) == columns(two)


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="workers are forked on Linux only")
@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_forked_and_spawned_workers_index_alike(tmp_path, monkeypatch, method):
    from neardup.api import NearDup
    from neardup.indexing import workers

    from .corpora import SAMPLE

    recs = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    docs = [
        Document(id=r["id"], text=r["text"], title=r.get("title"), lang=r.get("lang")) for r in recs
    ]
    one = NearDup.open(str(tmp_path / "one.db"))
    one.index(docs, batch_size=23)
    monkeypatch.setattr(workers, "start_method", lambda: method)
    two = NearDup.open(str(tmp_path / "two.db"))
    two.index(docs, batch_size=23, workers=2)
    rows = lambda nd: (
        nd.engine.connection.require()
        .execute("SELECT id, cluster_id, dup_of, exact, shingles, keys FROM docs ORDER BY seq")
        .fetchall()
    )  # noqa: E731
    assert rows(one) == rows(two)


def _slow_worker_sign(docs):
    """A starved signing worker: it signs, slowly (installed before the workers fork)."""
    time.sleep(0.3)
    return _SIGN_IN_WORKER(docs)


_SIGN_IN_WORKER = None


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="workers are forked on Linux only")
def test_the_storing_process_signs_instead_of_waiting_for_slow_workers(tmp_path, monkeypatch):
    """With workers that get little CPU, the storing process signs the batches no worker has
    started rather than wait; the index is that of one process (tags in input order)."""
    global _SIGN_IN_WORKER
    from neardup.api import NearDup
    from neardup.indexing import workers

    from .corpora import SAMPLE

    recs = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    docs = [
        Document(id=r["id"], text=r["text"], title=r.get("title"), lang=r.get("lang")) for r in recs
    ]
    one = NearDup.open(str(tmp_path / "one.db"))
    one.index(docs, batch_size=7)
    here: list[int] = []
    sign_batch = workers.sign_batch

    def recorded(signer, batch, checked=False):
        here.append(os.getpid())  # (in a worker, its own list)
        return sign_batch(signer, batch, checked)

    _SIGN_IN_WORKER = workers._sign_in_worker
    monkeypatch.setattr(workers, "_sign_in_worker", _slow_worker_sign)
    monkeypatch.setattr(workers, "sign_batch", recorded)
    two = NearDup.open(str(tmp_path / "two.db"))
    two.index(docs, batch_size=7, workers=2)
    assert (
        here.count(os.getpid()) >= 2
    )  # not just the first batch: it signed while the workers were busy
    rows = lambda nd: (
        nd.engine.connection.require()
        .execute("SELECT id, cluster_id, dup_of, exact, shingles, keys FROM docs ORDER BY seq")
        .fetchall()
    )  # noqa: E731
    assert rows(one) == rows(two)


def test_workers_are_spawned_while_another_thread_runs():
    import threading

    from neardup.indexing.workers import start_method

    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert start_method() == "spawn"
    finally:
        stop.set()
        t.join()


def test_keys_prepared_in_advance_are_used_only_for_the_same_fields(tmp_path):
    from neardup.engines.base import EngineError
    from neardup.engines.embedded import EmbeddedEngine, KeyColumns
    from neardup.engines.embedded.keycolumn import keys_columns

    texts = ["the quick brown fox jumps over the lazy dog again", "another text of words"]
    engine = EmbeddedEngine(tmp_path / "x.db")
    engine.open(Config())
    signed = Signer(Config()).sign_batch([Document(str(i), t) for i, t in enumerate(texts)])
    prepared = engine.batch_preparer()(signed).keys
    assert isinstance(prepared, KeyColumns) and set(prepared.columns) == {"0", "1"}
    plain = [engine._doc_row(s, None, 0) for s in signed]  # (keys column: [14])
    assert keys_columns(engine.connection.fields, signed, prepared) == [row[14] for row in plain]
    other = KeyColumns(fields=("minhash",), columns={"1": b"made for other fields"})
    assert keys_columns(engine.connection.fields, signed, other) == [
        row[14] for row in plain
    ]  # ignored
    taken = KeyColumns(fields=prepared.fields, columns={"0": b"taken as made"})
    assert keys_columns(engine.connection.fields, signed, taken) == [b"taken as made", plain[1][14]]
    engine.put(signed, prepared=taken)  # stored as prepared (a damaged column, here)
    with pytest.raises(EngineError, match="damaged"):
        engine.get(["0"])
    assert engine.get(["1"])["1"].keys.keys() == signed[1].keys.keys()
    engine.close()


def test_input_of_one_batch_starts_no_worker(tmp_path, monkeypatch):
    import concurrent.futures

    from neardup.api import NearDup

    def refuse(*a, **k):
        raise AssertionError("a worker pool was started for one batch")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", refuse)
    nd = NearDup.open(str(tmp_path / "one.db"))
    report = nd.index(
        [Document(f"d{i}", f"text number {i} of a small input") for i in range(30)],
        batch_size=50,
        workers=4,
    )
    assert report.indexed == 30
    with pytest.raises(AssertionError, match="worker pool"):  # a second batch does start them
        nd.index(
            [Document(f"e{i}", f"text number {i} of a larger input") for i in range(30)],
            batch_size=10,
            workers=4,
        )


def test_index_with_workers_keeps_what_was_read_before_a_bad_record(tmp_path):
    from neardup.api import NearDup

    def stream():
        for i in range(25):
            yield Document(f"d{i}", f"document number {i} says something about item {i}")
        raise ValueError("bad record at input.jsonl:26")

    nd = NearDup.open(str(tmp_path / "w.db"))
    try:
        nd.index(stream(), batch_size=10, workers=2)
    except ValueError as e:
        assert "input.jsonl:26" in str(e)
    else:
        raise AssertionError("the reading error was swallowed")
    assert len(nd.engine.get([f"d{i}" for i in range(25)])) == 25


def _children(pid: int) -> set[int]:
    """Processes whose parent is ``pid`` (from /proc)."""
    out = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            if int(stat[stat.rindex(b")") + 2 :].split()[1]) == pid:
                out.add(int(d))
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().split(b")")[-1].split()[0] != b"Z"
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_signing_workers_end_when_their_parent_is_killed(tmp_path):
    src = tmp_path / "big.jsonl"
    with src.open("w", encoding="utf-8") as f:
        for i in range(20000):
            f.write(
                json.dumps(
                    {
                        "id": str(i),
                        "text": f"document {i} "
                        + " ".join(f"w{(i * 7 + j) % 997}" for j in range(200)),
                    }
                )
                + "\n"
            )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "neardup.cli",
            "index",
            str(src),
            "-e",
            str(tmp_path / "x.db"),
            "-q",
            "--workers",
            "2",
            "--batch-size",
            "200",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while time.monotonic() < deadline and len(workers) < 2:
            # forked or spawned workers: every child but multiprocessing's resource tracker
            # (spawn starts one)
            workers = {
                c
                for c in _children(proc.pid)
                if b"resource_tracker" not in open(f"/proc/{c}/cmdline", "rb").read()
            }
            time.sleep(0.2)
        assert len(workers) >= 2, "the workers did not start"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.2)
        assert not any(_alive(w) for w in workers)
    finally:
        if proc.poll() is None:
            proc.kill()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(u64, u64), max_size=30))
def test_hamming_many_is_hamming_per_pair(pairs):
    a = np.array([x for x, _ in pairs], dtype=np.uint64)
    b = np.array([y for _, y in pairs], dtype=np.uint64)
    assert hamming_many(a, b).tolist() == [hamming(x, y) for x, y in pairs]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 5000)), max_size=30),
    st.sampled_from([0.3, 0.5, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0, 1 / 3]),
)
def test_length_filter_many_is_the_length_filter_per_pair(pairs, t):
    na = np.array([x for x, _ in pairs], dtype=np.int64)
    nb = np.array([y for _, y in pairs], dtype=np.int64)
    # near the bounds too: |B| = ceil(t|A|) - 1 .. and floor(|A|/t) + 1
    edges = [
        (x, y) for x, _ in pairs for y in (int(t * x), int(t * x) + 1, int(x / t), int(x / t) + 1)
    ]
    assert passes_length_filter_many(na, nb, t).tolist() == [
        passes_length_filter(x, y, t) for x, y in pairs
    ]
    ea = np.array([x for x, _ in edges], dtype=np.int64)
    eb = np.array([y for _, y in edges], dtype=np.int64)
    assert passes_length_filter_many(ea, eb, t).tolist() == [
        passes_length_filter(x, y, t) for x, y in edges
    ]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), u64, st.integers(0, 6)), max_size=30))
def test_plausible_many_is_plausible_per_pair(rows):
    from neardup.matching.candidates import CandidateRule

    rule = CandidateRule(Config(threshold=0.8))
    only = np.array([o for o, _, _ in rows], dtype=bool)
    a = np.array([x for _, x, _ in rows], dtype=np.uint64)
    b = np.array([x ^ ((1 << d) - 1) for _, x, d in rows], dtype=np.uint64)  # d bits apart
    want = [
        rule.plausible(
            frozenset({"simhash"}) if o else frozenset({"minhash", "simhash"}), int(x), int(y)
        )
        for o, x, y in zip(only.tolist(), a.tolist(), b.tolist(), strict=True)
    ]
    assert rule.plausible_many(only, a, b).tolist() == want


@settings(max_examples=200, deadline=None)
@given(docs_of)
def test_pairs_sharing_counts_the_distinct_values_each_pair_shares(lists):
    from neardup.sketches.ragged import pair_count, pairs_sharing

    flat, off, _ = ragged(lists)
    i, j, n = pairs_sharing(flat, off)
    sets = [set(x) for x in lists]
    expect = [
        (a, b, len(sets[a] & sets[b]))
        for a in range(len(sets))
        for b in range(a + 1, len(sets))
        if sets[a] & sets[b]
    ]
    assert list(zip(i.tolist(), j.tolist(), n.tolist(), strict=True)) == expect
    holders = [sum(v in s for s in sets) for v in set().union(*sets)]
    assert pair_count(flat, off) == (
        sum(g * (g - 1) // 2 for g in holders),
        max(holders, default=0),
    )


@pytest.mark.parametrize(
    "config",
    [
        Config(),
        Config(signatures=("exact", "minhash", "simhash", "winnow", "modm", "super", "anchor")),
    ],
)
def test_a_packed_batch_unpacks_to_the_same_signatures(config):
    """What a signing worker sends back (records.pack) is what it signed, field for field,
    wordless documents and every signature of the family included."""
    from neardup.signing.records import pack, unpack

    texts = [
        "alpha beta gamma delta epsilon zeta eta theta",
        "!!!",
        "",
        "Привет мир, как дела у тебя сегодня",
        "the of and",
        "سلام دنیا این یک متن فارسی است",
    ]
    docs = [Document(f"d{i}", t) for i, t in enumerate(texts) if t] + [Document("w", "<p></p>")]
    signed = Signer(config).sign_batch(docs)
    again = unpack(pack(signed), [s.doc for s in signed])
    assert len(again) == len(signed)
    for a, s in zip(again, signed, strict=True):
        assert (a.doc, a.lang, a.n_tokens, a.exact, a.simhash, a.too_short) == (
            s.doc,
            s.lang,
            s.n_tokens,
            s.exact,
            s.simhash,
            s.too_short,
        )
        assert a.shingles.dtype == s.shingles.dtype and a.shingles.tolist() == s.shingles.tolist()
        assert list(a.keys) == list(s.keys) and all(
            a.keys[f].tolist() == s.keys[f].tolist() for f in s.keys
        )


def test_sign_batch_checked_does_not_check_again(monkeypatch):
    """``checked`` documents (read by neardup.io.reading, which checks every record) are signed
    without running the document check a second time; the signatures are the same."""
    import neardup.signing.signer as signer_module

    seen: list[str] = []
    real = signer_module.check_documents
    monkeypatch.setattr(
        signer_module,
        "check_documents",
        lambda ds, no_surrogate: (seen.extend(d.id for d in ds), real(ds, no_surrogate))[1],
    )
    docs = [
        Document("a", "the quick brown fox jumps over the lazy dog"),
        Document("b", "Съешь же ещё этих мягких французских булок"),
    ]
    signer = Signer(Config())
    unchecked = signer.sign_batch(docs)
    assert seen == ["a", "b"]
    checked = signer.sign_batch(docs, checked=True)
    assert seen == ["a", "b"]
    assert [(s.id, s.exact, s.simhash, s.shingles.tolist()) for s in checked] == [
        (s.id, s.exact, s.simhash, s.shingles.tolist()) for s in unchecked
    ]


def test_signed_ahead_signs_the_next_batch_while_the_caller_works_and_stops_with_it():
    """The thread makes the next item while the caller holds the last one; when the caller
    stops early, the source is closed and nothing more is made."""
    import threading

    from neardup.indexing.workers import signed_ahead

    made: list[int] = []
    closed = threading.Event()
    second_made = threading.Event()

    def source():
        try:
            for i in range(10):
                made.append(i)
                if i == 1:
                    second_made.set()
                yield i
        finally:
            closed.set()

    it = signed_ahead(source())
    assert next(it) == 0
    assert second_made.wait(5)  # made while the caller holds the first
    it.close()
    assert closed.is_set() and len(made) <= 3


class _Clock:
    """The clocks a :class:`~neardup.runtime.cpus.CpuSample` reads, set by hand."""

    def __init__(self) -> None:
        self.now = self.cpu = 0.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def process_time(self) -> float:
        return self.cpu

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.now += s


def test_cpus_this_process_used_meanwhile_count_as_idle(monkeypatch):
    """A sample begun before this process loads its command: the CPU it used over the
    interval is idle for the others, so busy loading it still finds the workers a quiet
    machine has, and waits for no further sample once the interval is long enough."""
    from neardup.indexing.workers import default_workers
    from neardup.runtime import cpus

    clock = _Clock()
    ticks = iter([[0] * 8, [10, 0, 10, 20, 0, 0, 0, 0]])  # 2 CPUs, 0.2 s: 1 CPU idle
    monkeypatch.setattr(cpus, "time", clock)
    monkeypatch.setattr(cpus, "cpu_times", lambda: next(ticks))
    sample = cpus.CpuSample()
    clock.now, clock.cpu = 0.2, 0.2  # this process loading, on one CPU all along
    assert sample.idle_cpus(2) == 2.0 and clock.slept == []
    ticks = iter([[0] * 8, [0, 0, 0, 20, 0, 0, 0, 0]])  # a short interval: waits for the rest
    clock.now = clock.cpu = 0.0
    sample = cpus.CpuSample()
    clock.now = 0.04
    assert default_workers(2, sample=sample) == 1 and clock.slept == [pytest.approx(0.06)]


def test_index_chooses_its_workers_by_the_sample_begun_as_the_command_started(
    tmp_path, monkeypatch
):
    from click.testing import CliRunner

    from neardup.cli import indexing, main
    from neardup.runtime.cpus import CpuSample

    given = []
    monkeypatch.setattr(indexing, "default_workers", lambda **k: given.append(k) or 0)
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a", "text": "one two three four five six"}\n', encoding="utf-8")
    res = CliRunner().invoke(main, ["index", str(path), "-e", str(tmp_path / "x.db"), "-q"])
    assert res.exit_code == 0, res.output
    assert len(given) == 1 and isinstance(given[0]["sample"], CpuSample)
