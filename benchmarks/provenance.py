"""When, where and on which commit a benchmark run is measured: stored in every result file
(:func:`provenance`) and named above its tables (:func:`provenance_line`)."""

from __future__ import annotations

import os
import platform
import subprocess
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _git(*args: str) -> str | None:
    """Output of a git command in the repository, or None where git or the repository is missing."""
    try:
        p = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def git_commit() -> str | None:
    """The commit the measured code is at: ``HEAD``, with ``+changes`` when the code differs
    from it (result files written meanwhile are not code)."""
    head = _git("rev-parse", "--short=12", "HEAD")
    if head is None:
        return None
    changed = _git(
        "status",
        "--porcelain",
        "--untracked-files=no",
        "--",
        "plugin",
        "benchmarks",
        ":(exclude)benchmarks/results",
        "pyproject.toml",
    )
    return head + ("+changes" if changed else "")


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def provenance() -> dict:
    """When, where and on which commit a run is measured: stored in every result file."""
    return {
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "cpu": _cpu_model(),
        },
        "commit": git_commit(),
    }


def provenance_line(res: dict, path: Path | None = None) -> str:
    """One line naming a result's date, machine and commit. For a file written before runs
    recorded their commit, the commit is the one ``HEAD`` was at when the run started
    (``git log --before``), or the commit that stored the file when the run recorded no date
    either; the line says which."""
    m = res.get("machine") or {}
    machine = (
        ", ".join(
            x
            for x in (
                m.get("cpu"),
                f"{m['cpus']} CPUs" if m.get("cpus") else None,
                m.get("platform"),
                f"Python {m['python']}" if m.get("python") else None,
            )
            if x
        )
        or "not recorded"
    )
    date = res.get("started_at")
    commit = res.get("commit")
    if commit is None and date:
        c = _git("log", "-1", f"--before={date}", "--format=%h")
        commit = f"{c} (HEAD when the run started)" if c else "not recorded"
    elif commit is None and path is not None:
        c = _git("log", "-1", "--format=%h %cs", "--", str(path))
        if c:
            h, d = c.split()
            commit, date = f"not recorded; the file was stored by {h}", f"not recorded; stored {d}"
    return (
        f"Date: {date or 'not recorded'}. Machine: {machine}. Commit: {commit or 'not recorded'}."
    )
