"""Tables derived once per machine and kept on disk between processes.

The canonical steps look characters up in arrays indexed by code point (token characters,
digits, letters and their scripts, characters NFKC may change). Each is derived from the
running Python's Unicode database by a loop over all of Unicode, 50-80 ms apiece: paid by
every process that signs a text, a one-text ``neardup query`` included. The banding of a new
index (:func:`neardup.sketches.lsh.optimal_lsh`, a search over every (b, r, m)) takes about 0.1 s.
:func:`cached_table` makes such a table once per machine and loads it afterwards (about a
millisecond).

A table is stored as ``.npy`` (format version 3.0, whose header numpy parses without the
tokenizer pass it gives the older versions' headers) under ``$NEARDUP_CACHE_DIR``, else
``$XDG_CACHE_HOME/neardup``, else ``~/.cache/neardup``, in a file named for the table, the
Unicode version, the Python version and the size and modification time of the module that
derives it (a changed module or another Python makes a new file). It is written to a
temporary file and renamed into place, so a reader never sees half a table, and read by
mapping the file (a process reads only the pages it looks up); a cache that cannot be read
or written (a read-only home, a damaged file) only costs the time to derive the table again.
"""

from __future__ import annotations

import contextlib
import os
import sys
import unicodedata
from pathlib import Path
from typing import Callable

import numpy as np


def cache_dir() -> Path:
    """Where tables are kept (see the module's docstring).

    >>> import os; os.environ["NEARDUP_CACHE_DIR"] = "/tmp/nd-cache"; str(cache_dir())
    '/tmp/nd-cache'
    >>> del os.environ["NEARDUP_CACHE_DIR"]
    """
    explicit = os.environ.get("NEARDUP_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "neardup"


def cached_table(
    name: str, make: Callable[[], np.ndarray], source: str, *more_sources: str
) -> np.ndarray:
    """``make()``, kept on disk under ``name`` for the module file ``source`` that defines it
    and any ``more_sources`` whose rules it reads (the size and modification time of each are
    part of the file name). The result is read-only.

    >>> import tempfile, os; os.environ["NEARDUP_CACHE_DIR"] = tempfile.mkdtemp()
    >>> calls = []
    >>> make = lambda: calls.append(1) or np.arange(3, dtype=np.uint8)
    >>> [cached_table("demo", make, __file__).tolist() for _ in range(2)], len(calls)
    ([[0, 1, 2], [0, 1, 2]], 1)
    >>> del os.environ["NEARDUP_CACHE_DIR"]
    """
    try:
        v = sys.version_info
        stamp = f"u{unicodedata.unidata_version}-py{v[0]}.{v[1]}-npy3" + "".join(
            f"-{st.st_size:x}-{st.st_mtime_ns:x}" for st in map(os.stat, (source, *more_sources))
        )
        path: Path | None = cache_dir() / f"{name}-{stamp}.npy"
    except (OSError, RuntimeError):  # (RuntimeError: no home directory to put the cache in)
        path = None
    table = None
    if path is not None:
        with contextlib.suppress(OSError, ValueError, EOFError):
            table = np.asarray(np.load(path, mmap_mode="r", allow_pickle=False))
    if table is None:
        table = np.asarray(make())
        if path is not None:
            with contextlib.suppress(OSError):
                _save(path, table)
    table.flags.writeable = False
    return table


def _save(path: Path, table: np.ndarray) -> None:
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.lib.format.write_array(f, table, version=(3, 0), allow_pickle=False)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
