"""LSH with a minimum number of matching bands: P(s) = P[Binomial(b, s^r) >= m], the (b, r, m)
optimizer, the ``min_match`` setting (stored with the index; older indices mean m = 1) and
both engines returning a document only when it shares >= m band keys."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from neardup import Config, Document, NearDup
from neardup.config import ConfigError
from neardup.sketches.lsh import (
    Banding,
    _areas,
    band_keys,
    collision_probability,
    optimal_bands,
    optimal_lsh,
)
from neardup.sketches.minhash import MinHash


def binomial_tail(s: float, b: int, r: int, m: int) -> float:
    p = s**r
    return sum(math.comb(b, k) * p**k * (1 - p) ** (b - k) for k in range(m, b + 1))


@pytest.mark.parametrize(
    "b,r,m", [(20, 5, 5), (20, 2, 3), (20, 6, 9), (14, 9, 1), (1, 1, 1), (24, 5, 24), (128, 1, 100)]
)
def test_collision_probability_is_the_binomial_tail(b, r, m):
    s = np.linspace(0.0, 1.0, 41)
    got = collision_probability(s, b, r, m)
    assert got.shape == s.shape
    assert np.allclose(got, [binomial_tail(x, b, r, m) for x in s], rtol=1e-9, atol=1e-12)
    assert got[0] == 0.0 and got[-1] == pytest.approx(1.0)
    assert np.all(np.diff(got) >= -1e-12)  # an S-curve: non-decreasing in s
    assert float(collision_probability(0.8, b, r, m)) == pytest.approx(
        binomial_tail(0.8, b, r, m), rel=1e-9
    )


def test_min_match_one_is_the_classic_curve_and_larger_m_is_stricter():
    s = np.linspace(0.0, 1.0, 101)
    assert np.allclose(collision_probability(s, 14, 9), 1 - (1 - s**9) ** 14)
    assert np.array_equal(collision_probability(s, 14, 9, 1), collision_probability(s, 14, 9))
    curves = [collision_probability(s, 20, 5, m) for m in range(1, 21)]
    assert all(np.all(a >= b - 1e-12) for a, b in zip(curves, curves[1:], strict=False))
    with pytest.raises(ValueError):
        collision_probability(0.5, 20, 5, 21)
    with pytest.raises(ValueError):
        collision_probability(0.5, 20, 5, 0)


def test_collision_probability_matches_monte_carlo():
    rng = np.random.default_rng(7)
    draws = rng.binomial(20, 0.8**5, size=200_000)
    for m in (1, 3, 5, 8, 12):
        assert (draws >= m).mean() == pytest.approx(
            float(collision_probability(0.8, 20, 5, m)), abs=0.005
        )


def test_shared_band_counts_of_real_sketches_follow_the_curve():
    """K independent permutations: each band agrees with probability J^r, independently."""
    rng = np.random.default_rng(11)
    b, r, trials = 20, 5, 400
    common, own = 160, 20  # J = 160 / 200 = 0.8
    shared = []
    for _ in range(trials):
        u = rng.choice(2**62, size=common + 2 * own, replace=False).astype(np.uint64)
        a, c = u[: common + own], np.concatenate([u[:common], u[common + own :]])
        ka = band_keys(MinHash.from_shingles(a, 128, 1, "kperm").hashvalues, b, r)
        kc = band_keys(MinHash.from_shingles(c, 128, 1, "kperm").hashvalues, b, r)
        shared.append(int((ka == kc).sum()))
    shared = np.array(shared)
    for m in (1, 3, 5, 7):
        p = float(collision_probability(0.8, b, r, m))
        sd = math.sqrt(p * (1 - p) / trials)
        assert abs((shared >= m).mean() - p) <= 4.5 * sd + 1e-3, (m, (shared >= m).mean(), p)


def test_optimal_lsh_returns_bands_rows_and_min_match():
    for t in (0.5, 0.7, 0.8, 0.9):
        got = optimal_lsh(t, 128, 0.1, 0.9, 20)
        assert isinstance(got, Banding)
        b, r, m = got
        assert 1 <= b <= 20 and b * r <= 128 and 1 <= m <= b
        assert m > 1  # voting bands beat any-band at the same budget
        # no worse than the best classic (m = 1) banding within the same band budget
        classic = min(
            ((bb, rr) for bb in range(1, 21) for rr in range(1, 128 // bb + 1)),
            key=lambda x: sum(w * a for w, a in zip((0.1, 0.9), _areas(t, *x), strict=True)),
        )
        err = sum(w * a for w, a in zip((0.1, 0.9), _areas(t, b, r, min_match=m), strict=True))
        assert (
            err <= sum(w * a for w, a in zip((0.1, 0.9), _areas(t, *classic), strict=True)) + 1e-12
        )
    # a fixed m is kept; the budget is respected; the classic optimizer is unchanged
    assert optimal_lsh(0.8, 128, 0.1, 0.9, 20, 1) == Banding(14, 9, 1) and optimal_bands(
        0.8, 128, 0.1, 0.9
    ) == (14, 9)
    assert optimal_lsh(0.8, 128, 0.1, 0.9, 8).bands <= 8
    assert optimal_lsh(0.8, 128, 0.1, 0.9, 20, 3).min_match == 3
    with pytest.raises(ValueError):
        optimal_lsh(0.8, 128, 0.1, 0.9, 4, 5)


def test_more_weight_on_misses_lowers_m():
    loose = optimal_lsh(0.8, 128, 0.05, 0.95, 20)
    strict = optimal_lsh(0.8, 128, 0.5, 0.5, 20)
    assert collision_probability(0.8, *loose) > collision_probability(0.8, *strict)


def test_config_defaults_per_threshold():
    """The stored banding of new indices (change only on purpose: it changes their keys)."""
    c = Config()
    assert (c.fp_weight, c.fn_weight, c.max_bands) == (0.05, 0.95, 20)
    got = {
        t: (Config(threshold=t).bands, Config(threshold=t).rows, Config(threshold=t).min_match)
        for t in (0.5, 0.7, 0.8, 0.9)
    }
    assert got == {0.5: (20, 2, 3), 0.7: (20, 3, 4), 0.8: (20, 5, 4), 0.9: (20, 6, 8)}


def test_config_round_trip_and_older_indices_mean_min_match_one():
    c = Config(threshold=0.8)
    assert Config.from_json(c.to_json()) == c and c.min_match > 1
    old = json.loads(c.to_json())
    for k in ("min_match", "max_bands"):
        del old[k]
    old["bands"], old["rows"] = 14, 9  # what an index stored before min_match existed holds
    o = Config.from_dict(old)
    assert (o.bands, o.rows, o.min_match) == (14, 9, 1)
    assert Config.from_json(o.to_json()) == o
    # given bands and rows without min_match: the classic scheme; with it: kept
    assert (
        Config(bands=14, rows=9).min_match == 1
        and Config(bands=20, rows=5, min_match=4).min_match == 4
    )
    # min_match alone: bands and rows chosen for it
    assert Config(min_match=1) == Config(
        bands=16, rows=8, min_match=1
    )  # optimal_bands(0.8, 128, 0.05, 0.95)


def test_config_replace_rederives_the_banding():
    c = Config(threshold=0.8)
    assert c.replace(threshold=0.9) == Config(threshold=0.9)
    assert c.replace(max_bands=12) == Config(max_bands=12)
    assert (
        c.replace(bands=14, rows=9).min_match,
        c.replace(bands=14, rows=9, min_match=2).min_match,
    ) == (1, 2)
    assert c.replace(min_match=1) == Config(min_match=1)
    assert c.replace(seed=2).min_match == c.min_match


@pytest.mark.parametrize(
    "kw",
    [
        dict(bands=20, rows=5, min_match=21),
        dict(min_match=-1),
        dict(max_bands=0),
        dict(max_bands=4, min_match=5),
    ],
)
def test_config_rejects_bad_min_match(kw):
    with pytest.raises(ConfigError):
        Config(**kw)


def test_candidate_query_uses_min_match_for_the_bands(tmp_path):
    with NearDup.open(str(tmp_path / "a.db"), Config(threshold=0.8)) as nd:
        s = nd.signer.sign(
            Document(
                "x",
                "the quick brown fox jumps over the lazy dog and runs far away into the deep "
                "green forest",
            )
        )
        for mode in ("resemblance", "containment"):
            need = {
                g.field: g.min_match for g in nd.candidate_query(s.keys, s.n_shingles, mode).groups
            }
            assert need["minhash"] == nd.config.min_match == 4 and need["exact"] == 1
    with NearDup.open(str(tmp_path / "b.db"), Config(threshold=0.8, bands=14, rows=9)) as nd:
        need = {g.field: g.min_match for g in nd.candidate_query(s.keys, s.n_shingles).groups}
        assert need["minhash"] == 1


TEXTS = {
    "a": "the committee approved the new budget for schools hospitals and roads after a long "
    "debate in parliament on tuesday",
    "b": "heavy rain flooded the coastal villages overnight and rescue teams evacuated hundreds "
    "of families to safer ground",
    "c": "the orchestra opened its winter season with a symphony by a young composer that the "
    "critics praised warmly",
}


def _band_query(stored_keys: np.ndarray, shared: list[int], salt: int) -> dict[str, np.ndarray]:
    """Band keys sharing exactly the bands ``shared`` with a stored document (others unrelated)."""
    rng = np.random.default_rng(salt)
    keys = rng.integers(1, 2**63, size=len(stored_keys), dtype=np.uint64)
    keys[shared] = stored_keys[shared]
    return {"minhash": keys}


@pytest.mark.parametrize(
    "config",
    [Config(threshold=0.8), Config(threshold=0.8, bands=14, rows=9)],
    ids=["m_chosen", "old_m1"],
)
def test_engine_returns_only_documents_sharing_min_match_bands(engine_target, config):
    target, opts = engine_target
    with NearDup.open(target, config, **opts) as nd:
        nd.index([Document(i, t) for i, t in TEXTS.items()], progress=None)
        nd.engine.refresh()
        m, b = nd.config.min_match, nd.config.bands
        stored = nd.engine.get(["a"])["a"]
        ka = np.asarray(stored.keys["minhash"], dtype=np.uint64)
        assert len(ka) == b

        def candidates(shared: list[int], salt: int) -> set[str]:
            q = nd.candidate_query(
                _band_query(ka, shared, salt), stored.n_shingles, "resemblance", limit=50
            )
            return {c.id for c in nd.engine.candidates([q])[0]}

        assert (m > 1) == (config.bands != 14)  # (the chosen m votes; the old scheme's is 1)
        if m > 1:
            assert "a" not in candidates(list(range(m - 1)), 1)
            assert "a" not in candidates(list(range(b - m + 1, b)), 2)
        assert "a" in candidates(list(range(m)), 3)
        assert "a" in candidates(list(range(b - m, b)), 4)
        assert candidates([], 5) == set()
        # an unchanged copy shares every band: found and verified
        assert [x.id for x in nd.query(TEXTS["a"])] == ["a"]
