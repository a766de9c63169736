"""The command line: the main job on the bundled sample, and bad input."""

import json

import pytest
from click.testing import CliRunner

from neardup.cli import main

from .corpora import SAMPLE


def run(*args, ok=True):
    res = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    if ok:
        assert res.exit_code == 0, res.output
    return res


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("cli") / "sample.db"
    out = json.loads(run("index", SAMPLE, "-e", db, "--json").stdout)
    assert out["indexed"] == out["documents"] > 100 and out["duplicates"] > 10
    return db


def test_choices_come_from_the_config():
    import click

    from neardup.cli.options import LANGUAGE
    from neardup.config import CHOICES

    ctx = click.Context(main)
    offered = {
        (cmd, p.name): tuple(p.type.choices)
        for cmd in ("index", "query", "init")
        for p in main.get_command(ctx, cmd).params
        if isinstance(p.type, click.Choice)
    }
    settings = {
        ("minhash_scheme", CHOICES["minhash_scheme"]),
        ("stem", CHOICES["stem"]),
        ("fa_segmentation", CHOICES["fa_segmentation"]),
    }
    assert offered == {
        (cmd, name): choices for cmd in ("index", "init") for name, choices in settings
    }
    assert all(
        p.type is LANGUAGE
        for cmd in ("index", "query", "init", "compare")
        for p in main.get_command(ctx, cmd).params
        if p.name == "lang"
    )
    bad = run("index", SAMPLE, "-e", ":memory:", "--stem", "porter", ok=False)
    assert bad.exit_code == 2 and "'porter' is not one of 'none', 'snowball', 'lemma'" in bad.output


def test_help_teaches():
    out = run("--help").output
    for cmd in ("index", "query", "compare", "clusters", "search"):
        assert cmd in out
    assert "Examples" in run("index", "--help").output


def test_clusters_of_the_sample_in_json_and_csv(sample_db):
    cl = json.loads(run("clusters", "-e", sample_db, "--json").stdout)
    assert len(cl) >= 10 and {"en", "fa", "ru"} <= {lang for c in cl for lang in c["languages"]}
    assert all(
        c["size"] == len(c["members"]) >= 2
        and 0.8 <= c["min_resemblance"] <= c["mean_resemblance"] <= 1.0
        for c in cl
    )
    csv_out = run("clusters", "-e", sample_db, "--csv").output.splitlines()
    assert csv_out[0].startswith("cluster_id,size") and len(csv_out) == len(cl) + 1
    assert "clusters" in run("clusters", "-e", sample_db).output


def test_the_first_containment_query_says_it_adds_the_samples_when_many_are_behind(
    tmp_path, monkeypatch
):
    from neardup.engines.embedded.postings import Postings

    monkeypatch.setattr(Postings, "samples_chunk", 10)
    db = tmp_path / "x.db"
    run("index", SAMPLE, "-e", db, "-q")
    some = json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[0])["id"]
    first = CliRunner().invoke(main, ["query", "--id", some, "--containment", "-e", str(db)])
    assert first.exit_code == 0, first.output
    assert (
        "containment samples to the postings" in first.stderr
        and "first containment query" in first.stderr
    )
    again = CliRunner().invoke(main, ["query", "--id", some, "--containment", "-e", str(db)])
    assert again.exit_code == 0 and "containment samples" not in again.stderr


def test_index_search_ready_leaves_nothing_for_the_first_search(tmp_path):
    from neardup.engines.embedded import EmbeddedEngine

    db = tmp_path / "x.db"
    run("index", SAMPLE, "-e", db, "-q", "--search-ready")
    e = EmbeddedEngine(str(db))
    e.open(create=False)
    try:
        assert e.count() > 0
        assert e.fulltext_index.fulltext_behind() == e.postings.samples_behind() == 0
    finally:
        e.close()


def test_query_compare_search_info(sample_db):
    cl = json.loads(run("clusters", "-e", sample_db, "--json").stdout)
    a = cl[0]["members"][0]
    q = json.loads(run("query", "--id", a, "-e", sample_db, "--json").stdout)
    assert (
        q
        and {m["id"] for m in q} <= set(cl[0]["members"])
        and all(m["resemblance"] >= 0.8 for m in q)
    )
    b = q[0]["id"]
    cmp = json.loads(run("compare", "--ids", a, b, "-e", sample_db, "--json").stdout)
    assert cmp["resemblance"] >= 0.8 and cmp["shared_shingles"]
    news = next(
        c
        for c in cl
        if c["representative_id"].startswith("en-reuters") and c["min_resemblance"] == 1.0
    )
    texts = {
        r["id"]: r["text"].lower()
        for r in map(json.loads, SAMPLE.read_text(encoding="utf-8").splitlines())
    }
    common = set.intersection(*(set(texts[m].split()) for m in news["members"]))
    words = " ".join(sorted((w for w in common if w.isalpha()), key=lambda w: (-len(w), w))[:3])
    plain = json.loads(run("search", words, "-e", sample_db, "--json", "-n", "20").stdout)
    assert set(news["members"]) <= {h["id"] for h in plain}
    hits = json.loads(
        run("search", words, "-e", sample_db, "--dedupe", "--json", "-n", "20").stdout
    )
    head = [h for h in hits if h["id"] in news["members"]]
    assert len(head) == 1 and head[0]["folded_count"] == news["size"] - 1
    assert json.loads(run("info", "-e", sample_db, "--json").stdout)["documents"] > 100


