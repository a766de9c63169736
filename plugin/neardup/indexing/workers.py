"""Signing workers: the input cut into batches and signed in worker processes
(``workers`` > 0), in input order, beside the process that tags and stores
(:mod:`neardup.indexing.ingest`), which signs a batch itself (one no worker has started yet,
or the next of the input) whenever it would otherwise wait for one. Workers are forked where
that is safe (:func:`start_method`), else spawned; they send each batch back packed
(:func:`~neardup.signing.records.pack`) and end with their parent.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import threading
from collections import deque
from typing import Any, Callable, Generator, Iterable, Iterator, Sequence

from ..config import Config
from ..engines.base import Failure
from ..runtime.allocator import keep_freed_memory
from ..runtime.cpus import CpuSample
from ..signing.records import Document, PackedBatch, Signed, pack, unpack
from ..signing.signer import Signer


def batches(docs: Iterable[Document], size: int) -> Iterator[list[Document]]:
    """Batches of ``size`` distinct ids. An id repeated in the input keeps the place of its
    first occurrence and takes the content of its last: within a batch the later document
    replaces the earlier one where it stands; across batches the later one updates the
    stored one in place (:class:`Ingest`), which keeps its arrival number. So arrival order
    is the order of first occurrences whatever the batch size. If reading fails (an
    :class:`Exception`), the documents read so far come out before the error; an interrupt
    (``KeyboardInterrupt``) gives no partial batch.

    >>> docs = [Document("a", "1"), Document("b", "2"), Document("a", "3")]
    >>> [[(d.id, d.text) for d in b] for b in batches(docs, 5)]
    [[('a', '3'), ('b', '2')]]
    """
    batch: dict[str, Document] = {}
    try:
        for d in docs:
            batch[d.id] = d  # (a repeated id keeps its first place in the dict)
            if len(batch) >= size:
                yield list(batch.values())
                batch = {}
    except Exception:
        if batch:
            yield list(batch.values())
        raise
    if batch:
        yield list(batch.values())


def pieces(batch: list[Document], first: int) -> Iterator[list[Document]]:
    """``batch`` cut into pieces of ``first`` documents, then twice as many each time.

    >>> [len(p) for p in pieces([Document(str(i), "x") for i in range(500)], 62)]
    [62, 124, 248, 66]
    """
    at, n = 0, max(1, first)
    while at < len(batch):
        yield batch[at : at + n]
        at, n = at + n, 2 * n


def sign_batch(
    signer: Signer, docs: list[Document], checked: bool = False
) -> tuple[list[Signed], list[Failure]]:
    """Sign ``docs``; a document that cannot be signed becomes a :class:`Failure`.
    ``checked``: every document passed :func:`~neardup.signing.validate.check_document` already."""
    failures: list[Failure] = []
    signed = signer.sign_batch(
        docs, on_error=lambda d, e: failures.append(Failure(d.id, str(e))), checked=checked
    )
    return signed, failures


def signed_batches(
    signer: Signer,
    docs: Iterable[Document],
    batch_size: int,
    workers: int,
    preparer: Callable[[Sequence[Signed]], Any] | None = None,
    checked: bool = False,
) -> Iterator[tuple[list[Document], list[Signed], list[Failure], Any]]:
    """(batch, signed, failures, prepared) in input order; ``workers`` > 0 signs in that many
    processes while the caller stores, 0 signs here. A single batch is signed here. Forked workers
    start with the tables this process makes first (:meth:`~neardup.signing.signer.Signer.warm_up`,
    without the compiled loops: each worker loads those while this one reads ahead) and sign
    every batch; spawned workers start from a fresh interpreter, so the first batch is
    signed here meanwhile. Forked workers get the first batch in growing pieces
    (:func:`pieces`), so that storing starts as soon as they have started. The workers also
    run ``preparer`` (:func:`~neardup.indexing.ingest.prepare_batch`: the engine's rows, the
    rule's similarities within the batch) on what they sign: ``prepared`` (None for a batch
    signed here). ``checked``: as for
    :func:`sign_batch`. If reading fails midway, what was read comes out first."""
    sign = functools.partial(_sign_here, checked=checked)
    it = batches(docs, batch_size)
    first = next(it, None)
    if first is None:
        return
    if workers <= 0:
        for b in itertools.chain([first], it):
            yield (b, *sign(signer, b))
        return
    try:
        second = next(it, None)
    except Exception:  # a reading error comes out after the batch read before it
        yield (first, *sign(signer, first))
        raise
    if second is None:
        yield (first, *sign(signer, first))
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    method = start_method()
    here: list[Document] | None = first  # the batch signed here while spawned workers start
    if method == "fork":
        # the forked workers share the tables instead of each making them
        signer.warm_up(compiled=False)
        here, it = None, itertools.chain(pieces(first, batch_size // 8), [second], it)
    else:
        it = itertools.chain([second], it)
    pool = ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context(method),
        initializer=_init_worker,
        initargs=(signer.config, signer.context, os.getpid(), preparer, checked),
    )
    yield from _signed_in_pool(pool, workers, signer, sign, _Source(it), here)


def _signed_in_pool(
    pool,
    workers: int,
    signer: Signer,
    sign: Callable,
    source: _Source,
    here: list[Document] | None,
) -> Iterator[tuple[list[Document], list[Signed], list[Failure], Any]]:
    """The batches of ``source`` signed by ``pool``'s ``workers``, in input order, for
    :func:`signed_batches`; ``here`` (if any) is signed in this process while they start.
    The pool is shut down at the end, however it comes."""
    pending: deque = deque()
    ahead = _SIGNED_AHEAD * workers  # batches signed and not yet stored, at most
    try:
        while (b := source.take()) is not None:
            # a worker started here begins with interrupts held, then ignores them
            with _interrupts_held():
                fut = pool.submit(_sign_in_worker, b)  # the workers start at their first batch
            pending.append((b, fut))
            if here is not None and len(pending) >= workers:
                yield (here, *sign(signer, here))
                here = None
            while len(pending) > 2 * workers:
                yield _next_signed(pending, signer, sign, source.take, ahead)
        # (a batch whose signing failed raises at its turn: no later batch is stored before it)
        if here is not None:
            yield (here, *sign(signer, here))
        while pending:
            yield _next_signed(pending, signer, sign, source.take, ahead)
    finally:
        # stopped early (an error, an interrupt, the caller done): the batches not begun are
        # dropped, the running ones end, and the workers with them
        pool.shutdown(wait=True, cancel_futures=True)
    if source.error is not None:
        raise source.error


class _Source:
    """The input's batches one at a time: :meth:`take` gives None at the end, and at a reading
    error, which it keeps in ``error`` (raised once what was read before is stored)."""

    def __init__(self, it: Iterator[list[Document]]):
        self._it: Iterator[list[Document]] | None = it
        self.error: Exception | None = None

    def take(self) -> list[Document] | None:
        if self._it is None:
            return None
        try:
            return next(self._it)
        except StopIteration:
            pass
        except Exception as e:  # reading failed: what was read before is still stored, in order
            self.error = e
        self._it = None
        return None


#: Batches signed ahead of the one being stored, per worker, at most (memory stays bounded
#: when a worker is slow: this process then signs up to that many itself, then waits).
_SIGNED_AHEAD = 4


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """SIGINT held (blocked) in this thread: a worker process started meanwhile inherits the
    mask, so a Ctrl-C to the whole process group cannot reach it before it ignores SIGINT
    (:func:`_init_worker`); here it is delivered when released."""
    import signal

    if (
        not hasattr(signal, "pthread_sigmask")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _next_signed(
    pending: deque,
    signer: Signer,
    sign: Callable[[Signer, list[Document]], tuple],
    take: Callable[[], list[Document] | None] = lambda: None,
    ahead: int = 0,
) -> tuple:
    """The first of ``pending`` ((batch, future or what this process signed) in input order),
    signed. Instead of waiting for a worker, this process signs: first the earliest batch no
    worker has started yet (taken back from the pool), else, while fewer than ``ahead``
    batches are pending, the next batch of the input (``take``; None at its end), which it
    keeps in order behind the others. On a busy machine the workers get what CPU the other
    processes leave them, and the pipeline never waits on them while this process could sign.
    Only where a batch is signed changes, not the order: tags follow the input order.

    >>> from concurrent.futures import Future
    >>> f = Future()  # a batch no worker has started
    >>> q = deque([(["a"], f)])
    >>> signed = lambda signer, b: (["signed " + x for x in b], [])
    >>> _next_signed(q, None, signed), f.cancelled(), len(q)
    ((['a'], ['signed a'], []), True, 0)
    >>> f = Future(); _ = f.set_running_or_notify_cancel()  # the first batch, with a worker
    >>> def take():  # the next batch of the input; meanwhile the worker is done
    ...     f.set_result((pack([]), []))
    ...     return ["b"]
    >>> q = deque([([], f)])
    >>> _next_signed(q, None, signed, take, 3), q
    (([], [], [], None), deque([(['b'], (['signed b'], []))]))
    """
    from concurrent.futures import Future

    b0, head = pending[0]
    while isinstance(head, Future) and not head.done():
        for i, (b, f) in enumerate(pending):
            if isinstance(f, Future) and f.cancel():
                pending[i] = (b, sign(signer, b))
                break
        else:  # every batch left is with a worker: sign the next one of the input here
            nxt = take() if len(pending) < ahead else None
            if nxt is None:
                break  # (none left, or enough signed ahead): wait for the first
            pending.append((nxt, sign(signer, nxt)))
        head = pending[0][1]
    pending.popleft()
    return (b0, *(_reattach(b0, *head.result()) if isinstance(head, Future) else head))


def signed_ahead(batches_in: Generator[Any, None, None], ahead: int = 1) -> Iterator[Any]:
    """The items of ``batches_in`` (signed batches), made in a thread up to ``ahead`` items
    before the caller takes them: the next batch is read and signed while the caller stores
    the last one and waits on the engine (a request's wait releases the GIL). Items and a
    reading or signing error come out in order; when the caller stops taking them (closes
    this generator, an error, an interrupt), the thread ends after the item it is making, and
    what it made is dropped.

    >>> list(signed_ahead(x for x in [1, 2, 3]))
    [1, 2, 3]
    >>> def failing():
    ...     yield 1
    ...     raise ValueError("line 2: not JSON")
    >>> out = []
    >>> try:
    ...     for x in signed_ahead(failing()):
    ...         out.append(x)
    ... except ValueError as e:
    ...     out.append(str(e))
    >>> out
    [1, 'line 2: not JSON']
    """
    import queue

    items: queue.Queue = queue.Queue(maxsize=max(1, ahead))
    done = threading.Event()

    def put(item: tuple[str, Any]) -> bool:
        while not done.is_set():
            try:
                items.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def make() -> None:
        try:
            for item in batches_in:
                if not put(("item", item)):
                    break
            else:
                put(("end", None))
        except BaseException as e:  # noqa: BLE001 - handed to the caller, in order
            put(("error", e))
        finally:
            batches_in.close()

    worker = threading.Thread(target=make, name="neardup-signing", daemon=True)
    worker.start()
    try:
        while True:
            kind, value = items.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        done.set()
        worker.join()


def start_method() -> str:
    """How signing workers start: ``fork`` where the platform forks safely (not macOS) and
    this process runs no other thread, so that they begin with every module imported and
    every table made; else ``spawn`` (a fresh interpreter). With another thread running (a
    write lease kept alive), a lock it held at the fork would stay held in the workers.
    numpy's OpenBLAS threads are not Python threads: OpenBLAS shuts them down at a fork (its
    ``pthread_atfork`` handler) and the workers start their own."""
    import multiprocessing
    import sys

    if (
        sys.platform != "darwin"
        and "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
    ):
        return "fork"
    return "spawn"


_worker_signer: Signer | None = None
_worker_preparer: Callable[[Sequence[Signed]], Any] | None = None
_worker_checked = False


def _init_worker(
    config: Config,
    context: dict[str, Any],
    parent: int,
    preparer: Callable[[Sequence[Signed]], Any] | None = None,
    checked: bool = False,
) -> None:
    global _worker_signer, _worker_preparer, _worker_checked
    keep_freed_memory()  # (a forked worker has its parent's setting; a spawned one sets it)
    _worker_signer = Signer(config, context)
    _worker_preparer = preparer
    _worker_checked = checked
    # (at the same priority as their parent: a niced worker on a busy machine starves, and the
    # batch it holds stops the pipeline; the parent signs itself rather than wait for one)
    # Ctrl-C reaches the whole process group: the parent decides what an interrupt stops
    # (it stops storing at a batch's end and shuts the workers down); a worker goes on
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()


def _exit_with_parent(parent: int, every: float = 0.5) -> None:
    """End this worker when its parent is gone (killed, even with SIGKILL): the worker is
    then re-parented, so ``os.getppid()`` changes."""
    import time

    while os.getppid() == parent:
        time.sleep(every)
    os._exit(1)


def _sign_here(
    signer: Signer, docs: list[Document], checked: bool = False
) -> tuple[list[Signed], list[Failure], None]:
    """:func:`sign_batch` in this process: nothing prepared (the engine does it as it stores)."""
    return (*sign_batch(signer, docs, checked), None)


def _sign_in_worker(
    docs: list[Document],
) -> tuple[PackedBatch, list[Failure], Any]:
    """Sign in a worker process; the documents are not sent back (the parent has them), the
    signatures go back packed (:func:`~neardup.signing.records.pack`), with what the engine
    prepared."""
    assert _worker_signer is not None
    signed, failures = sign_batch(_worker_signer, docs, _worker_checked)
    prepared = _worker_preparer(signed) if _worker_preparer is not None else None
    return pack(signed), failures, prepared


def _reattach(
    docs: list[Document],
    packed: PackedBatch,
    failures: list[Failure],
    prepared: Any = None,
) -> tuple[list[Signed], list[Failure], Any]:
    failed = {f.id for f in failures}
    return unpack(packed, [d for d in docs if d.id not in failed]), failures, prepared


def default_workers(
    cpus: int | None = None, idle: float | None = None, sample: CpuSample | None = None
) -> int:
    """Signing processes beside the one that tags and stores: one per idle CPU less the one
    the storing process itself takes (it signs too whenever it would wait), none on a single
    CPU. Idle CPUs: ``idle``, else what the other processes left idle since ``sample``
    (:meth:`~neardup.runtime.cpus.CpuSample.idle_cpus`: the command line's, begun before it
    loaded the command, so that nothing waits for it; else one begun now, a short wait), not
    the load average, which still counts a run that has just ended, rounded. On a machine
    that is busy already, workers would only share the CPUs the others leave while costing
    their own start and the copying of every batch to them, so the storing process signs
    alone.

    >>> default_workers(8, 7.7), default_workers(8, 2.4), default_workers(2, 1.8)
    (7, 1, 1)
    >>> default_workers(2, 1.0), default_workers(2, 0.0), default_workers(1, 1.0)
    (0, 0, 0)
    """
    n = (os.cpu_count() or 1) if cpus is None else cpus
    if n <= 1:
        return 0
    free = (sample or CpuSample()).idle_cpus(n) if idle is None else idle
    return max(0, int(min(free, n) + 0.5) - 1)


__all__ = [
    "batches",
    "default_workers",
    "pieces",
    "sign_batch",
    "signed_ahead",
    "signed_batches",
    "start_method",
]
