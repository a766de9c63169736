"""The cluster rule and its invariant, on both engines.

Rule: in arrival order a document joins the earlier representative it resembles most
(r >= t, ties to the earlier one), else it is a representative. Invariant: after any
sequence of index, re-index, resume, update and delete, the tags equal those of a fresh
index of the surviving documents in arrival order. A stateful property test (hypothesis)
drives random small collections with planted near-duplicates through such sequences.
"""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from neardup import Config, Document, NearDup
from neardup.engines.base import Tags
from neardup.sketches.verify import resemblance

CONFIG = Config(threshold=0.8, shingle_size=3)
_rng = random.Random(7)
VOCAB = [
    "".join(_rng.choice("bcdfghjklmnpqrstvwxz") + _rng.choice("aeiou") for _ in range(3))
    for _ in range(400)
]


def base_text(seed: int, n: int = 40) -> str:
    r = random.Random(seed)
    return " ".join(r.choice(VOCAB) for _ in range(n))


def edit(text: str, seed: int, edits: int) -> str:
    """``text`` with ``edits`` words replaced, inserted or deleted (a planted near-duplicate)."""
    r = random.Random(seed)
    words = text.split()
    for _ in range(edits):
        i = r.randrange(len(words))
        op = r.choice("rid")
        if op == "r":
            words[i] = r.choice(VOCAB)
        elif op == "i":
            words.insert(i, r.choice(VOCAB))
        elif len(words) > 10:
            del words[i]
    return " ".join(words)


def tags_of(nd: NearDup, ids: list[str]) -> dict[str, tuple]:
    got = nd.engine.get(ids)
    return {i: _key(got[i].tags) for i in ids if i in got}


def _key(t: Tags | None) -> tuple | None:
    return (
        None if t is None else (t.cluster_id, t.dup_of, round(t.max_resemblance, 9), t.is_duplicate)
    )


def fresh_tags(docs: list[Document], batch_size: int = 3) -> dict[str, tuple]:
    with NearDup.open(":memory:", CONFIG) as ref:
        ref.index(docs, batch_size=batch_size, progress=None)
        return tags_of(ref, [d.id for d in docs])


# -- the rule on small hand-made cases -------------------------------------------------------------
@pytest.fixture
def nd(engine_target):
    target, opts = engine_target
    with NearDup.open(target, CONFIG, **opts) as nd:
        yield nd


@pytest.mark.parametrize("batch_size", [1, 3])
def test_members_join_the_representative_not_a_member(nd, batch_size):
    a = base_text(1, 30)
    b = edit(a, 2, 1)
    c = edit(b, 3, 1)
    nd.index(
        [Document("a", a), Document("b", b), Document("c", c)], batch_size=batch_size, progress=None
    )
    nd.engine.refresh()
    got = nd.engine.get(["a", "b", "c"])
    sa, sb, sc = (got[x].shingles for x in "abc")
    # r(a,b) = 0.81, r(b,c) = 0.83, r(a,c) = 0.67: c resembles b most, but b is a member
    assert (
        resemblance(sa, sb) >= 0.8
        and resemblance(sb, sc) > resemblance(sa, sb)
        and resemblance(sa, sc) < 0.8
    )
    t = tags_of(nd, ["a", "b", "c"])
    assert t["a"][:2] == ("a", None)
    assert t["b"][:2] == ("a", "a")
    assert t["c"][:2] == ("c", None)  # its own cluster: no chaining through b


