"""Which form of the signing loops runs: compiled (C, built when pip installs neardup) or
interpreted (Python).

Each module of loops has two forms with the same functions, giving the same values bit for
bit (tests/test_loops.py, tests/test_canonical_fast.py):

* the interpreted form, ``<package>.<name>`` (Python loops over numpy arrays): the one
  readable statement of each loop, and the reference;
* the compiled form, ``<package>._<name>`` (C, through the buffer protocol), built at install
  by setup.py as an optional extension: where no C compiler works the install goes on
  without it, as msgpack's and PyYAML's do.

:func:`loops` gives the compiled form, unless the context asks for the interpreted one
(:func:`interpreted_loops`: the explicit switch) or the compiled form is not installed; then
the interpreted form runs (much slower), and neardup says so once, on stderr, with the
command that fixes it. The form asked for is a context variable: nothing depends on what
the process imported before.

>>> with interpreted_loops():
...     loops("neardup.sketches.hashing_loops").__name__, mode()
('neardup.sketches.hashing_loops', 'interpreted')
>>> compiled_name("neardup.sketches.hashing_loops")
'neardup.sketches._hashing_loops'
"""

from __future__ import annotations

import importlib
import sys
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from types import ModuleType
from typing import Iterator, Literal

Mode = Literal["compiled", "interpreted"]

_MODE: ContextVar[Mode] = ContextVar("neardup_loops_mode", default="compiled")

#: The modules of loops, by the name of their interpreted form.
MODULES = (
    "neardup.sketches.hashing_loops",
    "neardup.sketches.minhash_loops",
    "neardup.sketches.ragged_loops",
    "neardup.sketches.sampling_loops",
    "neardup.sketches.simhash_loops",
    "neardup.canonical.letters_loops",
    "neardup.canonical.persian_loops",
    "neardup.canonical.scripts_loops",
    "neardup.canonical.offsets_loops",
    "neardup.engines.embedded.packing",
)

#: What neardup says, once, where the compiled form is missing.
FALLBACK_NOTICE = (
    "neardup: its compiled loops are not installed (no C compiler at install), so it runs them"
    " interpreted, much slower; to fix, in the neardup checkout:"
    " apt-get install -y gcc python3-dev && pip install --force-reinstall --no-deps ."
)


def mode() -> Mode:
    """ "compiled" or "interpreted": the form this context asks for."""
    return _MODE.get()


def compiled_name(name: str) -> str:
    """The name of the compiled form of the module of loops ``name``: ``<package>._<leaf>``."""
    package, _, leaf = name.rpartition(".")
    return f"{package}._{leaf}"


def compiled(name: str) -> ModuleType | None:
    """The compiled form of the module of loops ``name`` where this context runs it: None
    inside :func:`interpreted_loops`, or where it is not installed (said once on stderr)."""
    if _MODE.get() == "interpreted":
        return None
    module = _compiled_module(name)
    if module is None:
        _say_interpreted()
    return module


def loops(name: str) -> ModuleType:
    """The module of loops ``name`` in the form this context runs: :func:`compiled`, else the
    interpreted form."""
    return compiled(name) or importlib.import_module(name)


def installed() -> bool:
    """Whether the compiled form of every module of loops is installed (loads each)."""
    return not missing()


def missing() -> list[str]:
    """The compiled forms (by :func:`compiled_name`) of the modules of loops that are not
    installed, in the order of :data:`MODULES` (loads each).

    >>> installed() == (missing() == [])
    True
    """
    return [compiled_name(name) for name in MODULES if _compiled_module(name) is None]


@contextmanager
def interpreted_loops() -> Iterator[None]:
    """Run the loops interpreted inside the block (the reference form; tests compare the
    two forms with it)."""
    token = _MODE.set("interpreted")
    try:
        yield
    finally:
        _MODE.reset(token)


@cache
def _compiled_module(name: str) -> ModuleType | None:
    """The compiled form of ``name``, imported once; None where it is not installed."""
    try:
        return importlib.import_module(compiled_name(name))
    except ImportError:
        return None


@cache
def _say_interpreted() -> None:
    print(FALLBACK_NOTICE, file=sys.stderr)
