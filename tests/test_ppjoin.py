import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.evaluation.ppjoin import brute_force, ppjoin, token_ranks

sets_strategy = st.lists(st.lists(st.integers(0, 40), max_size=25), min_size=0, max_size=25)
thresholds = st.sampled_from([0.2, 0.4, 0.5, 0.6, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0])


@settings(max_examples=300, deadline=None)
@given(sets_strategy, thresholds)
def test_equals_brute_force(raw, t):
    sets = [np.array(s, dtype=np.uint64) for s in raw]
    got = ppjoin(sets, t)
    want = brute_force(sets, t)
    assert [(i, j) for i, j, _ in got] == [(i, j) for i, j, _ in want]
    assert all(abs(a[2] - b[2]) < 1e-12 for a, b in zip(got, want, strict=True))


def test_rose_example_of_000():
    # word 1-shingles of "a rose is a rose is a rose" and "a rose is a flower which is a rose":
    # r_1 = 3/5
    ids = {"a": 1, "rose": 2, "is": 3, "flower": 4, "which": 5}
    a = np.array([ids[w] for w in "a rose is a rose is a rose".split()], dtype=np.uint64)
    b = np.array([ids[w] for w in "a rose is a flower which is a rose".split()], dtype=np.uint64)
    assert ppjoin([a, b], 0.6) == [(0, 1, 0.6)]
    assert ppjoin([a, b], 0.61) == []


def test_rare_tokens_get_low_ranks():
    r = token_ranks([np.array([5, 9]), np.array([5, 7]), np.array([5])])
    # 7 and 9 occur once, 5 three times: 5 has the highest rank
    assert r[2].tolist() == [2] and sorted(np.concatenate(r[:2]).tolist()) == [0, 1, 2, 2]


def test_empty_sets_join_nothing():
    assert ppjoin([np.array([], dtype=np.uint64), np.array([], dtype=np.uint64)], 0.5) == []
