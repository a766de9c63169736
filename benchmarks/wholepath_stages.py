"""What every child process of the whole path (:mod:`benchmarks.wholepath`) records: seconds
and CPU per stage (:class:`Stages`) and its peak resident memory."""

from __future__ import annotations

import resource
import sys
import time
from contextlib import contextmanager
from typing import Any, Iterator


#: The stages of neardup's whole path, in order (the columns of the stage table).
STAGES = ("import", "read", "canonicalize", "sign", "wait", "tag", "store", "cluster")


def peak_rss_mb() -> float:
    """This process's peak RSS: VmHWM (reset by exec; ru_maxrss keeps the high-water mark of
    the process that forked it, here the benchmark's own)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / (1 << 20) if sys.platform == "darwin" else r / 1024


class Stages:
    """Seconds per stage, exclusive: a stage timed inside another counts for itself, not
    for the one around it. ``wrap`` times every call of a function. ``seconds`` is wall
    time, ``cpu`` this process's CPU time (user + system, :func:`time.process_time`)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.first: dict[
            str, float
        ] = {}  # a wrapped iterator's stage: the seconds of its first item
        self._inner: list[tuple[float, float]] = []  # per open stage: (wall, CPU) of inner stages

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        self._inner.append((0.0, 0.0))
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            spent, used = time.perf_counter() - t0, time.process_time() - c0
            inner, inner_cpu = self._inner.pop()
            self.seconds[name] = self.seconds.get(name, 0.0) + spent - inner
            self.cpu[name] = self.cpu.get(name, 0.0) + used - inner_cpu
            if self._inner:
                w, c = self._inner[-1]
                self._inner[-1] = (w + spent, c + used)

    def wrap(self, owner: Any, attr: str, name: str) -> None:
        fn = getattr(owner, attr)
        stages = self

        def timed(*a: Any, **k: Any) -> Any:
            with stages.stage(name):
                return fn(*a, **k)

        setattr(owner, attr, timed)

    def wrap_iter(self, owner: Any, attr: str, name: str) -> None:
        fn = getattr(owner, attr)
        stages = self

        def timed(*a: Any, **k: Any) -> Iterator[Any]:
            it = iter(fn(*a, **k))
            while True:
                before = stages.seconds.get(name, 0.0)
                with stages.stage(name):
                    try:
                        x = next(it)
                    except StopIteration:
                        return
                stages.first.setdefault(name, stages.seconds[name] - before)
                yield x

        setattr(owner, attr, timed)
