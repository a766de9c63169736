"""Every request body the HTTP engine sends, validated against the OpenSearch API
specification (/work/shared/opensearch-api-spec, OpenAPI 3.1; see tests/openapi_spec.py).

The bodies come from the same pure builders the engine calls (neardup.engines.elastic.dsl and the
clients' bulk ``expand_action``), so what is checked here is what goes on the wire."""

from __future__ import annotations

import dataclasses

import json
from pathlib import Path

import numpy as np
import pytest

from neardup.config import SIGNATURE_VERSION, Config
from neardup.engines.elastic.hits import stored_shingles
from neardup.engines.elastic import dsl
from neardup.engines.elastic import templates
from neardup.engines.elastic.layout import Layout, OWN, TEXT_LANGS
from neardup.engines.base import CandidateQuery, ClusterRecord, KeyGroup, NativeQuery, Tags
from neardup.runtime.resources import load_json
from neardup.signing.signer import Signer
from neardup.signing.records import Document
from neardup.sketches.verify import UNBOUNDED

# the checkout's sibling "shared" directory (or, from a git worktree, the nearest ancestor's)
SPEC_DIR = next(
    (
        p / "shared" / "opensearch-api-spec" / "spec"
        for p in Path(__file__).resolve().parents[1:]
        if (p / "shared" / "opensearch-api-spec" / "spec").is_dir()
    ),
    Path(__file__).resolve().parents[1].parent / "shared" / "opensearch-api-spec" / "spec",
)
if not SPEC_DIR.is_dir():
    pytest.skip(f"OpenSearch API specification not found at {SPEC_DIR}", allow_module_level=True)

from .openapi_spec import Spec  # noqa: E402


@pytest.fixture(scope="module")
def spec() -> Spec:
    return Spec(SPEC_DIR)


@pytest.fixture(scope="module")
def signed():
    signer = Signer(Config())
    return [
        signer.sign(
            Document(
                "a",
                " ".join(f"word{i % 37} token{i % 11}" for i in range(120)),
                title="T",
                fields={"site": "x"},
            )
        ),
        signer.sign(Document("b", "یک دو سه چهار پنج شش هفت هشت نه ده")),
        signer.sign(Document("c", "раз два три четыре пять шесть семь восемь девять десять")),
    ]


def _ok(spec: Spec, path: str, method: str, body) -> None:
    errors = spec.errors(path, method, body)
    assert errors == [], f"{method.upper()} {path}:\n" + "\n".join(errors)


# -- the validator can fail --------------------------------------------------------------------
@pytest.mark.parametrize(
    "path,method,body",
    [
        ("/{index}/_search", "post", {"size": "ten"}),
        ("/{index}/_search", "post", {"query": {"bool": {"should": "not a list or clause"}}}),
        ("/{index}/_search", "post", {"sort": [{"_score": {"order": "upwards"}}]}),
        ("/_index_template/{name}", "put", {"index_patterns": 5}),
        (
            "/_ingest/pipeline/{id}",
            "put",
            {"processors": [{"fail": {"if": "true"}}]},
        ),  # fail needs a message
        (
            "/_ingest/pipeline/{id}",
            "put",
            {"processors": [{"set": {"field": "x"}, "fail": {"message": "m"}}]},
        ),  # one per item
    ],
)
def test_validator_rejects_bad_bodies(spec, path, method, body):
    assert spec.errors(path, method, body)


# -- templates, mapping updates, pipeline -----------------------------------------------------
def test_index_templates(spec):
    meta = templates.index_meta(Config(), {"lexicon": ["x"]})
    docs = templates.documents_template("docs", meta, "neardup-docs")
    _ok(spec, "/_index_template/{name}", "put", docs)
    _ok(spec, "/_index_template/{name}", "put", templates.documents_template("docs", meta, None))
    _ok(spec, "/_index_template/{name}", "put", templates.clusters_template("docs"))
    assert (
        docs["index_patterns"] == ["docs"]
        and docs["template"]["settings"]["index"]["default_pipeline"] == "neardup-docs"
    )
    assert (
        docs["template"]["mappings"]["_meta"]["neardup"]["signature_version"] == SIGNATURE_VERSION
    )
    assert templates.clusters_template("docs")["index_patterns"] == ["docs-clusters"]


