"""Storage faults are named for what they are, once: a full disk is never "not a neardup
index", read-only storage is one line (not one line per document), on both engines.

The embedded engine runs on real file systems: a tmpfs of a few megabytes (filled up) and
one remounted read-only (mounting needs root; skipped without it). The HTTP engine gets the
answers Elasticsearch and OpenSearch give for the same faults (a ``cluster_block_exception``
per bulk item: the flood-stage disk watermark's block, or ``index.blocks.write``).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess

import pytest

from .test_hardening import good_text, run, write_jsonl


@pytest.fixture
def tmpfs(tmp_path):
    """Mount a small tmpfs; yields (folder, remount) where remount(options) changes it."""
    d = tmp_path / "fs"
    d.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a file system needs root")
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(d)], capture_output=True, text=True
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")

    def remount(options: str) -> None:
        subprocess.run(["mount", "-o", f"remount,{options}", str(d)], check=True)

    try:
        yield d, remount
    finally:
        subprocess.run(["umount", "-l", str(d)], check=False)


def _records(n: int, start: int = 0, words: int = 40) -> list[dict]:
    return [
        {
            "id": f"r{i}",
            "text": good_text(i) if words == 40 else " ".join([good_text(i)] * (words // 40)),
        }
        for i in range(start, start + n)
    ]


def _fill(path) -> None:
    """Fill the file system of ``path`` to its last page."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        for size in (1 << 20, 1 << 16, 1 << 12, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)


def test_errors_are_classified_by_code_with_a_fallback_by_message():
    from neardup.engines.embedded import sqlite_failure, storage_problem

    assert sqlite_failure(sqlite3.OperationalError("database or disk is full")) == "full"
    assert sqlite_failure(sqlite3.OperationalError("disk I/O error")) == "io"
    assert (
        sqlite_failure(sqlite3.OperationalError("attempt to write a readonly database"))
        == "read-only"
    )
    assert (
        storage_problem("x.db", sqlite3.IntegrityError("UNIQUE constraint failed: docs.id")) is None
    )
    assert "read-only storage" in storage_problem(
        "x.db", sqlite3.OperationalError("attempt to write a readonly database")
    )
    # the code itself, where SQLite gives it (Python 3.11+): a real full database
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t(x)")
    db.execute("PRAGMA max_page_count=3")
    with pytest.raises(sqlite3.Error) as err:
        for _ in range(100):
            db.execute("INSERT INTO t VALUES (?)", ("x" * 4000,))
    assert sqlite_failure(err.value) == "full"
    assert "the disk is full" in storage_problem("x.db", err.value)


def _index_then_fill(tmpfs, tmp_path):
    """An index of 40 documents on the small file system, which is then filled."""
    d, _ = tmpfs
    db = d / "idx.db"
    src = write_jsonl(tmp_path / "a.jsonl", _records(40))
    assert run("index", src, "-e", db, "-q", "-j", "0").exit_code == 0
    _fill(d / "filler")
    return d, db


def test_the_index_still_reads_on_a_full_disk(tmpfs, tmp_path):
    d, db = _index_then_fill(tmpfs, tmp_path)
    info = run("info", "-e", db, "--json")
    assert info.exit_code == 0, info.output
    assert json.loads(info.stdout)["documents"] == 40


def test_a_full_disk_is_named_in_one_line_and_the_index_resumes(tmpfs, tmp_path):
    d, db = _index_then_fill(tmpfs, tmp_path)
    info = run("info", "-e", db)
    assert "not a neardup index" not in info.output, info.output  # (its exit: see above)
    more = write_jsonl(tmp_path / "b.jsonl", _records(200, 40, words=400))
    r = run("index", more, "-e", db, "-q", "-j", "0")
    assert (
        r.exit_code == 1 and "Traceback" not in r.output and "not a neardup index" not in r.output
    ), r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and ("full" in lines[0] or "I/O" in lines[0]), r.output
    os.remove(d / "filler")
    again = run("index", more, "-e", db, "-q", "-j", "0")
    assert again.exit_code == 0, again.output
    ids = json.loads(run("info", "-e", db, "--json").stdout)["documents"]
    assert ids == 240


