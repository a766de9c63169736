import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.canonical import Canonicalizer
from neardup.config import Config
from neardup.signing.signatures import REGISTRY, match_curve, match_probability
from neardup.signing.signatures.supershingles import mega_shingles, super_shingles
from neardup.signing.signer import Signer

TEXT = " ".join(f"word{i} filler{i % 7}" for i in range(400))


def test_probability_formula_hand_values():
    assert match_probability(0.0) == 0.0
    assert math.isclose(match_probability(1.0), 1.0)
    # rho^14 = 1/2: p = 1 - P(0 agree) - P(1 agree) = 1 - 1/64 - 6/64
    rho = 0.5 ** (1 / 14)
    assert math.isclose(match_probability(rho), 57 / 64)
    # r = 1, k = 1, s = 1 is the identity
    assert math.isclose(match_probability(0.3, k=1, s=1, r=1), 0.3)


def test_curve_is_plot_ready_and_monotone():
    rho, p = match_curve(n=51)
    assert rho.shape == p.shape == (51,)
    assert np.all(np.diff(p) >= -1e-12) and p[0] == 0.0 and math.isclose(p[-1], 1.0)


def test_identical_documents_share_all_six_and_fifteen():
    cfg = Config(signatures=("exact", "super", "mega"))
    s = Signer(cfg)
    a, b = s.sign(TEXT), s.sign(TEXT + " ")
    assert len(a.keys["super"]) == 6 and len(a.keys["mega"]) == 15
    assert np.array_equal(a.keys["super"], b.keys["super"])
    assert REGISTRY["super"](Canonicalizer(cfg), None).min_match == 2
    assert REGISTRY["mega"](Canonicalizer(cfg), None).min_match == 1


def test_empty_document_has_no_keys():
    s = Signer(Config(signatures=("exact", "super", "mega")))
    sg = s.sign("")
    assert len(sg.keys["super"]) == 0 and len(sg.keys["mega"]) == 0


def test_super_shingle_groups_are_positional():
    sh = np.arange(1, 500, dtype=np.uint64)
    sup = super_shingles(sh, 6, 14, seed=1)
    assert len(set(sup.tolist())) == 6


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 2), min_size=6, max_size=6),
    st.lists(st.integers(0, 2), min_size=6, max_size=6),
)
def test_one_shared_mega_shingle_iff_two_super_shingles_agree(x, y):
    a, b = np.array(x, dtype=np.uint64), np.array(y, dtype=np.uint64)
    agree = int(np.count_nonzero(a == b))
    shared = len(np.intersect1d(mega_shingles(a), mega_shingles(b)))
    assert (shared >= 1) == (agree >= 2)
    assert shared == agree * (agree - 1) // 2
