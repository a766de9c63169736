"""One candidate rule, translated by each engine: the candidates the engines find for the
rule's queries are the rule's own, read in memory (:meth:`CandidateRule.matched` and the
length filter of :meth:`CandidateRule.query`, representatives only when asked).

* the embedded engine's SQL (:meth:`~neardup.engines.embedded.postings.Postings.candidates_sql`)
  and its batched form, and the HTTP engine's query as :class:`KeyMatcher` reads it, on
  random documents (hypothesis);
* the engines themselves (embedded, osmem, a real engine through the usual fixtures) on a
  seeded collection: the query DSL as the engine answers it;
* the in-batch check (:class:`HeldRepresentatives`) on the same documents.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup import Config, Document, NearDup
from neardup.engines.elastic.key_match import Entry, KeyMatcher
from neardup.matching.candidates import CandidateRule, HeldRepresentatives
from neardup.sketches.verify import length_bounds

CONFIG = Config(threshold=0.7, shingle_size=3)
_rng = random.Random(3)
VOCAB = [
    "".join(_rng.choice("bdfgklmnprstvz") + _rng.choice("aeiou") for _ in range(2))
    for _ in range(60)
]


def _texts(seed: int, n: int) -> list[str]:
    """``n`` texts: some new, some edited copies of earlier ones (a few words changed)."""
    r = random.Random(seed)
    out: list[str] = []
    for _ in range(n):
        if out and r.random() < 0.6:
            words = r.choice(out).split()
            for _ in range(r.randrange(0, 4)):
                words[r.randrange(len(words))] = r.choice(VOCAB)
            out.append(" ".join(words))
        else:
            out.append(" ".join(r.choice(VOCAB) for _ in range(r.randrange(12, 30))))
    return out


def _in_memory(rule: CandidateRule, docs, q_doc, representatives: bool) -> dict[str, frozenset]:
    """The rule read in memory: the stored documents ``q_doc``'s query proposes, with the
    fields they match by."""
    lo, hi = length_bounds(q_doc.n_shingles, rule.threshold)
    out = {}
    for b in docs:
        if b.id == q_doc.id or not lo <= b.n_shingles <= hi:
            continue
        if representatives and (b.tags is None or b.tags.is_duplicate):
            continue
        matched = rule.matched(q_doc.keys, b.keys)
        if matched:
            out[b.id] = matched
    return out


def _found(cands) -> dict[str, frozenset]:
    return {c.id: c.matched for c in cands}


def _queries(nd: NearDup, docs, representatives: bool):
    return [
        nd.rule.query(
            d.keys, d.n_shingles, exclude_id=d.id, limit=10**6, representatives=representatives
        )
        for d in docs
    ]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.integers(2, 30), representatives=st.booleans())
def test_sql_batched_and_the_http_query_translate_the_one_rule(
    tmp_path_factory, seed, n, representatives
):
    """On random documents, each engine's translation finds what the rule reads in memory."""
    path = tmp_path_factory.mktemp("rule") / "r.db"
    with NearDup.open(str(path), CONFIG) as nd:
        nd.index([Document(f"d{i}", t) for i, t in enumerate(_texts(seed, n))], progress=None)
        docs = list(nd.engine.scan())
        rule, e = nd.rule, nd.engine
        queries = _queries(nd, docs, representatives)
        expected = [_in_memory(rule, docs, d, representatives) for d in docs]
        assert [_found(e.postings.candidates_sql(q)) for q in queries] == expected
        assert [_found(c) for c in e.postings.candidates_batched(queries)] == expected
        matcher = KeyMatcher()
        matcher.add(
            [
                Entry(
                    id=d.id,
                    seq=d.seq,
                    n_shingles=d.n_shingles,
                    simhash=d.simhash,
                    keys=d.keys,
                    tags=d.tags,
                )
                for d in docs
            ]
        )
        assert [_found(c) for c in matcher.candidates(queries)] == expected


@pytest.mark.parametrize("seed", [1, 2])
def test_every_engine_and_the_in_batch_check_translate_the_one_rule(engine_target, seed):
    """The engines' answers (the query DSL on osmem or a real engine, SQL on the embedded
    one) and the in-batch check's equal the rule read in memory, and some are found."""
    target, opts = engine_target
    with NearDup.open(target, CONFIG, **opts) as nd:
        nd.index([Document(f"d{i}", t) for i, t in enumerate(_texts(seed, 80))], progress=None)
        nd.engine.refresh()
        docs = sorted(nd.engine.scan(), key=lambda d: d.seq)
        for representatives in (False, True):
            expected = [_in_memory(nd.rule, docs, d, representatives) for d in docs]
            assert sum(map(len, expected)) > 20
            queries = _queries(nd, docs, representatives)
            found = nd.engine.candidates(queries)  # many at once (HTTP: one search for all keys)
            assert [_found(c) for c in found] == expected
            alone = [nd.engine.candidates([q])[0] for q in queries]  # HTTP: the query DSL
            assert [_found(c) for c in alone] == expected
        held = HeldRepresentatives(nd.rule)
        for i, d in enumerate(docs):  # the batch's representatives so far, as tagging holds them
            earlier = [b for b in docs[:i] if not b.tags.is_duplicate]
            assert _found(held.candidates(d)) == _in_memory(nd.rule, earlier, d, True)
            if not d.tags.is_duplicate:
                held.add(d, d.seq)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.integers(1, 40), stored=st.integers(0, 10))
