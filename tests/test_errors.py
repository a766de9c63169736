"""One exception root: every error neardup raises on purpose is a NeardupError of one kind
(input, config, engine, missing document), still the built-in class callers caught before;
the command line turns each into one message (cli/errors.py); SQLite failures are told
apart by their result code in one function (engines/embedded.sqlite_failure)."""

from __future__ import annotations

import ast
import importlib
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

import neardup
from neardup.errors import ConfigError, DocumentNotFound, EngineError, InvalidInput, NeardupError

ROOT = Path(neardup.__file__).resolve().parent


def _exception_classes() -> list[type]:
    """Every class of the package whose name ends in Error or that derives from an exception."""
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        module = ".".join(("neardup", *path.relative_to(ROOT).with_suffix("").parts)).removesuffix(
            ".__init__"
        )
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                cls = getattr(importlib.import_module(module), node.name)
                if isinstance(cls, type) and issubclass(cls, BaseException):
                    out.append(cls)
    return out


def test_every_exception_class_has_the_one_root():
    classes = _exception_classes()
    assert len(classes) >= 12
    strays = [
        f"{c.__module__}.{c.__qualname__}" for c in classes if not issubclass(c, NeardupError)
    ]
    assert not strays


@pytest.mark.parametrize(
    ("name", "kind", "builtin"),
    [
        ("neardup.config.ConfigError", ConfigError, ValueError),
        ("neardup.config.ConfigMismatch", ConfigError, ValueError),
        ("neardup.io.files.InputError", InvalidInput, ValueError),
        ("neardup.signing.validate.InvalidDocument", InvalidInput, ValueError),
        ("neardup.evaluation.corpus.EvaluationError", InvalidInput, ValueError),
        ("neardup.signing.signatures.stats.ContextError", ConfigError, ValueError),
        ("neardup.engines.base.EngineError", EngineError, RuntimeError),
        ("neardup.engines.elastic.pager_and_bulk.BulkRefused", EngineError, RuntimeError),
        ("neardup.engines.elastic.lease.LeaseLost", EngineError, RuntimeError),
        ("neardup.dashboards.fields.DashboardError", EngineError, RuntimeError),
    ],
)
def test_the_old_names_are_kinds_of_the_root_and_their_old_bases(name, kind, builtin):
    module, attr = name.rsplit(".", 1)
    cls = getattr(importlib.import_module(module), attr)
    assert issubclass(cls, kind) and issubclass(cls, builtin)


def test_a_missing_document_is_document_not_found_on_every_engine(engine_target):
    from neardup import Document, NearDup

    target, opts = engine_target
    nd = NearDup.open(target, **opts)
    try:
        nd.index([Document("a", "one two three four five six seven")])
        for call in (
            lambda: nd.show("nope"),
            lambda: nd.query(id="nope"),
            lambda: nd.compare("a", "nope", ids=True),
        ):
            with pytest.raises(DocumentNotFound, match="no document with id 'nope'") as caught:
                call()
            assert isinstance(caught.value, KeyError) and str(caught.value).startswith(
                "no document"
            )
    finally:
        nd.close()


def test_the_command_line_gives_one_line_for_each_kind(tmp_path):
    from neardup.cli import main

    db = str(tmp_path / "x.db")
    (tmp_path / "a.txt").write_text("one two three four five six seven", encoding="utf-8")
    runner = CliRunner()
    assert runner.invoke(main, ["index", str(tmp_path / "a.txt"), "-e", db, "-q"]).exit_code == 0
    for args, message in (
        (["show", "nope", "-e", db], "no document with id 'nope'"),
        (["query", "--id", "nope", "-e", db], "no document with id 'nope'"),
        (["info", "-e", str(tmp_path / "a.txt")], "not a neardup index"),
    ):
        r = runner.invoke(main, args)
        assert r.exit_code == 1, (args, r.output)
        assert "error: " in r.output and message in r.output and "Traceback" not in r.output, (
            r.output
        )


def _error_of(run) -> sqlite3.Error:
    with pytest.raises(sqlite3.Error) as caught:
        run()
    return caught.value


def test_sqlite_failures_are_classified_by_their_code(tmp_path):
    from neardup.engines.embedded import sqlite_failure

    path = tmp_path / "f.db"
    a = sqlite3.connect(path, isolation_level=None, timeout=0)
    a.execute("CREATE TABLE t(x)")
    a.execute("BEGIN IMMEDIATE")
    b = sqlite3.connect(path, isolation_level=None, timeout=0)
    assert sqlite_failure(_error_of(lambda: b.execute("BEGIN IMMEDIATE"))) == "busy"
    a.execute("ROLLBACK")
    ro = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    assert sqlite_failure(_error_of(lambda: ro.execute("INSERT INTO t VALUES (1)"))) == "read-only"
    small = sqlite3.connect(tmp_path / "small.db", isolation_level=None)
    small.execute("CREATE TABLE t(x)")
    small.execute("PRAGMA max_page_count=3")
    assert (
        sqlite_failure(_error_of(lambda: small.execute("INSERT INTO t VALUES (zeroblob(100000))")))
        == "full"
    )
    (tmp_path / "text.db").write_bytes(b"not a database at all, " * 100)
    junk = sqlite3.connect(tmp_path / "text.db")
    assert (
        sqlite_failure(_error_of(lambda: junk.execute("SELECT * FROM sqlite_master"))) == "damaged"
    )
    mem = sqlite3.connect(":memory:", isolation_level=None)
    assert sqlite_failure(_error_of(lambda: mem.execute("COMMIT"))) == "rolled-back"
    assert sqlite_failure(_error_of(lambda: mem.execute("SELECT * FROM nowhere"))) == "other"
    assert sqlite_failure(ValueError("database is locked")) is None
    for db in (a, b, ro, small, junk, mem):
        db.close()


def test_callers_read_what_engines_declare_and_never_probe_them():
    """The Engine base declares every capability callers use (no getattr/hasattr probing
    outside the engines), and one on_wait signature: a message."""
    import re

    from neardup.engines.base import Engine

    probes = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in ROOT.rglob("*.py")
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\b(getattr|hasattr)\((self\.|nd\.)?engine\b", line)
    ]
    assert not probes
    for name in (
        "on_wait",
        "created",
        "actions",
        "backend",
        "collapses_search",
        "search_collapsed",
        "unsigned",
        "adopted",
    ):
        assert hasattr(Engine, name), name


def test_hazm_missing_is_told_as_any_neardup_error():
    from neardup.canonical.persian import HazmMissing
    from neardup.cli.errors import describe

    e = HazmMissing("Persian stemming uses hazm: pip install 'neardup[hazm]'")
    assert isinstance(e, NeardupError) and isinstance(e, ImportError)
    assert describe(e) == str(e)