def test_compare_files(tmp_path, sample_db):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("apple banana cherry damson elder fig grape hazel iris juniper", encoding="utf-8")
    b.write_text("apple banana cherry damson elder fig grape hazel iris kiwi", encoding="utf-8")
    out = run("compare", a, b, "-e", sample_db).output
    assert "resemblance" in out and "0.7143" in out  # 5 of 7 distinct 5-shingles


def test_compare_shows_persian_passages_as_written(tmp_path, sample_db):
    from .corpora import FA_ZWNJ_SAMPLE

    text = json.loads(FA_ZWNJ_SAMPLE.read_text(encoding="utf-8").splitlines()[0])["text"]
    # the copy: ZWNJ left out, Arabic yeh and kaf, and one sentence replaced
    changed = "در چنین زمان کوتاهی این کار غیرممکن است."
    assert changed in text
    copy = text.replace(changed, "مربی تیم این ادعا را رد کرد و گفت که هیچ مدرکی وجود ندارد.")
    copy = copy.replace("\u200c", "").replace("ی", "ي").replace("ک", "ك")
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(text, encoding="utf-8")
    b.write_text(copy, encoding="utf-8")
    data = json.loads(run("compare", a, b, "-e", sample_db, "--json").stdout)
    assert data["shared_shingles"] and len(data["shared_passages"]) == 2
    flat = " ".join(text.split())
    assert all(p in flat for p in data["shared_passages"])  # A's own text, as written
    assert changed not in " ".join(data["shared_passages"])
    out = run("compare", a, b, "-e", sample_db).output
    assert "shared passages of" in out and "زلاتان در 23 سالگی" in out and "می\u200cزد" in out
    assert not any(s in out for s in data["shared_shingles"])  # no canonical anchor pieces


def test_bad_json_line_names_file_and_line_and_keeps_earlier_docs(tmp_path):
    f = tmp_path / "in.jsonl"
    good = [
        json.dumps({"id": f"g{i}", "text": f"good document number {i} with enough words"})
        for i in range(3)
    ]
    f.write_text(
        "\n".join(good + ["{not json", json.dumps({"id": "late", "text": "after the bad line"})])
        + "\n",
        encoding="utf-8",
    )
    db = tmp_path / "x.db"
    res = run("index", f, "-e", db, ok=False)
    assert res.exit_code == 1 and f"{f}:4" in res.output and "not JSON" in res.output
    assert json.loads(run("info", "-e", db, "--json").stdout)["documents"] == 3
    res = run("index", f, "-e", db, "--skip-bad", "--json")
    out = json.loads(res.stdout)
    assert out["skipped"] == 1 and out["documents"] == 4


@pytest.mark.parametrize(
    "line,problem",
    [
        ({"id": "x"}, "no 'text' field"),
        ({"id": "x", "text": "   \n "}, "empty or whitespace-only text"),
        ({"id": "x", "text": "hello", "lang": "english"}, "unknown language code 'english'"),
        ({"id": "x", "text": 5}, "'text' must be a string"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_bad_records(tmp_path, line, problem):
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps(line) + "\n", encoding="utf-8")
    res = run("index", f, "-e", tmp_path / "x.db", ok=False)
    assert res.exit_code == 1 and problem in res.output and f"{f}:1" in res.output


def test_invalid_utf8_and_binary_files(tmp_path):
    (tmp_path / "bad.txt").write_bytes(b"caf\xe9 au lait")
    (tmp_path / "bin.txt").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "ok.txt").write_text(
        "a perfectly fine plain text file with words", encoding="utf-8"
    )
    res = run("index", tmp_path, "-e", tmp_path / "x.db", "--skip-bad", "--json")
    out = json.loads(res.stdout)
    assert out["indexed"] == 1 and out["skipped"] == 2
    assert any("not valid UTF-8" in s for s in out["skipped_records"]) and any(
        "binary" in s for s in out["skipped_records"]
    )


def test_duplicate_ids_are_upserted(tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_text(
        "\n".join(json.dumps({"id": "same", "text": f"version {i} of the text"}) for i in range(3))
        + "\n",
        encoding="utf-8",
    )
    out = json.loads(run("index", f, "-e", tmp_path / "x.db", "--json").stdout)
    assert out["documents"] == 1


def test_a_ten_megabyte_document(tmp_path):
    words = " ".join(f"w{i % 50000}" for i in range(1_600_000))
    assert len(words) > 10_000_000
    f = tmp_path / "big.jsonl"
    f.write_text(json.dumps({"id": "big", "text": words}) + "\n", encoding="utf-8")
    out = json.loads(run("index", f, "-e", tmp_path / "x.db", "--json").stdout)
    assert out["indexed"] == 1


def test_index_built_with_other_settings_is_refused(tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_text(
        json.dumps({"id": "a", "text": "some words here for the index"}) + "\n", encoding="utf-8"
    )
    db = tmp_path / "x.db"
    run("index", f, "-e", db, "--threshold", "0.7")
    res = run("index", f, "-e", db, "--threshold", "0.9", ok=False)
    assert res.exit_code == 1 and "other settings" in res.output and "threshold" in res.output
    run("index", f, "-e", db)  # no settings given: the stored ones are used


def test_not_an_index(tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_text("definitely not sqlite")
    res = run("clusters", "-e", junk, ok=False)
    assert res.exit_code == 1 and "not a neardup index" in res.output