def test_read_only_storage_is_one_line(tmpfs, tmp_path):
    d, remount = tmpfs
    db = d / "idx.db"
    src = write_jsonl(tmp_path / "a.jsonl", _records(30))
    assert run("index", src, "-e", db, "-q", "-j", "0").exit_code == 0
    remount("ro")
    try:
        info = run("info", "-e", db, "--json")
        assert info.exit_code == 0 and json.loads(info.stdout)["documents"] == 30, info.output
        more = write_jsonl(tmp_path / "b.jsonl", _records(40, 30))
        r = run("index", more, "-e", db, "-q", "-j", "0")
        assert r.exit_code == 1 and "Traceback" not in r.output and "failed" not in r.output, (
            r.output
        )
        lines = r.output.strip().splitlines()
        assert len(lines) == 1 and "read-only storage" in lines[0], r.output
        for args in (["retag"], ["delete", "r1"], ["clusters", "--write"]):
            w = run(*args, "-e", db)
            assert w.exit_code != 0 and "read-only" in w.output and "Traceback" not in w.output, (
                args,
                w.output,
            )
    finally:
        remount("rw")


@pytest.mark.http
@pytest.mark.parametrize(
    "status,reason",
    [
        (
            429,
            "index [t] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage "
            "watermark, index has read-only-allow-delete block]",
        ),
        (403, "index [t] blocked by: [FORBIDDEN/8/index write (api)]"),
    ],
)
def test_an_http_index_that_refuses_writes_is_one_line(fault_proxy, tmp_path, status, reason):
    assert run("init", "-e", fault_proxy.url, "--index", "t", "--no-pipeline").exit_code == 0
    fault_proxy.reject_bulk_items_status = status
    fault_proxy.reject_bulk_items_error = {"type": "cluster_block_exception", "reason": reason}
    fault_proxy.reject_bulk_items = 1000
    src = write_jsonl(tmp_path / "a.jsonl", _records(30))
    r = run("index", src, "-e", fault_proxy.url, "--index", "t", "-q", "-j", "0", "--timeout", "5")
    assert r.exit_code == 1 and "Traceback" not in r.output and "failed" not in r.output, r.output
    lines = r.output.strip().splitlines()
    assert (
        len(lines) == 1 and "refuses writes" in lines[0] and "cluster_block_exception" in lines[0]
    ), r.output
    fault_proxy.reject_bulk_items = 0
    again = run("index", src, "-e", fault_proxy.url, "--index", "t", "-q", "-j", "0")
    assert again.exit_code == 0, again.output


# -- the limits table holds on both engines --------------------------------------------------------
def _nested(n: int, key: str, arrays: bool = False):
    """``n`` levels of objects (each inside a one-item array with ``arrays``) around a string."""
    v: object = "leaf"
    for _ in range(n):
        v = {key: [v] if arrays else v}
    return v


def test_documents_at_the_nesting_limit_are_stored_by_both_engines_and_past_it_refused_by_both(
    engine_target,
):
    """Elasticsearch and OpenSearch count the document's own fields object (``fields``) as a
    level: the documents index allows one level more than MAX_DEPTH, so the stated limit is
    the user's."""
    from neardup.api import NearDup
    from neardup.signing.records import Document
    from neardup.signing.validate import MAX_DEPTH

    target, opts = engine_target
    nd = NearDup.open(target, create=True, **opts)
    try:
        docs = [
            Document(
                f"ok-{n}-{a}",
                good_text(n + 10 * a),
                fields=_nested(n, f"k{n}{'a' if a else ''}", a),
            )
            for n, a in (
                (1, False),
                (MAX_DEPTH - 1, False),
                (MAX_DEPTH, False),
                (1, True),
                (5, True),
            )
        ]
        bad = [Document("deep", good_text(99), fields=_nested(MAX_DEPTH + 1, "z"))]
        r = nd.index(docs + bad)
        assert [f.id for f in r.failed] == ["deep"] and "nested more than" in r.failed[0].reason, (
            r.failed
        )
        nd.engine.refresh()
        assert nd.count() == len(docs)
        stored = nd.engine.get([d.id for d in docs], text=True)
        assert {i: s.fields for i, s in stored.items()} == {d.id: d.fields for d in docs}
    finally:
        nd.close()


def test_the_documents_index_allows_the_stated_depth():
    from neardup.engines.elastic.templates import documents_template
    from neardup.signing.validate import MAX_DEPTH

    settings = documents_template("neardup", {}, None)["template"]["settings"]["index"]
    assert settings["mapping"]["depth"]["limit"] == MAX_DEPTH + 1