def test_mapping_fields_follow_the_contract():
    top = load_json("mappings", "documents.json")["template"]["mappings"]["properties"]
    per_lang = {f"{f}_{x}" for f in ("title", "body") for x in TEXT_LANGS}
    assert set(top) == {"title", "body", *per_lang, "fields", "neardup"}
    assert top["neardup"]["dynamic"] == "strict"
    props = top["neardup"]["properties"]  # everything neardup adds is under one object
    assert props["simhash"] == {"type": "keyword", "index": False, "doc_values": False}
    assert props["shingles"]["type"] == "binary" and props["shingles"].get("doc_values") is False
    assert {props[f]["type"] for f in ("exact", "lang", "cluster_id", "dup_of", "id")} == {
        "keyword"
    }
    assert (
        props["is_duplicate"]["type"],
        props["max_resemblance"]["type"],
        props["n_shingles"]["type"],
        props["indexed_at"]["type"],
        props["seq"]["type"],
    ) == ("boolean", "float", "integer", "date", "long")
    assert {k: v["type"] for k, v in props["keys"]["properties"].items()} == dict.fromkeys(
        ("exact", "minhash", "simhash", "winnow"), "keyword"
    )
    # keys are searched, never aggregated (collisions are grouped in the client): no doc values
    assert all(v["doc_values"] is False for v in props["keys"]["properties"].values())
    extra = templates.neardup_mapping(["exact", "modm"])["properties"]["keys"]["properties"]
    assert extra["modm"] == {"type": "keyword", "doc_values": False}
    for f in ("title", "body"):  # one field per language, each analyzed once, by its analyzer
        assert {k: top[k]["analyzer"] for k in OWN.stored(f)} == {
            f: "neardup_default",
            f"{f}_fa": "neardup_fa",
            f"{f}_ru": "neardup_ru",
            f"{f}_en": "neardup_en",
        }
        assert all(set(top[k].get("fields", {})) <= {"keyword"} for k in OWN.stored(f))
    analysis = load_json("mappings", "documents.json")["template"]["settings"]["analysis"]
    assert analysis["char_filter"]["neardup_yo"] == {
        "type": "mapping",
        "mappings": ["ё=>е", "Ё=>Е"],
    }
    assert analysis["analyzer"]["neardup_ru"]["char_filter"] == [
        "neardup_yo"
    ]  # ёлка and елка are one word
    for a in analysis[
        "analyzer"
    ].values():  # every filter an analyzer names is built in or defined here
        assert set(a.get("char_filter", [])) <= set(analysis["char_filter"])
        assert set(a["filter"]) - set(analysis["filter"]) <= {
            "lowercase",
            "decimal_digit",
            "arabic_normalization",
            "persian_normalization",
        }
    clusters = load_json("mappings", "clusters.json")["template"]["mappings"]["properties"]
    assert set(clusters) == {
        "cluster_id",
        "size",
        "representative_id",
        "representative_title",
        "members",
        "min_resemblance",
        "mean_resemblance",
        "max_resemblance",
        "languages",
        "first_seen",
        "last_seen",
        "updated_at",
        "managed_by",
    }


def test_put_mapping_meta_and_settings(spec):
    _ok(
        spec,
        "/{index}/_mapping",
        "put",
        {"_meta": {"neardup": templates.index_meta(Config(), {"idf": {"a": 1.5}}, "neardup-x")}},
    )
    _ok(spec, "/{index}/_settings", "put", templates.default_pipeline_settings("neardup-x"))


@pytest.mark.parametrize(
    "product,version,fingerprint",
    [
        ("elasticsearch", (8, 12, 0), True),
        ("elasticsearch", (9, 1, 0), True),
        ("opensearch", (2, 11, 0), False),
        ("opensearch", (2, 16, 0), True),
        ("opensearch", (3, 0, 0), True),
    ],
)
def test_pipeline(spec, product, version, fingerprint):
    body = templates.pipeline_body(product, version)
    _ok(spec, "/_ingest/pipeline/{id}", "put", body)
    text = json.dumps(body)
    assert templates.VERSION_MARKER not in text and f"!= {SIGNATURE_VERSION}" in text
    kinds = [next(iter(p)) for p in body["processors"]]
    assert kinds[:3] == ["fail", "fail", "set"] and ("fingerprint" in kinds) == fingerprint
    container = spec.component("ingest._common", "ProcessorContainer")
    for p in body["processors"]:
        name, opts = next(iter(p.items()))
        if name == "fingerprint":
            continue  # not in the specification; checked against the documentation below
        assert spec.errors_for(container, p) == []
        assert set(opts) <= _documented(spec, name), (
            f"{name}: unknown options {set(opts) - _documented(spec, name)}"
        )


