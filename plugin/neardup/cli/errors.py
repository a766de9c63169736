"""Errors that reach the top of the command line: one clear line each, never a secret.

A full disk, an unreadable file, storage that is read-only and input nested too deeply are
problems of the machine or the data, not bugs: they are reported as ``error: ...`` with what
is kept and what to do, and the exit status is 1. Anything else is a bug: its traceback is
printed (credentials redacted, control characters shown) and the exit status is 1.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import sys
import traceback

import click

from ..errors import NeardupError
from .output import clean

_DISK_FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG)
_KEPT = (
    "what was committed before is kept (a commit every few seconds, whole batches only); make "
    "room and run the same command again: documents are upserted by id, so nothing is stored "
    "twice"
)


def describe(e: BaseException) -> str | None:
    """A clear message for an expected failure, or None for a bug. Every error of neardup
    (``NeardupError``, hazm missing for an option that needs it included) is its message."""
    if isinstance(e, NeardupError):
        return str(e)
    if isinstance(e, sqlite3.Error):
        return _sqlite_problem(e)
    if isinstance(e, OSError):
        return _os_problem(e)
    if isinstance(e, RecursionError):
        return (
            "input nested too deeply to process (objects or arrays inside each other hundreds of "
            "levels deep)"
        )
    if isinstance(e, MemoryError):
        return "out of memory: use a smaller --batch-size or fewer --workers"
    return None


def _sqlite_problem(e: sqlite3.Error) -> str | None:
    """What an error of the embedded index's SQLite means, or None for a bug."""
    from ..engines.embedded import storage_problem

    # (classified by SQLite's result code, once, in the engine; the file is not known here)
    problem = storage_problem("the index", e)
    if problem is not None:
        return problem
    if isinstance(e, sqlite3.DatabaseError):
        return f"the index cannot be used ({e}): it may be damaged, or not a neardup index"
    return None


def _os_problem(e: OSError) -> str:
    """An error of the machine (a full disk, a file not allowed) with the file it names."""
    where = f"{os.fsdecode(e.filename)}: " if e.filename is not None else ""
    if e.errno in _DISK_FULL:
        return f"{where}no space left ({e.strerror}): {_KEPT}"
    if isinstance(e, PermissionError):
        return f"{where}permission denied"
    return f"{where}{e.strerror or e}"


def caused_by_interrupt(e: BaseException) -> bool:
    """True when ``e`` is, or was raised while handling, a Ctrl-C (``KeyboardInterrupt``):
    one raised inside a compiled loop or a C library can come out as another exception
    (``SystemError``) chained to it.

    >>> try:
    ...     try:
    ...         raise KeyboardInterrupt
    ...     except KeyboardInterrupt as k:
    ...         raise SystemError("returned a result with an exception set") from k
    ... except SystemError as e:
    ...     caused_by_interrupt(e), caused_by_interrupt(ValueError("x"))
    (True, False)
    """
    seen: set[int] = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, KeyboardInterrupt):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


#: What a command interrupted with Ctrl-C has kept, and how to go on (by command).
_RESUME = {
    "index": "the input up to the last batch stored is stored, nothing after it; run the same "
    "command again to go on (documents already stored keep their place and tags, nothing is "
    "stored twice)",
    "attach": "the documents signed before are kept; run the same command again to go on",
    "retag": "tags committed before are kept; run 'neardup retag' again to finish",
    "dedup": "nothing was written and the temporary index is removed; run the same command again",
    "clusters": "the stored clusters are as before",
    "delete": "the documents deleted before are gone and their dependants re-tagged; "
    "run it again to finish",
}


def interrupted(command: str | None) -> None:
    """Ctrl-C: say what is kept and how to go on, exit with status 130 (128 + SIGINT, as a
    shell does)."""
    what = _RESUME.get(command or "", "")
    click.echo(
        f"\ninterrupted{f' ({command})' if command else ''}" + (f": {what}" if what else ""),
        err=True,
    )
    sys.exit(130)


def reader_gone() -> None:
    """The reader of standard output went away (``| head``): nothing to say, status 0; what
    is still buffered, and anything written later, goes to the null device (so that the
    interpreter's own flush at exit finds no broken pipe either)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    sys.exit(0)


def report_unexpected(e: BaseException) -> None:
    """Print ``e`` (a message, or a redacted traceback for a bug) and exit with status 1."""
    # the reader of our output went away (| head): nothing to say
    if isinstance(e, BrokenPipeError):
        reader_gone()
    message = describe(e)
    if message is None:
        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        click.echo(clean(tb), err=True, nl=False)
        message = (
            f"unexpected {type(e).__name__}: {e} "
            "(a bug in neardup: please report it with the traceback above)"
        )
    click.echo(click.style("error: ", fg="red", bold=True) + clean(message), err=True)
    sys.exit(1)
