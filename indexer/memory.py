"""Giving freed heap memory back to the operating system after large work.

Embedding a batch allocates large, short-lived buffers (the model's activations grow with
the batch's token count); glibc's allocator keeps the freed pages mapped, so a long-lived
process (the daemon) would keep the peak of its largest index run for good (figures in
docs/BENCHMARKS.md). `release_free_memory()` is
called after each index run and, in the daemon, once a minute (with its log rotation).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging

log = logging.getLogger(__name__)


@functools.cache
def _malloc_trim() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else ctypes.CDLL(None)
        fn = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to trim
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


def release_free_memory() -> bool:
    """Return the C heap's free pages to the OS (glibc `malloc_trim(0)`); whether it could."""
    fn = _malloc_trim()
    if fn is None:
        return False
    fn(0)
    return True