def test_similarities_made_where_signed_tag_as_the_held_representatives(
    tmp_path_factory, seed, n, stored
):
    """similar_earlier equals CandidateRule.verified of every earlier pair (the reference)
    but copies of an earlier document (named apart), and a batch tagged with it gets the tags
    of one tagged against its held representatives, after ``stored`` documents already in
    the index, and for a part of the batch (where a copy's original may be left out)."""
    from neardup.matching.candidates import similar_earlier

    texts = _texts(seed, stored + n)  # (edited copies, some with no word changed)
    path = tmp_path_factory.mktemp("similar") / "s.db"
    with NearDup.open(str(path), CONFIG) as nd:
        nd.index([Document(f"s{i}", t) for i, t in enumerate(texts[:stored])], progress=None)
        docs = nd.signer.sign_batch([Document(f"d{i}", t) for i, t in enumerate(texts[stored:])])
        rule = nd.rule

        def copy(b, i):  # a copy of an earlier document it resembles at >= t
            return any(
                (c.exact, c.lang) == (b.exact, b.lang)
                and (sim := rule.verified(b, c)) is not None
                and sim.resemblance >= rule.threshold
                for c in docs[:i]
            )

        made = similar_earlier(rule, docs)
        reference = {
            a.id: sorted(
                (b.id, sim.resemblance)
                for i, b in enumerate(docs[:k])
                if not copy(b, i) and (sim := rule.verified(a, b)) is not None
            )
            for k, a in enumerate(docs)
        }
        assert {i: sorted(pairs) for i, pairs in made.pairs.items()} == reference
        assert set(made.copies) == {b.id for i, b in enumerate(docs) if copy(b, i)}
        held = nd.tagger.tag_ordered(docs)
        assert nd.tagger.tag_ordered(docs, similar=made) == held
        some = docs[::2]  # (what is new of a batch: a part of it, in its order)
        assert nd.tagger.tag_ordered(some, similar=made) == nd.tagger.tag_ordered(some)


def test_copies_of_one_text_in_a_batch_cost_one_pair_each():
    """n copies of one text: each later one is listed against the first only (which stands
    for the copies), not against every earlier copy."""
    from neardup.matching.candidates import similar_earlier

    with NearDup.open(":memory:", CONFIG) as nd:
        text = _texts(5, 1)[0]
        docs = nd.signer.sign_batch([Document(f"c{i}", text) for i in range(40)])
        made = similar_earlier(nd.rule, docs)
    assert made.pairs["c0"] == [] and all(
        made.pairs[f"c{i}"] == [("c0", 1.0)] for i in range(1, 40)
    )
    assert made.copies == {f"c{i}": "c0" for i in range(1, 40)}


def test_a_copy_whose_original_is_left_out_stands_for_it():
    """Tagging a part of the batch without a copy's original (say, the original was stored
    before): the copy can be a representative, and what resembles its original joins it."""
    from neardup.matching.candidates import similar_earlier

    words = _texts(7, 1)[0].split() * 2
    edited = " ".join(words[:-1] + ["zzzz"])
    with NearDup.open(":memory:", CONFIG) as nd:
        a, b, c = nd.signer.sign_batch(
            [Document("a", " ".join(words)), Document("b", " ".join(words)), Document("c", edited)]
        )
        made = similar_earlier(nd.rule, [a, b, c])
        assert made.copies == {"b": "a"} and [j for j, _ in made.pairs["c"]] == ["a"]
        tags = nd.tagger.tag_ordered([b, c], similar=made)
        assert tags == nd.tagger.tag_ordered([b, c]) and tags["c"].dup_of == "b"


class _CountingReads:
    """An engine's collisions, and its reads by id, counting the ids read with shingles."""

    def __init__(self, engine):
        self.engine, self.with_shingles = engine, []
        self.collisions = engine.collisions

    def get(self, ids, **kw):
        ids = list(ids)
        if kw.get("shingles", True):
            self.with_shingles += ids
        return self.engine.get(ids, **kw)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 63), unique=True, min_size=0, max_size=CONFIG.simhash_k + 3))
def test_n_to_n_reads_shingles_of_a_simhash_candidate_only_within_k(flip):
    """A near copy proposed by SimHash blocks alone (every other key of it changed), its
    SimHash ``len(flip)`` bits from its original's: N-to-N pairs them exactly when the
    rule's distance test passes (``<= simhash_k``), and reads its shingles only then."""
    import numpy as np

    from neardup.matching.clustering import verified_pairs

    texts = _texts(5, 8)
    with NearDup.open(":memory:", CONFIG) as nd:
        signed = nd.signer.sign_batch([Document(f"d{i}", t) for i, t in enumerate(texts)])
        original = signed[-1]
        copy = nd.signer.sign_batch([Document("copy", original.doc.text + " " + VOCAB[0])])[0]
        copy.keys = {
            f: np.array(original.keys[f], copy=True)
            if f == "simhash"
            else np.asarray(v, dtype=np.uint64) ^ np.uint64(0x5A5A5A5A5A5A)
            for f, v in copy.keys.items()
        }
        copy.simhash = original.simhash ^ sum(1 << b for b in flip)
        assert not nd.engine.put([*signed, copy])
        within = len(flip) <= CONFIG.simhash_k
        assert nd.rule.matched(original.keys, copy.keys) == {"simhash"}
        assert nd.rule.plausible({"simhash"}, original.simhash, copy.simhash) is within
        reads = _CountingReads(nd.engine)
        pairs, _ = verified_pairs(reads, nd.rule, CONFIG.threshold)
        found = {(p.a, p.b) for p in pairs} | {(p.b, p.a) for p in pairs}
        assert ((original.id, "copy") in found) is within
        assert ("copy" in reads.with_shingles) is within
        assert len(reads.with_shingles) == len(set(reads.with_shingles))  # each read once
