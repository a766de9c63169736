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


def test_a_quick_step_prints_nothing(capsys):
    with slow_notice("compiling things", after=0.5):
        pass
    assert capsys.readouterr().err == ""
