"""The allocator setting of neardup's processes (neardup.runtime.allocator)."""

import platform
import subprocess
import sys

import pytest

from neardup.runtime.allocator import keep_freed_memory


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="mallopt is glibc's",
)
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


def test_keep_freed_memory_bounds_the_threshold_it_asks_for():
    assert isinstance(
        keep_freed_memory(1 << 40), bool
    )  # (glibc refuses more than 32 MB: it is asked for no more)