def _documented(spec: Spec, processor: str) -> set[str]:
    """Option names a processor's schema names (its allOf parts, ProcessorBase included)."""
    reg = spec.registry.resolver()
    container = reg.lookup(spec.component("ingest._common", "ProcessorContainer")["$ref"])
    ref = container.contents["properties"][processor]["$ref"]
    schema = container.resolver.lookup(ref)
    names: set[str] = set()
    for part in schema.contents.get("allOf", [schema.contents]):
        part = schema.resolver.lookup(part["$ref"]).contents if "$ref" in part else part
        names |= set(part.get("properties", {}))
    return names


def test_fingerprint_processor_options_are_the_documented_ones():
    """Elasticsearch: fields, target_field, salt, method (MD5|SHA-1|SHA-256|SHA-512|MurmurHash3),
    ignore_missing; OpenSearch 2.16+: fields | exclude_fields, hash_method (e.g. SHA-256@2.16.0),
    target_field, ignore_missing -- plus the common if/tag/description/ignore_failure/on_failure."""
    common = {"if", "tag", "description", "ignore_failure", "on_failure"}
    fp = load_json("ingest_pipeline", "fingerprint.json")
    es, os_ = fp["elasticsearch"]["fingerprint"], fp["opensearch"]["fingerprint"]
    assert set(es) <= common | {"fields", "target_field", "salt", "method", "ignore_missing"}
    assert es["method"] in {"MD5", "SHA-1", "SHA-256", "SHA-512", "MurmurHash3"}
    assert set(os_) <= common | {
        "fields",
        "exclude_fields",
        "hash_method",
        "target_field",
        "ignore_missing",
    }
    assert os_["hash_method"] in {"MD5@2.16.0", "SHA-1@2.16.0", "SHA-256@2.16.0", "SHA3-256@2.16.0"}
    assert (
        es["fields"] == os_["fields"] == OWN.stored("body")  # whichever one it has
        and es["ignore_missing"] is os_["ignore_missing"] is True
        and es["target_field"] == os_["target_field"] == "neardup.fingerprint"
    )


# -- searches ----------------------------------------------------------------------------------
def _candidate_queries(signed):
    s = signed[0]
    k = {f: tuple(int(x) for x in s.keys[f]) for f in s.keys}
    return [
        CandidateQuery(
            (
                KeyGroup("exact", k["exact"]),
                KeyGroup("minhash", k["minhash"]),
                KeyGroup("simhash", k["simhash"]),
            ),
            min_shingles=5,
            max_shingles=UNBOUNDED,
            exclude_id="a",
            limit=200,
        ),
        CandidateQuery(
            (KeyGroup("winnow", k["winnow"], 2), KeyGroup("minhash", k["minhash"])),
            min_shingles=0,
            max_shingles=50,
            exclude_id=None,
            limit=20000,
        ),
    ]


@pytest.mark.parametrize("max_clauses", [1024, 8])
def test_candidate_searches(spec, signed, max_clauses):
    bodies = [
        dsl.candidate_body(q, max_clauses, version=SIGNATURE_VERSION)
        for q in _candidate_queries(signed)
    ]
    for b in bodies:
        _ok(spec, "/{index}/_search", "post", b)
        assert b["_source"] == [
            "neardup.n_shingles",
            "neardup.simhash",
            "neardup.shingles",
            "neardup.cluster_id",
            "neardup.seq",
        ]
        assert b["query"]["bool"]["minimum_should_match"] == 1
    assert bodies[0]["query"]["bool"]["must_not"] == [{"ids": {"values": ["a"]}}]
    assert bodies[1]["size"] == 10000  # capped at the result window
    q = _candidate_queries(signed)[0]
    verified = dsl.candidate_body(
        q, max_clauses, version=SIGNATURE_VERSION, read_fields=["body", "body_en"]
    )
    _ok(spec, "/{index}/_search", "post", verified)
    assert verified["_source"] == [*bodies[0]["_source"], *dsl.VERIFY_SOURCE, "body", "body_en"]
    lines = dsl.msearch_lines("docs", bodies)
    _ok(spec, "/_msearch", "post", lines)
    _ok(spec, "/{index}/_msearch", "post", lines)
    header, body = (
        spec.component("_core.msearch", "MultisearchHeader"),
        spec.component("_core.msearch", "MultisearchBody"),
    )
    for h, b in zip(lines[::2], lines[1::2], strict=True):
        assert spec.errors_for(header, h) == [] and spec.errors_for(body, b) == []


