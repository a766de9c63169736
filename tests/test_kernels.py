"""The compiled loops against the formulas they compute, written out in plain Python: the hash
chain, tokens hashed where they stand, letters counted by script and the languages detected
from them. (The SimHash votes, winnowing and OPH bins are checked in tests/test_batch.py.)"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.sketches import hashing_compiled
from neardup.canonical import letters_compiled, scripts_compiled
from neardup.canonical.letters import split_tokens, token_hashes
from neardup.canonical.scripts import _CODES, detect_language, detect_languages, script_code
from neardup.sketches.hashing import KeySet, code_points, fmix64, hash_strings
from neardup.sketches.mixing import GOLDEN
from neardup.sketches.ragged import offsets_of

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
def test_hash_runs_is_the_chain(runs, seed):
    units = np.array([u for r in runs for u in r], dtype=np.uint32)
    starts = offsets_of([len(r) for r in runs])[:-1]
    lengths = np.array([len(r) for r in runs], dtype=np.int64)
    got = hashing_compiled.hash_runs(units, starts, lengths, lengths, np.uint64(seed))
    assert got.tolist() == [_chain(r, seed) for r in runs]


@settings(max_examples=200, deadline=None)
@given(texts_of, st.integers(0, 2**32))
def test_token_hashes_are_the_tokens_of_split_tokens(texts, seed):
    """Each token of each text, in order: the hash of its string, whether it is a number,
    and which text it is in."""
    bounds = offsets_of([len(t) + 1 for t in texts])
    h, number, text = token_hashes(code_points(" ".join(texts)), bounds, seed)
    tokens = [(i, tok) for i, t in enumerate(texts) for tok in split_tokens(t)]
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
def test_kept_tokens_drop_numbers_and_members_of_the_texts_set(sets, tokens, drop_numbers, data):
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
    kept, counts = letters_compiled.kept_tokens(
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
def test_map_code_points_maps_each_text_or_keeps_it(texts, table):
    """Each text's code points to their table entries, or the text as it is (not ok) where
    one maps below zero."""
    cps = np.array([c for t in texts for c in t], dtype=np.uint32)
    out, ok = letters_compiled.map_code_points(
        cps, offsets_of([len(t) for t in texts]), np.array(table, dtype=np.int32)
    )
    want = [[table[c] for c in t] if all(table[c] >= 0 for c in t) else t for t in texts]
    assert out.tolist() == [v for t in want for v in t]
    assert ok.tolist() == [all(table[c] >= 0 for c in t) for t in texts]


@settings(max_examples=200, deadline=None)
@given(code_point_texts, st.lists(st.integers(0, 255), min_size=64, max_size=64))
def test_or_flags_is_the_or_of_the_entries_of_each_text(texts, table):
    want = []
    for t in texts:
        acc = 0
        for c in t:
            acc |= table[c]
        want.append(acc)
    cps = np.array([c for t in texts for c in t], dtype=np.uint32)
    assert (
        letters_compiled.or_flags(
            cps, offsets_of([len(t) for t in texts]), np.array(table, dtype=np.uint8)
        ).tolist()
        == want
    )


def _counts_by_definition(text: str, sample: int) -> list[int]:
    """Letters (str.isalpha) among the first ``sample`` letters, by script code."""
    out = [0] * _CODES
    letters = [ch for ch in text if ch.isalpha()][:sample]
    for ch in letters:
        out[script_code(ch)] += 1
    return out


@settings(max_examples=200, deadline=None)
@given(texts_of, st.integers(1, 30))
def test_script_counts_are_the_first_letters_by_script(texts, sample):
    from neardup.canonical.scripts import _code_point_tables

    letter, script = _code_point_tables()
    counts = scripts_compiled.script_counts(
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


def test_loading_the_kernels_leaves_scipy_and_numba_blas_usable():
    """The kernels load numba as it is (no module of another package hidden from it while it
    loads): afterwards scipy.linalg imports and np.dot compiles as usual in the same process."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from neardup.canonical import persian_compiled\n"
        "try:\n    import scipy.linalg\n"
        "except ImportError:\n    print('no scipy'); raise SystemExit\n"
        "from numba import njit\n"
        "print(float(scipy.linalg.norm([3.0, 4.0])), "
        "float(njit(lambda a, b: np.dot(a, b))(np.ones(3), np.ones(3))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out in (["5.0", "3.0"], ["no", "scipy"])


COMPILED_MODULES = [
    "neardup.engines.embedded.packing",
    "neardup.sketches.hashing_compiled",
    "neardup.sketches.simhash_compiled",
    "neardup.sketches.minhash_compiled",
    "neardup.sketches.sampling_compiled",
    "neardup.sketches.ragged_compiled",
    "neardup.canonical.letters_compiled",
    "neardup.canonical.scripts_compiled",
    "neardup.canonical.persian_compiled",
]


def test_each_module_of_loops_has_an_interpreted_twin_outside_sys_modules():
    """Each module of compiled loops loads once more interpreted (its functions plain Python
    functions), once a process, and without entering the import system; :func:`loops` gives
    the twin inside interpreted_loops only."""
    import importlib
    import sys
    import types

    from neardup.sketches.loops import interpreted, interpreted_loops, loops

    for name in COMPILED_MODULES:
        twin = interpreted(name)
        assert twin is interpreted(name) and twin.__name__ not in sys.modules
        functions = [v for k, v in vars(twin).items() if not k.startswith("__") and callable(v)]
        assert functions and all(
            isinstance(f, types.FunctionType) for f in functions if f.__module__ == twin.__name__
        ), name
        with interpreted_loops():
            assert loops(name) is twin
        assert loops(name) is importlib.import_module(name)


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


def test_interpreted_loops_sign_as_the_compiled_ones():
    """The loops run interpreted (no numba) give every signature bit for bit, Persian and
    Russian and English texts, short and long."""
    import json

    from neardup.config import Config
    from neardup.sketches.loops import interpreted_loops, mode
    from neardup.signing.signer import Signer
    from neardup.signing.records import Document

    from .corpora import FA_ZWNJ_SAMPLE, SAMPLE

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


def test_a_fresh_query_process_loads_no_numba(tmp_path):
    """``neardup query`` of one text signs with the loops interpreted: numba never loads."""
    import os
    import subprocess
    import sys

    from .corpora import REPO, SAMPLE

    env = dict(os.environ, PYTHONPATH=str(REPO / "plugin"))
    db = str(tmp_path / "q.db")
    subprocess.run(
        [sys.executable, "-m", "neardup.cli", "index", str(SAMPLE), "--engine", db, "--quiet"],
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    code = (
        "import sys, runpy; sys.argv = ['neardup', 'query', "
        f"'the quick brown fox jumps over the lazy dog', '--engine', {db!r}, '--json']\n"
        "try:\n    runpy.run_module('neardup.cli', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print('numba' in sys.modules, file=sys.stderr)"
    )
    p = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert p.stderr.strip().splitlines()[-1] == "False"
