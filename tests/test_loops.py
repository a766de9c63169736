"""The two forms of the signing loops (:mod:`neardup.sketches.loops`): the compiled one (C,
built at install) and the interpreted one (Python, the reference), each against the formulas
they compute written out in plain Python (the hash chain, tokens hashed where they stand,
letters counted by script), against each other on random input, and through signing. (The
SimHash votes, winnowing and OPH bins are checked against their numpy forms in
tests/test_batch.py; the Persian pass in tests/test_canonical_fast.py.)"""

from __future__ import annotations

import importlib
import inspect
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from neardup.canonical.flags import COMPOSING_MARK, _marks_may_compose, _UNSETTLED, flag_table
from neardup.canonical.letters import (
    composing_pairs,
    digit_table,
    nfkc_table,
    split_tokens,
    token_char_table,
    token_hashes,
)
from neardup.canonical.scripts import _CODES, detect_language, detect_languages, script_code
from neardup.sketches.hashing import KeySet, code_points, fmix64, hash_strings, string_seed
from neardup.sketches.loops import (
    FALLBACK_NOTICE,
    MODULES,
    compiled_name,
    installed,
    interpreted_loops,
    loops,
    missing,
    mode,
)
from neardup.sketches.mixing import GOLDEN
from neardup.sketches.ragged import offsets_of

from .conftest import compiled_required, forms, needs_compiled
from .corpora import SAMPLE


HASHING = forms("neardup.sketches.hashing_loops")
LETTERS = forms("neardup.canonical.letters_loops")
SCRIPTS = forms("neardup.canonical.scripts_loops")

MASK = 2**64 - 1
# letters of the three scripts, digits (ASCII and others), marks, separators, underscore, a lone
# surrogate
ALPHABET = "ab Zé\u00c0ñ 7٣ пРиЁ  سلامی\u200c ،.!_-\n\t\u0301\ud800𝔘"
texts_of = st.lists(st.text(alphabet=ALPHABET, max_size=60), min_size=1, max_size=8)


def _fmix(x: int) -> int:
    return int(fmix64(np.array([x], dtype=np.uint64))[0])


def _chain(units: list[int], seed: int) -> int:
    """h = fmix64(a_n xor n), a_1 = u_0 xor seed, a_{j+1} = fmix64(a_j * C + u_j)."""
    acc = units[0] ^ seed
    for u in units[1:]:
        acc = _fmix((acc * int(GOLDEN) + u) & MASK)
    return _fmix(acc ^ len(units))


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 0x10FFFF), min_size=1, max_size=12), min_size=1, max_size=6),
    st.integers(0, MASK),
)
@pytest.mark.parametrize("loops_module", HASHING, ids=lambda m: m.__name__)
def test_hash_runs_is_the_chain(loops_module, runs, seed):
    units = np.array([u for r in runs for u in r], dtype=np.uint32)
    starts = offsets_of([len(r) for r in runs])[:-1]
    lengths = np.array([len(r) for r in runs], dtype=np.int64)
    got = loops_module.hash_runs(units, starts, lengths, lengths, np.uint64(seed))
    assert got.tolist() == [_chain(r, seed) for r in runs]


@settings(max_examples=200, deadline=None)
@given(texts_of, st.integers(0, 2**32))
@pytest.mark.parametrize("loops_module", LETTERS, ids=lambda m: m.__name__)
def test_token_hashes_are_the_tokens_of_split_tokens(loops_module, texts, seed):
    """Each token of each text, in order: the hash of its string, whether it is a number,
    and which text it is in (each form of the loop, and letters.token_hashes, which runs
    the one this context asks for)."""
    bounds = offsets_of([len(t) + 1 for t in texts])
    cps = code_points(" ".join(texts))
    tokens = [(i, tok) for i, t in enumerate(texts) for tok in split_tokens(t)]
    got = loops_module.token_hashes(
        cps, token_char_table(), digit_table(), bounds, np.uint64(string_seed(seed))
    )
    assert _same(got, token_hashes(cps, bounds, seed))
    h, number, text = got
    assert h.tolist() == hash_strings([tok for _, tok in tokens], seed).tolist()
    assert number.tolist() == [tok.isdigit() for _, tok in tokens]
    assert text.tolist() == [i for i, _ in tokens]


