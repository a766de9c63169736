"""Shingles, MinHash, SimHash, sampling and the exact verifier, against the seeds' vectors."""

import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from neardup.canonical import Canonicalizer
from neardup.config import SIGNATURE_VERSION, Config, ConfigError
from neardup.sketches.hashing import hash_strings
from neardup.sketches.lsh import band_keys, collision_probability, optimal_bands
from neardup.sketches.minhash import MinHash
from neardup.sketches.sampling import min_sample, mod_sample, winnow
from neardup.sketches.shingles import combine, shingle, shingle_strings
from neardup.keys.builtin import exact_key
from neardup.sketches.simhash import (
    agreeing_blocks,
    block_bounds,
    block_keys,
    hamming,
    simhash,
    token_simhash,
)
from neardup.sketches.verify import (
    containment,
    length_bounds,
    passes_length_filter,
    resemblance,
    similarity,
)

PLAIN = Canonicalizer(Config(stopwords=False))
#: Version 6's SimHash keys (k = 3, pairs of 5 blocks) of the golden fingerprint below.
PAIR_KEYS_V6 = [
    1199299422725094790,
    11006585723337222395,
    13478248069193826898,
    16047632988046745717,
    7038593823259289365,
    2633985579393107949,
    18166570875299222134,
    13904383066939980427,
    16538754192186969377,
    2690785674799438918,
]
ROSE_A = "a rose is a rose is a rose"
ROSE_B = "a rose is a flower which is a rose"


@pytest.mark.parametrize("w,expected", [(1, 0.6), (2, 0.5), (3, 3 / 7)])
def test_rose_resemblance(w, expected):
    a = shingle(PLAIN.tokens(ROSE_A), w, seed=1)
    b = shingle(PLAIN.tokens(ROSE_B), w, seed=1)
    assert resemblance(a.set, b.set) == pytest.approx(expected)


def test_rose_w4_has_five_shingles_three_distinct():
    s = shingle(PLAIN.tokens(ROSE_A), 4, seed=1)
    assert len(s.sequence) == 5 and len(s.set) == 3
    assert len(set(shingle_strings(PLAIN.tokens(ROSE_A), 4))) == 3


def test_overlapping_shingle_count_is_words_minus_w_plus_one():
    toks = PLAIN.tokens("чтобы иметь стройную фигуру нужно много двигаться")
    assert len(shingle(toks, 3, seed=1).sequence) == len(toks) - 3 + 1


def test_short_document_gets_one_shingle_and_empty_gets_none():
    assert len(shingle(["only", "two"], 5, seed=1).set) == 1
    assert len(shingle([], 5, seed=1).set) == 0
    assert shingle(["only", "two"], 5, 1).set[0] != shingle(["two", "only"], 5, 1).set[0]


def test_char_shingles():
    a = shingle(["abcd"], 3, seed=1, kind="char")
    assert len(a.set) == 2


def test_winnowing_textbook_example():
    h = [77, 74, 42, 17, 98, 50, 17, 98, 8, 88, 67, 39, 77, 74, 42, 17, 98]
    assert winnow(np.array(h, dtype=np.uint64), 4).tolist() == [17, 17, 8, 39, 17]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=200), st.integers(1, 12))
def test_winnowing_guarantee_every_window_has_a_fingerprint(seq, window):
    arr = np.array(seq, dtype=np.uint64)
    fp = set(winnow(arr, window).tolist())
    for i in range(max(1, len(arr) - window + 1)):
        assert fp & set(arr[i : i + window].tolist())


def test_mod_and_min_samples():
    h = np.arange(100, dtype=np.uint64)
    assert mod_sample(h, 10).tolist() == list(range(0, 100, 10))
    assert min_sample(h[::-1], 3).tolist() == [0, 1, 2]


sets = st.sets(st.integers(0, 2**64 - 1), max_size=300).map(
    lambda s: np.array(sorted(s), dtype=np.uint64)
)


