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
    assert json.loads(again.output[again.output.index("[") :]) is not None