# small values collide in the low bits (long probe runs); 0, 1, 2 test the free-slot value
values_of = st.integers(0, 40) | st.integers(0, MASK)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(values_of, max_size=20), max_size=4),
    st.lists(st.tuples(values_of, st.booleans(), st.integers(0, 4)), max_size=60),
    st.booleans(),
    st.data(),
)
@pytest.mark.parametrize("loops_module", LETTERS, ids=lambda m: m.__name__)
def test_kept_tokens_drop_numbers_and_members_of_the_texts_set(
    loops_module, sets, tokens, drop_numbers, data
):
    """A token is kept unless it is a number (with drop_numbers) or a member of its text's
    set (group -1: none), in order, with the count per text; the sets as probing tables."""
    docs = 5
    tokens.sort(key=lambda t: t[2])  # tokens come text by text
    group = np.array(
        [data.draw(st.integers(-1, len(sets) - 1)) for _ in range(docs)], dtype=np.int64
    )
    parts = [KeySet(np.array(s, dtype=np.uint64)).probing for s in sets]
    table = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=np.uint64)
    bounds = offsets_of([len(p[0]) for p in parts])
    empties = np.array([p[1] for p in parts], dtype=np.uint64)
    h = np.array([v for v, _, _ in tokens], dtype=np.uint64)
    number = np.array([n for _, n, _ in tokens], dtype=np.bool_)
    doc = np.array([d for _, _, d in tokens], dtype=np.int64)
    kept, counts = loops_module.kept_tokens(
        h, number, doc, drop_numbers, group, table, bounds, empties, docs
    )
    want = [
        (v, d)
        for v, n, d in tokens
        if not (drop_numbers and n) and not (group[d] >= 0 and v in sets[group[d]])
    ]
    assert kept.tolist() == [v for v, _ in want]
    assert counts.tolist() == [sum(1 for _, d in want if d == i) for i in range(docs)]


code_point_texts = st.lists(st.lists(st.integers(0, 63), max_size=12), max_size=5)


@settings(max_examples=200, deadline=None)
@given(code_point_texts, st.lists(st.integers(-2, 0x10FFFF), min_size=64, max_size=64))
@pytest.mark.parametrize("loops_module", LETTERS, ids=lambda m: m.__name__)
def test_map_code_points_maps_each_text_or_keeps_it(loops_module, texts, table):
    """Each text's code points to their table entries, or the text as it is (not ok) where
    one maps below zero."""
    cps = np.array([c for t in texts for c in t], dtype=np.uint32)
    out, ok = loops_module.map_code_points(
        cps, offsets_of([len(t) for t in texts]), np.array(table, dtype=np.int32)
    )
    want = [[table[c] for c in t] if all(table[c] >= 0 for c in t) else t for t in texts]
    assert out.tolist() == [v for t in want for v in t]
    assert ok.tolist() == [all(table[c] >= 0 for c in t) for t in texts]


@settings(max_examples=200, deadline=None)
@given(code_point_texts, st.lists(st.integers(0, 255), min_size=64, max_size=64))
@pytest.mark.parametrize("loops_module", LETTERS, ids=lambda m: m.__name__)
def test_or_flags_is_the_or_of_the_entries_of_each_text(loops_module, texts, table):
    want = []
    for t in texts:
        acc = 0
        for c in t:
            acc |= table[c]
        want.append(acc)
    cps = np.array([c for t in texts for c in t], dtype=np.uint32)
    assert (
        loops_module.or_flags(
            cps, offsets_of([len(t) for t in texts]), np.array(table, dtype=np.uint8)
        ).tolist()
        == want
    )


@settings(max_examples=200, deadline=None)
@given(code_point_texts, st.lists(st.booleans(), min_size=64, max_size=64))
@pytest.mark.parametrize("loops_module", LETTERS, ids=lambda m: m.__name__)
def test_positions_in_are_the_indices_whose_entry_holds(loops_module, texts, table):
    cps = np.array([c for t in texts for c in t], dtype=np.uint32)
    got = loops_module.positions_in(cps, np.array(table, dtype=np.bool_))
    assert got.dtype == np.int64
    assert got.tolist() == [i for i, c in enumerate(cps.tolist()) if table[c]]


@settings(max_examples=200, deadline=None)
@given(texts_of)
@pytest.mark.parametrize("loops_module", LETTERS, ids=lambda m: m.__name__)
def test_positions_in_of_the_nfkc_table_are_the_characters_nfkc_may_change(loops_module, texts):
    """Over the table letters.nfkc_words gives it: where the characters NFKC may change or
    join are."""
    text = "".join(texts)
    got = loops_module.positions_in(code_points(text), nfkc_table())
    assert got.tolist() == [i for i, ch in enumerate(text) if nfkc_table()[ord(ch)]]


#: starters and the marks that compose with them or not (Arabic hamza above after alef and
#: after heh, e + acute), marks after marks, Hangul jamo, a compatibility form
MARK_ALPHABET = "ae\u0301\u0323\u0308\u0654\u0655\u0653\u0627\u0647\u0648\u06cc\u06d2\u064e"
MARK_ALPHABET += "\u0651 \u00c0\u1100\u1161\u11a8\u304b\u3099ﬁжи\u0306"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=MARK_ALPHABET, min_size=1, max_size=10), min_size=1, max_size=6))
@example(["\u0627\u0654", "\u0647\u0654"])  # alef + hamza above composes, heh + it does not
@pytest.mark.parametrize("loops_module", LETTERS, ids=lambda m: m.__name__)
def test_marks_may_compose_where_a_composing_mark_follows_an_unsettled_or_pair(loops_module, texts):
    """Per text: whether a character with the composing-mark bit follows one with the
    unsettled bit, or one it composes with (``composing_pairs``): each form of the loop
    against that statement and against flags' numpy form."""
    table, pairs = flag_table(), composing_pairs()
    offsets = offsets_of([len(t) for t in texts])
    starts, ends = offsets[:-1], offsets[1:]
    cps = code_points("".join(texts))
    got = loops_module.marks_may_compose(
        cps, starts, ends, table, COMPOSING_MARK, _UNSETTLED, pairs
    )
    paired = set(pairs.tolist())
    want = [
        any(
            table[ord(m)] & COMPOSING_MARK
            and (table[ord(p)] & _UNSETTLED or (ord(p) << 21 | ord(m)) in paired)
            for p, m in itertools.pairwise(t)
        )
        for t in texts
    ]
    assert got.tolist() == want
    assert _marks_may_compose(cps, starts, ends, table).tolist() == want


def _counts_by_definition(text: str, sample: int) -> list[int]:
    """Letters (str.isalpha) among the first ``sample`` letters, by script code."""
    out = [0] * _CODES
    letters = [ch for ch in text if ch.isalpha()][:sample]
    for ch in letters:
        out[script_code(ch)] += 1
    return out


@settings(max_examples=200, deadline=None)
@given(texts_of, st.integers(1, 30))
@pytest.mark.parametrize("loops_module", SCRIPTS, ids=lambda m: m.__name__)
def test_script_counts_are_the_first_letters_by_script(loops_module, texts, sample):
    from neardup.canonical.scripts import _code_point_tables

    letter, script = _code_point_tables()
    counts = loops_module.script_counts(
        code_points("".join(texts)),
        offsets_of([len(t) for t in texts]),
        letter,
        script,
        sample,
        _CODES,
    )
    assert counts.tolist() == [_counts_by_definition(t, sample) for t in texts]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.text(alphabet=ALPHABET, max_size=80)
        | st.text(alphabet=" 1.,-", max_size=30).map(lambda s: s + "пр и"),
        min_size=1,
        max_size=8,
    ),
    st.integers(1, 12),
    st.sampled_from(["en", "ru", "fa"]),
)
def test_detect_languages_is_detect_language_of_each(texts, sample, default):
    """Together or one at a time, the same languages, including texts whose letters run past
    the characters counted together (mostly separators first)."""
    assert detect_languages(texts, default, sample) == [
        detect_language(t, default, sample) for t in texts
    ]


OFFSETS = forms("neardup.canonical.offsets_loops")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(alphabet="abc", min_size=1, max_size=4), max_size=12),
    st.lists(st.text(alphabet="abc", max_size=3), max_size=10),
    st.integers(0, 9),
)
@pytest.mark.parametrize("loops_module", OFFSETS, ids=lambda m: m.__name__)
def test_find_tokens_finds_each_token_in_turn_by_the_rule_of_find(
    loops_module, parts, words, window
):
    """Each word found from the cursor as ``offsets._find`` finds it in the string (the
    window set to ``window``), the cursor moving past each word found."""
    from unittest import mock

    from neardup.canonical import offsets

    stream = "".join(parts)
    at = offsets_of([len(t) for t in parts])[:-1]
    want_found, want_from, cursor = [], [], 0
    with mock.patch.object(offsets, "WINDOW", window):
        for w in words:
            want_from.append(cursor)
            a = offsets._find(stream, w, cursor, at.tolist())
            want_found.append(a)
            cursor = a + len(w) if a >= 0 else cursor
    found, looked_from = loops_module.find_tokens(
        code_points(stream),
        at,
        code_points("".join(words)),
        offsets_of([len(w) for w in words]),
        window,
    )
    assert (found.tolist(), looked_from.tolist()) == (want_found, want_from)


def test_each_module_of_loops_has_both_forms_and_loops_gives_the_one_asked_for():
    """Each module of loops: its interpreted form (Python functions) and, where installed, a
    compiled one with the same public functions, no more, no fewer; :func:`loops` gives the
    compiled form unless inside interpreted_loops."""
    for name in MODULES:
        interpreted = importlib.import_module(name)
        with interpreted_loops():
            assert loops(name) is interpreted and mode() == "interpreted"
        if not installed() and not compiled_required():
            continue
        compiled = importlib.import_module(compiled_name(name))
        public = {k for k, v in vars(compiled).items() if not k.startswith("_") and callable(v)}
        own = {
            k
            for k, v in vars(interpreted).items()
            if not k.startswith("_") and inspect.isfunction(v) and v.__module__ == name
        }
        assert public and public == own, name  # (each is compared: the tests above)
        assert loops(name) is compiled and mode() == "compiled"


def _ragged(rng, n_docs, longest, values):
    counts = rng.integers(0, longest, n_docs)
    offsets = offsets_of(counts.tolist())
    return values(int(offsets[-1])), offsets


def _same(a, b) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(_same, a, b))
    if a is None:
        return b is None
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and bool((a == b).all())


@needs_compiled
@pytest.mark.parametrize("seed", range(12))
def test_the_compiled_sketch_loops_give_what_the_interpreted_ones_give(seed):
    """Every loop of the sketches and of the keys column, both forms on the same random
    ragged input (hashes, small values that repeat, empty documents, uint32 and int64
    input): the same values, dtypes and shapes, bit for bit."""
    rng = np.random.default_rng(seed)

    def hashes(n):
        return rng.integers(0, 2**64, n, dtype=np.uint64)

    def small(n):
        return rng.integers(0, 40, n).astype(np.uint64)

    h_c, h_i = forms("neardup.sketches.hashing_loops")
    m_c, m_i = forms("neardup.sketches.minhash_loops")
    r_c, r_i = forms("neardup.sketches.ragged_loops")
    w_c, w_i = forms("neardup.sketches.sampling_loops")
    s_c, s_i = forms("neardup.sketches.simhash_loops")
    p_c, p_i = forms("neardup.engines.embedded.packing")
    units, off = _ragged(rng, 12, 40, hashes)
    cps = rng.integers(0, 0x110000, len(units)).astype(np.uint32)
    starts, lengths = off[:-1][np.diff(off) > 0], np.diff(off)[np.diff(off) > 0]
    for u in (units, cps):
        args = (u, starts, lengths, lengths + 3, np.uint64(seed))
        assert _same(h_c.hash_runs(*args), h_i.hash_runs(*args))
    widths = rng.integers(1, 8, 12)
    assert _same(h_c.window_hashes(units, off, widths), h_i.window_hashes(units, off, widths))
    k = int(rng.choice([8, 64, 128]))
    a, b = (m.oph_bins(units, off, k, np.uint64(seed)) for m in (m_c, m_i))
    assert _same(a, b)
    m_c.oph_densify(a, np.uint64(99)), m_i.oph_densify(b, np.uint64(99))
    assert _same(a, b)
    values, voff = _ragged(rng, 10, 200, small if seed % 3 == 0 else hashes)
    assert _same(r_c.segment_unique(values, voff), r_i.segment_unique(values, voff))
    for seq in (values, values.astype(np.int64) - 20):
        for window in (1, 4, 50):
            assert _same(w_c.winnow(seq, voff, window), w_i.winnow(seq, voff, window))
    weights = rng.integers(1, 5, len(units)).astype(np.int64)
    assert _same(s_c.simhash_votes(units, weights, off), s_i.simhash_votes(units, weights, off))
    tokens, toff = _ragged(rng, 6, 600, small)
    weight_of_tf = np.arange(601, dtype=np.int64) * 7 + 3
    assert _same(
        s_c.tf_simhash(tokens, toff, weight_of_tf), s_i.tf_simhash(tokens, toff, weight_of_tf)
    )
    sh = [np.unique(small(int(rng.integers(0, 30)))) for _ in range(5)]
    sh_off = offsets_of([len(x) for x in sh])
    keys = [[rng.choice(x, min(len(x), 3), replace=False) if len(x) else x for x in sh]]
    keys.append([hashes(int(rng.integers(0, 4))) for _ in sh])
    kv = np.concatenate([np.sort(k) for field in keys for k in field]).astype(np.uint64)
    kcounts = [len(k) for field in keys for k in field]
    koff = np.zeros((2, 6), dtype=np.int64)
    koff[0] = offsets_of(kcounts[:5])
    koff[1] = offsets_of(kcounts[5:]) + koff[0, -1]
    exact = hashes(5)
    has = rng.integers(0, 2, 5).astype(bool)
    args = (kv, koff, np.concatenate(sh).astype(np.uint64), sh_off, exact, has)
    assert _same(p_c.pack_keys(*args), p_i.pack_keys(*args))