@settings(max_examples=200, deadline=None)
@given(sets, sets)
def test_verifier_properties(a, b):
    assert resemblance(a, a) == (
        1.0 if len(a) else 0.0
    )  # an empty set (a wordless document) resembles nothing
    assert resemblance(a, b) == resemblance(b, a)
    r, c = resemblance(a, b), containment(a, b)
    assert 0.0 <= r <= c <= 1.0
    inter = len(set(a.tolist()) & set(b.tolist()))
    assert similarity(a, b).intersection == inter


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 500), st.floats(0.3, 1.0))
def test_length_filter_is_necessary_for_resemblance(n, t):
    """A set B of m shingles can reach r >= t against |A| = n only when t*n <= m <= n/t
    (r <= min/max): the filter passes exactly the sizes between the bounds, every size that
    can reach t among them (it is necessary), and the sizes just beyond the bounds cannot
    (they are tight, up to the 1e-9 the bounds allow for rounding)."""
    lo, hi = length_bounds(n, t)
    t_exact = Fraction(t)

    def best(m: int) -> Fraction:  # the largest r a B of m shingles reaches
        return Fraction(min(n, m), max(n, m))

    sizes = range(0, hi + 4)
    assert [m for m in sizes if passes_length_filter(n, m, t)] == list(range(lo, hi + 1))
    assert {m for m in sizes if best(m) >= t_exact} <= set(range(lo, hi + 1))
    assert best(lo - 1) < t_exact and best(hi + 1) < t_exact
    assert min(best(lo), best(hi)) >= t_exact - Fraction(1, 10**6)


@pytest.mark.parametrize("scheme", ["oph", "kperm"])
@settings(max_examples=40, deadline=None)
@given(st.integers(200, 3000), st.floats(0.0, 1.0), st.integers(0, 2**32))
def test_minhash_estimate_within_four_sigma(scheme, n, overlap, seed):
    shared = int(n * overlap)
    rng = np.random.default_rng(seed)
    pool = np.unique(rng.integers(0, 2**63, size=3 * n, dtype=np.uint64))
    assume(len(pool) >= 2 * n)
    a = pool[:n]
    b = np.concatenate([pool[n - shared : n], pool[n : 2 * n - shared]])
    j = resemblance(np.sort(a), np.unique(b))
    k = 256
    est = MinHash.from_shingles(a, k, 1, scheme).jaccard(MinHash.from_shingles(b, k, 1, scheme))
    sigma = math.sqrt(max(j * (1 - j), 1 / k) / k)
    assert abs(est - j) <= 4 * sigma


