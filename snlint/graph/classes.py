"""Which class a graph target means when a file defines one name more than once (a
`Discriminator` in each branch of `if args.arch == ...:`, all run by the definitions-only
copy): every nn.Module subclass is recorded as it is created, in its module's
`__snlint_classes__` (line of the `class` statement, class)."""

from __future__ import annotations

import sys
import types
from typing import Any

from torch import nn

_RECORD = "__snlint_classes__"


def install() -> None:
    """Record nn.Module subclasses from now on (before any user module is imported)."""
    previous = nn.Module.__dict__.get("__init_subclass__")

    def __init_subclass__(cls: type, **kwargs: Any) -> None:
        # Called by type.__new__ (C code): the Python frame below is the one running the
        # `class` statement, at its line.
        frame = sys._getframe(1)
        frame.f_globals.setdefault(_RECORD, []).append((frame.f_lineno, cls))
        if previous is not None:
            previous.__func__(cls, **kwargs)
        else:
            super(nn.Module, cls).__init_subclass__(**kwargs)

    nn.Module.__init_subclass__ = classmethod(__init_subclass__)  # type: ignore[assignment]


def find(module: types.ModuleType, qualname: str, line: int) -> Any:
    """The class `qualname` of `module` defined nearest `line` (the `class` statement's
    line; 0: unknown), else the module's attribute path `qualname`, else None."""
    recorded = [(abs(at - line), cls) for at, cls in module.__dict__.get(_RECORD, ())
                if getattr(cls, "__qualname__", None) == qualname]
    if line and recorded:
        return min(recorded, key=lambda item: item[0])[1]
    obj: Any = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj
