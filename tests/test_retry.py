"""The one retry policy (neardup.runtime.retry.Backoff): bounded by attempts and by time, the
delays it waits, the rounds of items sent again, and the loops that use it (requests to a
cluster, a locked SQLite file)."""

from __future__ import annotations

import sqlite3

import pytest

from neardup.runtime.retry import Backoff


class Clock:
    def __init__(self) -> None:
        self.now, self.slept = 0.0, []

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.now += s


def _failing(n: int, error: type[Exception] = OSError):
    calls = []

    def fn():
        calls.append(1)
        if len(calls) <= n:
            raise error("no")
        return len(calls)

    return fn, calls


def test_call_retries_up_to_max_retries_with_doubling_delays():
    c = Clock()
    policy = Backoff(max_retries=3, initial=0.1, maximum=0.25, sleep=c.sleep, clock=lambda: c.now)
    fn, calls = _failing(3)
    assert policy.call(fn, retry_if=lambda e: True) == 4 and c.slept == [0.1, 0.2, 0.25]
    fn, calls = _failing(4)
    with pytest.raises(OSError):
        policy.call(fn, retry_if=lambda e: True)
    assert len(calls) == 4


def test_call_stops_at_the_deadline_and_on_errors_it_does_not_retry():
    c = Clock()
    policy = Backoff(
        max_retries=None, initial=1.0, maximum=1.0, deadline=3.5, sleep=c.sleep, clock=lambda: c.now
    )
    fn, calls = _failing(100)
    with pytest.raises(OSError):
        policy.call(fn, retry_if=lambda e: True)
    assert len(calls) == 5 and c.now == 4.0  # tried at 0, 1, 2, 3 (< 3.5 s: once more), 4
    fn, calls = _failing(1, KeyError)
    with pytest.raises(KeyError):
        policy.call(fn, retry_if=lambda e: isinstance(e, OSError))
    assert len(calls) == 1


def test_resend_sends_the_refused_items_again_and_settles_them_in_the_last_round():
    c = Clock()
    rounds = []

    def send(pending, last):
        rounds.append((list(pending), last))
        return [
            x for x in pending if x % 2
        ]  # the odd ones refused for a passing reason, every time

    Backoff(max_retries=2, initial=0.5, sleep=c.sleep).resend([1, 2, 3], send)
    assert rounds == [([1, 2, 3], False), ([1, 3], False), ([1, 3], True)] and c.slept == [0.5, 1.0]


def test_a_request_retried_names_its_attempts():
    from neardup.engines.base import EngineError
    from neardup.engines.transport import Retrying

    class ConnectionError(Exception):  # (named as the clients name theirs)
        pass

    c = Clock()
    retry = Retrying(
        "http://u:secret@host:9200", Backoff(max_retries=2, initial=0.01, sleep=c.sleep)
    )
    with pytest.raises(
        EngineError, match=r"cannot reach http://u:\*\*\*@host:9200 \(search\) after 3 attempt\(s\)"
    ):
        retry("search", _failing(10, ConnectionError)[0])
    assert c.slept == [0.01, 0.02]


def test_a_locked_file_is_waited_for_then_refused(tmp_path):
    from neardup.engines.base import EngineError
    from neardup.engines.embedded import Transaction

    path = tmp_path / "l.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t(x)")
    holder.execute("BEGIN IMMEDIATE")
    other = sqlite3.connect(path, isolation_level=None, timeout=0.01)
    told = []
    with pytest.raises(EngineError, match="another process has held the write lock for 0 s"):
        with Transaction(other, str(path), on_wait=told.append, wait=0.3):
            pass
    assert len(told) == 1 and "waiting for another neardup process" in told[0]
    holder.execute("ROLLBACK")
    with Transaction(other, str(path), wait=0.3) as db:
        db.execute("INSERT INTO t VALUES (1)")
    assert holder.execute("SELECT count(*) FROM t").fetchone() == (1,)
