"""Giving freed memory back to the system: glibc keeps a process's freed heap for reuse, so a
service that has just dropped a model or its page caches still shows the peak until trimmed."""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable


def _load_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
        return trim
    except (OSError, AttributeError):  # musl, macOS: no malloc_trim
        return None


_TRIM = _load_trim()


def trim_heap() -> None:
    """malloc_trim(0) where the C library has it; nothing elsewhere."""
    if _TRIM is not None:
        _TRIM(0)
