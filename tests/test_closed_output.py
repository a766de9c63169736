"""Writing to a closed standard output (``>&-``) fails loudly: a non-zero exit and one
line on standard error, never a silent exit 0 and never a file named ``-``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


from neardup.api import NearDup
from neardup.signing.records import Document

from .test_hardening import eargs, good_docs, prepare

from .corpora import NEARDUP_PATH

ROOT = Path(__file__).resolve().parents[1]

COMMANDS = (
    ["export"],
    ["export", "-o", "-"],
    ["export", "--unique"],
    ["info"],
    ["info", "--json"],
    ["clusters"],
    ["clusters", "--json"],
    ["clusters", "--csv"],
    ["show", "good-1"],
    ["show", "good-1", "--json"],
    ["search", "river"],
    ["query", "--id", "good-1"],
    ["query", "--id", "good-1", "--json"],
)


def _closed_stdout() -> None:
    os.close(1)


def test_every_command_fails_loudly_on_a_closed_standard_output(engine_target, tmp_path):
    target, opts = engine_target
    prepare(target, opts)
    nd = NearDup.open(target, create=True, **opts)
    nd.index(good_docs(20) + [Document("copy-1", good_docs(2)[1].text)])
    nd.engine.refresh()
    nd.close()
    env = {**os.environ, "PYTHONPATH": str(NEARDUP_PATH)}
    jsonl = tmp_path / "more.jsonl"
    jsonl.write_text(
        json.dumps({"id": "more", "text": "a text of some words to index again"}) + "\n"
    )
    work = tmp_path / "cwd"
    work.mkdir()
    for args in (*COMMANDS, ["index", str(jsonl), "-q"], ["dashboards", "export"]):
        full = [*args, *eargs(target, opts)] if args[0] != "dashboards" else args
        r = subprocess.run(
            [sys.executable, "-m", "neardup.cli", *full],
            env=env,
            cwd=work,
            preexec_fn=_closed_stdout,
            stdout=None,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
        assert r.returncode != 0, (args, r.stderr)
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        errors = [
            line for line in lines if line.startswith("error: ")
        ]  # (progress notices may come before it)
        assert (
            errors == lines[-1:] and "standard output" in errors[0] and "Traceback" not in r.stderr
        ), (args, r.stderr)
        assert list(work.iterdir()) == [], (args, list(work.iterdir()))