def test_candidate_query_shape(signed):
    q = _candidate_queries(signed)[1]
    body = dsl.candidate_body(q, version=SIGNATURE_VERSION)
    should = body["query"]["bool"]["should"]
    assert [c["bool"]["_name"] for c in should] == ["winnow", "minhash"]
    assert (
        should[0]["bool"]["minimum_should_match"] == 2
        and should[1]["bool"]["minimum_should_match"] == 1
    )
    assert all(set(t) == {"constant_score"} for c in should for t in c["bool"]["should"])
    assert body["query"]["bool"]["filter"] == [
        {"range": {"neardup.n_shingles": {"gte": 0, "lte": 50}}}
    ]
    small = dsl.candidate_body(q, max_clauses=8, version=SIGNATURE_VERSION)["query"]["bool"][
        "should"
    ]
    assert "terms_set" in small[0] and small[1] == {
        "terms": {
            "neardup.keys.minhash": signed[0].keywords("minhash", SIGNATURE_VERSION),
            "_name": "minhash",
        }
    }
    assert dsl.candidate_body(CandidateQuery((KeyGroup("minhash", ()),)), version=7) is None


def test_other_searches(spec):
    for b in (
        dsl.field_keys_body("minhash", 1000),
        dsl.field_keys_body("winnow", 10, [7], {"id": "p", "keep_alive": "1m"}),
        dsl.max_seq_body(),
        dsl.scan_body(500, text=True),
        dsl.cluster_ids_body(100, ["c1"]),
        dsl.read_clusters_body(10, [3, "c"]),
        dsl.fulltext_body("سلام دنیا", 10),
        dsl.fulltext_body(NativeQuery({"match": {"body": "x"}}), 5),
        dsl.fulltext_body(NativeQuery({"query": {"match_all": {}}, "size": 3}), 10),
        *dsl.collapsed_bodies("привет мир", 10),
    ):
        _ok(spec, "/{index}/_search", "post", b)
    pit = dsl.scan_body(100, [12, 7], {"id": "pit-id", "keep_alive": "5m"})
    _ok(spec, "/_search", "post", pit)
    _ok(spec, "/_search/point_in_time", "delete", {"pit_id": ["pit-id"]})
    _ok(spec, "/_search/scroll", "post", {"scroll_id": "sid", "scroll": "5m"})
    _ok(spec, "/_search/scroll", "delete", {"scroll_id": ["sid"]})
    _ok(spec, "/{index}/_mget", "post", dsl.mget_body(["a", "b"], text=False))
    _ok(spec, "/{index}/_mget", "post", dsl.existing_seq_body(["a"]))


def test_search_highlights_the_language_fields(spec):
    body = dsl.fulltext_body("ёлки", 10)
    _ok(spec, "/{index}/_search", "post", body)
    fields = body["highlight"]["fields"]
    assert set(fields) == {"body", "body_fa", "body_ru", "body_en"}
    assert all(o["no_match_size"] for o in fields.values())  # a document has one of them
    assert "neardup.lang" in body["_source"] and "title_fa" in body["_source"]
    hl = {"body_ru": ["Зелёная [ёлка] стояла в лесу"]}
    assert dsl.snippet_of(hl, OWN, "ru") == dsl.snippet_of(hl, OWN, None) == hl["body_ru"][0]
    assert dsl.snippet_of(None) == "" and dsl.snippet_of({}, OWN, "fa") == ""
    adopted = Layout(text="content", adopted=True)
    assert set(dsl.highlight(adopted)["fields"]) == {
        "content"
    }  # a user's field has no neardup subfields
    assert dsl.snippet_of({"content.ru": ["x [y]"], "content": ["x y"]}, adopted, "ru") == "x y"


