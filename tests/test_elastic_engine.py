"""The HTTP engine over real HTTP with the real clients, against osmem (an in-memory
OpenSearch-compatible server): opensearch-py directly, and the elasticsearch client through
a loopback proxy that presents osmem as Elasticsearch 9. Results are compared with the
embedded engine on the same signed documents."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from neardup.config import SIGNATURE_VERSION, Config, ConfigMismatch
from neardup.engines.elastic import templates
from neardup.engines.elastic.layout import Layout, OWN, TEXT_LANGS
from neardup.engines.base import (
    CandidateQuery,
    ClusterRecord,
    EngineError,
    KeyGroup,
    NativeQuery,
    Tags,
)
from neardup.engines.elastic import ElasticEngine
from neardup.engines.stored_shingles import column
from neardup.engines.embedded import EmbeddedEngine
from neardup.signing.signer import Signer
from neardup.signing.records import Document

from .conftest import http_pipeline

D01_TAGS = Tags(cluster_id="d00", dup_of="d00", max_resemblance=0.93, is_duplicate=True)

pytestmark = pytest.mark.http

WORDS = (
    "river stone light market paper garden silver window engine forest winter signal harbor letter "
    "orange bridge candle mirror rocket valley thunder pocket castle meadow copper lantern"
).split()


def _texts(n: int = 24, seed: int = 7) -> list[Document]:
    """Originals, near copies (a word changed or appended) and exact copies."""
    rnd = random.Random(seed)
    docs = []
    for i in range(n):
        if i >= 3 and i % 3 == 0:
            src = docs[rnd.randrange(len(docs))].text.split()
            src[rnd.randrange(len(src))] = rnd.choice(WORDS)
            text = " ".join(src)
        elif i >= 3 and i % 5 == 0:
            text = docs[i - 2].text
        else:
            text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(30, 60)))
        docs.append(Document(f"d{i:02d}", text, title=f"title {i}", fields={"site": f"s{i % 4}"}))
    return docs


def _engine(url: str, **kw) -> ElasticEngine:
    opts = {"index": "docs", "pipeline": http_pipeline(), "max_retries": 2, "initial_backoff": 0.01}
    opts.update(kw)
    return ElasticEngine.from_options(url, **opts)


@pytest.fixture
def signed():
    signer = Signer(Config())
    return [signer.sign(d) for d in _texts()]


@pytest.fixture
def pair(url, signed, tmp_path):
    """(http engine, embedded engine) holding the same documents and tags."""
    h, e = _engine(url), EmbeddedEngine(tmp_path / "e.db")
    h.open(Config())
    e.open(Config())
    tags = {
        s.id: Tags(
            cluster_id=s.id if i % 2 else "c0",
            dup_of=None if i % 2 else "d00",
            max_resemblance=0.5,
            is_duplicate=not i % 2,
        )
        for i, s in enumerate(signed)
    }
    assert h.put(signed, tags) == []
    assert e.put(signed, tags) == []
    yield h, e
    h.close()
    e.close()


def test_open_creates_templates_indices_and_meta(url):
    eng = _engine(url)
    cfg = eng.open(Config(threshold=0.7))
    assert any("created" in a for a in eng.actions)
    c = eng.remote.client
    mapping = c.indices.get_mapping(index="docs")
    m = getattr(mapping, "body", mapping)["docs"]["mappings"]
    # _meta is a small pointer; settings live in the settings document of the state index
    assert m["_meta"]["neardup"] == {
        "settings": "docs-neardup-state/settings",
        "fingerprint": cfg.fingerprint(),
        "signature_version": SIGNATURE_VERSION,
        "layout": 2,
    }
    doc = c.get(index="docs-neardup-state", id="settings")
    data = getattr(doc, "body", doc)["_source"]["data"]
    assert data["config"] == cfg.to_dict() and data["fingerprint"] == cfg.fingerprint()
    nd = m["properties"]["neardup"]["properties"]  # everything neardup adds, under one object
    assert nd["simhash"] == {"type": "keyword", "index": False, "doc_values": False}
    assert nd["shingles"]["type"] == "binary" and set(nd["keys"]["properties"]) == set(
        cfg.signatures
    )
    text = [*OWN.stored("title"), *OWN.stored("body")]  # one field per language
    assert set(m["properties"]) == {*text, "fields", "neardup"}
    assert "fields" not in m["properties"]["body"]  # analyzed once, in its own field
    assert bool(c.indices.exists(index="docs-clusters"))
    eng.close()
    # reopen: the stored settings come back; other settings are refused
    again = _engine(url)
    assert again.open() == cfg
    assert any("kept" in a for a in again.actions)
    with pytest.raises(ConfigMismatch, match="threshold"):
        _engine(url).open(Config(threshold=0.9))
    with pytest.raises(EngineError, match="no such neardup index"):
        _engine(url, index="absent").open(create=False)


def test_an_index_of_another_signature_version_is_refused_and_the_engine_closed(url):
    eng = _engine(url)
    eng.open()
    c = eng.remote.client
    doc = c.get(index="docs-neardup-state", id="settings")
    src = getattr(doc, "body", doc)["_source"]
    src["data"]["signature_version"] = SIGNATURE_VERSION + 1
    c.index(index="docs-neardup-state", id="settings", body=src, refresh="true")
    eng.close()
    again = _engine(url)
    with pytest.raises(
        ConfigMismatch,
        match=(
            f"signature version {SIGNATURE_VERSION + 1}, "
            f"this neardup signs with {SIGNATURE_VERSION}"
        ),
    ):
        again.open()
    with pytest.raises(EngineError, match="not open"):
        again.remote.client  # noqa: B018 -- a refused open keeps no connection


def test_refuses_foreign_index(url):
    eng = _engine(url)
    eng.remote.connect()
    eng.remote.client.indices.create(index="foreign")
    with pytest.raises(EngineError, match="not a neardup index"):
        _engine(url, index="foreign").open()


def test_shingles_are_made_from_the_text_and_stored_hashes_still_read(url, signed):
    """``_source`` keeps a marker, not the hashes, for a text that makes them; reading gives
    them exactly (from the text, in a fresh engine with an empty cache). A document stored
    with its hashes, as indices made before keep them, reads as it did."""
    from neardup.keys.encoding import encode_shingles

    eng = _engine(url)
    eng.open(Config())
    long = next(s for s in signed if s.n_shingles >= 16)
    old = next(s for s in signed if s is not long)
    assert eng.put([long, old]) == []
    src = eng.remote.client.get(index="docs", id=old.id)
    src = dict(getattr(src, "body", src)["_source"])
    src["neardup"] = {**src["neardup"], "shingles": encode_shingles(old.shingles)}
    eng.remote.client.index(index="docs", id=old.id, body=src, refresh="true")
    raw = eng.remote.client.get(index="docs", id=long.id)
    marker = getattr(raw, "body", raw)["_source"]["neardup"]["shingles"]
    assert len(marker) < 8 and 8 * long.n_shingles > 100
    eng.close()
    fresh = _engine(url)
    fresh.open()
    got = fresh.get([long.id, old.id])
    assert np.array_equal(got[long.id].shingles, long.shingles)
    assert np.array_equal(got[old.id].shingles, old.shingles)
    scanned = {d.id: d.shingles for d in fresh.scan()}
    assert all(np.array_equal(scanned[s.id], s.shingles) for s in (long, old))
    fresh.close()


def test_put_get_roundtrip_and_seq(pair, signed):
    h, e = pair
    got, ref = h.get([s.id for s in signed] + ["nope"]), e.get([s.id for s in signed] + ["nope"])
    assert set(got) == set(ref) == {s.id for s in signed}
    for i, d in got.items():
        r = ref[i]
        assert np.array_equal(d.shingles, r.shingles) and d.shingles.dtype == np.uint64
        assert (
            d.simhash == r.simhash
            and d.exact == r.exact
            and d.n_shingles == r.n_shingles
            and d.lang == r.lang
        )
        assert set(d.keys) == set(r.keys) and all(
            np.array_equal(d.keys[f], r.keys[f]) for f in d.keys
        )
        assert d.tags == r.tags and d.seq == r.seq and d.title == r.title and d.fields == r.fields
    assert h.get(["d01"], text=True)["d01"].text == signed[1].doc.text
    assert h.get(["d01"])["d01"].text is None
    # upsert keeps the arrival number; a new document comes last
    first_seq = got["d03"].seq
    h.put([signed[3]])
    assert h.get(["d03"])["d03"].seq == first_seq and h.get(["d03"])["d03"].tags is None
    new = Signer(h.config).sign(
        Document("zz", "a brand new document arrives at the end of the line")
    )
    h.put([new])
    assert h.get(["zz"])["zz"].seq == max(d.seq for d in got.values()) + 1
    assert h.count() == len(signed) + 1


def _queries(signed):
    out = []
    for s in signed[:12]:
        groups = tuple(
            KeyGroup(f, tuple(int(k) for k in s.keys[f]), 1)
            for f in ("exact", "minhash", "simhash")
        )
        out.append(CandidateQuery(groups, 0, 2**62, s.id, 1000))
        out.append(
            CandidateQuery(
                (KeyGroup("winnow", tuple(int(k) for k in s.keys["winnow"]), 3),), 10, 80, None, 5
            )
        )
        out.append(
            CandidateQuery(
                (
                    KeyGroup("minhash", tuple(int(k) for k in s.keys["minhash"]), 2),
                    KeyGroup("simhash", tuple(int(k) for k in s.keys["simhash"]), 1),
                ),
                0,
                60,
                None,
                3,
            )
        )
    out.append(CandidateQuery((KeyGroup("minhash", (), 1),)))  # no keys: nothing
    return out


def _view(cands):
    return [(c.id, c.score, c.n_shingles, c.simhash, c.cluster_id, c.matched) for c in cands]


def test_candidates_match_embedded(pair, signed):
    h, e = pair
    # two copies of a short text (under 16 shingles: hits carry them, no marker)
    short = Signer(Config()).sign_batch(
        [Document(f"short{i}", "a short note of seven words here") for i in range(2)]
    )
    for eng in (h, e):
        assert eng.put(short) == []
        eng.refresh()
    qs = _queries(signed) + [
        CandidateQuery((KeyGroup("exact", tuple(int(k) for k in short[0].keys["exact"]), 1),))
    ]
    got, ref = h.candidates(qs), e.candidates(qs)
    assert [_view(x) for x in got] == [_view(x) for x in ref]
    assert any(len(x) > 1 for x in got)  # the corpus has real near-duplicates
    # the shingles a hit carries are exact; where the index keeps a marker instead, the
    # verifier reads the document, whose shingles are made again from its text
    ids = [c.id for x in got for c in x]
    stored, read = e.get(ids), h.get(ids)
    for c in (c for x in got for c in x):
        if c.shingles is not None:
            assert np.array_equal(c.shingles, stored[c.id].shingles)
        assert np.array_equal(read[c.id].shingles, stored[c.id].shingles)
    assert any(c.shingles is None for x in got for c in x)  # (texts of 16 shingles or more)
    assert any(c.shingles is not None for x in got for c in x)  # (and shorter ones)


def test_one_search_over_a_batch_keys_finds_what_a_search_per_query_finds(pair, signed):
    """The batch's queries as one search over all their keys (the default), matched here,
    give the candidates ``_msearch`` of one search per query gives, in order; with a page
    smaller than the hits too."""
    h, _ = pair
    qs = _queries(signed)
    batched = h.candidates(qs)
    h.remote.paging = dataclasses.replace(h.remote.paging, batched_candidates=False)
    each = h.candidates(qs)
    assert [_view(x) for x in batched] == [_view(x) for x in each]
    h.remote.paging = dataclasses.replace(h.remote.paging, batched_candidates=True, page_size=3)
    assert [_view(x) for x in h.candidates(qs)] == [_view(x) for x in each]
    assert sum(len(x) for x in each) > 3


def test_candidates_over_clause_budget_keep_the_matches(pair, signed):
    h, e = pair
    h.remote.paging = dataclasses.replace(
        h.remote.paging, max_clauses=16
    )  # min_match 1 groups become one terms clause; score counts groups
    qs = [q for q in _queries(signed) if all(g.min_match == 1 for g in q.groups)]
    got, ref = h.candidates(qs), e.candidates(qs)
    assert [sorted(c.id for c in x) for x in got] == [sorted(c.id for c in x) for x in ref]


def test_collisions_match_embedded(url, pair):
    h, e = pair
    h.remote.paging = dataclasses.replace(
        h.remote.paging, page_size=7
    )  # groups straddle pages of keys
    for fields in (("minhash",), ("exact", "simhash", "winnow")):
        got = sorted(sorted(g) for g in h.collisions(fields))
        ref = sorted(sorted(g) for g in e.collisions(fields))
        assert got == ref and got


def test_scan_in_arrival_order(pair, signed):
    h, e = pair
    for size in (5, 1000):
        assert (
            [d.id for d in h.scan(batch_size=size)]
            == [d.id for d in e.scan()]
            == [s.id for s in signed]
        )
    assert all(d.text for d in h.scan(text=True, batch_size=4))
    assert h.count() == e.count() == len(signed)


def test_tags_delete_and_meta(url, pair):
    h, e = pair
    h.update_tags({"d01": D01_TAGS, "missing": Tags(cluster_id="x")})
    assert h.get(["d01"])["d01"].tags == D01_TAGS
    assert (
        h.delete(["d01", "d02", "missing"]) == 2
        and h.count() == len(e.get([f"d{i:02d}" for i in range(30)])) - 2
    )
    h.put_meta("context", {"lexicon": ["a", "b"]})
    m = h.remote.client.indices.get_mapping(index="docs")
    assert "context" not in str(
        getattr(m, "body", m)
    )  # collection statistics stay out of the cluster state
    h.close()
    again = _engine(url)
    again.open()
    assert again.get_meta("context") == {"lexicon": ["a", "b"]}
    assert again.get_meta("absent") is None


def test_clusters_replace_and_order(pair):
    h, _ = pair
    h.remote.paging = dataclasses.replace(
        h.remote.paging, page_size=2
    )  # reads and stale-id listing page with search_after
    recs = [
        ClusterRecord(
            cluster_id="c1",
            size=2,
            representative_id="a",
            representative_title="A",
            members=["a", "b"],
            min_resemblance=0.8,
            mean_resemblance=0.85,
            max_resemblance=0.9,
            languages=["en"],
            first_seen="2026-01-01T00:00:00Z",
            last_seen="2026-01-02T00:00:00Z",
        ),
        ClusterRecord(
            cluster_id="c0",
            size=3,
            representative_id="x",
            representative_title=None,
            members=["x", "y", "z"],
            min_resemblance=0.9,
            mean_resemblance=0.9,
            max_resemblance=0.9,
            languages=["fa", "ru"],
        ),
        ClusterRecord(
            cluster_id="c2",
            size=2,
            representative_id="q",
            representative_title="Q",
            members=["q", "r"],
            min_resemblance=1.0,
            mean_resemblance=1.0,
            max_resemblance=1.0,
            languages=[],
        ),
    ]
    h.write_clusters(recs)
    assert [c.cluster_id for c in h.read_clusters()] == ["c0", "c1", "c2"]
    assert h.read_clusters(1)[0] == recs[1]
    assert [c.cluster_id for c in h.read_clusters(3)] == ["c0", "c1", "c2"]
    h.write_clusters(recs[:1])
    assert h.read_clusters() == recs[:1]


def test_fulltext_search_and_collapse(pair):
    h, _ = pair
    hits = h.search("river", size=50)
    assert hits and all(
        "[river]" in x.snippet.lower() or "river" in (x.title or "") for x in hits[:3]
    )
    assert h.search(NativeQuery({"term": {"neardup.id": "d05"}}))[0].id == "d05"
    assert [
        x.id
        for x in h.search(
            NativeQuery(
                {"query": {"ids": {"values": ["d04", "d07"]}}, "sort": [{"neardup.seq": "asc"}]}
            )
        )
    ] == ["d04", "d07"]
    folded = h.search_collapsed("river", size=50)
    assert len({x.cluster_id for x in folded}) == len(folded)
    c0 = [x for x in folded if x.cluster_id == "c0"]
    members = {x.id for x in hits if x.cluster_id == "c0"}
    assert c0 and {c0[0].id, *c0[0].folded} == members
    # untagged documents are never folded together
    signer = Signer(h.config)
    h.put(
        [
            signer.sign(Document(i, "river river river untagged copy of the same words"))
            for i in ("u1", "u2")
        ]
    )
    loose = [x for x in h.search_collapsed("untagged river", size=10) if x.id in ("u1", "u2")]
    assert sorted(x.id for x in loose) == ["u1", "u2"] and all(not x.folded for x in loose)


def test_bad_documents_are_reported_and_the_rest_indexed(url):
    eng = _engine(url)
    eng.open(Config())
    signer = Signer(eng.config)
    docs = [
        Document(f"g{i}", f"good document number {i} with some words in it", fields={"site": "a"})
        for i in range(6)
    ]
    docs[2] = Document(
        "bad1", "a document whose site field is an object", fields={"site": {"nested": 1}}
    )
    docs[4] = Document(
        "bad2", "another document whose site field is an object", fields={"site": {"x": [1, 2]}}
    )
    failures = eng.put([signer.sign(d) for d in docs])
    assert sorted(f.id for f in failures) == ["bad1", "bad2"]
    assert all("site" in f.reason and f.reason.startswith("400") for f in failures)
    assert eng.count() == 4 and set(eng.get([d.id for d in docs])) == {"g0", "g1", "g3", "g5"}


def test_api_end_to_end_on_http(url):
    from neardup.api import NearDup

    nd = NearDup.open(url, index="api", pipeline=http_pipeline())
    docs = _texts(15, seed=3)
    rep = nd.index(docs, batch_size=4, progress=None)
    assert rep.indexed == 15 and not rep.failed and rep.duplicates >= 1
    ref = NearDup.open(":memory:")
    ref.index(docs, batch_size=4, progress=None)
    assert [(p.a, p.b) for p in nd.pairs()] == [(p.a, p.b) for p in ref.pairs()]
    assert [c.members for c in nd.clusters()] == [c.members for c in ref.clusters()]
    assert [c.members for c in nd.engine.read_clusters()] == [
        c.members for c in ref.engine.read_clusters()
    ]
    assert nd.retag() == ref.retag()
    got = {i: d.tags for i, d in nd.engine.get([d.id for d in docs]).items()}
    want = {i: d.tags for i, d in ref.engine.get([d.id for d in docs]).items()}
    assert got == want


def _template_before_language_fields(index, meta, pipeline, signatures=()):
    """The documents template as neardup made it before one field per language: title and
    body analyzed by the default analyzer, and again by each language's in subfields."""
    body = _TEMPLATE(index, meta, pipeline, signatures)
    props = body["template"]["mappings"]["properties"]
    for f in ("title", "body"):
        for x in TEXT_LANGS:
            del props[f"{f}_{x}"]
        sub = {x: {"type": "text", "analyzer": f"neardup_{x}"} for x in TEXT_LANGS}
        props[f] = {"type": "text", "fields": {**props[f].get("fields", {}), **sub}}
    return body


