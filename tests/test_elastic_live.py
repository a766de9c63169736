"""Against a real Elasticsearch or OpenSearch cluster: the one ``NEARDUP_TEST_URL`` names (e.g.
one of the docker/ stacks), or the real engine ``NEARDUP_TEST_ENGINE`` selects
(tests/engines/run). Credentials: NEARDUP_TEST_USER / NEARDUP_TEST_PASSWORD or
NEARDUP_TEST_API_KEY, NEARDUP_TEST_CA_CERTS, NEARDUP_TEST_NO_VERIFY=1 for self-signed demo
certificates. Every index, template and pipeline made here is removed afterwards."""

from __future__ import annotations

import os
import uuid

import pytest

from neardup.config import SIGNATURE_VERSION, Config
from neardup.engines.elastic import dsl
from neardup.engines.elastic import templates
from neardup.engines.base import CandidateQuery, KeyGroup
from neardup.engines.elastic import ElasticEngine
from neardup.engines.embedded import EmbeddedEngine
from neardup.signing.signer import Signer
from neardup.signing.records import Document

pytestmark = pytest.mark.http


def _opts() -> dict:
    user, pw = os.environ.get("NEARDUP_TEST_USER"), os.environ.get("NEARDUP_TEST_PASSWORD")
    return {
        "api_key": os.environ.get("NEARDUP_TEST_API_KEY"),
        "basic_auth": (user, pw) if user else None,
        "ca_certs": os.environ.get("NEARDUP_TEST_CA_CERTS"),
        "verify_certs": os.environ.get("NEARDUP_TEST_NO_VERIFY") != "1",
        "max_retries": 3,
        "initial_backoff": 0.2,
    }


@pytest.fixture
def engine(live_url):
    index = f"neardup-test-{uuid.uuid4().hex[:10]}"
    eng = ElasticEngine.from_options(live_url, index=index, pipeline=True, **_opts())
    eng.open(Config())
    yield eng
    c = eng.remote.client
    for call in (
        lambda: c.indices.delete(index=f"{index},{index}-clusters"),
        lambda: c.indices.delete_index_template(name=templates.documents_template_name(index)),
        lambda: c.indices.delete_index_template(name=templates.clusters_template_name(index)),
        lambda: c.ingest.delete_pipeline(id=templates.pipeline_id(index)),
    ):
        try:
            call()
        except Exception:  # noqa: BLE001 - cleanup is best effort
            pass
    eng.close()


def _body(r):
    return getattr(r, "body", r)


def _signed_source(engine, text="the pipeline accepts documents signed by neardup and stamps them"):
    s = Signer(engine.config).sign(Document("p1", text))
    return dsl.document_source(s, None, 1, "2000-01-01T00:00:00.000+00:00")


def test_pipeline_installed_as_default(engine):
    pipe = templates.pipeline_id(engine.index)
    got = _body(engine.remote.client.ingest.get_pipeline(id=pipe))[pipe]
    kinds = [next(iter(p)) for p in got["processors"]]
    assert kinds[:3] == ["fail", "fail", "set"]
    assert ("fingerprint" in kinds) == templates.supports_fingerprint(
        engine.remote.server.product, engine.remote.server.version
    )
    settings = _body(engine.remote.client.indices.get_settings(index=engine.index))[engine.index][
        "settings"
    ]["index"]
    assert settings["default_pipeline"] == pipe


def test_simulate_stamps_and_refuses(engine):
    pipe = templates.pipeline_id(engine.index)
    good = _signed_source(engine)
    unsigned = {"body": "raw text never signed"}
    wrong = dict(good, neardup=dict(good["neardup"], signature_version=SIGNATURE_VERSION + 1))
    r = _body(
        engine.remote.client.ingest.simulate(
            id=pipe,
            body={
                "docs": [
                    {"_id": "g", "_source": good},
                    {"_id": "u", "_source": unsigned},
                    {"_id": "w", "_source": wrong},
                ]
            },
        )
    )
    g, u, w = r["docs"]
    src = g["doc"]["_source"]["neardup"]
    assert src["indexed_at"] != "2000-01-01T00:00:00.000+00:00"  # the engine's clock
    if templates.supports_fingerprint(engine.remote.server.product, engine.remote.server.version):
        assert src["fingerprint"]
    assert "no neardup signature" in str(u["error"]) and "signature_version" in str(w["error"])


