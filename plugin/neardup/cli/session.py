"""What every command does around its work: open the index (its errors become messages),
print data literally, show progress, say what it waits for, and note the recall expected
below the index's threshold."""

from __future__ import annotations

import sys
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
    engine.on_wait = lambda message: click.echo(message, err=True)


def recall_note(nd: Any, t: float, recall: float) -> str:
    return (f"note: the index's signature keys were tuned for resemblance >= {nd.config.threshold}; a pair at {t} shares "
            f"enough MinHash bands with probability {recall:.2f} (more between {t} and {nd.config.threshold}), so some "
            f"pairs in that range may be missed. Index with --threshold {t} for full recall there.")
