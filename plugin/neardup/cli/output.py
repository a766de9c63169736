"""Printing data literally and safely.

Data (ids, titles, snippets, file names, engine addresses) is never read as rich markup and
never reaches a terminal as control sequences:

* :func:`clean` redacts credentials (:func:`neardup.runtime.redact.redact`) and replaces control
  characters -- C0 except tab and newline, DEL, C1 (so ``ESC ]0;... BEL``, which sets a
  terminal's title, or ``ESC [31m``, a colour, is shown as text), bidirectional overrides,
  embeddings and isolates (which reorder what is shown), line and paragraph
  separators -- and lone surrogates with a visible ``\\xNN`` / ``\\uNNNN`` form, so
  nothing is hidden and nothing is interpreted;
* :func:`safe` is :func:`clean` with rich markup escaped, for data put inside a markup string;
* :func:`json_text` is JSON whose strings hold C1 and format controls, separators and lone
  surrogates as ``\\uNNNN`` escapes (the same values, nothing lost, but inert in a terminal),
  with credentials redacted.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import sys
from typing import Any

from ..runtime.redact import redact

_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]"
)
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]")


def _visible(m: re.Match) -> str:
    c = m.group()
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def clean(text: object) -> str:
    """``text`` with credentials redacted and every control character made visible text."""
    s = "" if text is None else text if isinstance(text, str) else str(text)
    return redact(_CONTROL.sub(_visible, s))


def safe(text: object) -> str:
    """:func:`clean`, with rich markup escaped: for data inside a markup string (rich loads
    here, so output that prints no markup, such as JSON, does not import it)."""
    from rich.markup import escape

    return escape(clean(text))


def one_line(text: object) -> str:
    """:func:`clean` of ``text`` on one line (newlines and tabs as spaces)."""
    return " ".join(clean(text).split())


def json_text(obj: Any, default: Any = None, indent: int | None = 2) -> str:
    """JSON of ``obj`` safe to print: credentials redacted, terminal-affecting characters
    escaped as ``\\uNNNN`` (the JSON value is the same)."""
    s = json.dumps(obj, ensure_ascii=False, indent=indent, default=default)
    s = _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", s)
    return redact(s)


def terminal_text(text: str) -> str:
    """Text for standard output: :func:`clean` when it is a terminal, else only redacted
    (a file or pipe gets the data as it is)."""
    import sys

    return clean(text) if sys.stdout.isatty() else redact(text)


class ClosedStream(io.TextIOBase):
    """What ``sys.stdout`` / ``sys.stderr`` become when the process started with that
    descriptor closed (``>&-``): Python leaves them ``None``, and ``click.echo`` then writes
    nothing and the command exits 0. Every write raises ``OSError(EBADF)`` instead, which
    the command line reports as one line with a non-zero status."""

    def __init__(self, name: str):
        super().__init__()
        self._name = name

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, s: str) -> int:
        raise OSError(errno.EBADF, f"{self._name} is closed: nothing can be written to it")

    def flush(self) -> None:  # (nothing was written)
        pass


def guard_standard_streams() -> None:
    """Standard output and error that were closed when the process started: their
    descriptors are held on the null device (a file opened later must never get descriptor
    1 or 2, where a stray write would corrupt it) and their Python streams refuse writes
    (:class:`ClosedStream`), so writing output fails loudly instead of going nowhere."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
            continue
        except OSError as e:
            if e.errno != errno.EBADF:
                continue
        null = os.open(os.devnull, os.O_WRONLY)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        setattr(sys, name, ClosedStream(f"standard {'output' if fd == 1 else 'error'}"))
