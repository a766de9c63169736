"""``neardup init`` and ``neardup retag`` over HTTP (osmem) and on the embedded engine."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from neardup.cli import main

pytestmark = pytest.mark.http


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_init_is_idempotent_and_refuses_other_settings(osmem_clone):
    url = osmem_clone.url
    r = _run("init", "--engine", url, "--index", "news", "--no-pipeline", "-t", "0.7", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["server"].startswith("opensearch") and data["documents"] == 0
    assert any("documents index news created" in a for a in data["actions"])
    assert any("news-clusters created" in a for a in data["actions"])
    again = _run("init", "--engine", url, "--index", "news")
    assert again.exit_code == 0 and "kept" in again.output and "ready: 0 documents" in again.output
    other = _run("init", "--engine", url, "--index", "news", "-t", "0.9")
    assert other.exit_code == 1 and "threshold" in other.output


def test_init_index_retag_over_http(osmem_clone, tmp_path):
    url = osmem_clone.url
    text = "the committee published its annual report on river water quality across the northern provinces today"
    src = tmp_path / "docs.jsonl"
    src.write_text("\n".join(json.dumps(d) for d in [
        {"id": "a", "text": text}, {"id": "b", "text": text + " again"}, {"id": "c", "text": "an unrelated note about trains"}]))
    assert _run("init", "--engine", url, "--index", "docs", "--no-pipeline").exit_code == 0
    r = _run("index", str(src), "--engine", url, "--index", "docs", "--no-tag", "-q")
    assert r.exit_code == 0, r.output
    r = _run("retag", "--engine", url, "--index", "docs", "--json", "-q")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output) == {"index": f"{url}/docs", "documents": 3, "duplicates": 1}


def test_info_counts_documents_another_client_wrote(osmem_clone, tmp_path):
    import urllib.request

    url = osmem_clone.url
    src = tmp_path / "docs.jsonl"
    src.write_text(json.dumps({"id": "a", "text": "the committee published its annual report on river water quality"}))
    assert _run("init", "--engine", url, "--index", "docs", "--no-pipeline").exit_code == 0
    assert _run("index", str(src), "--engine", url, "--index", "docs", "-q").exit_code == 0
    req = urllib.request.Request(f"{url}/docs/_doc/raw?refresh=true", json.dumps({"body": "written without neardup"}).encode(),
                                 method="PUT", headers={"content-type": "application/json"})
    assert urllib.request.urlopen(req).status in (200, 201)
    info = json.loads(_run("info", "--engine", url, "--index", "docs", "--json").output)
    assert info["documents"] == 1 and info["unsigned"] == 1
    out = _run("info", "--engine", url, "--index", "docs").output
    assert "1 more without neardup's fields" in out and "written by another client" in out
    db = tmp_path / "x.db"
    assert _run("index", str(src), "--engine", str(db), "-q").exit_code == 0
    local = json.loads(_run("info", "--engine", str(db), "--json").output)
    assert local["documents"] == 1 and "unsigned" not in local  # an embedded index has no other writers' documents
    assert "without neardup's fields" not in _run("info", "--engine", str(db)).output


def test_retag_embedded_and_missing_index(tmp_path):
    db = tmp_path / "x.db"
    assert _run("init", "--engine", str(db)).exit_code == 0
    r = _run("retag", "--engine", str(db), "--json", "-q")
    assert r.exit_code == 0 and json.loads(r.output)["documents"] == 0
    missing = _run("retag", "--engine", str(tmp_path / "absent.db"))
    assert missing.exit_code == 1 and "no such neardup index" in missing.output