def test_every_member_resembles_its_representative(nd):
    docs = [Document(f"d{i}", edit(base_text(i // 4), i, i % 4)) for i in range(24)]
    nd.index(docs, batch_size=5, progress=None)
    nd.engine.refresh()
    stored = nd.engine.get([d.id for d in docs])
    assert all(d.tags is not None and d.tags.cluster_id for d in stored.values())
    members = [d for d in stored.values() if d.tags.is_duplicate]
    assert len(members) >= 6  # (six texts, four edits of each)
    for d in members:
        rep = stored[d.tags.dup_of]
        assert not rep.tags.is_duplicate and rep.seq < d.seq
        r = resemblance(d.shingles, rep.shingles)
        assert r >= CONFIG.threshold and r == pytest.approx(d.tags.max_resemblance)


def test_rerun_and_resume_change_nothing(nd):
    docs = [Document(f"d{i}", edit(base_text(i // 3), i, i % 3)) for i in range(18)]
    nd.index(docs[:7], batch_size=4, progress=None)  # a run that stopped halfway
    nd.index(docs, batch_size=4, progress=None)  # resumed
    nd.engine.refresh()
    first = tags_of(nd, [d.id for d in docs])
    report = nd.index(docs, batch_size=5, progress=None)  # run again
    nd.engine.refresh()
    assert report.indexed == 0 and report.unchanged == len(docs) and report.retagged == 0
    assert tags_of(nd, [d.id for d in docs]) == first == fresh_tags(docs)


def test_deleting_a_representative_retags_exactly_its_dependents(nd):
    a = base_text(10)
    docs = [
        Document("a", a),
        Document("b", edit(a, 1, 1)),
        Document("c", edit(a, 2, 1)),
        Document("x", base_text(11)),
    ]
    nd.index(docs, progress=None)
    nd.engine.refresh()
    rep = nd.delete(["a", "nope"])
    nd.engine.refresh()
    assert (
        rep.deleted == ["a"]
        and rep.missing == ["nope"]
        and set(rep.retagged) <= {"b", "c"}
        and "b" in rep.retagged
    )
    assert tags_of(nd, ["b", "c", "x"]) == fresh_tags(docs[1:])


def test_clusters_at_the_index_threshold_are_the_tags(nd):
    docs = [Document(f"d{i}", edit(base_text(i // 4), i, i % 4)) for i in range(20)]
    nd.index(docs, batch_size=6, progress=None)
    nd.engine.refresh()
    tags = tags_of(nd, [d.id for d in docs])
    groups: dict[str, list[str]] = {}
    for d in docs:
        groups.setdefault(tags[d.id][0], []).append(d.id)
    expected = sorted(sorted(g) for g in groups.values() if len(g) > 1)
    assert sorted(sorted(c.members) for c in nd.clusters()) == expected
    # the same rule recomputed from verified pairs gives the same clusters
    seq = {d.id: i for i, d in enumerate(docs)}
    from neardup.matching.clustering import groups_from_leaders, leader_clusters

    leaders = groups_from_leaders(leader_clusters(nd.pairs(), seq, CONFIG.threshold))
    assert sorted(sorted([r] + [m for m, _ in ms]) for r, ms in leaders.items()) == expected


def test_connected_components_chain_and_are_labelled_as_such(nd):
    a = base_text(20, 60)
    chain = [a]
    for i in range(4):
        chain.append(edit(chain[-1], 100 + i, 2))
    nd.index([Document(f"c{i}", t) for i, t in enumerate(chain)], progress=None)
    nd.engine.refresh()
    rule = sorted(sorted(c.members) for c in nd.clusters())
    closure = sorted(sorted(c.members) for c in nd.clusters(connected=True))
    assert sum(map(len, closure)) >= sum(map(len, rule))
    for c in nd.clusters():
        assert c.min_resemblance >= CONFIG.threshold  # the rule never chains


def test_export_unique_writes_one_document_per_cluster(nd):
    docs = [
        Document(
            id=f"d{i}",
            text=edit(base_text(i // 3), i, i % 3),
            title=f"title {i}",
            lang=None,
            fields={"source": "s"},
        )
        for i in range(12)
    ]
    nd.index(docs, progress=None)
    nd.engine.refresh()
    clusters = {t[0] for t in tags_of(nd, [d.id for d in docs]).values()}
    unique = list(nd.export("unique"))
    assert sorted(r["id"] for r in unique) == sorted(clusters)
    dups = list(nd.export("duplicates"))
    assert len(unique) + len(dups) == len(docs) == len(list(nd.export()))
    rec = next(r for r in nd.export() if r["id"] == "d1")
    assert (
        rec["title"] == "title 1"
        and rec["source"] == "s"
        and rec["text"] == docs[1].text
        and rec["neardup"]["cluster_id"] == "d0"
    )


def test_show_a_member_and_a_representative(nd):
    a = base_text(30)
    nd.index(
        [Document("a", a), Document("b", edit(a, 5, 1)), Document("c", edit(a, 6, 1))],
        progress=None,
    )
    nd.engine.refresh()
    s = nd.show("b")
    assert s.representative == "a" and s.resemblance >= CONFIG.threshold and s.members == []
    s = nd.show("a")
    assert s.representative == "a" and [m for m, _ in s.members] == ["b", "c"]
    with pytest.raises(KeyError):
        nd.show("zzz")


# -- the invariant, as a state machine -------------------------------------------------------------
class TagMachine(RuleBasedStateMachine):
    """Random index / re-index / resume / update / delete; tags must always equal a fresh index."""

    target: tuple[str, dict] = ("", {})
    counter = itertools.count()

    @initialize()
    def open_index(self) -> None:
        base, opts = self.target
        n = next(self.counter)
        if opts:
            self.nd = NearDup.open(base, CONFIG, **{**opts, "index": f"t{n}"})
        else:
            self.nd = NearDup.open(f"{base}/tags{n}.db", CONFIG)
        self.arrival: list[str] = []
        self.texts: dict[str, str] = {}
        self.next_id = 0

    def teardown(self) -> None:
        if hasattr(self, "nd"):
            self.nd.close()

    def _new_text(self, kind: int, seed: int, edits: int) -> str:
        if kind == 0 or not self.texts:
            return base_text(seed % 50, 30)
        src = sorted(self.texts)[seed % len(self.texts)]
        return edit(self.texts[src], seed, edits)

    def _index(self, docs: list[Document], batch_size: int) -> None:
        self.nd.index(docs, batch_size=batch_size, progress=None)
        self.nd.engine.refresh()
        for d in docs:
            if d.id not in self.texts:
                self.arrival.append(d.id)
            self.texts[d.id] = d.text

    def _docs(self, specs: list[tuple[int, int, int]]) -> list[Document]:
        out = []
        for kind, seed, edits in specs:
            out.append(Document(f"d{self.next_id}", self._new_text(kind, seed, edits)))
            self.next_id += 1
        return out

    specs = st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 10_000), st.integers(0, 2)),
        min_size=1,
        max_size=5,
    )

    @rule(specs=specs, batch_size=st.integers(1, 4))
    def add(self, specs, batch_size) -> None:
        self._index(self._docs(specs), batch_size)

    @rule(specs=specs, cut=st.integers(0, 5), batch_size=st.integers(1, 4))
    def resume(self, specs, cut, batch_size) -> None:
        docs = self._docs(specs)
        self.nd.index(docs[:cut], batch_size=batch_size, progress=None)  # a run cut short
        self._index(docs, batch_size)

    @rule(pick=st.integers(0, 10_000), batch_size=st.integers(1, 4))
    def resend(self, pick, batch_size) -> None:
        if self.arrival:
            ids = self.arrival[pick % len(self.arrival) :][:3]
            self._index([Document(i, self.texts[i]) for i in ids], batch_size)

    @rule(
        pick=st.integers(0, 10_000),
        kind=st.integers(0, 3),
        seed=st.integers(0, 10_000),
        edits=st.integers(1, 2),
    )
    def update(self, pick, kind, seed, edits) -> None:
        if self.arrival:
            i = self.arrival[pick % len(self.arrival)]
            self._index([Document(i, self._new_text(kind, seed, edits))], 1)

    @rule(pick=st.integers(0, 10_000), n=st.integers(1, 2))
    def delete(self, pick, n) -> None:
        if self.arrival:
            ids = self.arrival[pick % len(self.arrival) :][:n]
            self.nd.delete(ids)
            for i in ids:
                self.arrival.remove(i)
                del self.texts[i]

    @invariant()
    def tags_equal_a_fresh_index(self) -> None:
        if not hasattr(self, "nd"):
            return
        assert self.nd.count() == len(self.arrival)
        docs = [Document(i, self.texts[i]) for i in self.arrival]
        assert tags_of(self.nd, self.arrival) == fresh_tags(docs)


def test_tags_equal_a_fresh_index_after_any_sequence(engine_target, tmp_path):
    target, opts = engine_target
    TagMachine.target = (target, opts) if opts else (str(tmp_path), {})
    run_state_machine_as_test(
        TagMachine,
        settings=settings(
            max_examples=40 if not opts else 25,
            stateful_step_count=10,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        ),
    )


def test_the_report_shows_the_clusters_of_the_rule(nd):
    from neardup.report.html import scan_stats, tag_cluster_records

    docs = [Document(f"d{i}", edit(base_text(i // 4), i, i % 4)) for i in range(20)]
    nd.index(docs, batch_size=6, progress=None)
    nd.engine.refresh()
    nd.clusters(threshold=0.5, write=True, connected=True)  # a stale, different clustering stored
    st = scan_stats(nd.engine, threshold=CONFIG.threshold, limit=None, keep_members=100)
    shown = sorted(sorted(c.members) for c in tag_cluster_records(st, nd.engine, 100))
    assert shown == sorted(sorted(c.members) for c in nd.clusters())


def test_a_full_candidate_list_is_asked_again_with_a_larger_limit(nd):
    from neardup.matching.candidates import all_candidates

    a = base_text(40)
    docs = [Document(f"c{i}", edit(a, i, 1)) for i in range(12)]
    nd.index(docs, tag=False, progress=None)
    nd.engine.refresh()
    s = nd.engine.get(["c0"])["c0"]
    q = nd.rule.query(s.keys, s.n_shingles, exclude_id="c0", limit=2)
    assert len(nd.engine.candidates([q])[0]) == 2
    full = all_candidates(nd.engine, [q], grow=2)[0]
    assert (
        len(full)
        == len(
            nd.engine.candidates(
                [nd.rule.query(s.keys, s.n_shingles, exclude_id="c0", limit=1000)]
            )[0]
        )
        > 2
    )