def _signed_fields(signed) -> list[tuple]:
    from dataclasses import fields

    def norm(v):
        if isinstance(v, np.ndarray):
            return ("array", str(v.dtype), v.tolist())
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return v

    return [
        tuple((f.name, norm(getattr(s, f.name))) for f in fields(s) if f.name != "doc")
        for s in signed
    ]


@needs_compiled
def test_interpreted_loops_sign_as_the_compiled_ones():
    """The loops run interpreted give every signature bit for bit, Persian and Russian and
    English texts, short and long: the compiled form of each module of loops against the
    interpreted one (both installed, or the test fails)."""
    assert missing() == []  # (else "compiled" below would run the interpreted form too)
    from neardup.config import Config
    from neardup.signing.signer import Document, Signer

    from .corpora import FA_ZWNJ_SAMPLE

    recs = [json.loads(x) for x in SAMPLE.read_text(encoding="utf-8").splitlines()][:30]
    recs += [json.loads(x) for x in FA_ZWNJ_SAMPLE.read_text(encoding="utf-8").splitlines()][:15]
    ru = (
        "Съешь же ещё этих мягких французских булок, да выпей чаю. "
        "Ёжик в тумане — 2024 год, «цитата» и т. д. "
    )
    docs = [Document(str(i), r["text"]) for i, r in enumerate(recs)] + [
        Document("ru", ru * 12),
        Document("x", "Hi, x_2 да! 42 کتاب‌ها ۱۲۳ Ǆ ﬁ ①"),
        Document("e", "!!"),
    ]
    compiled = Signer(Config()).sign_batch(docs)
    with interpreted_loops():
        assert mode() == "interpreted"
        interpreted = Signer(Config()).sign_batch(docs)
    assert mode() == "compiled"
    assert len(interpreted) == len(compiled) >= 40
    assert _signed_fields(interpreted) == _signed_fields(compiled)


def _run(code: str, **kwargs) -> subprocess.CompletedProcess:
    """``code`` in a fresh process that imports the neardup this one does."""
    import neardup

    env = dict(os.environ, PYTHONPATH=str(Path(neardup.__file__).parents[1]))
    return subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        **kwargs,
    )


#: A process whose compiled loops cannot be imported, as where no C compiler built them.
WITHOUT_COMPILED = (
    "import sys\n"
    "class NoCompiledLoops:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name.rpartition('.')[2].startswith('_') and name.startswith('neardup.'):\n"
    "            if name.endswith('_loops') or name.endswith('._packing'):\n"
    "                raise ImportError(name)\n"
    "sys.meta_path.insert(0, NoCompiledLoops())\n"
)