def test_an_index_made_before_language_fields_highlights_its_subfields(spec):
    old = Layout.from_dict({"text": "body", "title": "title"})  # its stored layout
    assert old.search_fields() == [
        *(f"title{x}^2" for x in ("", ".fa", ".ru", ".en")),
        *(f"body{x}" for x in ("", ".fa", ".ru", ".en")),
    ]
    body = dsl.fulltext_body("ёлки", 10, old)
    _ok(spec, "/{index}/_search", "post", body)
    fields = body["highlight"]["fields"]
    assert set(fields) == {"body", "body.fa", "body.ru", "body.en"}
    assert [f for f, o in fields.items() if "no_match_size" in o] == [
        "body"
    ]  # subfields give a fragment only where they match
    hl = {
        "body": ["Зелёная ёлка стояла в лесу"],
        "body.ru": ["Зелёная [ёлка] стояла в лесу"],
        "body.en": ["The [gardens]"],
    }
    assert dsl.snippet_of(hl, old, "ru") == "Зелёная [ёлка] стояла в лесу"  # its language first
    assert dsl.snippet_of(hl, old, "en") == "The [gardens]"
    assert dsl.snippet_of(hl, old, None) == "Зелёная [ёлка] стояла в лесу"  # fa, ru, en, body
    assert dsl.snippet_of({"body": ["plain start"], "body.ru": [""]}, old, "ru") == "plain start"


def test_documents_keep_title_and_text_in_the_field_of_their_language(signed):
    s = signed[0]
    for lang, want in (("fa", "_fa"), ("ru", "_ru"), ("en", "_en"), ("de", ""), (None, "")):
        one = dataclasses.replace(s, lang=lang)
        src = dsl.document_source(one, None, 1, "2024-01-01T00:00:00Z")
        assert {k for k in src if k not in ("neardup", "fields")} <= {f"body{want}", f"title{want}"}
        assert src[f"body{want}"] == s.doc.text
        old = dsl.document_source(one, None, 1, "2024-01-01T00:00:00Z", Layout())
        assert old["body"] == s.doc.text  # an index made before: always body


def test_tagging_support_bodies(spec, signed):
    s = signed[0]
    q = CandidateQuery(
        (KeyGroup("minhash", tuple(int(k) for k in s.keys["minhash"]), 2),),
        min_shingles=3,
        max_shingles=90,
        exclude_id="a",
        limit=50,
        before_seq=40,
        after_seq=2,
        representatives=True,
    )
    body = dsl.candidate_body(q, version=SIGNATURE_VERSION)
    _ok(spec, "/{index}/_search", "post", body)
    assert {"range": {"neardup.seq": {"lt": 40, "gt": 2}}} in body["query"]["bool"]["filter"]
    assert {"term": {"neardup.is_duplicate": False}} in body["query"]["bool"]["filter"]
    for b in (
        dsl.tag_scan_body(100, [5], {"id": "pit", "keep_alive": "5m"}),
        dsl.members_body(["a", "b"], 100, [9]),
        dsl.count_body(),
        dsl.count_body(False),
    ):
        _ok(spec, "/_search", "post", b)
    _ok(spec, "/{index}", "put", templates.state_index_body())
    lay = Layout(text="content", title="headline", order="published", adopted=True)
    _ok(
        spec,
        "/_search",
        "post",
        dsl.unsigned_body(200, [1700000000000, 12], {"id": "pit", "keep_alive": "5m"}, lay),
    )
    _ok(
        spec,
        "/{index}/_search",
        "post",
        dsl.unsigned_body(200, None, None, Layout(text="body", adopted=True)),
    )
    m = templates.attach_mapping(
        Config().signatures,
        templates.meta_pointer("articles", templates.index_meta(Config())),
        {"owner": "x"},
    )
    _ok(spec, "/{index}/_mapping", "put", m)
    assert (
        set(m) == {"_meta", "properties"}
        and set(m["properties"]) == {"neardup"}
        and m["_meta"]["owner"] == "x"
    )
    for b in dsl.collapsed_bodies("words", 10, layout=lay):
        _ok(spec, "/{index}/_search", "post", b)
    _ok(
        spec,
        "/{index}/_create/{id}",
        "put",
        templates.settings_source(templates.index_meta(Config()), "2026-01-01T00:00:00Z"),
    )


# -- bulk --------------------------------------------------------------------------------------
@pytest.mark.parametrize("version", [6, 7])
def test_a_batch_of_actions_equals_the_actions_one_at_a_time(signed, version):
    """The keys of a batch rendered at once (dsl.index_actions) give the actions each
    document's own rendering gives, on both layouts, created or held."""
    tags = {"b": Tags(cluster_id="a", dup_of="a", max_resemblance=0.91, is_duplicate=True)}
    seqs = {s.id: i + 1 for i, s in enumerate(signed)}
    now = "2026-01-01T00:00:00.000+00:00"
    adopted = Layout(text="content", title="headline", order="published", adopted=True)
    for layout in (Layout(), adopted):
        held = {signed[0].id}
        one_at_a_time = [
            dsl.index_action(
                "docs", s, tags.get(s.id), seqs[s.id], now, layout, version, create=s.id not in held
            )
            for s in signed
        ]
        batch = dsl.index_actions("docs", signed, tags, seqs, now, layout, version, held=held)
        assert batch == one_at_a_time


