"""Start ``tests/engines/run`` in the background and wait for its ``ready URL`` line.

Used by the test fixtures (tests/conftest.py) and the real-engine benchmark
(benchmarks/real_engines.py); importable as ``tests.engines.launch`` from the repository root.
"""

from __future__ import annotations

import select
import signal
import subprocess
import sys
import time
from pathlib import Path

RUN = Path(__file__).resolve().parent / "run"


def start(
    engine: str,
    *args: str,
    stdin: int = subprocess.PIPE,
    timeout: float = 900.0,
    attempts: int = 2,
) -> tuple[subprocess.Popen, str]:
    """Run ``tests/engines/run ENGINE ARGS...``; the process and the URL its ready line names.

    Waits up to ``timeout`` seconds for the first line; when it is not ``ready URL`` (the
    launcher exited or said something else), stops the launcher. A launcher that exited
    before it was ready (a JVM that died while its nodes were starting) is started again, up
    to ``attempts`` times in all; then RuntimeError names its exit status and what it said.
    """
    for attempt in range(1, attempts + 1):
        proc = subprocess.Popen(
            [str(RUN), engine, *args], stdin=stdin, stdout=subprocess.PIPE, text=True
        )
        deadline, line, closed = time.monotonic() + timeout, "", False
        while time.monotonic() < deadline and proc.poll() is None:
            if select.select([proc.stdout], [], [], 1.0)[0]:
                line = proc.stdout.readline()
                closed = not line  # its output ended: it is exiting
                break
        if line.startswith("ready "):
            return proc, line.split()[1]
        if closed:  # wait for the exit status, which comes after the end of its output
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
        exited = proc.poll() is not None
        stop(proc)
        failure = (
            f"tests/engines/run {engine} did not start (exit {proc.returncode}, said {line!r})"
        )
        if not exited or attempt == attempts:
            raise RuntimeError(failure)
        sys.stderr.write(f"{failure}; starting it again\n")
    raise ValueError(f"attempts={attempts}: at least 1 is needed")


def stop(proc: subprocess.Popen, wait: float = 120.0) -> None:
    """SIGTERM the launcher (it stops every node) and wait; kill it after ``wait`` seconds."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
