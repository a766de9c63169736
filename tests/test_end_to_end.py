"""End to end on real text: the organic license near-duplicates of the shared corpora."""

import itertools

import numpy as np
import pytest

from neardup import Config, Document, NearDup
from neardup.sketches.verify import passes_length_filter, similarity

from .corpora import corpus


@pytest.fixture(scope="module")
def licenses(tmp_path_factory):
    recs = corpus("en_licenses", max_words=4000)
    nd = NearDup.open(str(tmp_path_factory.mktemp("e2e") / "lic.db"), Config(threshold=0.8))
    rep = nd.index((Document(r["id"], r["text"], lang="en") for r in recs), progress=None)
    assert rep.indexed == len(recs) and not rep.failed
    yield nd, recs
    nd.close()


def brute_force_pairs(nd, ids, t):
    docs = nd.engine.get(ids)
    out = set()
    for a, b in itertools.combinations(sorted(ids), 2):
        da, db = docs[a], docs[b]
        if (
            passes_length_filter(da.n_shingles, db.n_shingles, t)
            and similarity(da.shingles, db.shingles).resemblance >= t
        ):
            out.add((a, b))
    return out


@pytest.mark.parametrize("t", [0.8, 0.9])
def test_all_pairs_found_and_exact(licenses, t):
    nd, recs = licenses
    truth = brute_force_pairs(nd, [r["id"] for r in recs], t)
    assert len(truth) > 50  # the corpus has organic near-duplicates: shared license texts
    found = {(p.a, p.b): p for p in nd.pairs(t)}
    assert set(found) <= truth  # precision 1: every reported pair is verified
    recall = len(set(found) & truth) / len(truth)
    assert recall >= 0.95, recall
    docs = nd.engine.get([i for p in list(found)[:20] for i in p])
    for (a, b), p in list(found.items())[:20]:
        inter = np.intersect1d(docs[a].shingles, docs[b].shingles).size
        assert p.resemblance == inter / (docs[a].n_shingles + docs[b].n_shingles - inter)


@pytest.mark.parametrize("t", [0.5, 0.8])
def test_pairs_are_exactly_the_verified_candidates_of_the_rule(licenses, t):
    """N-to-N decides the candidate rule for all collision pairs at once (length filter,
    SimHash distance for SimHash-only matches); the same rule pair by pair agrees."""
    nd, recs = licenses
    docs = nd.engine.get([r["id"] for r in recs])
    want = {
        (a, b)
        for a, b in itertools.combinations(sorted(docs), 2)
        if nd.rule.is_candidate(docs[a], docs[b], t)
        and similarity(docs[a].shingles, docs[b].shingles).resemblance >= t
    }
    assert len(want) > 50
    assert {(p.a, p.b) for p in nd.pairs(t)} == want


def test_license_families_cluster_together(licenses):
    nd, recs = licenses
    clusters = nd.clusters(0.8)
    text = {r["id"]: r["text"] for r in recs}
    big = clusters[0]
    assert big.size >= 10
    # the largest cluster is one license text repeated across packages: its members share the
    # opening words
    heads = {" ".join(text[m].split()[:3]).lower() for m in big.members}
    assert len(heads) < big.size
    tagged = nd.engine.get(big.members)
    assert sum(d.tags.is_duplicate for d in tagged.values()) >= big.size // 2
