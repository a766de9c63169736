"""A user's first day: commands that say what they wait for, ids that do not depend on how a
path was typed, files as they are (fields, CSV, Parquet, encodings), the one-command dedup,
and the same names and exit codes everywhere."""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner

from neardup.cli import main
from neardup.cli.session import slow_notice

from .corpora import SAMPLE

RIVER = "the river flows past the old mill and the bridge into the quiet valley below the hills"
BREAD = "a recipe for bread needs flour water salt and a little patience in the early morning"


def run(*args, ok=True, input=None):
    res = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, input=input)
    if ok:
        assert res.exit_code == 0, res.output
    return res


# -- saying what a slow step does ---------------------------------------------------------------
def test_a_slow_step_says_what_it_does_when_it_starts_to_take_long_and_when_it_ends(capsys):
    with slow_notice("compiling things", after=0.05):
        time.sleep(0.3)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "compiling things ..."
    assert err[1].startswith("compiling things: done in ") and err[1].endswith(" s")


def test_progress_off_a_terminal_says_when_it_starts_and_ends(tmp_path):
    r = run("index", SAMPLE, "-e", tmp_path / "x.db")  # (the test runner's stderr is no terminal)
    lines = r.stderr.splitlines()
    assert "indexing ..." in lines and any(x.startswith("indexing: done in ") for x in lines)
    assert "indexing" not in run("index", SAMPLE, "-e", tmp_path / "y.db", "--json").stderr


def test_index_without_a_bar_to_draw_loads_no_progress_bar(tmp_path):
    """``index --quiet`` (or off a terminal) draws no bar: the progress bar's library is not
    loaded before the first batch (a fresh process: what it imports is its own)."""
    import subprocess
    import sys

    code = (
        "import sys; from neardup.cli import main; "
        f"main.main(args=['index', {str(SAMPLE)!r}, '-e', {str(tmp_path / 'x.db')!r}, '-q'], "
        "standalone_mode=False); print('rich.progress' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "False"


def test_a_quick_step_prints_nothing(capsys):
    with slow_notice("compiling things", after=0.5):
        pass
    assert capsys.readouterr().err == ""


# -- ids that do not depend on how a path was typed ---------------------------------------------
def _corpus(root):
    (root / "sub").mkdir(parents=True)
    texts = {
        "a.txt": RIVER,
        "b.md": BREAD,
        "sub/c.txt": "the football team won the match after a long and tiring season of hard games",
    }
    for name, text in texts.items():
        (root / name).write_text(text, encoding="utf-8")
    return sorted(texts)


def test_the_same_folder_typed_two_ways_stores_its_documents_once(
    engine_target, tmp_path, monkeypatch
):
    target, opts = engine_target
    e = ["-e", target] + (["--index", opts["index"]] if "index" in opts else [])
    if "index" in opts:
        run("init", *e, "--no-pipeline")  # (the test server has no ingest pipelines)
    names = _corpus(tmp_path / "corpus")
    monkeypatch.chdir(tmp_path)
    first = json.loads(run("index", "corpus/", *e, "--json").stdout)
    again = json.loads(run("index", str((tmp_path / "corpus").resolve()), *e, "--json").stdout)
    assert (
        first["indexed"] == 3
        and again["indexed"] == 0
        and again["unchanged"] == 3
        and again["documents"] == 3
    )
    assert (
        json.loads(run("index", "./corpus/sub/c.txt", *e, "--json").stdout)["documents"] == 4
    )  # a file named: its name
    exported = [json.loads(line)["id"] for line in run("export", *e, "-q").stdout.splitlines()]
    assert sorted(exported) == sorted(names + ["c.txt"])


def test_show_of_an_unknown_id_suggests_close_ones_and_fails(tmp_path):
    db = tmp_path / "x.db"
    run("index", SAMPLE, "-e", db, "-q")
    some = json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[0])["id"]
    r = run("show", some[:-1] + "#", "-e", db, ok=False)
    assert r.exit_code == 1 and "no document" in r.stderr and some in r.stderr
    r = run("show", "zzzzzzzzzzzzzzzzzzzzzzz", "-e", db, ok=False)
    assert r.exit_code == 1 and "did you mean" not in r.stderr


