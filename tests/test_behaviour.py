"""One behavioural suite, run on every engine (``engine_target`` in conftest): the embedded
SQLite engine and the HTTP engine (against osmem here, a real cluster with NEARDUP_TEST_URL).
On a slice of the shared corpora both must give identical near-duplicate sets, tags and clusters.
"""

import json

import pytest

from neardup import Config, ConfigMismatch, Document, NearDup

from .corpora import SAMPLE

CONFIG = Config(threshold=0.8)


def sample_docs(n: int = 120) -> list[Document]:
    recs = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()][:n]
    return [
        Document(
            id=r["id"],
            text=r["text"],
            title=r.get("title"),
            lang=r.get("lang"),
            fields={"source": r.get("source")},
        )
        for r in recs
    ]


def snapshot(nd: NearDup, docs: list[Document]) -> dict:
    pairs = sorted((p.a, p.b, round(p.resemblance, 9)) for p in nd.pairs())
    clusters = sorted(
        (c.cluster_id, tuple(c.members), round(c.mean_resemblance, 9)) for c in nd.clusters()
    )
    tags = {
        i: (d.tags.cluster_id, d.tags.dup_of, d.tags.is_duplicate, round(d.tags.max_resemblance, 9))
        for i, d in nd.engine.get([d.id for d in docs]).items()
    }
    queries = {
        d.id: [(m.id, round(m.resemblance, 9)) for m in nd.query(id=d.id, threshold=0.5)]
        for d in docs[:25]
    }
    return {"pairs": pairs, "clusters": clusters, "tags": tags, "queries": queries}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    docs = sample_docs()
    with NearDup.open(str(tmp_path_factory.mktemp("ref") / "ref.db"), CONFIG) as nd:
        nd.index(docs, batch_size=40, progress=None)
        return snapshot(nd, docs)


def test_identical_near_duplicates_tags_and_clusters(engine_target, reference):
    target, opts = engine_target
    docs = sample_docs()
    with NearDup.open(target, CONFIG, **opts) as nd:
        rep = nd.index(docs, batch_size=40, progress=None)
        nd.engine.refresh()
        assert rep.indexed == len(docs) and not rep.failed
        assert nd.count() == len(docs)
        got = snapshot(nd, docs)
    assert reference["pairs"], "the slice must contain near-duplicates"
    assert got["pairs"] == reference["pairs"]
    assert got["clusters"] == reference["clusters"]
    assert got["tags"] == reference["tags"]
    assert got["queries"] == reference["queries"]


def test_runs_into_an_index_that_holds_documents_and_two_writers_in_turn(engine_target, reference):
    """A run into an index that already holds documents, by two writers one after the
    other (each keeps its engine open: the first writes again after the second), gives the
    tags of one run: the documents a run stored and those stored before are both found."""
    target, opts = engine_target
    docs = sample_docs()
    with NearDup.open(target, CONFIG, **opts) as a, NearDup.open(target, **opts) as b:
        assert a.index(docs[:50], batch_size=40, progress=None).indexed == 50
        assert b.index(docs[50:90], batch_size=40, progress=None).indexed == 40
        again = a.index(docs[40:], batch_size=40, progress=None)  # 40..89 unchanged, 90.. new
        assert (again.indexed, again.unchanged, again.updated) == (len(docs) - 90, 50, 0)
        assert a.count() == len(docs)
        got = snapshot(a, docs)
    assert got["pairs"] == reference["pairs"]
    assert got["clusters"] == reference["clusters"]
    assert got["tags"] == reference["tags"]
    assert got["queries"] == reference["queries"]


def test_a_run_that_updates_documents_stored_before_tags_as_the_embedded_engine(
    engine_target, tmp_path
):
    """Documents stored before a run, replaced by it with other texts, and a document sent
    twice in one run: the same tags as the embedded engine's."""
    target, opts = engine_target
    docs = sample_docs()
    edits = [
        Document(d.id, docs[(i * 7) % len(docs)].text, lang=d.lang)
        for i, d in enumerate(docs[:30:3])
    ]
    second = [*edits, *docs[60:100], docs[61], *docs[100:]]

    def tags_after(where: str, **kw) -> dict:
        with NearDup.open(where, CONFIG, **kw) as nd:
            nd.index(docs[:60], batch_size=25, progress=None)
            nd.index(second, batch_size=25, progress=None)
            stored = nd.engine.get([d.id for d in docs])
            return {i: d.tags for i, d in stored.items()}

    want = tags_after(str(tmp_path / "ref.db"))
    assert any(t.is_duplicate for t in want.values())
    assert tags_after(target, **opts) == want


def test_settings_live_with_the_index(engine_target):
    target, opts = engine_target
    NearDup.open(target, Config(threshold=0.7), **opts).close()
    with NearDup.open(target, **opts) as nd:
        assert nd.config.threshold == 0.7
    with pytest.raises(ConfigMismatch):
        NearDup.open(target, Config(threshold=0.9), **opts)


