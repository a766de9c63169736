"""Write sessions of the HTTP engine: writers in different processes take turns through a
lease document in ``<index>-neardup-state`` (:mod:`.lease`). Every write runs inside
:meth:`Sessions.writer` (an explicit session, or one per write call), which reads the index's
largest ``seq`` after taking the lease, so arrival numbers never repeat across processes, and
refreshes before handing the lease on, so the next writer sees every write. A run's sessions
(:meth:`Sessions.writes_in_a_row`) keep the lease from one to the next and hold the documents
they store in a :class:`Turn`, matched in this process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from typing import Callable, Iterable, Iterator, Sequence

from ..base import EngineError, PendingPut
from . import dsl
from .index import Index
from .key_match import KeyMatcher
from .lease import Holder, Lease
from .setup import SetUp


#: The most documents a run's :class:`Turn` carries over a hand-over of the lease (about
#: 2.5 KB each); a larger one starts again, and the engine answers for what it held.
MAX_CARRIED = 100_000


@dataclasses.dataclass
class Turn:
    """One turn of a run's writer with the lease (:meth:`Sessions.writes_in_a_row`):
    documents stored from ``start_seq`` on are held in ``recent`` and matched here; the
    engine answers for those stored before. ``stale``: a document stored before was
    changed (replaced, re-tagged, deleted) and the engine must refresh before it answers."""

    start_seq: int
    recent: KeyMatcher = dataclasses.field(default_factory=KeyMatcher)
    stale: bool = False
    started: float = dataclasses.field(default_factory=time.monotonic)

    def expired(self, hold: float) -> bool:
        return time.monotonic() - self.started >= hold


class Sessions:
    """The write sessions on ``remote`` (its state index made by ``setup`` when first needed):
    the lease, the next arrival number, whether writes wait for a refresh, and the run's
    :class:`Turn`. ``on_wait(message)`` is told once per writer it waits for."""

    def __init__(
        self, remote: Index, setup: SetUp, on_wait: Callable[[str], None] | None = None
    ) -> None:
        self.remote = remote
        self.setup = setup
        #: told a message once per writer whose lease this one waits for
        self.on_wait = on_wait
        #: the arrival number of the next new document
        self.next_seq = 1
        self.lease: Lease | None = None
        self._waited_for: set[str] = set()  # owners of leases on_wait was told of
        self._depth = 0  # sessions open (they nest)
        #: writes not yet made visible by a refresh
        self.dirty = False
        self._in_run = False  # inside writes_in_a_row
        #: the lease kept over a run's sessions, and the documents stored meanwhile
        self.turn: Turn | None = None
        #: the hold of the run's last turn, taken up again when no writer wrote between
        self._carried: Turn | None = None
        #: what this session read of documents by id: id -> (found, its ``seq`` or None), so
        #: a write of the same ids right after needs no second read; forgotten when the
        #: session ends (the lease is this process's only while it lasts)
        self.known: dict[str, tuple[bool, int | None]] = {}
        #: the run's last batch of documents sent and not answered yet
        #: (:meth:`~.writes.Writes.start_put`): settled before any other write, a refresh,
        #: a hand-over of the lease, and a read of its ids
        self.in_flight: PendingPut | None = None
        #: whether a refresh, which every writer's turn ends with, was granted: the first
        #: turn refreshes before it takes the lease, so a refused refresh stops it unchanged
        self._refresh_checked = False

    def remember_written(self, seqs: dict[str, int], refused: set[str]) -> None:
        """Documents this session stored (id -> arrival number; ``refused`` not stored), as
        :attr:`known` now holds them."""
        for i, seq in seqs.items():
            if i in refused:
                self.known.pop(i, None)
            else:
                self.known[i] = (True, seq)

    def wait_for_sent(self) -> None:
        """Wait for the documents in flight, if any (their refusals and errors are told
        to whoever handed them over, by :meth:`PendingPut.failures`)."""
        pending = self.in_flight
        if pending is None:
            return
        try:
            pending.failures()
        finally:
            if not pending.in_flight:  # (answered, or failed: not waited for again)
                self.in_flight = None

    def wait_for_sent_of(self, ids: Iterable[str]) -> None:
        """:meth:`wait_for_sent` when any of ``ids`` is in flight: a read of them sees them."""
        if self.in_flight is not None and not self.in_flight.ids.isdisjoint(ids):
            self.wait_for_sent()

    @property
    def in_session(self) -> bool:
        """Whether a writer session is open (what it reads stays true until it ends)."""
        return self._depth > 0

    def max_seq(self) -> int:
        """The largest arrival number the index holds (0 when it holds none)."""
        r = self.remote.retry.call(
            "max seq", self.remote.client.search, index=self.remote.name, body=dsl.max_seq_body()
        )
        v = ((r.get("aggregations") or {}).get("max_seq") or {}).get("value")
        return int(v) if v is not None else 0

    @contextlib.contextmanager
    def writer(self) -> Iterator[None]:
        """An exclusive write session across processes (the lease of ``<index>-neardup-state``).

        Waits while another writer holds the lease (``on_wait`` and the log say who); once
        held, reads the largest ``seq`` (numbers are assigned after it) and refreshes before
        releasing, so the next holder's candidate queries see every write of this one.
        Sessions nest; write calls outside a session open one of their own. Inside
        :meth:`writes_in_a_row` the lease is kept over the sessions that follow, for up to
        :attr:`~neardup.engines.elastic.options.LeaseTimes.hold` seconds, and the documents
        they store are matched in this process (:meth:`.candidates.Candidates.candidates`)."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        if self.turn is None:
            self._take_lease()
        self._depth = 1
        ok = False
        try:
            yield
            ok = True
        finally:
            self._depth = 0
            self.known.clear()
            if self.turn is None or not ok:
                self._hand_over(quiet=not ok)
            elif self.turn.expired(self.remote.lease_times.hold):
                self._hand_over()  # (other writers get their turn)

    def _take_lease(self) -> None:
        """Take the lease (waiting for another writer's), and start what a holder knows: the
        next arrival number, and in a run (:meth:`writes_in_a_row`) the documents matched here."""
        if not self._refresh_checked:  # (refused here, a role without it writes nothing)
            self.refresh()
            self._refresh_checked = True
        lease = self.lease_of()
        lease.acquire()
        lease.keep_alive()
        self.dirty = False
        carried, self._carried = self._carried, None
        try:
            if lease.took_over:  # a holder that died may not have made its last writes visible
                self.refresh()
            stored = self.max_seq()
        except BaseException:
            with contextlib.suppress(EngineError):  # the first cause is the one told
                lease.release()
            raise
        untouched = lease.resumed and stored < self.next_seq
        self.next_seq = max(self.next_seq, stored + 1)
        if not self._in_run:
            return
        if carried is not None and untouched:  # (no writer between: what it held still holds)
            self.turn = dataclasses.replace(carried, stale=False, started=time.monotonic())
        else:
            self.turn = Turn(start_seq=self.next_seq)

    def _hand_over(self, quiet: bool = False) -> None:
        """End the lease holder's turn: refresh what it wrote (the next holder's reads must
        see every write), then release the lease. ``quiet``: a session that failed hands
        over too, and a refresh that fails then does not hide its error. Inside a run, the
        turn's :class:`Turn` is carried to the next turn, taken up there if no other writer
        took the lease between."""
        held, self.turn, self._carried = self.turn, None, None
        try:
            self.wait_for_sent()
            if self.dirty:
                self.refresh()
        except Exception:
            if not quiet:
                raise
        finally:
            if self.lease is not None and self.lease.held:
                # a failed session's error is the one told, not a release refused after it
                # (by the same block): the lease is taken over once this process is gone
                with contextlib.suppress(*((EngineError,) if quiet else ())):
                    self.lease.release()
        self._carried = self._carried_over(held, quiet)

    def _carried_over(self, held: Turn | None, quiet: bool) -> Turn | None:
        """What a hand-over keeps for the run's next turn: its hold, unless the run ends, the
        turn failed, or it holds more than :data:`MAX_CARRIED` documents."""
        if not self._in_run or quiet or held is None or len(held.recent) > MAX_CARRIED:
            return None
        return held

    @contextlib.contextmanager
    def writes_in_a_row(self) -> Iterator[None]:
        """Around the writer sessions of one run (an ``index`` or ``attach`` pass): the lease
        is kept from one session to the next (handed over at most every ``hold`` seconds),
        the documents the run stores are matched in this process, so the engine is asked only
        about documents stored before (or by another writer between two turns), and the
        index is refreshed when the lease is handed over, not after every batch."""
        if self._in_run or self._depth:
            yield
            return
        self._in_run = True
        try:
            yield
        finally:
            self._in_run = False
            self._carried = None  # (the run's last hold is not kept past its end)
            if self.turn is not None:
                self._hand_over()

    def see_writes(self) -> None:
        """Make this session's writes visible before a search that must see them."""
        if self.dirty:
            self.refresh()

    def lease_of(self) -> Lease:
        if self.lease is None:
            self.setup.ensure_state_index()
            self.lease = Lease(
                self.remote.client,
                self.remote.state,
                self.remote.retry,
                duration=self.remote.lease_times.duration,
                timeout=self.remote.lease_times.timeout,
                on_wait=self._waiting,
                on_take_over=self._took_over,
                sleep=self.remote.backoff.sleep,
            )
        return self.lease

    def _waiting(self, holder: Holder, waited: float) -> None:
        """The lease's report of a wait: ``on_wait`` told once per holder."""
        if self.on_wait is not None and holder.owner not in self._waited_for:
            self._waited_for.add(holder.owner)
            self.on_wait(f"waiting for another writer ({holder.describe()})")

    def _took_over(self, holder: Holder, why: str) -> None:
        """The lease's report of a lease taken over from a writer that is gone."""
        if self.on_wait is not None:
            self.on_wait(f"took over the write lease of {holder.describe()}: {why}")

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """The current session (renewed) or a session for this one call."""
        with self.writer():
            assert self.lease is not None
            self.wait_for_sent()  # (writes reach the engine in the order they were made)
            self.lease.renew()
            self.dirty = True
            yield

    def refresh(self) -> None:
        """Make every write searchable; a refresh some shard copy failed (a node lost, a primary
        being promoted) is sent again, so the next candidate search sees the last batch."""

        self.wait_for_sent()

        def send(_: Sequence[int], last: bool) -> list[int]:
            r = self.remote.retry.call(
                "refresh",
                self.remote.client.indices.refresh,
                index=f"{self.remote.name},{self.remote.clusters}",
            )
            failed = (r.get("_shards") or {}).get("failed", 0) if r else 0
            if failed and not last:
                return [0]
            if failed:
                raise EngineError(
                    f"{self.remote.location}: refresh failed on {failed} shard copies"
                )
            return []

        self.remote.backoff.resend([0], send)
        self.dirty = False