# -- files as they are --------------------------------------------------------------------------
RECORDS = [
    {
        "url": "u1",
        "body": RIVER,
        "headline": "River",
        "language": "en",
        "extra": "x",
    },
    {
        "url": "u2",
        "body": RIVER + " today",
        "headline": "River again",
        "language": "en",
        "extra": "y",
    },
    {
        "url": "u3",
        "body": BREAD,
        "headline": "Bread",
        "language": "en",
        "extra": "z",
    },
]
FIELDS = [
    "--text-field",
    "body",
    "--id-field",
    "url",
    "--title-field",
    "headline",
    "--lang-field",
    "language",
]


def _check_records(db):
    from neardup import NearDup

    with NearDup.open(str(db), create=False) as nd:
        got = nd.engine.get(["u1", "u2", "u3"], text=True)
        assert sorted(got) == ["u1", "u2", "u3"]
        assert (
            got["u1"].title == "River"
            and got["u1"].fields["extra"] == "x"
            and got["u3"].text.startswith("a recipe")
        )
        assert nd.show("u2").tags.dup_of == "u1"


def test_jsonl_records_with_other_field_names(tmp_path):
    src = tmp_path / "r.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    bad = run("index", src, "-e", tmp_path / "bad.db", ok=False)
    assert bad.exit_code == 1 and "no 'text' field" in bad.output and "--text-field" in bad.output
    run("index", src, "-e", tmp_path / "x.db", *FIELDS, "-q")
    _check_records(tmp_path / "x.db")


