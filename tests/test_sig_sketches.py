import math

import numpy as np

from neardup.canonical import Canonicalizer
from neardup.config import Config
from neardup.signing.signatures import REGISTRY
from neardup.signing.signatures.sketches import min_matches, sketch_keys


def test_sizes_and_identity():
    a = np.arange(1, 1000, dtype=np.uint64)
    assert len(sketch_keys(a, 84, 1)) == 84 and len(sketch_keys(a, 70, 1)) == 70
    assert np.array_equal(sketch_keys(a, 84, 1), sketch_keys(a[::-1].copy(), 84, 1))
    assert len(sketch_keys(np.empty(0, dtype=np.uint64), 84, 1)) == 0


def test_share_of_equal_keys_estimates_resemblance():
    a = np.arange(0, 1000, dtype=np.uint64)
    b = np.arange(200, 1200, dtype=np.uint64)  # J = 800 / 1200
    est = len(np.intersect1d(sketch_keys(a, 84, 7), sketch_keys(b, 84, 7))) / 84
    sigma = math.sqrt((2 / 3) * (1 / 3) / 84)
    assert abs(est - 2 / 3) < 4 * sigma


def test_min_match_rule_hand_values():
    # t = 0.8, K = 84: sigma = sqrt(0.16/84) = 0.04364;
    # (0.8 - 0.08729) * 84 = 59.87 -> 60; 0.8 * 84 = 67.2 -> 68
    assert min_matches(0.8, 84) == (60, 68)
    assert min_matches(1.0, 70) == (70, 70)
    sig = REGISTRY["minhash84"](Canonicalizer(Config(threshold=0.8)), None)
    assert (sig.min_match, sig.equality_min_match) == (60, 68)
