"""SQLite failures told apart once, by result code, and said as one line about the storage."""

from __future__ import annotations

import sqlite3

from ...runtime.retry import Backoff
from ..base import EngineError

#: SQLite's primary result codes (https://sqlite.org/rescode.html) -> the kind of failure.
_FAILURES = {
    3: "read-only",
    5: "busy",
    6: "busy",
    8: "read-only",
    10: "io",
    11: "damaged",
    13: "full",
    14: "cannot-open",
    26: "damaged",
}
#: SQLite's message of each of those codes (``sqlite3_errstr``): the code where Python has
#: no ``sqlite_errorcode`` (before 3.11).
_ERRSTR = {
    "database is locked": 5,
    "database table is locked": 6,
    "attempt to write a readonly database": 8,
    "disk I/O error": 10,
    "database disk image is malformed": 11,
    "database or disk is full": 13,
    "unable to open database file": 14,
    "file is not a database": 26,
    "access permission denied": 3,
}


def sqlite_failure(e: BaseException) -> str | None:
    """The kind of a SQLite failure, by its result code: "busy" (another connection holds
    the lock), "read-only", "full" (disk or quota), "io", "damaged" (not a database, or a
    malformed one), "cannot-open", "rolled-back" (a COMMIT after SQLite rolled the
    transaction back itself, on a full disk or an I/O error) or "other"; None where ``e`` is
    no ``sqlite3.Error``. The one place SQLite errors are told apart.

    >>> db = sqlite3.connect(":memory:", isolation_level=None)
    >>> try:
    ...     db.execute("COMMIT")
    ... except sqlite3.Error as e:
    ...     sqlite_failure(e)
    'rolled-back'
    """
    if not isinstance(e, sqlite3.Error):
        return None
    code = getattr(e, "sqlite_errorcode", None)
    if code is None:
        code = next((c for text, c in _ERRSTR.items() if str(e).startswith(text)), None)
    kind = _FAILURES.get(code & 0xFF) if code is not None else None
    # (Python's message: SQLite's own code is a plain SQLITE_ERROR)
    if kind is None and "no transaction is active" in str(e):
        return "rolled-back"
    return kind or "other"


def lock_wait(seconds: float, maximum: float) -> Backoff:
    """The retry policy while another process holds a SQLite file's lock: from 50 ms,
    doubling up to ``maximum``, for ``seconds`` in all."""
    return Backoff(max_retries=None, initial=0.05, maximum=maximum, deadline=seconds)


READ_ONLY_HINT = (
    "it can be read (query, search, info, show, export, clusters --no-write, report) "
    "but not written"
)
_KEPT_HINT = (
    "what was committed before is kept (whole batches only); make room and run the same "
    "command again: documents are upserted by id, so nothing is stored twice"
)


def storage_problem(path: str, e: BaseException) -> str | None:
    """What a SQLite error says about the storage of ``path`` (one line: what is kept and
    what to do), by its kind (:func:`sqlite_failure`), or None when it is about the data (a
    row refused, a query): a full disk or read-only storage is never called a damaged index.

    >>> e = sqlite3.OperationalError("attempt to write a readonly database")
    >>> storage_problem("x.db", e).split(":")[0]
    'x.db is on read-only storage (attempt to write a readonly database)'
    """
    kind = sqlite_failure(e)
    if kind == "full":
        return f"{path}: the disk is full ({e}): {_KEPT_HINT}"
    if kind in ("io", "rolled-back"):
        return f"{path}: disk I/O error ({e}): the disk may be full or failing: {_KEPT_HINT}"
    if kind == "read-only":
        return f"{path} is on read-only storage ({e}): {READ_ONLY_HINT}"
    if kind == "busy":
        return (
            f"{path} is busy ({e}): another process is writing it; run again when it has finished"
        )
    if kind == "cannot-open":
        return f"{path}: cannot open ({e}): is its folder there and readable?"
    if kind == "damaged":
        return f"{path} may be damaged, or is not a neardup index ({e})"
    return None


class StorageError(EngineError):
    """The storage of the index failed (full, read-only, failing, busy, damaged), not one
    document: the whole operation stops with one message."""


def not_an_index(path: str, e: sqlite3.Error) -> EngineError:
    """The error for a database that could not be read as a neardup index: named for the
    storage problem when it is one."""
    problem = storage_problem(path, e)
    return StorageError(problem) if problem else EngineError(f"{path} is not a neardup index ({e})")


class Locked(EngineError):
    """The file is locked by another process for now (it may be creating the index)."""


def raise_if_locked(e: sqlite3.DatabaseError) -> None:
    if sqlite_failure(e) == "busy":
        raise Locked(str(e)) from None
