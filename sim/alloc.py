"""The C allocator's thresholds for the simulator's lane arrays (glibc only).

Every statement of a batch makes arrays of 2^17 lanes (0.5-2 MiB). glibc hands out blocks of
more than ``M_MMAP_THRESHOLD`` (128 KiB at start) as fresh ``mmap`` regions and returns them
with ``munmap`` when freed, so each one is faulted in again, page by page, zero-filled by the
kernel; the threshold adapts upward as such blocks are freed, but freed memory at the top of
the heap beyond ``M_TRIM_THRESHOLD`` is still given back and faulted in again. Measured on the
2-core machine (block scan, 2^20, one thread): about 4,900 minor page faults per launch, every
launch, and a fresh process slower still until the threshold has adapted (the "warm-up
effect"); with the thresholds below, none after the first launch and the launch 2-3x faster.
Page faults also serialize threads on the process's memory map lock, which is what limits a
parallel launch otherwise.

``tune()`` raises ``M_MMAP_THRESHOLD`` to 32 MiB (glibc's own upper bound for its adaptive
threshold) and ``M_TRIM_THRESHOLD`` to 64 MiB, once per process, on the first simulator launch:
up to 64 MiB of freed memory stays with the process for reuse. ``CLPY_SIM_MALLOPT=0`` leaves
the allocator alone. Elsewhere than glibc (macOS, musl) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import sys

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20


@functools.cache
def tune() -> bool:
    """Set the thresholds (see the module docstring); True when they were set."""
    if os.environ.get("CLPY_SIM_MALLOPT", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    ok = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    return mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and ok
