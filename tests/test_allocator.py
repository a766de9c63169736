"""The allocator setting of neardup's processes (neardup.runtime.allocator)."""

import ctypes
import platform
import subprocess
import sys
from types import SimpleNamespace

import pytest

from neardup.runtime.allocator import (
    M_MMAP_THRESHOLD,
    M_TRIM_THRESHOLD,
    MMAP_THRESHOLD_MAX,
    keep_freed_memory,
)


GLIBC = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="mallopt is glibc's",
)


@GLIBC
def test_keep_freed_memory_applies_on_glibc_and_a_freed_batch_buffer_is_reused():
    """In a fresh process: it applies, and a 16 MB block freed and asked for again comes
    back from the heap at the same address (by default it would be a new mapping each time,
    whose pages fault in again)."""
    code = (
        "import ctypes; from neardup.runtime.allocator import keep_freed_memory; "
        "ok = keep_freed_memory(); libc = ctypes.CDLL(None); "
        "libc.malloc.restype = ctypes.c_void_p; libc.malloc.argtypes = [ctypes.c_size_t]; "
        "libc.free.argtypes = [ctypes.c_void_p]; "
        "a = libc.malloc(16 << 20); libc.free(a); b = libc.malloc(16 << 20); libc.free(b); "
        "print(ok, a == b)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    assert out == ["True", "True"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="it applies on Linux only")
def test_keep_freed_memory_bounds_the_threshold_it_asks_for(monkeypatch):
    """Asked for 1 TB, it asks mallopt for glibc's largest mmap threshold, 32 MB (more does
    not fit mallopt's int, and glibc documents no more); asked for less, for that; the trim
    threshold as given. (mallopt recorded, not called: the setting is process-wide.)"""
    asked: list[tuple[int, int]] = []

    def mallopt(param: int, value: int) -> int:
        asked.append((param, value))
        return 1

    monkeypatch.setattr(ctypes, "CDLL", lambda name: SimpleNamespace(mallopt=mallopt))
    assert keep_freed_memory(1 << 40, trim_threshold=5 << 20) is True
    assert keep_freed_memory(1 << 20) is True
    assert asked == [
        (M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX),
        (M_TRIM_THRESHOLD, 5 << 20),
        (M_MMAP_THRESHOLD, 1 << 20),
        (M_TRIM_THRESHOLD, 256 << 20),
    ]
    assert MMAP_THRESHOLD_MAX == 32 << 20
