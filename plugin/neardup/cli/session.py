"""What every command does around its work: open the index (its errors become messages),
print data literally, show progress, say what it waits for, and note the recall expected
below the index's threshold."""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

import click


@contextmanager
def opened(target: str, engine_opts: dict, config=None, create: bool = False) -> Iterator[Any]:
    """Open the index, and close it after (its errors are messages of :mod:`.errors`)."""
    from ..api import NearDup

    nd = NearDup.open(target, config, create=create, **engine_opts)
    try:
        yield nd
    finally:
        nd.close()


@contextmanager
def interrupt_at_batch_end() -> Iterator[Any]:
    """While inside, the first Ctrl-C (SIGINT) only asks the run to stop: the returned
    function answers true from then on, and ``index`` stops after the batch it is storing
    (everything before it committed, nothing after: running the same command again goes on
    from there). A second Ctrl-C stops at once (``KeyboardInterrupt``: the batch being stored
    is rolled back). Outside the main thread nothing changes."""
    import signal
    import threading

    asked = [0]
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return

    def on_interrupt(signum: int, frame: Any) -> None:
        asked[0] += 1
        if asked[0] > 1:
            raise KeyboardInterrupt
        try:
            click.echo(
                "interrupted: stopping after the batch being stored (Ctrl-C again to stop at once)",
                err=True,
            )
        except (OSError, ValueError):
            pass

    old = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield lambda: asked[0] > 0
    finally:
        signal.signal(signal.SIGINT, old)


def console():
    """A rich console on standard output; a reader that goes away (``| head``) ends the
    command quietly with status 0, as everywhere (rich's own default is status 1)."""
    from rich.console import Console

    class Quiet(Console):
        def on_broken_pipe(self) -> None:
            from .errors import reader_gone

            reader_gone()

    return Quiet(soft_wrap=False, emoji=False)  # data is printed as written: ":rocket:" stays text


def progress(total: int | None, label: str, quiet: bool):
    """A progress bar on stderr (none with ``quiet``), drawn from the thread that advances
    it, at most ten times a second: no refresh thread, so the process stays single-threaded
    and its signing workers can be forked (:func:`neardup.indexing.workers.start_method`). When
    stderr is no terminal, a line when it starts and one with its time when it ends instead
    (:class:`Undrawn`: no bar is drawn, so rich is not loaded)."""
    if quiet or not sys.stderr.isatty():
        return Undrawn(label, told=not quiet)
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from rich.console import Console

    class DrawnOnAdvance(Progress):
        drawn = 0.0

        def advance(self, task_id, advance: float = 1) -> None:
            super().advance(task_id, advance)
            now = time.monotonic()
            if now - self.drawn >= 0.1:
                self.drawn = now
                self.refresh()

    cols = (
        [
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.percentage:>3.0f}%"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
        ]
        if total
        else [TextColumn("[bold]{task.description}"), MofNCompleteColumn(), TimeElapsedColumn()]
    )
    return DrawnOnAdvance(
        *cols,
        console=Console(stderr=True),
        transient=False,
        auto_refresh=False,
    )


class Undrawn:
    """The progress of a command that draws no bar (:func:`progress` with ``quiet``, or stderr
    no terminal): the bar's ``add_task`` and ``advance`` do nothing; ``told``: a line on stderr
    when it starts, and one with its time when it ends."""

    def __init__(self, label: str, *, told: bool) -> None:
        self.label, self.told, self.started = label, told, 0.0

    def __enter__(self) -> Undrawn:
        if self.told:
            self.started = time.monotonic()
            click.echo(f"{self.label} ...", err=True)
        return self

    def __exit__(self, kind: Any, *rest: Any) -> None:
        if self.told and kind is None:
            took = time.monotonic() - self.started
            click.echo(f"{self.label}: done in {took:.1f} s", err=True)

    def add_task(self, description: str, total: float | None = None) -> int:
        return 0

    def advance(self, task_id: int, advance: float = 1) -> None:
        pass


def announce_waits(engine: Any) -> None:
    """Say on stderr what this command waits for: who holds the write lease (HTTP engines,
    once per holder), or the embedded engine's message (another process's write lock, a
    full-text index being brought up to date)."""
    engine.on_wait = lambda message: click.echo(message, err=True)


def recall_note(nd: Any, t: float, recall: float) -> str:
    return (
        f"note: the index's signature keys were tuned for resemblance >= {nd.config.threshold}; "
        f"a pair at {t} shares enough MinHash bands with probability {recall:.2f} "
        f"(more between {t} and {nd.config.threshold}), so some pairs in that range may be "
        f"missed. Index with --threshold {t} for full recall there."
    )