def test_unsigned_documents_are_refused_signed_ones_indexed(engine):
    failures = engine.put(
        [Signer(engine.config).sign(Document("ok", "a signed document passes the ingest pipeline"))]
    )
    assert failures == [] and engine.get(["ok"])["ok"].indexed_at
    with pytest.raises(Exception) as err:
        engine.remote.client.index(
            index=engine.index, id="raw", body={"body": "not signed"}, refresh=True
        )
    assert "neardup signature" in str(err.value)
    assert engine.count() == 1


def test_candidates_match_embedded(engine, tmp_path):
    signer = Signer(engine.config)
    base = (
        "a river of words flows through the valley of the printed page and into the reader's "
        "eyes at dawn"
    )
    docs = [
        signer.sign(Document(f"d{i}", base + " extra" * (i % 3), title=f"t{i}")) for i in range(6)
    ]
    docs.append(
        signer.sign(
            Document("x", "nothing in common with the other ones, just some trains and stations")
        )
    )
    emb = EmbeddedEngine(tmp_path / "e.db")
    emb.open(engine.config)
    assert engine.put(docs) == [] and emb.put(docs) == []
    qs = [
        CandidateQuery(
            tuple(
                KeyGroup(f, tuple(int(k) for k in s.keys[f]))
                for f in ("exact", "minhash", "simhash")
            ),
            exclude_id=s.id,
        )
        for s in docs
    ]
    got = [[(c.id, c.score) for c in x] for x in engine.candidates(qs)]
    assert got == [[(c.id, c.score) for c in x] for x in emb.candidates(qs)]
    assert sorted(map(sorted, engine.collisions(("minhash",)))) == sorted(
        map(sorted, emb.collisions(("minhash",)))
    )
    assert [d.id for d in engine.scan(batch_size=2)] == [d.id for d in docs]


def test_search_marks_inflected_forms_and_yo(engine):
    """The language subfields mark what the plain field misses: ё read as е (neardup_yo in
    neardup_ru), English inflections (the snippet comes from body.en, not body)."""
    signer = Signer(engine.config)
    docs = [
        Document(
            "ru", "Зелёная ёлка стояла в лесу, и дети пели песни о ёлках каждый вечер.", lang="ru"
        ),
        Document(
            "en", "The runners were running quickly through the gardens of the old city.", lang="en"
        ),
    ]
    assert engine.put([signer.sign(d) for d in docs]) == []
    engine.refresh()
    analyzed = _body(
        engine.remote.client.indices.analyze(
            index=engine.index, body={"analyzer": "neardup_ru", "text": "Ёлка ёлки"}
        )
    )
    assert analyzed["tokens"] and not any("ё" in t["token"] for t in analyzed["tokens"])
    ru = engine.search("елка")
    assert [h.id for h in ru] == ["ru"] and "[ёлка]" in ru[0].snippet.lower()
    en = engine.search("run")
    assert [h.id for h in en] == ["en"] and "[running]" in en[0].snippet


def test_search_finds_persian_letter_variants_and_russian_inflections(engine):
    """Through the engine's analyzers: a Persian word written with Arabic kaf and yeh finds the
    Persian spelling (ک, ی; ZWNJ-joined plural), a Russian word finds its other inflections;
    the highlight marks the raw text as stored."""
    signer = Signer(engine.config)
    docs = [
        Document(
            "fa", "این کتاب‌های زیبا را در کتابخانه شهر یافتم و همه را با دقت خواندم.", lang="fa"
        ),
        Document(
            "ru",
            "Президент подписал новые законы о городских школах и больницах страны.",
            lang="ru",
        ),
        Document(
            "en", "An unrelated English note about trains, stations and the timetable.", lang="en"
        ),
    ]
    assert engine.put([signer.sign(d) for d in docs]) == []
    engine.refresh()
    kaf = engine.search("كتاب")  # Arabic kaf (U+0643) for Persian keheh (U+06A9)
    assert [h.id for h in kaf] == ["fa"] and "[کتاب]" in kaf[0].snippet
    yeh = engine.search("زيبا")  # Arabic yeh (U+064A) for Farsi yeh (U+06CC)
    assert [h.id for h in yeh] == ["fa"] and "[زیبا]" in yeh[0].snippet
    for word, marked in (("закон", "[законы]"), ("школа", "[школах]"), ("больница", "[больницах]")):
        ru = engine.search(word)
        assert [h.id for h in ru] == ["ru"] and marked in ru[0].snippet.lower(), (
            word,
            ru[0].snippet if ru else None,
        )
