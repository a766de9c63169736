"""``neardup attach``: a user's existing index (headline, body, published, section) adopted
in place, against osmem. The user's fields and mapping stay byte-for-byte as they were; the
clustered pairs and tags equal the embedded engine's on the same documents in the same order."""

from __future__ import annotations

import json
import random
import urllib.error
import urllib.request

import pytest
from click.testing import CliRunner

from neardup.api import NearDup
from neardup.cli import main
from neardup.cli.attach import watch
from neardup.engines.base import EngineError
from neardup.engines.elastic.layout import Layout
from neardup.engines.elastic import ElasticEngine
from neardup.engines.elastic.options import IndexSetup
from neardup.signing.records import Document

from .conftest import http_pipeline
from .test_elastic_engine import _texts

pytestmark = pytest.mark.http

USER_MAPPING = {
    "dynamic": "strict",
    "_meta": {"owner": "newsroom", "schema": 3},
    "properties": {
        "headline": {"type": "text", "fields": {"raw": {"type": "keyword"}}},
        "body": {"type": "text"},
        "published": {"type": "date"},
        "section": {"type": "keyword"},
    },
}


def _articles(n: int = 30):
    """The user's documents: ids unrelated to arrival, published dates in another order than
    written."""
    docs = _texts(n, seed=5)
    rnd = random.Random(2)
    days = list(range(n))
    rnd.shuffle(days)
    out = []
    for d, day in zip(docs, days, strict=True):
        src = {
            "headline": d.title,
            "body": d.text,
            "published": f"2026-03-{1 + day // 24:02d}T{day % 24:02d}:00:00Z",
            "section": rnd.choice(["world", "sport", "arts"]),
        }
        out.append((f"art-{rnd.randrange(10**6):06d}-{d.id}", src))
    return out


def _raw(url: str, path: str) -> bytes:
    with urllib.request.urlopen(url + path) as r:
        return r.read()


def _user_index(url: str, name: str = "articles", without_text: int = 0):
    body = json.dumps({"mappings": USER_MAPPING}).encode()
    urllib.request.urlopen(
        urllib.request.Request(
            f"{url}/{name}", body, method="PUT", headers={"content-type": "application/json"}
        )
    )
    arts = _articles()
    lines = []
    for i, src in arts:
        lines += [json.dumps({"index": {"_index": name, "_id": i}}), json.dumps(src)]
    for k in range(without_text):
        lines += [
            json.dumps({"index": {"_index": name, "_id": f"photo-{k}"}}),
            json.dumps({"headline": "a photo", "section": "arts"}),
        ]
    req = urllib.request.Request(
        f"{url}/_bulk?refresh=true",
        ("\n".join(lines) + "\n").encode(),
        method="POST",
        headers={"content-type": "application/x-ndjson"},
    )
    assert not json.loads(urllib.request.urlopen(req).read())["errors"]
    return arts


def _sources(url: str, ids, name: str = "articles") -> dict[str, dict]:
    out = {}
    for i in ids:
        doc = json.loads(_raw(url, f"/{name}/_doc/{i}"))
        out[i] = doc["_source"]
    return out


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _reference(arts, batch_size: int) -> NearDup:
    """The embedded engine on the same documents, in published order."""
    ref = NearDup.open(":memory:")
    ordered = sorted(arts, key=lambda a: a[1]["published"])
    ref.index(
        [Document(i, s["body"], title=s["headline"]) for i, s in ordered],
        batch_size=batch_size,
        progress=None,
    )
    return ref


@pytest.fixture(params=["opensearch", "elasticsearch"])
def client_url(request: pytest.FixtureRequest, osmem_clone) -> str:
    """Where neardup talks to: osmem itself, or osmem presented as Elasticsearch 9."""
    return (
        osmem_clone.url
        if request.param == "opensearch"
        else request.getfixturevalue("es_proxy").url
    )