def test_csv_and_tsv_records(tmp_path):
    import csv

    for name, delim in (("r.csv", ","), ("r.tsv", "\t")):
        src = tmp_path / name
        with open(src, "w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(RECORDS[0]), delimiter=delim)
            w.writeheader()
            w.writerows(RECORDS)
        db = tmp_path / f"{name}.db"
        run("index", src, "-e", db, *FIELDS, "-q")
        _check_records(db)
    r = run("index", tmp_path / "r.csv", "-e", tmp_path / "no.db", ok=False)
    assert (
        r.exit_code == 1
        and "r.csv:1" in r.output
        and "no 'text' column" in r.output
        and "'body'" in r.output
    )


def test_csv_rows_without_id_get_file_and_row_and_bad_rows_are_named(tmp_path):
    src = tmp_path / "plain.csv"
    src.write_text(
        'text,title\n"first text, with a comma and\na line break in it for the reader",One\n'
        "second text here,\n"
        "third,with,too many\n",
        encoding="utf-8",
    )
    out = json.loads(run("index", src, "-e", tmp_path / "x.db", "--skip-bad", "--json").stdout)
    assert out["indexed"] == 2 and out["skipped_records"] == [
        f"{src}:5: row has 3 fields, the header 2"
    ]
    ids = [
        json.loads(line)["id"]
        for line in run("export", "-e", tmp_path / "x.db", "-q").output.splitlines()
    ]
    assert ids == ["plain.csv:1", "plain.csv:2"]


def test_parquet_records(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import datetime

    import pyarrow.parquet as pq

    rows = [{**r, "when": datetime.date(2024, 1, i + 1)} for i, r in enumerate(RECORDS)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "r.parquet", row_group_size=2)
    run("index", tmp_path / "r.parquet", "-e", tmp_path / "x.db", *FIELDS, "-q")
    from neardup import NearDup

    with NearDup.open(str(tmp_path / "x.db"), create=False) as nd:
        assert nd.engine.get(["u3"], text=True)["u3"].fields == {"extra": "z", "when": "2024-01-03"}
    _check_records(tmp_path / "x.db")


RUSSIAN = "Издательство выпустило новую книгу о русской истории и культуре прошлого века"


def test_a_cp1251_file_is_read_with_encoding(tmp_path):
    txt = tmp_path / "ru.txt"
    txt.write_bytes(RUSSIAN.encode("cp1251"))
    jsonl = tmp_path / "ru.jsonl"
    jsonl.write_bytes(
        (json.dumps({"id": "r", "text": RUSSIAN}, ensure_ascii=False) + "\n").encode("cp1251")
    )
    csvf = tmp_path / "ru.csv"
    csvf.write_bytes(f"id,text\nc,{RUSSIAN}\n".encode("cp1251"))
    for f in (txt, jsonl, csvf):
        r = run("index", f, "-e", tmp_path / "refused.db", ok=False)
        assert r.exit_code == 1 and "not valid UTF-8" in r.output and "--encoding" in r.output, f
    run("index", txt, jsonl, csvf, "-e", tmp_path / "x.db", "--encoding", "cp1251", "-q")
    from neardup import NearDup

    with NearDup.open(str(tmp_path / "x.db"), create=False) as nd:
        got = nd.engine.get(["ru.txt", "r", "c"], text=True)
        assert [got[i].text.strip() for i in ("ru.txt", "r", "c")] == [RUSSIAN] * 3
    r = run("index", txt, "-e", tmp_path / "y.db", "--encoding", "no-such-codec", ok=False)
    assert r.exit_code == 2 and "unknown encoding" in r.output


# -- one command: the deduplicated file ---------------------------------------------------------
def test_dedup_writes_the_representatives_and_leaves_no_index(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    tempfile.tempdir = None
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "unique.jsonl"
    summary = json.loads(run("dedup", SAMPLE, "-o", out, "--json", "-q").stdout)
    tempfile.tempdir = None
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert (
        summary["written"] == len(lines)
        and summary["read"] == 216
        and summary["dropped"] == 216 - len(lines) > 10
    )
    assert (
        summary["index"] is None
        and list((tmp_path / "tmp").iterdir()) == []
        and not (tmp_path / "neardup.db").exists()
    )
    assert all(not r["neardup"]["is_duplicate"] for r in lines)
    # the same as indexing and exporting the representatives
    run("index", SAMPLE, "-e", tmp_path / "kept.db", "-q")
    exported = [
        json.loads(x)["id"]
        for x in run("export", "--unique", "-e", tmp_path / "kept.db", "-q").output.splitlines()
    ]
    assert [r["id"] for r in lines] == exported


def test_dedup_against_a_kept_index_drops_copies_of_what_it_holds(tmp_path):
    src = tmp_path / "r.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in RECORDS[:1]), encoding="utf-8")
    run("index", src, "-e", tmp_path / "kept.db", *FIELDS, "-q")
    new = tmp_path / "new.csv"
    new.write_text(
        "url,body\n" + "\n".join(f"{r['url']}x,{r['body']}" for r in RECORDS[1:]) + "\n",
        encoding="utf-8",
    )
    summary = json.loads(
        run(
            "dedup",
            new,
            "-o",
            tmp_path / "u.jsonl",
            "-e",
            tmp_path / "kept.db",
            "--text-field",
            "body",
            "--id-field",
            "url",
            "--json",
            "-q",
        ).output
    )
    assert summary["read"] == 2 and summary["written"] == 1 and summary["index"].endswith("kept.db")
    assert [json.loads(x)["id"] for x in (tmp_path / "u.jsonl").read_text().splitlines()] == ["u3x"]


# -- the same behaviour everywhere --------------------------------------------------------------
@pytest.fixture(scope="module")
def sample_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("firstday") / "sample.db"
    run("index", SAMPLE, "-e", db, "-q")
    return db


@pytest.mark.parametrize(
    "args",
    [
        ["export"],
        ["clusters"],
        ["clusters", "--json"],
        ["clusters", "--csv"],
        ["info"],
        ["search", "the"],
        ["show", "@first"],
    ],
)
def test_a_reader_that_goes_away_ends_the_command_quietly(sample_db, args):
    import os
    import subprocess
    import sys

    first = json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[0])["id"]
    args = [first if a == "@first" else a for a in args]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    p = subprocess.Popen(
        [sys.executable, "-m", "neardup.cli", *args, "-e", str(sample_db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    p.stdout.close()  # the reader is gone before the first write
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0, err
    assert "error" not in err.lower() and "Traceback" not in err and "pipe" not in err.lower(), (
        err
    )  # (progress lines may be there)


def test_ctrl_c_during_index_says_how_to_go_on_and_exits_130(tmp_path, monkeypatch):
    from neardup.api import NearDup

    def interrupted(self, docs, **kw):
        next(iter(docs))
        raise KeyboardInterrupt

    monkeypatch.setattr(NearDup, "index", interrupted)
    r = run("index", SAMPLE, "-e", tmp_path / "x.db", "-q", ok=False)
    assert r.exit_code == 130 and "Aborted" not in r.output
    assert "interrupted (index)" in r.stderr and "run the same command again" in r.stderr


def test_delete_of_unknown_ids_names_them_and_fails(tmp_path):
    db = tmp_path / "x.db"
    run("index", SAMPLE, "-e", db, "-q")
    some = json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[0])["id"]
    r = run("delete", some, "nope-1", "nope-2", "-e", db, ok=False)
    assert r.exit_code == 1 and "2 id(s) not in" in r.stderr and "'nope-1', 'nope-2'" in r.stderr
    assert "deleted 1 document(s)" in r.stdout
    assert run("delete", "nope-3", "-e", db, ok=False).exit_code == 1


def test_query_and_compare_name_the_similarities_alike(sample_db, tmp_path):
    first = json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[0])
    a = tmp_path / "a.txt"
    a.write_text(first["text"], encoding="utf-8")
    b = tmp_path / "b.txt"
    b.write_text(
        first["text"] + " zebra quantum violin harbor marble orchard lantern", encoding="utf-8"
    )
    matches = json.loads(run("query", "--file", a, "-e", sample_db, "--json").stdout)
    pair = json.loads(run("compare", a, b, "-e", sample_db, "--json").stdout)
    similarity = {"resemblance", "containment", "containment_ba", "intersection"}
    assert similarity <= set(matches[0]) and similarity <= set(pair)
    assert pair["containment"] == 1.0 > pair["containment_ba"]  # all of a is in b


def _commands():
    import click

    ctx = click.Context(main)

    def walk(group, prefix):
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            if isinstance(cmd, click.Group):
                yield from walk(cmd, prefix + [name])
            else:
                yield prefix + [name], cmd

    return list(walk(main, []))


def test_every_command_has_json():
    assert len(_commands()) >= 17
    assert [
        " ".join(n) for n, cmd in _commands() if not any("--json" in p.opts for p in cmd.params)
    ] == []


def test_export_report_and_dashboards_export_summaries_in_json(sample_db, tmp_path):
    out = json.loads(
        run("export", "--unique", "-o", tmp_path / "u.jsonl", "-e", sample_db, "--json").stdout
    )
    assert (
        out["exported"] == len((tmp_path / "u.jsonl").read_text(encoding="utf-8").splitlines())
        and out["documents"] == 216
    )
    piped = run("export", "-e", sample_db, "--json")
    assert len(piped.stdout.splitlines()) == 216 and json.loads(piped.stderr)["exported"] == 216
    rep = json.loads(
        run("report", "-o", tmp_path / "r.html", "-e", sample_db, "--json", "-q").stdout
    )
    assert (
        rep["url"] == (tmp_path / "r.html").resolve().as_uri()
        and rep["clusters_from"] == "tags"
        and rep["documents"] == 216
    )
    dash = json.loads(run("dashboards", "export", "-o", tmp_path / "d.ndjson", "--json").stdout)
    assert (
        dash["objects"] == len((tmp_path / "d.ndjson").read_text(encoding="utf-8").splitlines())
        and dash["by_type"]["dashboard"] == 1
    )


def test_neardups_own_indices_need_no_replica_on_one_node(osmem_clone):
    """The clusters and state indices expand their replicas 0-1: a single-node cluster stays
    green."""
    import urllib.request

    url = osmem_clone.url
    run("init", "-e", url, "--index", "one", "--no-pipeline")
    for name in ("one-clusters", "one-neardup-state"):
        with urllib.request.urlopen(f"{url}/{name}/_settings") as r:
            settings = json.loads(r.read())[name]["settings"]["index"]
        assert settings.get("auto_expand_replicas") == "0-1", (name, settings)


def test_a_real_ctrl_c_during_index_exits_130_with_the_resume_hint(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    with open(tmp_path / "big.jsonl", "w", encoding="utf-8") as f:
        for k in range(600):
            for line in lines:
                rec = json.loads(line)
                f.write(json.dumps({**rec, "id": f"{k}-{rec['id']}"}, ensure_ascii=False) + "\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "neardup.cli",
            "index",
            str(tmp_path / "big.jsonl"),
            "-e",
            str(tmp_path / "x.db"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    started = time.monotonic()  # the signal once indexing runs: the index made, a moment after
    while not (tmp_path / "x.db").exists() and time.monotonic() - started < 60:
        time.sleep(0.05)
    time.sleep(1)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    if p.returncode == 0:
        pytest.skip("the run finished before the signal")
    assert p.returncode == 130, err.decode()
    assert (
        "interrupted (index)" in err.decode()
        and "Traceback" not in err.decode()
        and "Aborted" not in err.decode()
    )
