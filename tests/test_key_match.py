"""KeyMatcher answers candidate queries as the engine's candidate query does: checked against
a plain reading of that query (keywords as strings, as ``dsl.candidate_query`` sends them)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.config import SIGNATURE_VERSION
from neardup.keys.encoding import render_keys
from neardup.engines.base import CandidateQuery, KeyGroup, Tags
from neardup.engines.elastic.key_match import (
    Entry,
    KeyMatcher,
    by_space,
    by_space_reference,
    merged,
)

FIELDS = ("exact", "minhash", "simhash")
keys_st = st.lists(st.integers(0, 5), min_size=0, max_size=6)
doc_st = st.fixed_dictionaries(
    {
        "keys": st.fixed_dictionaries({f: keys_st for f in FIELDS}),
        "n": st.integers(1, 20),
        "dup": st.sampled_from([None, False, True]),
    }
)
query_st = st.fixed_dictionaries(
    {
        "keys": st.fixed_dictionaries({f: keys_st for f in FIELDS}),
        "need": st.fixed_dictionaries({f: st.integers(1, 3) for f in FIELDS}),
        "lo": st.integers(0, 10),
        "hi": st.integers(5, 25),
        "before": st.one_of(st.none(), st.integers(0, 30)),
        "after": st.one_of(st.none(), st.integers(0, 30)),
        "reps": st.booleans(),
        "exclude": st.one_of(st.none(), st.integers(0, 30)),
        "limit": st.integers(1, 30),
    }
)


def _entries(docs) -> list[Entry]:
    out = []
    for i, d in enumerate(docs):
        tags = None if d["dup"] is None else Tags(cluster_id=f"c{i}", is_duplicate=d["dup"])
        keys = {f: np.array(k, dtype=np.uint64) for f, k in d["keys"].items()}
        out.append(Entry(id=f"d{i}", seq=i + 1, n_shingles=d["n"], simhash=i, keys=keys, tags=tags))
    return out


def _query(q) -> CandidateQuery:
    return CandidateQuery(
        groups=tuple(
            KeyGroup(f, np.array(q["keys"][f], dtype=np.uint64), q["need"][f])
            for f in FIELDS
            if q["keys"][f]
        ),
        min_shingles=q["lo"],
        max_shingles=q["hi"],
        exclude_id=None if q["exclude"] is None else f"d{q['exclude']}",
        limit=q["limit"],
        before_seq=q["before"],
        after_seq=q["after"],
        representatives=q["reps"],
    )


def _engine_rule(entries: list[Entry], q: CandidateQuery) -> list[tuple[str, float, frozenset]]:
    """The engine's query read plainly: distinct keywords shared per group, the filters."""
    hits = []
    for e in entries:
        score, matched = 0, set()
        for g in q.groups:
            asked = set(
                render_keys(g.field, np.asarray(g.keys, dtype=np.uint64), SIGNATURE_VERSION)
            )
            held = set(
                render_keys(
                    g.field, np.asarray(e.keys.get(g.field, []), dtype=np.uint64), SIGNATURE_VERSION
                )
            )
            shared = len(asked & held)
            if shared >= g.min_match:
                score += shared
                matched.add(g.field)
        ok = (
            matched
            and q.min_shingles <= e.n_shingles <= q.max_shingles
            and e.id != q.exclude_id
            and (q.before_seq is None or e.seq < q.before_seq)
            and (q.after_seq is None or e.seq > q.after_seq)
            and (not q.representatives or (e.tags is not None and not e.tags.is_duplicate))
        )
        if ok:
            hits.append((e.seq, e.id, float(score), frozenset(matched)))
    hits.sort(key=lambda h: (-h[2], h[0]))
    return [(i, s, m) for _, i, s, m in hits[: q.limit]]


@settings(max_examples=300, deadline=None)
@given(st.lists(doc_st, max_size=25), st.lists(query_st, min_size=1, max_size=4), st.integers(1, 4))
def test_matches_the_engine_query(docs, queries, parts):
    entries = _entries(docs)
    m = KeyMatcher()
    step = max(1, len(entries) // parts)
    for at in range(0, len(entries), step):  # several segments, as batches add them
        m.add(entries[at : at + step])
    qs = [_query(q) for q in queries]
    got = m.candidates(qs)
    for q, hits in zip(qs, got, strict=True):
        assert [(c.id, c.score, c.matched) for c in hits] == _engine_rule(entries, q)


def test_a_document_added_again_or_removed_matches_as_it_is_now():
    keys = lambda *k: {"exact": np.array(k, dtype=np.uint64)}  # noqa: E731
    m = KeyMatcher()
    m.add([Entry(id="a", seq=1, n_shingles=5, simhash=0, keys=keys(1))])
    m.add([Entry(id="a", seq=1, n_shingles=5, simhash=0, keys=keys(2))])
    q = lambda k: CandidateQuery(groups=(KeyGroup("exact", np.array([k], dtype=np.uint64), 1),))  # noqa: E731
    assert [c.id for c in m.candidates([q(1)])[0]] == []
    assert [c.id for c in m.candidates([q(2)])[0]] == ["a"]
    m.set_tags("a", Tags(cluster_id="x", is_duplicate=True))
    assert m.candidates([q(2)])[0][0].cluster_id == "x"
    m.remove("a")
    assert m.candidates([q(2)])[0] == [] and "a" not in m


def test_many_segments_are_merged_and_still_match():
    m = KeyMatcher()
    for i in range(20):
        m.add([Entry(id=f"d{i}", seq=i, n_shingles=3, simhash=0, keys={"exact": np.array([7])})])
    q = CandidateQuery(groups=(KeyGroup("exact", np.array([7], dtype=np.uint64), 1),), limit=100)
    assert [c.id for c in m.candidates([q])[0]] == [f"d{i}" for i in range(20)]


def test_merged_prefers_what_is_held_here():
    from neardup.engines.base import Candidate

    here = Candidate(id="a", n_shingles=1, simhash=0, score=1.0, seq=3, cluster_id="new")
    there = Candidate(id="a", n_shingles=1, simhash=0, score=5.0, seq=3, cluster_id="old")
    other = Candidate(id="b", n_shingles=1, simhash=0, score=2.0, seq=1)
    assert [(c.id, c.cluster_id) for c in merged([here], [there, other], 1)] == [("b", None)]
    assert [(c.id, c.cluster_id) for c in merged([here], [there, other], 5)][1] == ("a", "new")


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(FIELDS),
    st.lists(
        st.tuples(
            st.lists(st.integers(0, 2**64 - 1) | st.integers(0, 4), max_size=8), st.integers(0, 50)
        ),
        max_size=12,
    ),
)
def test_keys_by_space_equal_the_reference_form(field_name, owned):
    """The keys of many documents by space, all at once, are the same arrays in the same
    order as :func:`_spaces` of each document in turn (positional and other fields,
    repeated keys and owners, empty arrays)."""
    keys = [np.array(k, dtype=np.uint64) for k, _ in owned]
    owners = [o for _, o in owned]
    fast, slow = by_space(field_name, keys, owners), by_space_reference(field_name, keys, owners)
    assert list(fast) == list(slow)
    for space, (k, o) in slow.items():
        assert k.dtype == fast[space][0].dtype == np.uint64 and o.dtype == fast[space][1].dtype
        assert k.tolist() == fast[space][0].tolist() and o.tolist() == fast[space][1].tolist()