def test_minhash_is_identical_across_processes():
    code = (
        "import numpy as np; from neardup.sketches.minhash import MinHash; "
        "print(MinHash.from_shingles(np.arange(1, 500, dtype=np.uint64), 64, 7, '{s}')"
        ".hashvalues.tolist())"
    )
    for scheme in ("oph", "kperm"):
        here = MinHash.from_shingles(
            np.arange(1, 500, dtype=np.uint64), 64, 7, scheme
        ).hashvalues.tolist()
        other = subprocess.run(
            [sys.executable, "-c", code.format(s=scheme)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert eval(other) == here


def test_golden_values_pin_the_hash_functions():
    # Keys stored in existing indices depend on these exact values: a change must bump
    # SIGNATURE_VERSION. These are the values of versions 4 to 7 (5 changed the stop lists
    # only; 6 the SimHash keys only: pairs of 5 blocks, and version 5's single blocks
    # still made for the indices of version 5 that it opens; 7 the default winnowing window
    # and how keywords are written only; tokens hashed from their code points, the exact key
    # over the token hashes); versions 2 and 3 hashed tokens with xxh64, and shingle
    # combining, MinHash, bands and SimHash are unchanged since (the combination of version
    # 3's token hashes below).
    assert SIGNATURE_VERSION == 7
    th = hash_strings(["a", "rose", "is", "a", "rose"], 1)
    assert th.tolist() == [
        11424993892651325269,
        1252477247390874147,
        16796916863692109645,
        11424993892651325269,
        1252477247390874147,
    ]
    assert combine(th, 3).tolist() == [
        3651539514292556434,
        1291542341473924837,
        5645175803588987374,
    ]
    v3 = np.array(
        [
            16051599287423682246,
            17682269953055564969,
            8203742665516351232,
            16051599287423682246,
            17682269953055564969,
        ],
        dtype=np.uint64,
    )
    assert combine(v3, 3).tolist() == [
        18428080921137675705,
        7195086397610003658,
        14441974481437861236,
    ]
    assert exact_key(th) == "a4b080194a60845100f010d145df376d"
    assert MinHash.from_shingles(
        np.array([1, 2, 3], dtype=np.uint64), 4, 1, "kperm"
    ).hashvalues.tolist() == [
        5670154646568099679,
        4339070533916615077,
        9499765306333191553,
        1101825633394193528,
    ]
    assert MinHash.from_shingles(
        np.arange(1, 4, dtype=np.uint64), 8, 1, "oph"
    ).hashvalues.tolist() == [
        0,
        4233148493373801447,
        0,
        4233148493373801447,
        4233148493373801447,
        0,
        0,
        0,
    ]
    assert band_keys(np.arange(8, dtype=np.uint64), 2, 4).tolist() == [
        16672833618798944709,
        8350475219201209255,
    ]
    fp = token_simhash(th)
    assert fp == 11027542429476452165
    assert block_keys(fp, 3).tolist() == [
        16605826593307798426,
        1013625790289827186,
        2607382183812146868,
        13011666402182388671,
    ]
    assert block_keys(fp, 3, agreeing_blocks(5)).tolist() == block_keys(fp, 3).tolist()
    assert block_keys(fp, 3, agreeing_blocks(6)).tolist() == PAIR_KEYS_V6


def test_optimal_bands_and_s_curve():
    b, r = optimal_bands(0.8, 128, 0.5, 0.5)
    assert b * r <= 128
    p = collision_probability(np.array([0.3, 0.8, 0.95]), b, r)
    assert p[0] < 0.05 and p[2] > 0.95
    b2, r2 = optimal_bands(0.5, 128, 0.5, 0.5)
    assert r2 < r  # a lower threshold needs fewer rows per band
    keys = band_keys(np.arange(128, dtype=np.uint64), b, r)
    assert len(keys) == b and len(set(keys.tolist())) == b


def test_config_rejects_bad_bands_and_stores_derived_ones():
    with pytest.raises(ConfigError):
        Config(bands=20, rows=10)
    with pytest.raises(ConfigError):
        Config(bands=4)
    c = Config(threshold=0.7)
    assert Config.from_json(c.to_json()) == c and c.bands * c.rows <= c.num_perm


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 2**64 - 1),
    st.lists(st.integers(0, 63), max_size=6, unique=True),
    st.integers(0, 6),
    st.sampled_from([1, 2, 3]),
)
def test_simhash_blocks_pigeonhole(fp, flips, k, j):
    # within distance k: at least j of the k + j blocks agree, so the key of those j does
    other = fp
    for bit in flips[:k]:
        other ^= 1 << bit
    assert hamming(fp, other) <= k
    assert np.intersect1d(block_keys(fp, k, j), block_keys(other, k, j)).size >= 1


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**64 - 1), st.lists(st.integers(0, 63), min_size=4, max_size=4, unique=True))
def test_simhash_pair_keys_are_shared_only_by_agreeing_pairs(fp, flips):
    # the default k = 3 with version 6's pairs: 10 keys; flipping bits in b blocks leaves
    # C(5 - b, 2) keys shared (none once 4 blocks differ), so the keys are no looser than
    # the guarantee needs
    other = fp
    for bit in flips:
        other ^= 1 << bit
    a, b = block_keys(fp, 3, 2), block_keys(other, 3, 2)
    assert len(a) == 10 and len(set(a.tolist())) == 10
    differing = {
        next(i for i, (lo, hi) in enumerate(block_bounds(3, j=2)) if lo <= 63 - x < hi)
        for x in flips
    }
    assert int((a == b).sum()) == math.comb(5 - len(differing), 2)


def test_simhash_block_bounds_cover_64_bits():
    assert block_bounds(3) == [(0, 16), (16, 32), (32, 48), (48, 64)]
    assert sum(hi - lo for lo, hi in block_bounds(5)) == 64


def test_simhash_of_similar_feature_sets_is_close():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2**63, size=400, dtype=np.uint64)
    b = a.copy()
    b[:4] = rng.integers(0, 2**63, size=4, dtype=np.uint64)
    c = rng.integers(0, 2**63, size=400, dtype=np.uint64)
    assert hamming(simhash(a), simhash(b)) < hamming(simhash(a), simhash(c))
