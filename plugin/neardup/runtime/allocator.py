"""How the C allocator of a neardup process hands out and takes back memory.

Signing a batch allocates and frees buffers of a few MB each (the batch's code points, its
token boundaries and hashes, shingles), and so do the compiled loops (their outputs come
from ``malloc``). glibc serves a block over its mmap threshold (128 KB, raised as large
blocks are freed) with fresh pages from the system and gives them back when it is freed,
so every batch touches new memory: one page fault per 4 KB, about 2 us each on a virtual
machine, a tenth of the time of signing (``python -m benchmarks``). Kept in the heap, the
same memory serves the next batch.
"""

from __future__ import annotations

import ctypes
import sys

#: glibc's mallopt parameters (malloc.h).
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
#: The largest mmap threshold glibc accepts on 64-bit systems (HEAP_MAX_SIZE / 2).
MMAP_THRESHOLD_MAX = 32 << 20


def keep_freed_memory(
    mmap_threshold: int = MMAP_THRESHOLD_MAX, trim_threshold: int = 256 << 20
) -> bool:
    """Ask glibc to serve blocks up to ``mmap_threshold`` bytes from its heap and to keep up
    to ``trim_threshold`` bytes of freed memory at the heap's top instead of returning it
    (``mallopt(M_MMAP_THRESHOLD)``, ``mallopt(M_TRIM_THRESHOLD)``): buffers freed after one
    batch are reused by the next without page faults. The process then holds on to the
    memory of its largest batch (the peak it had reached anyway), not more. Process-wide:
    neardup's command line and its signing workers call it; an application that signs
    through the Python API may. Returns whether it applied (False off glibc, as on macOS).

    >>> isinstance(keep_freed_memory(), bool)
    True
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(
            None
        ).mallopt  # (the process's own symbols, libc's among them; find_library would run ldconfig)
    except (OSError, AttributeError):  # (musl has no mallopt)
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(
        mallopt(M_MMAP_THRESHOLD, min(mmap_threshold, MMAP_THRESHOLD_MAX))
        and mallopt(M_TRIM_THRESHOLD, trim_threshold)
    )
