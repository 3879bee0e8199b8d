"""What keeps the graph-pass worker small (child process only): lean imports, and each
model's memory handed back before the next is built."""

from __future__ import annotations

import functools
import gc
import sys


def without_triton() -> None:
    """Tell torch that triton is not installed, before any project code runs: torch._dynamo
    asks, and importing triton costs 75 MB for a process that compiles no kernel."""
    if "triton" in sys.modules:
        return
    try:
        from torch.utils import _triton
    except ImportError:  # a torch without the check: nothing asks
        return
    if callable(getattr(_triton, "has_triton_package", None)):
        _triton.has_triton_package = functools.cache(lambda: False)


def release() -> None:
    """Hand the last model's freed memory back to the system (glibc keeps it otherwise)."""
    gc.collect()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass

