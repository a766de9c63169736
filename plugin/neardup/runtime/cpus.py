"""How many CPUs the other processes of the machine leave idle, from two samples of
``/proc/stat`` (:class:`CpuSample`): the interval may begin before this process starts its
own work (the command line begins one before it loads a command), since this process's CPU
time over it is counted as idle, not as another's."""

from __future__ import annotations

import os
import time

#: The key of the command line's :class:`CpuSample` in click's ``Context.meta``.
CPU_SAMPLE = "neardup.cpu_sample"


class CpuSample:
    """The first sample of an interval, taken when made: the machine's CPU time by kind
    (:func:`cpu_times`), this process's CPU time and the clock.

    >>> 0.0 <= CpuSample().idle_cpus(2, least=0.02) <= 2.0
    True
    """

    def __init__(self) -> None:
        self.times = cpu_times()
        self.own = time.process_time()
        self.at = time.monotonic()

    def idle_cpus(self, cpus: int, least: float = 0.1) -> float:
        """How many of ``cpus`` CPUs the other processes left idle since this sample, at
        least ``least`` seconds long (it waits for the rest): the idle share of the time
        counted (idle + iowait), plus the CPUs this process used meanwhile; where there is no
        ``/proc/stat``, ``cpus`` less the one-minute load average."""
        wait = least - (time.monotonic() - self.at)
        if wait > 0:
            time.sleep(wait)
        second, own, at = cpu_times(), time.process_time(), time.monotonic()
        first = self.times
        if first is not None and second is not None:
            total = sum(second) - sum(first)
            idle = second[3] + second[4] - first[3] - first[4]
            if total > 0:
                mine = (own - self.own) / max(at - self.at, 1e-9)
                return min(float(cpus), cpus * max(0, idle) / total + mine)
        try:
            return max(0.0, cpus - os.getloadavg()[0])
        except (OSError, AttributeError):  # (no load average on this platform)
            return float(cpus)


def cpu_times() -> list[int] | None:
    """The machine's CPU time so far by kind (user, nice, system, idle, iowait, irq, softirq,
    steal; in clock ticks), from ``/proc/stat``; None where it cannot be read."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    return [int(x) for x in fields[1:9]]