@pytest.mark.parametrize("client", ["elasticsearch", "opensearchpy"])
def test_bulk_lines(spec, signed, client):
    helpers = pytest.importorskip(f"{client}.helpers")
    tags = {
        "a": Tags(cluster_id="a"),
        "b": Tags(cluster_id="a", dup_of="a", max_resemblance=0.91, is_duplicate=True),
    }
    actions = [
        dsl.index_action("docs", s, tags.get(s.id), i + 1, "2026-01-01T00:00:00.000+00:00")
        for i, s in enumerate(signed)
    ]
    adopted = Layout(text="content", title="headline", order="published", adopted=True)
    actions.append(
        dsl.index_action("articles", signed[0], None, 9, "2026-01-01T00:00:00.000+00:00", adopted)
    )
    actions += [
        dsl.update_tags_action(
            "docs",
            "a",
            Tags(cluster_id="a", dup_of=None, max_resemblance=0.0, is_duplicate=False),
        ),
        dsl.delete_action("docs", "c"),
        dsl.cluster_action(
            "docs",
            ClusterRecord(
                cluster_id="a",
                size=2,
                representative_id="a",
                representative_title="T",
                members=["a", "b"],
                min_resemblance=0.9,
                mean_resemblance=0.9,
                max_resemblance=0.9,
                languages=["en"],
            ),
            "2026-01-01T00:00:00Z",
        ),
    ]
    lines = []
    for a in actions:
        meta, data = helpers.expand_action(dict(a))
        lines.append(meta)
        if data is not None:
            lines.append(data)
    _ok(spec, "/_bulk", "post", lines)
    op = spec.component("_core.bulk", "OperationContainer")
    update = spec.component("_core.bulk", "UpdateAction")
    i = 0
    while i < len(lines):
        assert spec.errors_for(op, lines[i]) == [], lines[i]
        kind = next(iter(lines[i]))
        assert lines[i][kind]["_id"]
        if kind == "update":
            assert spec.errors_for(update, lines[i + 1]) == []
        i += 1 if kind == "delete" else 2
    assert set(lines[1]) == {"body_en", "title_en", "fields", "neardup"}  # its language's fields
    src = lines[1]["neardup"]
    assert set(src) >= {
        "id",
        "lang",
        "exact",
        "simhash",
        "keys",
        "shingles",
        "n_shingles",
        "n_tokens",
        "seq",
        "indexed_at",
        "signature_version",
        "cluster_id",
        "dup_of",
        "is_duplicate",
        "max_resemblance",
    }
    # the hashes, or (a text that makes 16 or more) a marker: they are made from the text
    held = stored_shingles(src)
    assert held is None if signed[0].n_shingles >= 16 else np.array_equal(held, signed[0].shingles)
    # an adopted index: only neardup.* of an existing document, the user's field names for a new one
    k = next(
        i
        for i in range(0, len(lines), 2)
        if "update" in lines[i] and lines[i]["update"]["_index"] == "articles"
    )
    assert set(lines[k + 1]) == {"doc", "upsert"} and set(lines[k + 1]["doc"]) == {"neardup"}
    assert set(lines[k + 1]["upsert"]) == {"content", "headline", "neardup"}
    assert (
        src["keys"]["minhash"] == signed[0].keywords("minhash", SIGNATURE_VERSION)
        and len(src["simhash"]) == 16
    )


def test_a_long_query_is_cut_within_the_clause_limit(spec):
    words = " ".join(f"w{i}" for i in range(500))
    for clauses in (1024, 100):
        body = dsl.fulltext_body(words, 10, max_clauses=clauses)
        _ok(spec, "/{index}/_search", "post", body)
        mm = body["query"]["multi_match"]
        assert len(mm["query"].split()) * len(mm["fields"]) <= clauses
        assert mm["query"].split() == [f"w{i}" for i in range(len(mm["query"].split()))]
        assert mm["minimum_should_match"] == "8<60%"