_TEMPLATE = templates.documents_template


def test_an_index_made_before_language_fields_keeps_working(url, monkeypatch):
    """An index whose stored layout has no ``languages`` (title and body with language
    subfields, a strict mapping without ``body_fa``...) is written, read and searched as
    before: the text goes to ``body``, a query searches the subfields."""
    monkeypatch.setattr(templates, "documents_template", _template_before_language_fields)
    old = _engine(url, index="old")
    old.remote.layout = Layout()  # as the index's settings document stored it
    old.open(Config())
    old.close()
    monkeypatch.undo()
    eng = _engine(url, index="old")
    eng.open()
    assert eng.remote.layout == Layout() and not eng.remote.layout.languages
    signer = Signer(eng.config)
    docs = [
        Document("ru", "Президент подписал новые законы о городских школах", title="Законы"),
        Document("en", "The runners were running quickly through the gardens", title="Run"),
    ]
    assert eng.put([signer.sign(d) for d in docs]) == []
    eng.refresh()
    stored = eng.get(["ru", "en"], text=True)
    assert stored["ru"].text == docs[0].text and stored["en"].title == "Run"
    assert [h.id for h in eng.search("gardens")] == ["en"]
    assert eng.search("Президент")[0].title == "Законы"
    if http_pipeline():  # a real engine: the subfields stem, the strict mapping holds
        assert [h.id for h in eng.search("школа")] == ["ru"]
        mapping = eng.remote.client.indices.get_mapping(index="old")["old"]["mappings"][
            "properties"
        ]
        assert "body_ru" not in mapping and set(mapping["body"]["fields"]) == set(TEXT_LANGS)
    eng.close()


