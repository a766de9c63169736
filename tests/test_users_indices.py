"""Users' indices are theirs: neardup never deletes, overwrites or duplicates a document it did
not create, and checks before it changes anything.

* An index named as neardup's clusters or state index that neardup did not create is refused
  by every command that would write into it, before anything is made; ``clusters`` replaces
  only the cluster documents neardup marked as its own.
* ``attach`` checks the target (an alias over several indices, a data stream, a closed index,
  ``_source``, the text field, the field limit) before any change, and a refusal leaves no
  trace: no mapping, setting, pipeline, template or side index.

On osmem and, with ``NEARDUP_TEST_ENGINE``, on the real engine.
"""

from __future__ import annotations

import json
import urllib.error

import pytest

from .test_engine_refusals import exists, neardup_templates, one_line, request
from .test_hardening import good_text, run, write_jsonl

pytestmark = pytest.mark.http


def count(url: str, index: str) -> int:
    request(url, "POST", f"/{index}/_refresh")
    return request(url, "GET", f"/{index}/_count")["count"]


def _near_copies(tmp_path, n: int = 12):
    """Documents in pairs of near-copies, so that ``clusters`` finds clusters."""
    records = []
    for i in range(n // 2):
        text = good_text(i)
        records += [{"id": f"a{i}", "text": text}, {"id": f"b{i}", "text": text + " extra"}]
    return write_jsonl(tmp_path / "d.jsonl", records)


def _users_index(url: str, name: str) -> None:
    """An index of the user's own, with another mapping and one document."""
    request(
        url,
        "PUT",
        f"/{name}",
        {"mappings": {"properties": {"customer": {"type": "keyword"}, "total": {"type": "long"}}}},
    )
    request(url, "PUT", f"/{name}/_doc/order-1?refresh=true", {"customer": "c1", "total": 12})


@pytest.mark.parametrize("role", ["clusters", "neardup-state"])
@pytest.mark.parametrize("command", ["init", "index"])
def test_an_index_neardup_did_not_create_is_refused_before_anything_is_made(
    osmem_clone, tmp_path, role, command
):
    url = osmem_clone.url
    _users_index(url, f"cw-{role}")
    args = [_near_copies(tmp_path), "-q"] if command == "index" else []
    line = one_line(run(command, *args, "-e", url, "--index", "cw"))
    assert f"index cw-{role} exists and was not created by neardup" in line, line
    assert "--index NAME" in line, line
    assert count(url, f"cw-{role}") == 1
    other = "cw-neardup-state" if role == "clusters" else "cw-clusters"
    assert not exists(url, "cw") and not exists(url, other) and neardup_templates(url) == []


def test_clusters_never_write_into_a_users_index_of_that_name(osmem_clone, tmp_path):
    """The clusters index (and its template) removed after ``index``, and an index of the
    user's made under that name: ``clusters --write`` refuses it and changes nothing."""
    url = osmem_clone.url
    e = ["-e", url, "--index", "cw"]
    assert run("init", *e, "--no-pipeline").exit_code == 0
    assert run("index", _near_copies(tmp_path), *e, "-q").exit_code == 0
    request(url, "DELETE", "/cw-clusters")
    request(url, "DELETE", "/_index_template/neardup-cw-clusters")
    _users_index(url, "cw-clusters")
    line = one_line(run("clusters", *e, "--write"))
    assert "index cw-clusters exists and was not created by neardup" in line, line
    assert len(line) < 600, line
    assert count(url, "cw-clusters") == 1
    assert request(url, "GET", "/cw-clusters/_doc/order-1")["_source"]["total"] == 12


def test_clusters_replace_only_documents_neardup_marked(osmem_clone, tmp_path):
    url = osmem_clone.url
    e = ["-e", url, "--index", "cw"]
    assert run("init", *e, "--no-pipeline").exit_code == 0
    assert run("index", _near_copies(tmp_path), *e, "-q").exit_code == 0
    first = run("clusters", *e, "--write", "--json")
    assert first.exit_code == 0, first.output
    written = count(url, "cw-clusters")
    assert written == 6
    stale = {"cluster_id": "old", "size": 2, "representative_id": "x", "managed_by": "neardup"}
    theirs = {"cluster_id": "theirs", "size": 2, "representative_id": "y"}
    request(url, "PUT", "/cw-clusters/_doc/old?refresh=true", stale)
    request(url, "PUT", "/cw-clusters/_doc/theirs?refresh=true", theirs)
    again = run("clusters", *e, "--write", "--json")
    assert again.exit_code == 0, again.output
    ids = {h["_id"] for h in request(url, "GET", "/cw-clusters/_search?size=100")["hits"]["hits"]}
    assert "old" not in ids and "theirs" in ids and len(ids) == written + 1, ids
    mine = request(url, "GET", "/cw-clusters/_search?size=100&q=managed_by:neardup")
    assert len(mine["hits"]["hits"]) == written
    assert json.loads(again.stdout) is not None


# -- attach: checked before any change -------------------------------------------------------
def _articles(url: str, name: str, n: int = 3, **index_body) -> None:
    """A user's index of articles (``body``, ``headline``) with ``n`` documents."""
    mappings = {"properties": {"body": {"type": "text"}, "headline": {"type": "text"}}}
    request(url, "PUT", f"/{name}", {"mappings": mappings, **index_body})
    for i in range(n):
        doc = {"body": good_text(i), "headline": f"{name} {i}"}
        request(url, "PUT", f"/{name}/_doc/{name}-{i}", doc)
    request(url, "POST", f"/{name}/_refresh")


def _state(url: str, names: list[str]) -> dict:
    """What attach could change: the mappings and settings of ``names``, every index and
    every neardup template and pipeline."""

    def pipelines() -> list[str]:
        try:
            return sorted(p for p in request(url, "GET", "/_ingest/pipeline") if "neardup" in p)
        except urllib.error.HTTPError:  # (osmem has no ingest pipelines)
            return []

    indices = sorted(
        x["index"]
        for x in request(url, "GET", "/_cat/indices?format=json&h=index&expand_wildcards=all")
        if not x["index"].startswith(".")
    )
    return {
        "mappings": {n: request(url, "GET", f"/{n}/_mapping") for n in names},
        "settings": {
            n: {k: v for k, v in s["settings"]["index"].items() if k not in ("uuid",)}
            for n, s in request(url, "GET", f"/{','.join(names)}/_settings").items()
        },
        "indices": indices,
        "templates": neardup_templates(url),
        "pipelines": pipelines(),
    }


def _refused_untouched(url: str, target: str, members: list[str], wanted: str) -> None:
    before = _state(url, members)
    counts = {m: count(url, m) for m in members}
    line = one_line(run("attach", target, "-e", url, "--text-field", "body", "-q"))
    assert wanted in line, line
    assert _state(url, members) == before
    assert {m: count(url, m) for m in members} == counts


def test_attach_refuses_an_alias_over_several_indices_and_changes_nothing(osmem_clone):
    url = osmem_clone.url
    _articles(url, "old")
    _articles(url, "new")
    request(
        url,
        "POST",
        "/_aliases",
        {
            "actions": [
                {"add": {"index": "old", "alias": "articles"}},
                {"add": {"index": "new", "alias": "articles", "is_write_index": True}},
            ]
        },
    )
    _refused_untouched(url, "articles", ["old", "new"], "alias over 2 indices (new, old)")
    one = run("attach", "old", "-e", url, "--text-field", "body", "-q", "--json")
    assert one.exit_code == 0, one.output  # each member by its own name
    assert json.loads(one.stdout)["signed"] == 3 and count(url, "old") == 3


def test_attach_through_an_alias_over_one_index_signs_in_place(osmem_clone):
    url = osmem_clone.url
    _articles(url, "only")
    request(url, "POST", "/_aliases", {"actions": [{"add": {"index": "only", "alias": "al"}}]})
    r = run("attach", "al", "-e", url, "--text-field", "body", "-q", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["signed"] == 3 and count(url, "only") == 3
    src = request(url, "GET", "/only/_doc/only-1")["_source"]
    assert src["headline"] == "only 1" and src["neardup"]["id"] == "only-1"


@pytest.mark.parametrize(
    "kind,body,wanted",
    [
        ("source", {"mappings": {"_source": {"enabled": False}}}, "has _source disabled"),
        (
            "excludes",
            {"mappings": {"_source": {"excludes": ["bo*"]}}},
            "leaves body out of _source",
        ),
        (
            "excludes",
            {"mappings": {"_source": {"excludes": ["neardup.keys"]}}},
            "leaves neardup.keys.exact out of _source ('neardup.keys')",
        ),
        ("write block", {"settings": {"index.blocks.write": True}}, "index.blocks.write"),
        (
            "field limit",
            {"settings": {"index.mapping.total_fields.limit": 20}},
            "over its index.mapping.total_fields.limit of 20",
        ),
        ("closed", {}, "is closed: open it (POST art/_open)"),
        ("users clusters index", {}, "index art-clusters exists and was not created by neardup"),
        ("users state index", {}, "index art-neardup-state exists and was not created"),
    ],
)
def test_attach_refuses_what_it_cannot_serve_and_changes_nothing(osmem_clone, kind, body, wanted):
    url = osmem_clone.url
    mappings = {"body": {"type": "text"}, "headline": {"type": "text"}}
    mine = body.get("mappings") or {}
    request(url, "PUT", "/art", {"mappings": {**mine, "properties": mappings}})
    for i in range(3):
        request(url, "PUT", f"/art/_doc/a{i}?refresh=true", {"body": good_text(i)})
    if body.get("settings"):
        request(url, "PUT", "/art/_settings", body["settings"])
    members = ["art"]
    if kind == "closed":
        request(url, "POST", "/art/_close")
        before = _state(url, members)
        line = one_line(run("attach", "art", "-e", url, "--text-field", "body", "-q"))
        assert wanted in line and _state(url, members) == before, line
        request(url, "POST", "/art/_open")
        return
    if kind.startswith("users"):
        _users_index(url, "art-clusters" if "clusters" in kind else "art-neardup-state")
    try:
        _refused_untouched(url, "art", members, wanted)
    finally:
        if kind == "write block":
            request(url, "PUT", "/art/_settings", {"index.blocks.write": None})


def test_attach_counts_fields_as_the_engine_does(osmem_clone):
    """A limit of exactly the fields the index and neardup map together is enough: the count
    attach checks before changing anything is the engine's own."""
    from neardup.config import Config
    from neardup.engines.elastic import templates
    from neardup.engines.elastic.attach_checks import count_fields
    from neardup.engines.elastic.layout import ROOT

    url = osmem_clone.url
    props = {
        "body": {"type": "text", "fields": {"raw": {"type": "keyword"}}},
        "meta": {"properties": {"a": {"type": "long"}, "b": {"type": "keyword"}}},
    }
    adds = count_fields({ROOT: templates.neardup_mapping(Config().signatures)})
    exact = count_fields(props) + adds
    for name, limit in (("tight", exact - 1), ("exact", exact)):
        request(
            url,
            "PUT",
            f"/{name}",
            {
                "settings": {"index.mapping.total_fields.limit": limit},
                "mappings": {"properties": props},
            },
        )
        request(url, "PUT", f"/{name}/_doc/1?refresh=true", {"body": good_text(1)})
    line = one_line(run("attach", "tight", "-e", url, "--text-field", "body", "-q"))
    assert f"over its index.mapping.total_fields.limit of {exact - 1}" in line, line
    r = run("attach", "exact", "-e", url, "--text-field", "body", "-q", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["signed"] == 1


def test_a_document_the_index_holds_is_updated_never_made_again(osmem_clone):
    """Signing a document the adopted index holds is an update of that document alone (no
    ``upsert``): one removed after attach read it is refused, never made again from its text;
    a document the index did not hold (``neardup index`` into an adopted index) is created."""
    from neardup.config import Config
    from neardup.engines.elastic import ElasticEngine, dsl
    from neardup.engines.elastic.layout import Layout
    from neardup.signing.records import Document
    from neardup.signing.signer import Signer

    url = osmem_clone.url
    _articles(url, "art", n=2)
    eng = ElasticEngine.from_options(url, "art", pipeline=False)
    cfg = eng.attach(Layout(text="body", title="headline"))
    try:
        signed = [Signer(cfg).sign(d) for d in eng.unsigned_documents()]
        held = dsl.index_action("art", signed[0], None, 1, "t", eng.remote.layout, create=False)
        assert held["_op_type"] == "update" and "upsert" not in held
        request(url, "DELETE", "/art/_doc/art-1?refresh=true")  # removed after it was read
        new = Signer(Config()).sign(Document("fresh", good_text(9), title="fresh one"))
        refused = eng.put([*signed, new])
        assert [f.id for f in refused] == ["art-1"] and "404" in refused[0].reason, refused
        src = request(url, "GET", "/art/_doc/fresh")["_source"]
        assert src["body"] == good_text(9) and src["headline"] == "fresh one"
        assert request(url, "GET", "/art/_doc/art-0")["_source"]["headline"] == "art 0"
        assert count(url, "art") == 2  # art-0 and fresh: art-1 stays removed
    finally:
        eng.close()