def test_upsert_delete_and_stored_clusters(engine_target):
    target, opts = engine_target
    base = (
        "the committee approved the new budget for schools hospitals and roads after a long "
        "debate in parliament"
    )
    with NearDup.open(target, CONFIG, **opts) as nd:
        nd.index(
            [
                Document("a", base),
                Document("b", base + " on tuesday"),
                Document("c", "unrelated words about cooking rice"),
            ],
            progress=None,
        )
        nd.engine.refresh()
        assert [m.id for m in nd.query(id="a")] == ["b"]
        nd.index(
            [Document("b", "now it is about football and the weekend league results instead")],
            progress=None,
        )
        nd.engine.refresh()
        assert nd.count() == 3 and nd.query(id="a") == []
        assert nd.engine.delete(["c"]) == 1
        nd.engine.refresh()
        assert nd.count() == 2
        nd.index([Document("d", base + " again")], progress=None)
        nd.engine.refresh()
        cl = nd.clusters(write=True)
        nd.engine.refresh()
        assert [c.members for c in cl] == [["a", "d"]]
        assert [c.members for c in nd.engine.read_clusters()] == [["a", "d"]]
        d = nd.engine.get(["d"])["d"]
        assert d.tags.dup_of == "a" and d.tags.cluster_id == "a"


def test_search_folds_copies(engine_target):
    target, opts = engine_target
    base = (
        "lloyds bank cut its base lending rate to ten and a half percent following similar "
        "moves by other banks"
    )
    with NearDup.open(target, CONFIG, **opts) as nd:
        nd.index(
            [
                Document("a", base, "Lloyds cuts rate"),
                Document("b", base + " today", "Lloyds cuts base rate"),
                Document(
                    "c",
                    "the weather in london will be rainy with lending libraries closed",
                    "Weather",
                ),
            ],
            progress=None,
        )
        nd.engine.refresh()
        assert {h.id for h in nd.search("lending", size=10)} == {"a", "b", "c"}
        hits = nd.search("lending", size=10, dedupe=True)
        assert len(hits) == 2
        head = next(h for h in hits if h.id in ("a", "b"))
        assert len(head.folded) == 1
        hits = nd.search("lending", size=10, dedupe=True, threshold=0.8)
        assert sorted(len(h.folded) for h in hits) == [0, 1]


def test_untitled_clusters_take_the_first_line_of_the_text(engine_target):
    """A cluster whose representative has no title shows the first line of its text, read
    with :meth:`~neardup.engines.base.Engine.texts` (equal to the text :meth:`get` returns),
    and only the representatives' texts are read."""
    target, opts = engine_target
    body = " ".join(f"word{i} central bank rates" for i in range(40))
    docs = [
        Document("orig", "\n  Rates held steady\n" + body),
        Document("copy", "Rates held steady\n" + body + " traders said"),
        Document("other", "Bread and butter\nflour water salt yeast oven baked crust crumb"),
    ]
    with NearDup.open(target, CONFIG, **opts) as nd:
        nd.index(docs, progress=None)
        nd.engine.refresh()
        read: list[list[str]] = []
        texts = nd.engine.texts
        nd.engine.texts = lambda ids: read.append(list(ids)) or texts(ids)
        cl = nd.clusters()
        assert [(c.representative_id, c.representative_title) for c in cl] == [
            ("orig", "Rates held steady")
        ]
        assert read == [["orig"]]
        got = texts(["orig", "other", "missing"])
        full = nd.engine.get(["orig", "other"], text=True)
        assert got == {i: d.text for i, d in full.items()}


def test_a_read_without_shingles_reads_the_document_and_makes_none(engine_target, monkeypatch):
    """``get(shingles=False)`` (``show``, ``compare --ids``, titles) gives what a full read
    gives of the text, title and tags, and makes no shingles again from the text."""
    from neardup.signing.signer import Signer

    target, opts = engine_target
    docs = sample_docs(30)
    with NearDup.open(target, CONFIG, **opts) as nd:
        nd.index(docs, batch_size=10, progress=None)
        nd.engine.refresh()
        ids = [d.id for d in docs]
        full = nd.engine.get(ids, text=True)

        def made(*_args, **_kwargs):
            raise AssertionError("shingles made again")

        monkeypatch.setattr(Signer, "shingle_sets", made)
        light = nd.engine.get(ids, text=True, shingles=False)
    assert sorted(light) == sorted(full) == sorted(ids)
    for i, d in light.items():
        f = full[i]
        assert (d.text, d.title, d.lang, d.tags, d.seq, d.n_shingles, d.exact) == (
            f.text,
            f.title,
            f.lang,
            f.tags,
            f.seq,
            f.n_shingles,
            f.exact,
        )
        assert len(d.shingles) == 0 < len(f.shingles) and d.keys == {}