def test_attach_adopts_in_place_and_answers_like_the_embedded_engine(osmem_clone, client_url):
    url = osmem_clone.url  # the user's own requests
    arts = _user_index(url, without_text=2)
    ids = [i for i, _ in arts]
    before_sources = _sources(url, ids)
    before_mapping = json.loads(_raw(url, "/articles/_mapping"))["articles"]["mappings"]
    r = _run(
        "attach",
        "articles",
        "--engine",
        client_url,
        "--text-field",
        "body",
        "--title-field",
        "headline",
        "--order-field",
        "published",
        "--batch-size",
        "7",
        "--json",
        "-q",
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert (
        data["signed"] == 30
        and data["documents"] == 30
        and data["without_text"] == 2
        and not data["failed"]
    )

    # the user's fields and mapping are unchanged
    after = _sources(url, ids)
    for i in ids:
        mine = {k: v for k, v in after[i].items() if k != "neardup"}
        assert json.dumps(mine) == json.dumps(
            before_sources[i]
        )  # same keys, same order, same values
        assert after[i]["neardup"]["seq"] >= 1
    mapping = json.loads(_raw(url, "/articles/_mapping"))["articles"]["mappings"]
    assert {k: v for k, v in mapping["properties"].items() if k != "neardup"} == before_mapping[
        "properties"
    ]
    assert mapping["dynamic"] == before_mapping["dynamic"]
    assert {k: v for k, v in mapping["_meta"].items() if k != "neardup"} == {
        "owner": "newsroom",
        "schema": 3,
    }
    assert set(mapping["_meta"]["neardup"]) == {
        "settings",
        "fingerprint",
        "signature_version",
        "layout",
    }

    # arrival order follows the order field
    by_seq = sorted(ids, key=lambda i: after[i]["neardup"]["seq"])
    assert by_seq == [i for i, _ in sorted(arts, key=lambda a: a[1]["published"])]

    # same answers as the embedded engine on the same documents
    ref = _reference(arts, 7)
    nd = NearDup.open(client_url, index="articles", create=False)
    assert nd.engine.remote.layout.adopted and nd.engine.remote.layout.text == "body"
    assert [(p.a, p.b, round(p.resemblance, 6)) for p in nd.pairs()] == [
        (p.a, p.b, round(p.resemblance, 6)) for p in ref.pairs()
    ]
    got = {i: d.tags for i, d in nd.engine.get(ids).items()}
    assert got == {i: d.tags for i, d in ref.engine.get(ids).items()}
    assert any(t.is_duplicate for t in got.values())
    assert nd.engine.get([ids[0]], text=True)[ids[0]].text == before_sources[ids[0]]["body"]
    nd.close()

    # every command works on it
    r = _run("clusters", "--engine", client_url, "--index", "articles", "--json")
    assert r.exit_code == 0, r.output
    clusters = json.loads(r.stdout)
    want = [c.members for c in ref.clusters(write=False)]
    assert [
        c["members"] for c in (clusters["clusters"] if isinstance(clusters, dict) else clusters)
    ] == want
    r = _run(
        "search",
        "river",
        "--engine",
        client_url,
        "--index",
        "articles",
        "--dedupe",
        "--json",
        "--size",
        "50",
    )
    assert r.exit_code == 0, r.output
    ref_hits = ref.search("river", size=50, dedupe=True)
    hits = json.loads(r.stdout)
    hits = hits["hits"] if isinstance(hits, dict) else hits
    assert sorted(h["id"] for h in hits) == sorted(h.id for h in ref_hits)
    assert (
        _run(
            "query", "--engine", client_url, "--index", "articles", "--id", ids[3], "--json"
        ).exit_code
        == 0
    )

    # the user's own query can collapse on neardup.cluster_id
    q = {
        "query": {"match": {"body": "river"}},
        "collapse": {"field": "neardup.cluster_id"},
        "size": 50,
        "_source": False,
    }
    req = urllib.request.Request(
        f"{url}/articles/_search",
        json.dumps(q).encode(),
        method="POST",
        headers={"content-type": "application/json"},
    )
    res = json.loads(urllib.request.urlopen(req).read())["hits"]["hits"]
    cids = [h["fields"]["neardup.cluster_id"][0] for h in res]
    assert res and len(cids) == len(set(cids)) == len(ref_hits)

    # the user's own writes keep working under their strict mapping
    req = urllib.request.Request(
        f"{url}/articles/_doc/new-1?refresh=true",
        json.dumps({"headline": "h", "body": "b"}).encode(),
        method="PUT",
        headers={"content-type": "application/json"},
    )
    assert urllib.request.urlopen(req).status in (200, 201)

    # info counts the documents without neardup's fields, and names the command that signs them
    info = json.loads(_run("info", "--engine", client_url, "--index", "articles", "--json").stdout)
    assert (
        info["documents"] == 30 and info["unsigned"] == 3
    )  # two without a text, and the user's new one
    out = _run("info", "--engine", client_url, "--index", "articles").output
    hint = (
        "neardup attach articles --text-field body --title-field headline --order-field published"
    )
    assert "3 more without neardup's fields" in out and hint in out
    r = _run(*hint.split()[1:], "--engine", client_url, "--json", "-q")
    assert r.exit_code == 0 and json.loads(r.stdout)["signed"] == 1, r.output
    assert (
        json.loads(_run("info", "--engine", client_url, "--index", "articles", "--json").stdout)[
            "unsigned"
        ]
        == 2
    )


def test_attaching_again_keeps_what_was_mapped_before_and_adds_the_rest(osmem_clone, monkeypatch):
    """An index attached when its signature keys kept doc values (and before a field was
    added) is attached again: fields mapped before keep their mapping (an engine refuses to
    change ``doc_values``), the new ones are added."""
    from neardup.engines.elastic import templates

    url = osmem_clone.url
    _user_index(url)
    made = templates.neardup_mapping

    def before(signatures):
        m = made(signatures)
        for key in m["properties"]["keys"]["properties"].values():
            del key["doc_values"]
        del m["properties"]["fingerprint"]
        return m

    with monkeypatch.context() as m:
        m.setattr(templates, "neardup_mapping", before)
        eng = ElasticEngine(url, index="articles")
        eng.attach(Layout(text="body", title="headline", order="published"))
        eng.close()
    r = _run("attach", "articles", "--engine", url, "--json", "-q")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["signed"] == 30
    props = json.loads(_raw(url, "/articles/_mapping"))["articles"]["mappings"]["properties"]
    nd = props["neardup"]["properties"]
    assert "fingerprint" in nd
    assert all(k.get("doc_values", True) for k in nd["keys"]["properties"].values())
    got = NearDup.open(url, index="articles", create=False)
    assert got.count() == 30 and got.pairs()
    got.close()


def test_attach_resumes_after_an_interruption_and_watch_signs_new_documents(osmem_clone):
    url = osmem_clone.url
    arts = _user_index(url)
    layout = Layout(text="body", title="headline", order="published")
    eng = ElasticEngine(url, index="articles")
    nd = NearDup(eng, eng.attach(layout))
    first = []
    for d in eng.unsigned_documents(5):  # a pass that dies after one batch of 5
        first.append(d)
        if len(first) == 5:
            break
    nd.index(first, batch_size=5, progress=None)
    eng.close()
    r = _run(
        "attach",
        "articles",
        "--engine",
        url,
        "--text-field",
        "body",
        "--title-field",
        "headline",
        "--order-field",
        "published",
        "--batch-size",
        "5",
        "--json",
        "-q",
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert (
        data["signed"] == 25
        and data["documents"] == 30
        and any("resuming" in a for a in data["actions"])
    )
    ref = _reference(arts, 5)
    nd = NearDup.open(url, index="articles", create=False)
    ids = [i for i, _ in arts]
    assert {i: d.tags for i, d in nd.engine.get(ids).items()} == {
        i: d.tags for i, d in ref.engine.get(ids).items()
    }
    # another layout for the same index is refused
    other = _run("attach", "articles", "--engine", url, "--text-field", "headline")
    assert other.exit_code == 1 and "already attached" in other.output
    assert (
        "already attached with --text-field body --title-field headline --order-field published, "
        "not --text-field headline --title-field headline --order-field published"
    ) in other.output and "{" not in other.output
    # run again without the field options: the stored ones
    again = _run("attach", "articles", "--engine", url, "--json", "-q")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["signed"] == 0 and any(
        "resuming" in a for a in json.loads(again.stdout)["actions"]
    )

    # --watch: documents another writer adds are signed on the next pass
    copy = arts[4][1]
    new = {
        "headline": "copy",
        "body": copy["body"] + " again",
        "published": "2026-04-01T00:00:00Z",
        "section": "arts",
    }
    req = urllib.request.Request(
        f"{url}/articles/_doc/late?refresh=true",
        json.dumps(new).encode(),
        method="PUT",
        headers={"content-type": "application/json"},
    )
    urllib.request.urlopen(req)
    rounds = []
    assert (
        watch(nd, 10, 0.0, stop=lambda n: n >= 2, on_round=rounds.append, sleep=lambda s: None) == 1
    )
    assert [r.indexed for r in rounds] == [1, 0]
    late = nd.engine.get(["late"])["late"]
    assert late.seq == 31 and late.tags is not None and late.tags.is_duplicate
    assert json.loads(_raw(url, "/articles/_doc/late"))["_source"]["headline"] == "copy"
    nd.close()


def test_delete_on_an_attached_index_asks_before_deleting_the_users_documents(osmem_clone):
    url = osmem_clone.url
    arts = _user_index(url)
    assert _run("attach", "articles", "--engine", url, "--text-field", "body", "-q").exit_code == 0
    first, second = arts[0][0], arts[1][0]
    refused = _run("delete", first, "--engine", url, "--index", "articles")
    assert (
        refused.exit_code == 1
        and "your own" in refused.output
        and "--yes-delete-source-documents" in refused.output
    )
    assert json.loads(_raw(url, f"/articles/_doc/{first}"))["found"]  # nothing deleted
    assert "--yes-delete-source-documents" in _run("delete", "--help").output
    r = _run(
        "delete",
        first,
        second,
        "--engine",
        url,
        "--index",
        "articles",
        "--yes-delete-source-documents",
        "--json",
    )
    assert r.exit_code == 0 and sorted(json.loads(r.stdout)["deleted"]) == sorted(
        [first, second]
    ), r.output
    with pytest.raises(urllib.error.HTTPError):
        _raw(url, f"/articles/_doc/{first}")
    # neardup's own index needs no flag: its documents are neardup's copies
    src = _texts(3)
    eng = ElasticEngine(url, index="own", index_setup=IndexSetup(pipeline=False))
    nd = NearDup(eng, eng.open())
    nd.index(src, progress=None)
    nd.close()
    r = _run("delete", src[0].id, "--engine", url, "--index", "own", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["deleted"] == [src[0].id], r.output


def test_attach_checks_the_fields(osmem_clone):
    url = osmem_clone.url
    _user_index(url)
    for layout, message in (
        (Layout(text="content", title=None), "--text-field content: no such field"),
        (
            Layout(text="body", title=None, order="section.x"),
            "--order-field section.x: no such field",
        ),
        (Layout(text="published", title="headline"), "--text-field published is of type date"),
    ):
        with pytest.raises(EngineError, match=message):
            ElasticEngine(url, index="articles").attach(layout)
    with pytest.raises(EngineError, match="no such index"):
        ElasticEngine(url, index="absent").attach(Layout())
    r = _run("attach", "articles", "--engine", url)  # the first time, the text field must be named
    assert (
        r.exit_code == 1
        and "not attached yet: name the field holding the text with --text-field" in r.output
    )


def test_dashboards_read_the_live_mapping_of_an_attached_index(osmem_clone):
    url = osmem_clone.url
    _user_index(url)
    assert (
        _run(
            "attach",
            "articles",
            "--engine",
            url,
            "--text-field",
            "body",
            "--title-field",
            "headline",
            "--order-field",
            "published",
            "-q",
        ).exit_code
        == 0
    )
    r = _run(
        "dashboards",
        "export",
        "--engine",
        url,
        "--index",
        "articles",
        "--source-field",
        "section",
        "--target",
        "opensearch-dashboards",
    )
    assert r.exit_code == 0, r.output
    objs = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
    pattern = next(
        o for o in objs if o["type"] == "index-pattern" and o["attributes"]["title"] == "articles"
    )
    assert pattern["attributes"]["timeFieldName"] == "published"  # the order field, a date
    fields = {f["name"] for f in json.loads(pattern["attributes"]["fields"])}
    assert {
        "headline",
        "headline.raw",
        "body",
        "section",
        "published",
        "neardup.cluster_id",
        "neardup.is_duplicate",
    } <= fields
    assert (
        "title" not in fields and "fields.source.keyword" not in fields
    )  # nothing guessed from neardup's template
    vis = [json.loads(o["attributes"]["visState"]) for o in objs if o["type"] == "visualization"]
    used = {a["params"].get("field") for v in vis for a in v["aggs"]}
    assert {"section", "published", "neardup.is_duplicate"} <= used
    # the templates would not know the user's field
    static = _run("dashboards", "export", "--index", "articles", "--source-field", "section")
    assert static.exit_code == 1 and "not an aggregatable field" in static.output


def test_attach_gives_each_json_type_its_text_and_counts_the_rest_exactly(osmem_clone):
    """A string is its text, a number its JSON text, an array its strings and numbers joined
    by newlines; a boolean, null, a missing field, an empty array or one of booleans gives no
    text: never signed (not as Python's "True"), each counted, by kind."""
    url = osmem_clone.url
    mapping = {"mappings": {"properties": {"body": {"type": "text"}, "headline": {"type": "text"}}}}
    urllib.request.urlopen(
        urllib.request.Request(
            f"{url}/odd",
            json.dumps(mapping).encode(),
            method="PUT",
            headers={"content-type": "application/json"},
        )
    )
    words = " ".join(f"word{i}" for i in range(30))
    bodies = {
        "string": words,
        "number": 123456789,
        "float": 2.5,
        "strings": ["first part " + words, None, "second part"],
        "bool": True,
        "false": False,
        "null": None,
        "empty": [],
        "bools": [True, False],
    }
    lines = []
    for k, v in bodies.items():
        lines += [
            json.dumps({"index": {"_index": "odd", "_id": k}}),
            json.dumps({"body": v, "headline": k}),
        ]
    lines += [
        json.dumps({"index": {"_index": "odd", "_id": "missing"}}),
        json.dumps({"headline": "no body"}),
    ]
    req = urllib.request.Request(
        f"{url}/_bulk?refresh=true",
        ("\n".join(lines) + "\n").encode(),
        method="POST",
        headers={"content-type": "application/x-ndjson"},
    )
    assert not json.loads(urllib.request.urlopen(req).read())["errors"]
    r = _run("attach", "odd", "--engine", url, "--text-field", "body", "--json", "-q")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["signed"] == 4 and data["documents"] == 4, data
    assert data["without_text"] == 6, data
    assert data["without_text_by_kind"] == {
        "array without text": 2,
        "boolean": 2,
        "missing or null": 2,
    }
    nd = NearDup.open(url, index="odd", create=False)
    try:
        stored = nd.engine.get(list(bodies) + ["missing"], text=True)
        assert set(stored) == {"string", "number", "float", "strings"}
        assert stored["number"].text == "123456789" and stored["float"].text == "2.5"
        assert stored["strings"].text == "first part " + words + "\nsecond part"
    finally:
        nd.close()
    # the text line says the same
    again = _run("attach", "odd", "--engine", url, "--text-field", "body", "-q")
    assert again.exit_code == 0 and "6 without text in body left unsigned" in again.output, (
        again.output
    )


def test_the_report_of_an_attached_index_uses_its_order_field_dates(osmem_clone):
    """The HTML report dates an attached index by its --order-field: the range on the page,
    each cluster's representative and each member are the published dates, not when neardup
    signed them."""
    import re

    from neardup.report.html import ReportOptions, build_report

    url = osmem_clone.url
    arts = _user_index(url)
    r = _run(
        "attach",
        "articles",
        "--engine",
        url,
        "--text-field",
        "body",
        "--title-field",
        "headline",
        "--order-field",
        "published",
        "--json",
        "-q",
    )
    assert r.exit_code == 0, r.output
    published = {i: s["published"] for i, s in arts}
    nd = NearDup.open(url, index="articles", create=False)
    try:
        assert nd.engine.order_field == "published"
        page = build_report(
            nd.engine, threshold=nd.config.threshold, options=ReportOptions(members=50)
        )
        docs = nd.engine.get(list(published))
    finally:
        nd.close()
    assert all(d.ordered_at == published[i] for i, d in docs.items())
    assert (
        f"Documents dated {min(published.values())} – {max(published.values())} (field "
        "<code>published</code>)." in page
    )
    clusters = re.findall(
        r'data-cluster-id="([^"]+)".*?; dated ([0-9TZ:-]+) \(<code>published</code>\)', page, re.S
    )
    assert clusters and all(published[rep] == date for rep, date in clusters)
    members = re.findall(
        r'data-member-id="([^"]+)"><summary>.*?<span class="date">published ([0-9TZ:-]+)</span>',
        page,
    )
    assert members and all(published[m] == date for m, date in members)
    assert "Indexed " not in page


def test_watch_signs_documents_other_clients_replace_or_update(osmem_clone):
    """The adopted index's final pipeline drops neardup's fields from a document whose text
    another client changed (replaced with PUT, or changed with the _update API); --watch signs
    it again. A change that leaves the text alone keeps the signature. Needs ingest pipelines:
    a real engine."""
    if not http_pipeline():
        pytest.skip("osmem runs no ingest pipeline (NEARDUP_TEST_ENGINE selects a real engine)")
    url = osmem_clone.url
    arts = _user_index(url)
    r = _run(
        "attach",
        "articles",
        "--engine",
        url,
        "--text-field",
        "body",
        "--title-field",
        "headline",
        "--order-field",
        "published",
        "--json",
        "-q",
    )
    assert r.exit_code == 0, r.output
    assert any(
        "final_pipeline of articles set to neardup-articles" in a
        for a in json.loads(r.stdout)["actions"]
    )
    settings = json.loads(_raw(url, "/articles/_settings"))["articles"]["settings"]["index"]
    assert settings["final_pipeline"] == "neardup-articles"
    ids = [i for i, _ in arts]
    before = _sources(url, ids)
    replaced, updated, retitled, copied = ids[0], ids[1], ids[2], ids[7]

    def send(method: str, path: str, body: dict) -> None:
        req = urllib.request.Request(
            f"{url}{path}?refresh=true",
            json.dumps(body).encode(),
            method=method,
            headers={"content-type": "application/json"},
        )
        urllib.request.urlopen(req)

    # a representative with near-duplicates, apart from the copied article's cluster: the
    # user changes its section and headline with the _update API, and adds a near copy of it
    dup_of = {i: before[i]["neardup"]["dup_of"] for i in ids}
    rep = next(
        i
        for i in ids[3:]
        if i != copied and i != dup_of[copied] and not dup_of[i] and i in dup_of.values()
    )
    nd = NearDup.open(url, index="articles", create=False)
    its_duplicates = [(m.id, m.resemblance) for m in nd.query(id=rep)]
    assert its_duplicates
    new_body = before[copied]["body"] + " again"  # a near copy of another article
    user_fields = {k: v for k, v in before[replaced].items() if k != "neardup"}
    send(
        "PUT", f"/articles/_doc/{replaced}", {**before[replaced], "body": new_body}
    )  # neardup's old fields copied along
    send("POST", f"/articles/_update/{updated}", {"doc": {"body": new_body + " once more"}})
    send(
        "POST",
        f"/articles/_update/{retitled}",
        {"doc": {"headline": "a new headline, the same text"}},
    )
    send(
        "POST",
        f"/articles/_update/{rep}",
        {"doc": {"section": "opinion", "headline": "the same text, filed again"}},
    )
    copy_of_rep = f"{rep}-copy"
    send(
        "PUT",
        f"/articles/_doc/{copy_of_rep}",
        {k: v for k, v in before[rep].items() if k != "neardup"}
        | {"body": before[rep]["body"] + " Updated.", "published": "2026-04-01T00:00:00Z"},
    )
    after = _sources(url, [replaced, updated, retitled, rep])
    assert "neardup" not in after[replaced] and "neardup" not in after[updated]
    assert after[retitled]["neardup"] == before[retitled]["neardup"]
    assert after[rep]["neardup"] == before[rep]["neardup"]
    assert {k: v for k, v in after[replaced].items()} == {**user_fields, "body": new_body}

    # their keys survived the user's partial updates (the engine indexed the stored ones
    # again): the retitled article is still found by them, in resemblance and in containment,
    # and the representative finds its near-duplicates as before
    for mode in ("resemblance", "containment"):
        found = {m.id: m.resemblance for m in nd.query(before[retitled]["body"], mode=mode)}
        assert found.get(retitled) == 1.0, mode
    assert [(m.id, m.resemblance) for m in nd.query(id=rep)] == its_duplicates
    assert nd.engine.unsigned() == 3
    rounds = []
    assert (
        watch(nd, 10, 0.0, stop=lambda n: n >= 2, on_round=rounds.append, sleep=lambda s: None) == 3
    )  # signed
    assert [x.indexed for x in rounds] == [3, 0] and nd.engine.unsigned() == 0
    got = nd.engine.get([replaced, updated, copy_of_rep], text=True)
    assert got[replaced].text == new_body and got[replaced].seq > 30
    assert got[replaced].tags.is_duplicate and got[updated].tags.is_duplicate
    # the user's near copy of the updated representative is found by the latter's keys
    assert got[copy_of_rep].tags.is_duplicate and got[copy_of_rep].tags.dup_of == rep
    assert (
        _sources(url, [retitled])[retitled]["neardup"]["seq"] == before[retitled]["neardup"]["seq"]
    )
    nd.close()
