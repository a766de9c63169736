"""``neardup init`` and ``neardup retag`` over HTTP (osmem) and on the embedded engine."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from neardup.cli import main

from .conftest import CORPORA, http_pipeline

pytestmark = pytest.mark.http


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_init_is_idempotent_and_refuses_other_settings(osmem_clone):
    url = osmem_clone.url
    r = _run("init", "--engine", url, "--index", "news", "--no-pipeline", "-t", "0.7", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["server"].startswith("opensearch") and data["documents"] == 0
    assert any("documents index news created" in a for a in data["actions"])
    assert any("news-clusters created" in a for a in data["actions"])
    again = _run("init", "--engine", url, "--index", "news")
    assert again.exit_code == 0 and "kept" in again.output and "ready: 0 documents" in again.output
    other = _run("init", "--engine", url, "--index", "news", "-t", "0.9")
    assert other.exit_code == 1 and "threshold" in other.output


def test_init_index_retag_over_http(osmem_clone, tmp_path):
    url = osmem_clone.url
    text = (
        "the committee published its annual report on river water quality across the northern "
        "provinces today"
    )
    src = tmp_path / "docs.jsonl"
    src.write_text(
        "\n".join(
            json.dumps(d)
            for d in [
                {"id": "a", "text": text},
                {"id": "b", "text": text + " again"},
                {"id": "c", "text": "an unrelated note about trains"},
            ]
        )
    )
    assert _run("init", "--engine", url, "--index", "docs", "--no-pipeline").exit_code == 0
    r = _run("index", str(src), "--engine", url, "--index", "docs", "--no-tag", "-q")
    assert r.exit_code == 0, r.output
    r = _run("retag", "--engine", url, "--index", "docs", "--json", "-q")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == {"index": f"{url}/docs", "documents": 3, "duplicates": 1}


def test_info_counts_documents_another_client_wrote(osmem_clone, tmp_path):
    import urllib.request

    url = osmem_clone.url
    src = tmp_path / "docs.jsonl"
    src.write_text(
        json.dumps(
            {"id": "a", "text": "the committee published its annual report on river water quality"}
        )
    )
    assert _run("init", "--engine", url, "--index", "docs", "--no-pipeline").exit_code == 0
    assert _run("index", str(src), "--engine", url, "--index", "docs", "-q").exit_code == 0
    req = urllib.request.Request(
        f"{url}/docs/_doc/raw?refresh=true",
        json.dumps({"body": "written without neardup"}).encode(),
        method="PUT",
        headers={"content-type": "application/json"},
    )
    assert urllib.request.urlopen(req).status in (200, 201)
    info = json.loads(_run("info", "--engine", url, "--index", "docs", "--json").stdout)
    assert info["documents"] == 1 and info["unsigned"] == 1
    out = _run("info", "--engine", url, "--index", "docs").output
    assert "1 more without neardup's fields" in out and "written by another client" in out
    db = tmp_path / "x.db"
    assert _run("index", str(src), "--engine", str(db), "-q").exit_code == 0
    local = json.loads(_run("info", "--engine", str(db), "--json").stdout)
    assert (
        local["documents"] == 1 and "unsigned" not in local
    )  # an embedded index has no other writers' documents
    assert "without neardup's fields" not in _run("info", "--engine", str(db)).output


def test_retag_embedded_and_missing_index(tmp_path):
    db = tmp_path / "x.db"
    assert _run("init", "--engine", str(db)).exit_code == 0
    r = _run("retag", "--engine", str(db), "--json", "-q")
    assert r.exit_code == 0 and json.loads(r.stdout)["documents"] == 0
    missing = _run("retag", "--engine", str(tmp_path / "absent.db"))
    assert missing.exit_code == 1 and "no such neardup index" in missing.output


def _real_text_corpus(n: int = 30) -> list[dict]:
    """Persian, English and Russian texts from the shared corpora with their near copies: the
    paraphrase pairs' two sides, and each Russian text again with its last word dropped."""
    docs: list[dict] = []
    for lang in ("fa", "en"):
        with (CORPORA / f"{lang}_pairs.jsonl").open(encoding="utf-8") as f:
            for line in list(f)[:n]:
                p = json.loads(line)
                docs += [
                    {"id": f"{p['id']}-1", "text": p["text1"], "lang": lang},
                    {"id": f"{p['id']}-2", "text": p["text2"], "lang": lang},
                ]
    with (CORPORA / "ru.jsonl").open(encoding="utf-8") as f:
        for line in list(f)[:n]:
            r = json.loads(line)
            text = " ".join(r["text"].split()[:80])
            docs += [
                {"id": r["id"], "text": text, "lang": "ru"},
                {"id": r["id"] + "-copy", "text": text.rsplit(" ", 1)[0], "lang": "ru"},
            ]
    return docs


