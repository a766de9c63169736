"""The benchmark pages: every result file's tables come with the date, machine and commit
of the run (``python -m benchmarks.report``), and docs/benchmarks.md is that output."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import provenance, report  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def test_provenance_names_date_machine_and_commit():
    p = provenance.provenance()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", p["started_at"])
    assert p["machine"]["python"] and p["machine"]["cpus"] >= 1 and p["machine"]["platform"]
    assert p["commit"] is None or re.fullmatch(r"[0-9a-f]{7,40}(\+changes)?", p["commit"])
    line = provenance.provenance_line({**p, "commit": "abc1234"})
    assert line.startswith(f"Date: {p['started_at']}. Machine: ") and line.endswith(
        "Commit: abc1234."
    )


def test_each_table_of_the_page_is_headed_by_its_run(tmp_path):
    res = {
        "command": "python -m benchmarks --quick",
        "started_at": "2026-01-02T03:04:05+00:00",
        "machine": {"python": "3.11.7", "platform": "Linux-x", "cpus": 2, "cpu": "Some CPU"},
        "commit": "0123abc",
        "targets": [{"target": "t", "measured": 1, "met": True, "detail": "a|b"}],
    }
    f = tmp_path / "r.json"
    f.write_text(json.dumps(res))
    page = report.markdown_page([f])
    assert "### `python -m benchmarks --quick`" in page
    assert (
        "Date: 2026-01-02T03:04:05+00:00. Machine: Some CPU, 2 CPUs, Linux-x, Python 3.11.7. "
        "Commit: 0123abc." in page
    )
    assert "| t | 1 | yes | a\\|b |" in page  # a pipe in a cell is escaped


def test_docs_benchmarks_md_holds_the_command_output():
    """The page names its command (python -m benchmarks.report FILE...) and holds its output."""
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    command = re.search(r"^python -m benchmarks\.report ((?:\S+\.json ?)+)", page, re.M)
    assert command, "docs/benchmarks.md names the command that made its tables"
    files = [ROOT / f for f in command.group(1).split()]
    missing = [str(f.relative_to(ROOT)) for f in files if not f.exists()]
    assert files and not missing, (
        f"docs/benchmarks.md shows result files that are not in the repository: {missing}"
    )
    made = report.markdown_page(files).replace("\n### ", "\n#### ")
    made = made[4:] if made.startswith("### ") else made
    assert made.strip() in page
    for f in files:
        assert f"`benchmarks/results/{f.name}`. Date: " in page
    assert page.count("Commit: ") == len(files)


def _candidates_result(**verified) -> dict:
    return {"candidates": {"thresholds": {"0.8": {"neardup_verified": verified}}}}


def test_a_precision_or_an_error_not_measured_is_no_target_met():
    """The precision target is met at 1.0 only, the exactness target at an error <= 1e-9 only:
    a missing measure (None) meets neither."""

    def met(**verified) -> list[bool]:
        got = report.targets(_candidates_result(**verified))
        return [t["met"] for t in got if t["target"].endswith("t=0.8")]

    assert met(pairs=3, precision=1.0, max_resemblance_error=0.0) == [True, True]
    assert met(pairs=3, precision=0.99, max_resemblance_error=2e-9) == [False, False]
    assert met(pairs=0, precision=None, max_resemblance_error=None) == [False, False]


def test_the_reported_pairs_are_measured_against_the_exact_truth():
    """benchmarks.candidates.reported_pairs: neardup's pairs of the sample at t = 0.8, all in
    PP-join's exact truth with its resemblance; a truth short of one of them (as where neardup
    reported a wrong pair) gives a precision below 1: measured, not assumed."""
    from benchmarks.candidates import reported_pairs
    from neardup.config import Config
    from neardup.evaluation.ppjoin import ppjoin
    from neardup.signing.records import Document
    from neardup.signing.signer import Signer

    from .corpora import SAMPLE

    recs = [json.loads(x) for x in SAMPLE.read_text(encoding="utf-8").splitlines()]
    docs = [Document(r["id"], r["text"]) for r in recs]
    sets = [s.shingles for s in Signer(Config()).sign_batch(docs)]
    truth = {(a, b): j for a, b, j in ppjoin(sets, 0.8)}
    got = reported_pairs(docs, 0.8, truth)
    assert got["pairs"] == len(truth) >= 5
    assert got["precision"] == got["recall_at_t"] == 1.0
    assert got["max_resemblance_error"] <= 1e-9
    short = dict(list(truth.items())[1:])
    assert reported_pairs(docs, 0.8, short)["precision"] == (len(truth) - 1) / len(truth)


def test_the_recommended_weights_meet_recall_targets_that_were_measured():
    """benchmarks.candidates.recommend: weights whose recall was not measured at a threshold
    (no true pair there) are not recommended, however few candidates they give."""
    from benchmarks.candidates import THRESHOLDS, recommend

    def grid(r1, cpq):
        return {"recall_at_t": r1, "recall_at_t_plus_0_05": 1.0, "engine_candidates_per_query": cpq}

    out = {
        "thresholds": {str(t): {} for t in THRESHOLDS},
        "weight_grid": {
            str(t): {"a": grid(None if t == THRESHOLDS[-1] else 1.0, 1.0), "b": grid(0.96, 2.0)}
            for t in THRESHOLDS
        },
    }
    assert recommend(out)["weights"] == "b"
