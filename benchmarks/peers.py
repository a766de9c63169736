"""The peers' own virtualenv (``benchmarks/.peers-venv``) and running tasks in it.

The peers live apart from neardup's environment: text-dedup needs numpy >= 1.26.4 while
hazm pins numpy 1.24.3. Versions are pinned here and in the ``bench`` extra.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENV = HERE / ".peers-venv"
WORKER = HERE / "peer_worker.py"

#: Pinned peer versions (keep in step with the ``bench`` extra of pyproject.toml).
LIGHT = ["datasketch==2.0.0", "rensa==0.5.0", "simhash==2.1.2", "numpy>=1.26.4"]
HEAVY = ["text-dedup==0.4.0"]  # brings pyspark and datasets


class PeersUnavailable(RuntimeError):
    pass


def _python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _stamp() -> Path:
    return VENV / "neardup-bench-peers.json"


def installed() -> list[str]:
    try:
        return json.loads(_stamp().read_text())["requirements"]
    except (OSError, ValueError, KeyError):
        return []


def ensure(with_heavy: bool, log=print) -> dict:
    """Create the venv and install the pinned peers once; returns what was installed and
    how long it took. text-dedup failing to install is reported, not fatal."""
    want = LIGHT + (HEAVY if with_heavy else [])
    have = installed()
    info = {"venv": str(VENV), "requirements": have, "install_s": 0.0, "errors": []}
    missing = [r for r in want if r not in have]
    if not missing and _python().exists():
        return info
    t0 = time.perf_counter()
    if not _python().exists():
        log(f"creating the peers' virtualenv {VENV} ...")
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run(
            [str(_python()), "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=False
        )
    for group in ([r for r in missing if r in LIGHT], [r for r in missing if r in HEAVY]):
        if not group:
            continue
        log(f"installing {' '.join(group)} into the peers' virtualenv ...")
        p = subprocess.run(
            [str(_python()), "-m", "pip", "install", "--quiet", *group],
            capture_output=True,
            text=True,
        )
        if p.returncode == 0:
            have = sorted(set(have) | set(group))
        else:
            tail = (p.stderr or p.stdout).strip().splitlines()[-5:]
            info["errors"].append(f"pip install {' '.join(group)} failed: {' | '.join(tail)}")
            if group[0] in LIGHT:
                raise PeersUnavailable(info["errors"][-1])
    _stamp().write_text(json.dumps({"requirements": have}))
    info["requirements"] = have
    info["install_s"] = time.perf_counter() - t0
    return info


def has(req_prefix: str) -> bool:
    return any(r.startswith(req_prefix) for r in installed())


def run(task: dict, timeout: float = 1800) -> dict:
    """Run one task of :mod:`peer_worker` in the peers' venv; returns its JSON result."""
    with tempfile.TemporaryDirectory(prefix="neardup-peer-") as tmp:
        task = dict(task, result=os.path.join(tmp, "result.json"), workdir=tmp)
        tpath = os.path.join(tmp, "task.json")
        with open(tpath, "w", encoding="utf-8") as f:
            json.dump(task, f)
        env = dict(
            os.environ,
            OMP_NUM_THREADS="1",
            OPENBLAS_NUM_THREADS="1",
            MKL_NUM_THREADS="1",
            TOKENIZERS_PARALLELISM="false",
            HF_DATASETS_OFFLINE="1",
            HF_HUB_OFFLINE="1",
            PYTHONWARNINGS="ignore",
        )
        p = subprocess.run(
            [str(_python()), str(WORKER), tpath],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=tmp,
        )
        if p.returncode != 0:
            tail = "\n".join((p.stderr or p.stdout).strip().splitlines()[-12:])
            raise RuntimeError(f"peer task {task['task']} failed (exit {p.returncode}):\n{tail}")
        with open(task["result"], encoding="utf-8") as f:
            return json.load(f)
