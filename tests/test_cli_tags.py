"""The tag commands on the command line: re-running, show, export, delete, clusters; and two
index processes on one index at once."""

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from neardup.cli import main

from .corpora import SAMPLE


def run(*args, ok=True):
    res = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    if ok:
        assert res.exit_code == 0, res.output
    return res


def tags(db):
    recs = [json.loads(line) for line in run("export", "-e", db, "-q").stdout.splitlines()]
    return {
        r["id"]: (r["neardup"]["cluster_id"], r["neardup"]["dup_of"], r["neardup"]["resemblance"])
        for r in recs
    }


@pytest.fixture()
def db(tmp_path):
    db = tmp_path / "sample.db"
    run("index", SAMPLE, "-e", db, "-q")
    return db


def test_rerun_changes_no_tag_and_clusters_are_the_tags(db):
    first = tags(db)
    out = json.loads(run("index", SAMPLE, "-e", db, "--json").stdout)
    assert out["indexed"] == 0 and out["unchanged"] == len(first) and out["retagged"] == 0
    assert tags(db) == first
    clusters = json.loads(run("clusters", "-e", db, "--json").stdout)
    by_tags: dict[str, set] = {}
    for i, (cid, _, _) in first.items():
        by_tags.setdefault(cid, set()).add(i)
    assert sorted(sorted(c["members"]) for c in clusters) == sorted(
        sorted(g) for g in by_tags.values() if len(g) > 1
    )
    for (
        c
    ) in clusters:  # every member resembles its representative at >= t: check a few with compare
        for m in c["members"][1:2]:
            cmp = json.loads(
                run("compare", "--ids", m, c["representative_id"], "-e", db, "--json").output
            )
            assert cmp["resemblance"] >= 0.8


def test_export_unique_is_one_document_per_cluster(db, tmp_path):
    out = tmp_path / "unique.jsonl"
    run("export", "--unique", "-o", out, "-e", db, "-q")
    unique = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    t = tags(db)
    assert sorted(r["id"] for r in unique) == sorted({cid for cid, _, _ in t.values()})
    assert all(r["neardup"]["dup_of"] is None and r["text"] for r in unique)
    dups = [
        json.loads(line)
        for line in run("export", "--duplicates", "-e", db, "-q").output.splitlines()
    ]
    assert len(dups) + len(unique) == len(t) and all(
        r["neardup"]["resemblance"] >= 0.8 for r in dups
    )


def test_show_and_delete_a_representative(db):
    t = tags(db)
    rep = next(cid for i, (cid, dup, _) in t.items() if dup is not None)
    shown = json.loads(run("show", rep, "-e", db, "--json").stdout)
    members = [m["id"] for m in shown["members"]]
    assert shown["representative"] == rep and members and all(t[m][1] == rep for m in members)
    member = json.loads(run("show", members[0], "-e", db, "--json").stdout)
    assert member["dup_of"] == rep and member["resemblance"] >= 0.8
    r = run("delete", rep, "missing-id", "-e", db, "--json", ok=False)
    assert (
        r.exit_code == 1 and "1 id(s) not in" in r.stderr and "'missing-id'" in r.stderr
    )  # the others deleted all the same
    out = json.loads(r.stdout)
    assert (
        out["deleted"] == [rep]
        and out["missing"] == ["missing-id"]
        and members[0] in out["retagged"]
    )
    after = tags(db)
    assert rep not in after and all(after[m][0] != rep for m in members)
    assert run("show", rep, "-e", db, ok=False).exit_code == 1


def test_clusters_below_the_index_threshold_say_what_may_be_missed(db):
    res = CliRunner().invoke(main, ["clusters", "-e", str(db), "-t", "0.6", "--json"])
    assert res.exit_code == 0 and "probability" in res.stderr and "may be missed" in res.stderr
    closure = json.loads(run("clusters", "-e", db, "--connected", "--json").stdout)
    rule = json.loads(run("clusters", "-e", db, "--json").stdout)
    assert sum(c["size"] for c in closure) >= sum(c["size"] for c in rule)


def test_two_index_processes_at_once_lose_nothing(tmp_path):
    db = tmp_path / "two.db"
    cmd = [
        sys.executable,
        "-m",
        "neardup.cli",
        "index",
        str(SAMPLE),
        "-e",
        str(db),
        "--batch-size",
        "20",
        "-q",
        "--json",
    ]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    reports = [json.loads(o) for o, _ in outs]
    n = sum(1 for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip())
    assert reports[0]["documents"] == reports[1]["documents"] == n
    assert (
        reports[0]["indexed"] + reports[1]["indexed"] == n
    )  # every document stored once, by one of them
    ref = tmp_path / "ref.db"
    run("index", SAMPLE, "-e", ref, "-q")
    got, want = tags(db), tags(ref)
    # batches interleave, so arrival order may differ from the file's; the rule still holds
    joined = [(dup, r) for _cid, dup, r in got.values() if dup is not None]
    assert joined  # (the sample has duplicates)
    for dup, r in joined:
        assert got[dup][1] is None and r >= 0.8  # joined a representative, at >= t
    assert len(got) == len(want)


def test_query_reads_standard_input_and_files_with_a_bom(db, tmp_path):
    first = json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[0])
    by_id = json.loads(run("query", "--id", first["id"], "-e", db, "--json", "-t", "0.5").stdout)
    res = CliRunner().invoke(
        main, ["query", "--file", "-", "-e", str(db), "--json", "-t", "0.5"], input=first["text"]
    )
    assert res.exit_code == 0, res.output
    from_stdin = json.loads(res.stdout)
    assert [m["id"] for m in from_stdin if m["id"] != first["id"]] == [m["id"] for m in by_id]
    bom = tmp_path / "q.txt"
    bom.write_bytes(b"\xef\xbb\xbf" + first["text"].replace("\n", "\r\n").encode("utf-8"))
    from_file = json.loads(run("query", "--file", bom, "-e", db, "--json", "-t", "0.5").stdout)
    assert [(m["id"], m["resemblance"]) for m in from_file] == [
        (m["id"], m["resemblance"]) for m in from_stdin
    ]