#: Seconds a step may run before :func:`slow_notice` says what it is doing.
NOTICE_AFTER = 1.0


@contextmanager
def slow_notice(message: str, quiet: bool = False, after: float = NOTICE_AFTER) -> Iterator[None]:
    """Say on stderr what the command is doing when the block takes longer than ``after``
    seconds: on a terminal a spinner with ``message`` and a live timer (erased at the end),
    elsewhere one line when it starts to take long and one with its time at the end. A
    block done sooner prints nothing. The timer runs in a thread of its own, stopped before
    the block's end returns (so processes forked later are single-threaded)."""
    if quiet:
        yield
        return
    done = threading.Event()
    start = time.monotonic()
    shown = threading.Event()
    tty = sys.stderr.isatty()

    def watch() -> None:
        if done.wait(after):
            return
        shown.set()
        if not tty:
            click.echo(f"{message} ...", err=True)
            return
        from rich.console import Console
        from rich.progress import Progress, ProgressColumn, SpinnerColumn, TextColumn
        from rich.text import Text

        class Elapsed(ProgressColumn):
            def render(self, task: Any) -> Text:
                return Text(f"{time.monotonic() - start:.0f} s", style="progress.elapsed")

        with Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            Elapsed(),
            console=Console(stderr=True),
            transient=True,
            refresh_per_second=4,
        ) as bar:
            bar.add_task(message, total=None)
            done.wait()

    watcher = threading.Thread(target=watch, name="neardup-notice", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
        if shown.is_set():
            click.echo(f"{message}: done in {time.monotonic() - start:.1f} s", err=True)


def ready_to_sign(nd: Any, quiet: bool = False) -> None:
    """Make what signing makes once per machine before any document is read, saying so when
    it takes long, so that a progress bar never stands still at 0% meanwhile: every signing
    path's tables (kept on disk), and the Persian steps and hazm's word lists that Persian
    full-text search needs, once per machine and version of the Persian loops (a mark kept
    by :func:`neardup.runtime.tablecache.cached_table`), so that the first search after the
    first index answers at once; later runs load them only where a text needs them. (The
    compiled loops are built at install: nothing compiles here.)"""
    from ..runtime.tablecache import cached_table

    with slow_notice(
        "preparing the signing tables (once after install)", quiet=quiet, after=2 * NOTICE_AFTER
    ):
        cached_table("warmed-up-persian", lambda: _warm_up_persian(nd.config), _persian_source())


def _persian_source() -> str:
    """The file of the Persian loops: a new version is warmed up again."""
    import importlib.util

    spec = importlib.util.find_spec("neardup.canonical.persian_loops")
    return str(spec.origin) if spec is not None and spec.origin else __file__


def _warm_up_persian(config: Any) -> Any:
    """:func:`_warm_up` of the Persian text, and hazm's word lists for Persian search (where
    hazm is installed); an empty array: the mark :func:`ready_to_sign` keeps."""
    import numpy as np

    from ..canonical.persian import HazmMissing, has_hazm, hazm_words, mi_verbs

    try:
        _warm_up(config, _WARM_UP_TEXTS)
    except HazmMissing:  # these settings sign Persian with hazm's steps: Persian documents say so
        pass
    if has_hazm():  # (kept on disk once made)
        hazm_words(), mi_verbs()
    return np.zeros(0, dtype=np.uint8)


def _warm_up(config: Any, texts: tuple[str, ...]) -> None:
    """Sign and tag ``texts`` (each twice) on a throw-away index: every step they take runs once."""
    from ..api import NearDup
    from ..signing.records import Document

    with NearDup.open(":memory:", config) as scratch:
        scratch.index([Document(str(i), text) for i, text in enumerate(texts * 2)], workers=0)


#: Texts that take every signing path once: Latin, Cyrillic and Persian letters, digits,
#: punctuation, marks, ZWNJ, NFKC forms; each twice, so that tagging verifies a pair.
_WARM_UP_TEXTS = (
    "Warm up, the ﬁle № 1\u0967: café, cafe\u0301, naïve words (and more) — ‘quoted’ “text”; "
    "42 items! \u0301x",
    "Разогрев: ёлка, «ели» и сосны — 3 дерева; это проверка текста, йод и\u0306од.",
    "این یک متنِ آزمایشی است: می‌خواهم «کتاب‌ها» را بخوانم، ۱۲ صفحه؛ آیا؟ كتاب علي ا\u0654ثر ﻻ",
)
