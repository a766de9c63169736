"""An exclusive write lease held in one document, for writers in different processes.

The lease is the document ``lock`` of the index's state index. It is taken with
``op_type=create`` (only one writer can create it); a lease whose ``expires_at`` has passed
(its holder died or stalled) is taken over with optimistic concurrency control
(``if_seq_no`` / ``if_primary_term`` of the version that was read), so two writers that
see the same stale lease cannot both take it. The holder renews it while it writes and
deletes it (again conditionally) when done.

Times are the writers' own clocks: a lease is considered stale ``duration`` seconds after
its last renewal, so clocks of the machines that share an index must agree to well under
``duration`` (NTP does).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Mapping

from ...runtime.retry import Backoff
from ..base import EngineError
from ..transport import Retrying, status_of

log = logging.getLogger("neardup.engines.lease")

LOCK_ID = "lock"


@dataclass(frozen=True)
class Holder:
    """Who holds a lease, as stored in the lease document."""

    owner: str
    host: str
    pid: int
    acquired_at: str
    expires_at_ms: int

    @classmethod
    def from_source(cls, src: dict[str, Any]) -> "Holder":
        return cls(
            str(src.get("owner")),
            str(src.get("host")),
            int(src.get("pid") or 0),
            str(src.get("acquired_at")),
            int(src.get("expires_at") or 0),
        )

    def describe(self) -> str:
        return f"owner {self.host} pid {self.pid}, since {self.acquired_at}"


class LeaseLost(EngineError):
    """Another writer took the lease over (this one stalled past its expiry)."""


class _Held(EngineError):
    """The lease is held by another live writer (inside :meth:`Lease.acquire`: wait, try again)."""

    def __init__(self, holder: "Holder"):
        super().__init__(holder.describe())
        self.holder = holder


class Lease:
    """The write lease of one index. ``client`` is an opened Elasticsearch/OpenSearch client.

    ``on_wait(holder, waited_seconds)`` is called each time the lease is found held by
    another writer (also logged at INFO on ``neardup.engines.lease``); ``timeout`` bounds
    the wait (None: wait as long as it takes). A lease whose owner is gone is taken over at
    once, and ``on_take_over(holder, why)`` told: on this host when its process no longer
    exists, on another host when it has expired (:func:`owner_gone`).
    """

    def __init__(
        self,
        client: Any,
        index: str,
        retry: Retrying,
        *,
        duration: float = 60.0,
        poll: float = 0.25,
        max_poll: float = 5.0,
        timeout: float | None = None,
        on_wait: Callable[[Holder, float], None] | None = None,
        on_take_over: Callable[[Holder, str], None] | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.client = client
        self.index = index
        self.retry = retry
        self.duration = duration
        self.poll = poll
        self.max_poll = max_poll
        self.timeout = timeout
        self.on_wait = on_wait
        self.on_take_over = on_take_over
        self.clock = clock
        self.sleep = sleep
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self._version: tuple[int, int] | None = None  # (seq_no, primary_term) of our lease document
        self._renewed = 0.0
        self._acquired_at = ""
        self._lock = (
            threading.RLock()
        )  # renewals from the keep-alive thread and the writer, one at a time
        self._stop: threading.Event | None = None
        self._thread: threading.Thread | None = None
        self.lost: LeaseLost | None = None  # set when the keep-alive found the lease taken over
        #: whether the last acquire took over an expired lease (its holder may not have refreshed)
        self.took_over = False
        #: whether the last acquire took the lease right after this writer released it, no
        #: other writer holding it between (:meth:`_follows_release`)
        self.resumed = False
        self._released: tuple[int, int] | None = None  # (seq_no, term) of our last release

    @property
    def held(self) -> bool:
        return self._version is not None

    def _source(self, now: float) -> dict[str, Any]:
        return {
            "kind": "lock",
            "owner": self.owner,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "acquired_at": self._acquired_at,
            "renewed_at": _iso(now),
            "expires_at": int((now + self.duration) * 1000),
        }

    # -- acquire / renew / release -------------------------------------------------------------
    def acquire(self) -> None:
        """Take the lease, waiting with backoff while another live writer holds it."""
        if self.held:
            return
        self.lost, self.took_over, self.resumed = None, False, False
        started = self.clock()

        def waiting(attempt: int, e: Exception) -> None:
            holder = e.holder  # type: ignore[attr-defined]
            log.info("waiting for another writer (%s) on %s", holder.describe(), self.index)
            if self.on_wait is not None:
                self.on_wait(holder, self.clock() - started)

        policy = Backoff(
            max_retries=None,
            initial=self.poll,
            maximum=self.max_poll,
            deadline=self.timeout,
            sleep=self.sleep,
            clock=self.clock,
        )
        try:
            policy.call(self._try_once, retry_if=lambda e: isinstance(e, _Held), on_retry=waiting)
        except _Held as e:
            raise EngineError(
                f"{self.index}: another writer holds the write lease ({e.holder.describe()}); "
                f"gave up after {self.clock() - started:.0f} s"
            ) from None

    def _try_once(self) -> None:
        """Take the lease now (create it, or take over an expired one), or :class:`_Held`."""
        while True:
            now = self.clock()
            self._acquired_at = _iso(now)
            if self._try_create(now):
                self.resumed = self._follows_release()
                return
            current = self._read()
            if current is None:  # released between our create and our read: try again at once
                continue
            holder, version = current
            if holder.owner == self.owner:  # our own create went through before a lost answer
                self._version, self._renewed = version, now
                return
            why = owner_gone(holder, now)
            if why is not None and self._try_take_over(version, now):
                self.took_over = True
                log.warning(
                    "took over the write lease of %s on %s: %s", holder.describe(), self.index, why
                )
                if self.on_take_over is not None:
                    self.on_take_over(holder, why)
                return
            raise _Held(holder)

    def renew(self, *, force: bool = False) -> None:
        """Extend the lease (when a third of it has passed, or ``force``); LeaseLost if it was
        taken."""
        with self._lock:
            self._renew(force)

    def _renew(self, force: bool) -> None:
        if self.lost is not None:
            raise self.lost
        if self._version is None:
            raise EngineError(f"{self.index}: renewing a write lease that is not held")
        now = self.clock()
        if not force and now - self._renewed < self.duration / 3:
            return
        if not self._write_if("renew write lease", self._version, now):
            self._version = None
            self.lost = LeaseLost(
                f"{self.index}: this writer's lease expired and another writer took it over; "
                "its last batch may be incomplete: run the command again"
            )
            raise self.lost

    # -- keep-alive ------------------------------------------------------------------------------
    def keep_alive(self) -> None:
        """Renew the lease from a daemon thread every third of its duration while it is held,
        so a session that reads for longer than ``duration`` without writing keeps it."""
        if self._thread is not None:
            return
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._keep_alive, args=(self._stop,), name="neardup-lease", daemon=True
        )
        self._thread.start()

    def _keep_alive(self, stop: threading.Event) -> None:
        while not stop.wait(self.duration / 3):
            try:
                self.renew()
            except LeaseLost:
                return  # the writer sees it at its next write
            except EngineError as e:  # unreachable for a moment: try again at the next tick
                log.warning("could not renew the write lease of %s: %s", self.index, e)

    def _stop_keep_alive(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.duration)
        self._stop = self._thread = None

    def release(self) -> None:
        self._stop_keep_alive()
        with self._lock:
            self._release()

    def _release(self) -> None:
        if self._version is None:
            return
        seq_no, term = self._version
        self._version = self._released = None
        try:
            r = self.retry.call(
                "release write lease",
                self.client.delete,
                index=self.index,
                id=LOCK_ID,
                if_seq_no=seq_no,
                if_primary_term=term,
                ok_status=(404, 409),
            )
        except Exception as e:  # noqa: BLE001 - taken over or gone: not ours any more
            if status_of(e) not in (404, 409):
                raise
            return
        if isinstance(r, Mapping) and r.get("result") == "deleted" and "_seq_no" in r:
            self._released = _version(r)

    def holder(self) -> Holder | None:
        """The current holder (None: free)."""
        current = self._read()
        return current[0] if current else None

    # -- requests ----------------------------------------------------------------------------------
    def _follows_release(self) -> bool:
        """Whether the lease document just created is the next write to its shard after this
        writer's own release (same primary term, ``_seq_no`` one more): no other writer took
        the lease between, so none wrote. Anything else (a release whose answer was lost, a
        new primary) answers False, the safe answer."""
        released, self._released = self._released, None
        if released is None or self._version is None:
            return False
        (seq_no, term), (was_seq_no, was_term) = self._version, released
        return term == was_term and seq_no == was_seq_no + 1

    def _try_create(self, now: float) -> bool:
        return self._write("take write lease", self.client.create, now)

    def _try_take_over(self, version: tuple[int, int], now: float) -> bool:
        return self._write_if("take over write lease", version, now)

    def _write_if(self, what: str, version: tuple[int, int], now: float) -> bool:
        """Write the lease as held by this writer at ``now`` if it is still at ``version``
        (optimistic concurrency: ``if_seq_no`` / ``if_primary_term``); False when another
        writer changed it first (409)."""
        seq_no, term = version
        return self._write(what, self.client.index, now, if_seq_no=seq_no, if_primary_term=term)

    def _write(self, what: str, send: Any, now: float, **conditions: Any) -> bool:
        """``send`` (the client's ``create`` or ``index``) the lease as held by this writer at
        ``now`` under ``conditions``; False when another writer got there first (409)."""
        try:
            r = self.retry.call(
                what,
                send,
                index=self.index,
                id=LOCK_ID,
                body=self._source(now),
                ok_status=(409,),
                **conditions,
            )
        except Exception as e:  # noqa: BLE001
            if status_of(e) == 409:
                return False
            raise
        self._version, self._renewed = _version(r), now
        return True

    def _read(self) -> tuple[Holder, tuple[int, int]] | None:
        try:
            r = self.retry.call(
                "read write lease", self.client.get, index=self.index, id=LOCK_ID, ok_status=(404,)
            )
        except Exception as e:  # noqa: BLE001
            if status_of(e) == 404:
                return None
            raise
        if not r.get("found"):
            return None
        return Holder.from_source(r.get("_source") or {}), _version(r)


def owner_gone(holder: Holder, now: float) -> str | None:
    """Why the holder of a lease is gone (None: it may still be writing): on this host, its
    process no longer exists; anywhere, its lease expired (it neither renewed nor released
    it in time).

    >>> import os, socket
    >>> here = socket.gethostname()
    >>> owner_gone(Holder("a", here, os.getpid(), "t", 2_000), now=1.0) is None
    True
    >>> owner_gone(Holder("b", "elsewhere", 1, "t", 2_000), now=1.0) is None
    True
    >>> owner_gone(Holder("c", "elsewhere", 1, "t", 500), now=1.0)
    'its lease expired at 1970-01-01T00:00:00+00:00'
    """
    if holder.host == socket.gethostname() and holder.pid != os.getpid() and not _alive(holder.pid):
        return f"its process (pid {holder.pid} on this host) no longer exists"
    if holder.expires_at_ms <= now * 1000:
        return f"its lease expired at {_iso(holder.expires_at_ms / 1000)}"
    return None


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this machine (signal 0 checks without sending)."""
    if pid <= 0:
        return True  # (not a process id: nothing can be said of it)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # it exists (another user's), or cannot be told: not gone
    return True


def _version(body: Mapping[str, Any]) -> tuple[int, int]:
    """The (``_seq_no``, ``_primary_term``) of a response body (:meth:`Retrying.call`'s)."""
    return int(body["_seq_no"]), int(body["_primary_term"])


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds")