def test_without_the_compiled_loops_neardup_says_so_once_and_signs_the_same():
    """Where the compiled loops are not installed, the interpreted ones sign (the same
    signatures), and neardup says so in one line, once, with the command that fixes it."""
    code = (
        "from neardup.config import Config\n"
        "from neardup.signing.signer import Signer\n"
        "s = Signer(Config())\n"
        "a = s.sign('Съешь же ещё этих мягких французских булок, да выпей чаю. کتاب‌ها ۱۲۳')\n"
        "b = s.sign('the quick brown fox jumps over the lazy dog, twice over')\n"
        "print(a.shingles.tolist(), a.simhash, a.keys, b.shingles.tolist(), b.simhash, b.keys)\n"
    )
    plain = _run(code)
    fallback = _run(WITHOUT_COMPILED + code)
    assert fallback.stdout == plain.stdout
    assert fallback.stderr.splitlines() == [FALLBACK_NOTICE]
    assert "pip install" in FALLBACK_NOTICE and (plain.stderr == "") == installed()


def _run_cli(argv: list[str], then: str = "") -> subprocess.CompletedProcess:
    """``neardup ARGV`` (as ``python -m neardup.cli`` runs it) in a fresh process
    (:func:`_run`), then the Python code ``then`` in that process."""
    return _run(
        f"import sys, runpy; sys.argv = {['neardup', *argv]!r}\n"
        "try:\n    runpy.run_module('neardup.cli', run_name='__main__')\n"
        "except SystemExit:\n    pass\n" + then
    )


def _indexed_sample(tmp_path: Path) -> str:
    """An index of the sample documents, made by ``neardup index`` in a fresh process."""
    db = str(tmp_path / "sample.db")
    _run_cli(["index", str(SAMPLE), "--engine", db, "--quiet"])
    return db


@needs_compiled
def test_a_fresh_query_process_runs_the_compiled_loops(tmp_path):
    """``neardup query`` of one text signs with the compiled loops (loading them costs next
    to nothing), and says nothing about them."""
    db = _indexed_sample(tmp_path)
    p = _run_cli(
        ["query", "the quick brown fox jumps over the lazy dog", "--engine", db, "--json"],
        "print(sorted(m for m in sys.modules if m.endswith('_loops')), file=sys.stderr)",
    )
    loaded = p.stderr.strip().splitlines()[-1]
    assert "neardup.sketches._hashing_loops" in loaded and "numba" not in p.stderr


def test_a_fresh_query_loads_only_what_it_signs_and_reads_with(tmp_path):
    """``neardup query --json`` of one text loads neither the table output (rich), hazm (the
    text has no Persian), indexing, clustering nor the report, and reads the package's data
    and its tables without importlib.resources, zipfile or tempfile (5 ms of imports): a
    fresh query starts light."""
    db = _indexed_sample(tmp_path)
    p = _run_cli(
        ["query", "Съешь же ещё этих мягких булок, the quick brown fox", "--engine", db, "--json"],
        "heavy = ('rich', 'hazm', 'neardup.indexing', 'neardup.matching.clustering', "
        "'neardup.report', 'multiprocessing', 'importlib.resources', 'zipfile', 'tempfile')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in heavy),"
        " file=sys.stderr)",
    )
    assert json.loads(p.stdout) == []  # the query ran: no match
    assert p.stderr.strip().splitlines()[-1] == "[]"


def test_clusters_of_an_index_loads_no_signing(tmp_path):
    """A process that only reads the clusters of an index loads neither signing nor its
    loops, canonicalization, indexing or the report: a light start."""
    db = _indexed_sample(tmp_path)
    p = _run_cli(
        ["clusters", "--engine", db, "--json"],
        "heavy = ('neardup.canonical', 'neardup.signing.signer', 'neardup.indexing', "
        "'neardup.report', 'matplotlib', 'jinja2')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy) or m.endswith('_loops')),"
        " file=sys.stderr)",
    )
    assert json.loads(p.stdout)  # the clusters, read
    assert p.stderr.strip().splitlines()[-1] == "[]"
