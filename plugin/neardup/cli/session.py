"""What every command does around its work: open the index (its errors become messages),
print data literally, show progress, say what it waits for, and note the recall expected
below the index's threshold."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Any, Iterator

import click

from .options import fail


@contextmanager
def opened(target: str, engine_opts: dict, config=None, create: bool = False) -> Iterator[Any]:
    """Open the index, turning engine and settings errors into clear messages."""
    from ..api import NearDup
    from ..config import ConfigError
    from ..engines.base import EngineError

    try:
        nd = NearDup.open(target, config, create=create, **engine_opts)
    except (EngineError, ConfigError) as e:
        fail(str(e))
    try:
        yield nd
    except EngineError as e:
        fail(str(e))
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
            click.echo("interrupted: stopping after the batch being stored (Ctrl-C again to stop at once)", err=True)
        except (OSError, ValueError):
            pass

    old = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield lambda: asked[0] > 0
    finally:
        signal.signal(signal.SIGINT, old)


def console():
    from rich.console import Console

    return Console(soft_wrap=False, emoji=False)  # data is printed as written: ":rocket:" stays text


def progress(total: int | None, label: str, quiet: bool):
    """A progress bar on stderr (none with ``quiet`` or when stderr is no terminal), drawn
    from the thread that advances it, at most ten times a second: no refresh thread, so the
    process stays single-threaded and its signing workers can be forked
    (:func:`neardup.ingest.start_method`)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from rich.console import Console

    class DrawnOnAdvance(Progress):
        drawn = 0.0

        def advance(self, task_id, advance: float = 1) -> None:
            super().advance(task_id, advance)
            now = time.monotonic()
            if now - self.drawn >= 0.1:
                self.drawn = now
                self.refresh()

    cols = [TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
            TimeElapsedColumn(), TimeRemainingColumn()] if total else [TextColumn("[bold]{task.description}"), MofNCompleteColumn(), TimeElapsedColumn()]
    return DrawnOnAdvance(*cols, console=Console(stderr=True), disable=quiet or not sys.stderr.isatty(), transient=False, auto_refresh=False)


def announce_waits(engine: Any) -> None:
    """Say on stderr what this command waits for: who holds the write lease (HTTP engines,
    once per holder), or the embedded engine's message (another process's write lock, a
    full-text index being brought up to date)."""
    if not hasattr(engine, "on_wait"):
        return
    seen: set[str] = set()

    def on_wait(what: Any, waited: float | None = None) -> None:
        if isinstance(what, str):
            click.echo(what, err=True)
        elif what.owner not in seen:
            seen.add(what.owner)
            click.echo(f"waiting for another writer ({what.describe()})", err=True)

    engine.on_wait = on_wait


def recall_note(nd: Any, t: float, recall: float) -> str:
    return (f"note: the index's signature keys were tuned for resemblance >= {nd.config.threshold}; a pair at {t} shares "
            f"enough MinHash bands with probability {recall:.2f} (more between {t} and {nd.config.threshold}), so some "
            f"pairs in that range may be missed. Index with --threshold {t} for full recall there.")
