"""The real-engine launcher helper (tests/engines/launch.py): a launcher that dies before it
is ready is started once more; one that never gets ready is not."""

from __future__ import annotations

import stat
import subprocess

import pytest

from tests.engines import launch


def _script(tmp_path, body: str):
    path = tmp_path / "run"
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_launcher_that_died_before_ready_is_started_again(tmp_path, monkeypatch):
    marker = tmp_path / "tried"
    run = _script(
        tmp_path,
        f'if [ -e "{marker}" ]; then echo "ready http://127.0.0.1:1"; sleep 30; fi\n'
        f'touch "{marker}"; exit 1\n',
    )
    monkeypatch.setattr(launch, "RUN", run)
    proc, url = launch.start("x", stdin=subprocess.DEVNULL, timeout=20)
    launch.stop(proc, wait=5)
    assert url == "http://127.0.0.1:1" and marker.exists()


def test_a_launcher_that_keeps_dying_raises(tmp_path, monkeypatch):
    count = tmp_path / "count"
    monkeypatch.setattr(launch, "RUN", _script(tmp_path, f'echo x >> "{count}"; exit 3\n'))
    with pytest.raises(RuntimeError, match=r"exit 3"):
        launch.start("x", stdin=subprocess.DEVNULL, timeout=20)
    assert len(count.read_text().split()) == 2