def test_documents_of_every_language_are_read_back_with_text_and_shingles(url):
    """Each language's text is stored in its own field: a fresh reader gets it back, and
    the shingles made again from it are the signed ones."""
    words = {
        "fa": "کتاب تاریخ ایران باستان را در کتابخانه شهر خواندم و یادداشت برداشتم",
        "ru": "Президент подписал новые законы о городских школах и больницах страны",
        "en": "The runners were running quickly through the gardens of the old city",
        "de": "Die Läufer liefen schnell durch die Gärten der alten Stadt am Fluss",
    }
    eng = _engine(url, index="langs")
    eng.open(Config())
    signer = Signer(eng.config)
    signed = [
        signer.sign(Document(k, f"{v} {' '.join(reversed(v.split()))} {v[::-1]}", title=k))
        for k, v in words.items()
    ]
    assert {s.lang for s in signed} >= {"fa", "ru", "en"}
    assert all(len(column(s)) < 8 * s.n_shingles for s in signed)  # shingles made from the text
    assert eng.put(signed) == []
    eng.refresh()
    eng.close()
    fresh = _engine(url, index="langs")
    fresh.open()
    got = fresh.get(list(words), text=True)
    for s in signed:
        assert got[s.id].text == s.doc.text and got[s.id].title == s.id
        assert got[s.id].shingles.tolist() == s.shingles.tolist(), s.id
    fresh.close()
