"""Many copies of one text cost each document a bounded amount of work, on every engine.

The cluster rule compares a document with the earlier *representatives* only, so a copy of a
copy is never read. Work is counted, not timed: the SQLite virtual machine's instructions
(``set_progress_handler``) on the embedded engine, the (query, document) keyword pairs the
HTTP engine's in-memory matcher forms (:class:`~neardup.engines.elastic.key_match.KeyMatcher`),
and the candidate tests the rule makes in memory
(:meth:`~neardup.matching.candidates.CandidateRule.matched_counts`). Each must stay the same per
document whether 40 or 400 copies came before, and whether a batch holds 40 or 400 copies.
The tags stay those of the one rule: every copy joins the first.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from neardup import Config, Document, NearDup
from neardup.engines.elastic import key_match
from neardup.engines.embedded.engine import EmbeddedEngine
from neardup.matching.candidates import CandidateRule

CONFIG = Config(threshold=0.8)
_rng = random.Random(11)
VOCAB = [
    "".join(_rng.choice("bcdfghjklmnpqrstvwxz") + _rng.choice("aeiou") for _ in range(3))
    for _ in range(2000)
]


def _text(seed: int, n: int = 120) -> str:
    r = random.Random(seed)
    return " ".join(r.choice(VOCAB) for _ in range(n))


ONE = _text(-1)


def _copy(i: int, edited: bool) -> Document:
    """A copy of :data:`ONE`; ``edited``: with two of its words changed (all but the first,
    which each resembles at >= 0.8)."""
    words = ONE.split()
    if edited and i > 1:
        r = random.Random(i)
        for _ in range(2):
            words[r.randrange(len(words))] = r.choice(VOCAB)
    return Document(f"copy-{i}", " ".join(words))


def _collection(first: int, n: int, edited: bool) -> list[Document]:
    """``n`` documents from number ``first`` on: each other one a copy of :data:`ONE`."""
    return [
        _copy(i, edited) if i % 2 else Document(f"doc-{i}", _text(i))
        for i in range(first, first + n)
    ]


class Work:
    """Counts of the work an index does (see the module docstring)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.counts: Counter[str] = Counter()
        matched_counts, matched = CandidateRule.matched_counts, key_match._matched

        def counted_matched_counts(rule, shared):
            self.counts["rule tests"] += 1
            return matched_counts(rule, shared)

        def counted_matched(code, *args):
            self.counts["matcher pairs"] += len(code)
            return matched(code, *args)

        monkeypatch.setattr(CandidateRule, "matched_counts", counted_matched_counts)
        monkeypatch.setattr(key_match, "_matched", counted_matched)

    def watch(self, nd: NearDup) -> None:
        """Count the SQLite instructions of an embedded index (in hundreds)."""
        if isinstance(nd.engine, EmbeddedEngine):
            nd.engine.connection.require().set_progress_handler(self._step, 100)

    def _step(self) -> int:
        self.counts["sqlite steps"] += 1
        return 0

    def during(self, fn) -> Counter[str]:
        before = Counter(self.counts)
        fn()
        return self.counts - before


def _linear(small: Counter[str], large: Counter[str], times: int) -> None:
    """Each count of ``large`` (``times`` the documents of ``small``) within 1.5 times
    ``times`` that of ``small``: linear, where a cost per document that grows with the copies
    before it would make it ``times`` times more again."""
    assert large, "nothing was counted"
    for k in small.keys() | large.keys():
        assert large[k] <= 1.5 * times * small[k] + 100, (k, small, large)


def _work(engine_target, name: str, n: int, batch: int, edited: bool, work: Work) -> Counter:
    """The work of indexing ``n`` documents, half of them copies, ``batch`` at a time, into
    a new index; the tags checked: every copy joins the first."""
    target, opts = engine_target
    if "index" in opts:  # another index on the same cluster
        opts = {**opts, "index": f"{opts['index']}-{name}"}
    else:  # another file
        target = f"{target}-{name}"
    with NearDup.open(target, CONFIG, **opts) as nd:
        work.watch(nd)
        done = work.during(
            lambda: nd.index(_collection(0, n, edited), batch_size=batch, progress=None)
        )
        tags = {d["id"]: d["neardup"] for d in nd.export()}
    copies = [i for i in tags if i.startswith("copy-")]
    assert len(copies) == n // 2
    assert all(tags[i]["cluster_id"] == "copy-1" for i in copies)
    assert sum(1 for t in tags.values() if t["cluster_id"] == "copy-1") == len(copies)
    return done


@pytest.mark.parametrize("edited", [False, True], ids=["exact", "edited"])
def test_stored_copies_do_not_add_work_to_each_new_document(engine_target, monkeypatch, edited):
    """Indexing 7 times the documents (half of them copies of one text, 80 a batch) costs
    7 times the work: the engine proposes the copies' one representative to each new
    document, never the copies themselves. (The first batch finds nothing stored: 2 and 20
    batches that find some.)"""
    work = Work(monkeypatch)
    few = _work(engine_target, "few", 240, 80, edited, work)
    many = _work(engine_target, "many", 1680, 80, edited, work)
    _linear(few, many, 7)


@pytest.mark.parametrize("edited", [False, True], ids=["exact", "edited"])
def test_copies_within_a_batch_cost_each_document_the_same(engine_target, monkeypatch, edited):
    """A batch of 10 times the copies costs 10 times the work, not 100 times: a document
    of a batch is matched against the batch's representatives so far only."""
    work = Work(monkeypatch)
    few = _work(engine_target, "few", 80, 80, edited, work)
    many = _work(engine_target, "many", 800, 800, edited, work)
    _linear(few, many, 10)
