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


def _real_engines_run(neardup_s: float, minhash_s: float | None) -> dict:
    """One engine's run of benchmarks.real_engines, as its JSON holds it: a whole path of
    ``neardup_s`` seconds beside the engine's own min_hash route taking ``minhash_s`` (bulk
    4 s + queries), or none (a result made before the route was measured)."""

    def part(seconds: float, docs: int = 1000) -> dict:
        return {
            "docs": docs,
            "failed": 0,
            "seconds": seconds,
            "client_cpu_s": 1.0,
            "engine_cpu_s": 2.0,
            "docs_per_s": docs / seconds,
            "client_cpu_ms_per_doc": 1.0,
            "engine_cpu_ms_per_doc": 2.0,
        }

    whole = {
        "neardup": {
            "seconds": neardup_s,
            "index_s": neardup_s - 1,
            "clusters_s": 1.0,
            "cpu_s": 3.0,
            "engine_cpu_s": 4.0,
            "clusters": 10,
            "docs_in_clusters": 25,
        },
        "plain_bulk": part(2.0),
        "wall_ratio": neardup_s / 2.0,
    }
    if minhash_s is not None:
        queries = {**part(minhash_s - 4.0), "ms_per_doc": minhash_s - 4.0, "other_hits": 9}
        whole |= {
            "minhash": {
                "bulk": part(4.0),
                "queries": queries,
                "seconds": minhash_s,
                "engine_cpu_s": 4.0,
            },
            "store": {
                "neardup": {"bytes_per_doc": 3000.0},
                "plain": {"bytes_per_doc": 2000.0},
                "minhash": {"bytes_per_doc": 2600.0},
            },
            "minhash_ratio": neardup_s / minhash_s,
        }
    step = {"from": 0, "to": 1000, "plain_bulk": part(2.0), "neardup_index": part(5.0)}
    return {
        "engine": "opensearch-2",
        "version": "2.19.1",
        "plain_bulk": part(2.0),
        "neardup_index": part(5.0),
        "plugin_cost": 2.5,
        "scale": [step],
        "query": {"p50_ms": 3.0, "p99_ms": 9.0},
        "store": {"neardup": {"bytes_per_doc": 3000.0}, "plain": {"bytes_per_doc": 2000.0}},
        "whole_path": whole,
    }


def _real_engines_result(*runs: dict) -> dict:
    return {
        "command": "python -m benchmarks.real_engines --quick",
        "docs": 1000,
        "sizes": [1000],
        "queries": 50,
        "heap": "1g",
        "commit": "0123abc",
        "started_at": "2026-01-02T03:04:05+00:00",
        "machine": {"cpus": 2, "platform": "Linux-x"},
        "runs": list(runs),
    }


def test_real_engines_report_the_min_hash_route_beside_neardup():
    """benchmarks.real_engines: the engine's own min_hash route is a peer of the whole path:
    its bulk (against the plain one), store, queries and whole job, neardup's whole path
    against it as a target (met below 1, missed above), in the tables and the Markdown."""
    from benchmarks import real_engines

    ahead, behind = _real_engines_run(6.0, 12.0), _real_engines_run(15.0, 12.0)
    assert real_engines.ratios(ahead)["minhash_route"] == 0.5
    res = _real_engines_result(ahead, behind)
    got = {head: rows for head, _, rows in real_engines.tables(res)}
    targets = [
        r
        for r in got["Targets: ratios to the plain _bulk of the same documents"]
        if "min_hash" in r[1]
    ]
    assert [(r[2], r[3], r[4]) for r in targets] == [
        ("0.50", "<= 1.00", "met"),
        ("1.25", "<= 1.00", "missed (1.2x the bound)"),
    ]
    (route,) = [v for k, v in got.items() if k.startswith("The engine's own min_hash route")]
    assert route[0][1:] == [
        "4.0 (2.0x)",
        "2,600 (1.3x)",
        "3,000 (1.5x)",
        "8.0",
        "8.00",
        "0",
        "12.0",
        "6.0",
        "0.50",
    ]
    whole = got["Whole path: index + clusters (seconds)"]
    assert [r[-2:] for r in whole] == [["12.0", "0.50"], ["12.0", "1.25"]]
    md = real_engines.markdown(res)
    assert "### The engine's own min_hash route" in md
    assert "| opensearch-2 2.19.1 | 4.0 (2.0x) | 2,600 (1.3x) | 3,000 (1.5x) |" in md


def test_real_engines_results_made_before_the_min_hash_route_still_render():
    """A result without the min_hash route (an earlier run's JSON) has no route table and no
    route target; its whole-path row shows '-' in the route's columns."""
    from benchmarks import real_engines

    res = _real_engines_result(_real_engines_run(6.0, None))
    got = {head: rows for head, _, rows in real_engines.tables(res)}
    assert not any(k.startswith("The engine's own min_hash route") for k in got)
    assert not any(
        "min_hash" in r[1] for r in got["Targets: ratios to the plain _bulk of the same documents"]
    )
    assert got["Whole path: index + clusters (seconds)"][0][-2:] == ["-", "-"]


def test_real_engines_bound_the_store_query_p99_and_own_cpu():
    """The targets table bounds the store on the whole-path documents (1.5x), the query p99
    (10 ms) and neardup's own CPU a document on the HTTP path against the embedded engine's
    run of the same documents (1x); without an embedded run there is no own-CPU row."""
    from benchmarks import real_engines

    run = _real_engines_run(6.0, 12.0)
    embedded = {
        "engine": "embedded",
        "version": "",
        "neardup_index": {**run["neardup_index"], "client_cpu_ms_per_doc": 2.0},
        "scale": [],
        "query": run["query"],
        "store": {"neardup": {"bytes_per_doc": 2500.0}},
    }
    head = "Targets: ratios to the plain _bulk of the same documents"

    def rows(*runs):
        got = {h: r for h, _, r in real_engines.tables(_real_engines_result(*runs))}
        return {r[1]: tuple(r[2:]) for r in got[head]}

    got = rows(run, embedded)
    assert got["store bytes/doc on the whole-path documents: neardup / plain"] == (
        "1.50",
        "<= 1.50",
        "met",
    )
    assert got["query p99 ms"] == ("9.00", "<= 10.00", "met")
    own = got["neardup's own CPU/doc: HTTP path / the embedded engine's whole path"]
    ratio = run["neardup_index"]["client_cpu_ms_per_doc"] / 2.0
    assert own[0] == f"{ratio:.2f}"
    assert own[2] == ("met" if ratio <= 1 else f"missed ({ratio:.1f}x the bound)")
    assert not any(k.startswith("neardup's own CPU") for k in rows(run))
