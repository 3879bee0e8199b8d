"""What keeps the graph-pass worker small (child process only).

The worker holds torch, the packages the project imports, and one built model at a time.
Its peak is the largest model's weights and forwards over what the imports hold, so the
imports are kept lean and each model's memory is handed back before the next is built.
"""

from __future__ import annotations

import functools
import gc
import sys


def without_triton() -> None:
    """Tell torch that triton is not installed, before any project code runs.

    Importing torch._dynamo asks (torchvision's ops import it), and the answer imports
    triton, whose compiler library is 75 MB of resident memory in a process that runs
    models on the CPU and compiles no kernel. A project that imports triton itself still
    gets it; torch's own kernels never need it here."""
    if "triton" in sys.modules:
        return
    try:
        from torch.utils import _triton
    except ImportError:  # a torch without the check: nothing asks
        return
    if callable(getattr(_triton, "has_triton_package", None)):
        _triton.has_triton_package = functools.cache(lambda: False)


def release() -> None:
    """Hand the freed memory of the last model back to the system: glibc keeps it
    otherwise, and the worker's size grows by each large model it built (75 MB over
    30 tutorial critics)."""
    gc.collect()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass

