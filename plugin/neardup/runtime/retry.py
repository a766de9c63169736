"""The one retry policy: what elasticsearch-py's transport takes as parameters
(``max_retries``, the backoff between attempts, a bound on the time in all), as one object
every loop that tries again uses: requests to a cluster
(:class:`~neardup.engines.transport.Retrying`), bulk items and search items refused for a
passing reason, a SQLite file locked by another process, the dashboards' HTTP calls.

Attempt ``k`` (0 first) that fails and may be retried is followed, after
``min(maximum, initial * 2**k)`` seconds, by attempt ``k + 1``; retrying stops after
``max_retries`` more attempts (None: no bound) or once ``deadline`` seconds have passed
since the first (None: no bound).

>>> slept = []
>>> policy = Backoff(max_retries=3, initial=0.5, maximum=1.5, sleep=slept.append)
>>> tries = iter([OSError("down"), OSError("down"), "up"])
>>> def flaky():
...     got = next(tries)
...     if isinstance(got, Exception):
...         raise got
...     return got
>>> policy.call(flaky, retry_if=lambda e: isinstance(e, OSError)), slept
('up', [0.5, 1.0])
>>> [policy.delay(k) for k in range(4)]
[0.5, 1.0, 1.5, 1.5]
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence, TypeVar

T = TypeVar("T")
X = TypeVar("X")


@dataclass(kw_only=True)
class Backoff:
    """Retry policy: up to ``max_retries`` more attempts, ``initial * 2**attempt`` seconds
    apart (capped at ``maximum``), within ``deadline`` seconds in all (module docstring)."""

    max_retries: int | None = 5
    initial: float = 0.5
    maximum: float = 30.0
    deadline: float | None = None
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)

    def delay(self, attempt: int) -> float:
        """Seconds to wait after the failed attempt ``attempt`` (0 first)."""
        return min(self.maximum, self.initial * 2**attempt)

    def give_up_after(self, request_timeout: float) -> float:
        """The longest one request takes against a node that never answers, in seconds:
        ``(max_retries + 1) * request_timeout`` plus the delays between the attempts (a
        deadline, when set, ends it sooner: its end, and the attempt running then).

        >>> # the engines' policy; --timeout 2, the default 30
        >>> Backoff().give_up_after(2.0), Backoff().give_up_after(30.0)
        (27.5, 195.5)
        >>> Backoff(max_retries=None, deadline=10.0).give_up_after(2.0)
        12.0
        """
        bounds = []
        if self.max_retries is not None:
            bounds.append(
                (self.max_retries + 1) * request_timeout
                + sum(self.delay(a) for a in range(self.max_retries))
            )
        if self.deadline is not None:
            bounds.append(self.deadline + request_timeout)
        return min(bounds) if bounds else float("inf")

    def allows(self, attempt: int, started: float) -> bool:
        """Whether attempt ``attempt`` (0 first), begun on a run started at ``started``
        (``clock()``), may be followed by another."""
        return (self.max_retries is None or attempt < self.max_retries) and (
            self.deadline is None or self.clock() - started < self.deadline
        )

    def call(
        self,
        fn: Callable[[], T],
        *,
        retry_if: Callable[[Exception], bool],
        on_retry: Callable[[int, Exception], None] | None = None,
    ) -> T:
        """``fn()``, called again while it raises an exception ``retry_if`` accepts and the
        policy allows, ``on_retry(attempt, error)`` told before each wait; the last error
        is raised as it is."""
        started, attempt = self.clock(), 0
        while True:
            try:
                return fn()
            except Exception as e:  # noqa: BLE001 -- retry_if decides
                if not retry_if(e) or not self.allows(attempt, started):
                    raise
                if on_retry is not None:
                    on_retry(attempt, e)
                self.sleep(self.delay(attempt))
                attempt += 1

    def resend(self, items: Sequence[X], send: Callable[[Sequence[X], bool], Sequence[X]]) -> None:
        """Items sent in rounds: ``send(pending, last)`` sends them and returns those refused
        for a passing reason, to be sent again after the delay; with ``last`` no round
        follows, so ``send`` settles every item itself (a failure of each).

        >>> rounds = []
        >>> def send(p, last):
        ...     rounds.append((list(p), last))
        ...     return p[1:]
        >>> Backoff(max_retries=2, sleep=lambda s: None).resend([1, 2, 3], send)
        >>> rounds
        [([1, 2, 3], False), ([2, 3], False), ([3], True)]
        """
        started, attempt, pending = self.clock(), 0, items
        while pending:
            last = not self.allows(attempt, started)
            again = send(pending, last)
            if last:
                return
            if again:
                self.sleep(self.delay(attempt))
                attempt += 1
            pending = again
