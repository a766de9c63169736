"""Which form of the signing loops this process runs: compiled (:mod:`neardup.kernels`, numba)
or interpreted (the same source run by Python, with numba never imported).

Loading numba and the cached machine code costs a fresh process about 0.3-1 s of CPU, which
pays for itself from a few dozen documents on; a command that signs a text or two (``neardup
query``, ``compare``) runs the loops interpreted inside :func:`interpreted_loops` instead. Both
forms run the one source, so they give the same values bit for bit (tests/test_kernels.py).

>>> with interpreted_loops():
...     loops().__name__
'neardup._kernels_interpreted'
>>> mode()
'compiled'
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Iterator

_mode = "compiled"


def mode() -> str:
    """ "compiled" or "interpreted": the form :func:`loops` gives now."""
    return _mode


def loops() -> ModuleType:
    """The loops' module in the form this process runs now: :mod:`neardup.kernels`, or its
    interpreted twin inside :func:`interpreted_loops`."""
    if _mode == "interpreted":
        return interpreted()
    from . import kernels

    return kernels


@contextmanager
def interpreted_loops() -> Iterator[None]:
    """Run the loops interpreted inside the block (for a text or two: no numba to load)."""
    import numpy as np

    global _mode
    before, _mode = _mode, "interpreted"
    try:
        with np.errstate(over="ignore"):  # uint64 products wrap, as compiled
            yield
    finally:
        _mode = before


def loops_of(name: str) -> ModuleType:
    """Another module of loops written like :mod:`neardup.kernels` (its ``njit`` chosen by
    its ``INTERPRETED`` switch), in the form this process runs now (as :func:`loops`)."""
    if _mode == "interpreted":  # (its file, not the module: that would load numba)
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None
        return interpreted(spec.origin, name + "_interpreted")
    return importlib.import_module(name)


_KERNELS = Path(__file__).with_name("kernels.py")


def interpreted(
    path: str | Path = _KERNELS, name: str = "neardup._kernels_interpreted"
) -> ModuleType:
    """kernels.py (or another module of loops at ``path``) loaded once more as ``name``, with
    ``INTERPRETED`` set so that its ``njit`` leaves every function as written."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.INTERPRETED = True  # type: ignore[attr-defined]
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
