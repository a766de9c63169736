"""Which form of the signing loops this context runs: compiled (numba) or interpreted (the
same source run by Python, with numba never imported).

Each module of compiled loops (the ``*_compiled`` modules beside the rules they speed up, and
:mod:`neardup.engines.embedded.packing`) builds its functions with :func:`njit_for` and has an
interpreted twin: the same file loaded once more by :func:`interpreted`, its functions left as
written. Loading numba and the cached machine code costs a fresh process about 0.3-1 s of CPU, which
pays for itself from a few dozen documents on; a command that signs a text or two (``neardup
query``, ``compare``) runs the loops interpreted inside :func:`interpreted_loops` instead. Both
forms run the one source, so they give the same values bit for bit (tests/test_kernels.py).

The form is a context variable (:mod:`contextvars`), set only inside
:func:`interpreted_loops`: nothing depends on what the process imported before.

>>> with interpreted_loops():
...     loops("neardup.sketches.hashing_compiled").__name__, mode()
('neardup.sketches._hashing_compiled_interpreted', 'interpreted')
>>> mode()
'compiled'
"""

from __future__ import annotations

import importlib
import importlib.util
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from types import ModuleType
from typing import Any, Callable, Iterator, Literal

Mode = Literal["compiled", "interpreted"]

_MODE: ContextVar[Mode] = ContextVar("neardup_loops_mode", default="compiled")


def mode() -> Mode:
    """ "compiled" or "interpreted": the form :func:`loops` gives in this context."""
    return _MODE.get()


def loops(name: str) -> ModuleType:
    """The module of compiled loops ``name`` in the form this context runs: the module itself,
    or its interpreted twin inside :func:`interpreted_loops`."""
    if _MODE.get() == "interpreted":
        return interpreted(name)
    return importlib.import_module(name)


@contextmanager
def interpreted_loops() -> Iterator[None]:
    """Run the loops interpreted inside the block (for a text or two: no numba to load)."""
    import numpy as np

    token = _MODE.set("interpreted")
    try:
        with np.errstate(over="ignore"):  # uint64 products wrap, as compiled
            yield
    finally:
        _MODE.reset(token)


@contextmanager
def compiled_loops() -> Iterator[None]:
    """Run the loops compiled inside the block, inside :func:`interpreted_loops` too: for work
    over many documents (an engine's catch-up after indexing), where loading numba pays for
    itself. The values are the same in either form; only the time differs.

    >>> with interpreted_loops(), compiled_loops():
    ...     mode()
    'compiled'
    """
    token = _MODE.set("compiled")
    try:
        yield
    finally:
        _MODE.reset(token)


@cache
def interpreted(name: str) -> ModuleType:
    """The module ``name`` loaded once more from its file as ``<package>._<leaf>_interpreted``
    (not entered in the import system), with ``INTERPRETED`` set so that its :func:`njit_for`
    leaves every function as written."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None
    package, _, leaf = name.rpartition(".")
    twin = importlib.util.spec_from_file_location(f"{package}._{leaf}_interpreted", spec.origin)
    assert twin is not None and twin.loader is not None
    module = importlib.util.module_from_spec(twin)
    module.INTERPRETED = True  # type: ignore[attr-defined]
    twin.loader.exec_module(module)
    return module


def _as_written(*args: Any, **options: Any) -> Any:  # noqa: ARG001 - numba's options
    return args[0] if args and callable(args[0]) else (lambda f: f)


def njit_for(module_globals: dict[str, Any]) -> Callable[..., Any]:
    """The decorator of a module of loops given its ``globals()``: :func:`numba.njit`, or in
    its interpreted twin (``INTERPRETED`` set by :func:`interpreted`) one that leaves each
    function as written."""
    if module_globals.get("INTERPRETED", False):
        return _as_written
    from numba import njit as compiled

    return compiled