@pytest.mark.skipif(
    not (CORPORA / "ru.jsonl").exists(), reason="the shared corpora are not beside the repository"
)
def test_cli_answers_equal_the_embedded_engines_on_real_text(osmem_clone, tmp_path):
    """The same corpus through the CLI on the embedded engine and over HTTP (with neardup's
    ingest pipeline on a real engine): the same export (tags), clusters, query hits with the
    same exact resemblance, and search --dedupe folds the same copies."""
    url = osmem_clone.url
    src = tmp_path / "docs.jsonl"
    docs = _real_text_corpus()
    src.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in docs), encoding="utf-8")
    db = str(tmp_path / "e.db")
    assert (
        _run(
            "init",
            "--engine",
            url,
            "--index",
            "real",
            *([] if http_pipeline() else ["--no-pipeline"]),
        ).exit_code
        == 0
    )
    targets = {"embedded": ["--engine", db], "http": ["--engine", url, "--index", "real"]}
    for t in targets.values():
        r = _run("index", str(src), *t, "--batch-size", "16", "-q")
        assert r.exit_code == 0, r.output

    def both(*args: str) -> list:
        out = []
        for t in targets.values():
            r = _run(*args, *t)
            assert r.exit_code == 0, r.output
            out.append(r.stdout)  # notes go to stderr
        return out

    exported = []
    for name, t in targets.items():
        out = tmp_path / f"{name}.jsonl"
        assert _run("export", *t, "-o", str(out)).exit_code == 0
        exported.append([json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()])
    rows = exported[0]
    assert len(rows) == len(docs) and sum(r["neardup"]["is_duplicate"] for r in rows) >= 20
    assert exported[1] == rows
    emb, http = both("clusters", "--json")

    def untimed(out: str) -> list:  # first_seen / last_seen: each engine's clock at indexing
        return [
            {k: v for k, v in c.items() if k not in ("first_seen", "last_seen")}
            for c in json.loads(out)
        ]

    assert untimed(http) == untimed(emb) and untimed(emb)
    for d in docs[::7]:
        emb, http = both("query", "--id", d["id"], "--json", "-k", "10")
        assert json.loads(http) == json.loads(emb)
    if (
        not http_pipeline()
    ):  # osmem ignores the language analyzers and answers 'президент' with English texts
        return
    for q in ("президент", "the", "زندگی"):
        emb, http = both("search", q, "--dedupe", "--json", "--size", "200")

        def folded(
            out: str,
        ) -> list:  # the groups folded together (which copy leads is the engine's scoring)
            hits = json.loads(out)
            hits = hits["hits"] if isinstance(hits, dict) else hits
            return sorted(sorted([h["id"], *(h.get("folded") or [])]) for h in hits)

        assert folded(http) == folded(emb) and folded(emb)


def test_init_gives_a_new_index_its_shards_and_replicas(osmem_clone, tmp_path):
    import urllib.request

    url = osmem_clone.url
    r = _run(
        "init",
        "--engine",
        url,
        "--index",
        "sharded",
        "--shards",
        "2",
        "--replicas",
        "0",
        *([] if http_pipeline() else ["--no-pipeline"]),
    )
    assert r.exit_code == 0, r.output
    with urllib.request.urlopen(f"{url}/sharded/_settings") as resp:
        index = json.loads(resp.read())["sharded"]["settings"]["index"]
    assert (str(index["number_of_shards"]), str(index["number_of_replicas"])) == ("2", "0")
    r = _run("init", "--engine", str(tmp_path / "x.db"), "--shards", "2")
    assert (
        r.exit_code == 1
        and "--shards and --replicas are for an Elasticsearch/OpenSearch index" in r.output
    )
