"""`dataclass`, as the standard library's, with fewer generated methods, for start-up time.

`dataclasses` compiles each generated method of each class on its own: for snlint's
classes, a third of a start-up every pre-commit run pays. Here `__repr__`, `__eq__` and
`__hash__` are functions shared by every class (reading fields through one attrgetter), and
a frozen class's `__setattr__`/`__delattr__` closures, all behaving as the generated ones
(`tests/test_records.py` holds them against the standard library's). One difference: a
class without a docstring gets its name as one. `order` and `unsafe_hash` go to
`dataclasses` unchanged.
"""

from __future__ import annotations

import dataclasses
import sys
from contextlib import contextmanager
from operator import attrgetter
from reprlib import recursive_repr
from typing import Any, Callable

__all__ = ["dataclass"]


def dataclass(cls: type | None = None, /, *, repr: bool = True, eq: bool = True,  # noqa: A002
              order: bool = False, unsafe_hash: bool = False, frozen: bool = False,
              **options: Any) -> Any:
    def wrap(cls: type) -> type:
        if order or unsafe_hash:
            return dataclasses.dataclass(cls, repr=repr, eq=eq, order=order, unsafe_hash=unsafe_hash,
                                         frozen=frozen, **options)
        own = dict(cls.__dict__)  # before `slots` makes a new class
        if not own.get("__doc__"):
            # dataclasses would write "Name(field: type, ...)" from inspect.signature: a
            # tenth of the time it spends on a class, for a text nothing reads.
            cls.__doc__ = cls.__name__
        with _frozen_methods_shared(frozen):
            made = dataclasses.dataclass(cls, repr=False, eq=False, frozen=frozen, **options)
        fields = dataclasses.fields(made)
        if repr and "__repr__" not in own:
            made.__repr__ = _repr([f.name for f in fields if f.repr])  # type: ignore[method-assign]
        if eq and "__eq__" not in own:
            made.__eq__ = _eq(_key([f.name for f in fields if f.compare]))  # type: ignore[method-assign]
        # dataclasses' table for `eq` without `unsafe_hash`: a `__hash__` the class wrote
        # stays (a `None` that Python set for a written `__eq__` is not one).
        written = own.get("__hash__", dataclasses.MISSING)
        if eq and (written is dataclasses.MISSING or (written is None and "__eq__" in own)):
            hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
            made.__hash__ = _hash(_key(hashed)) if frozen else None  # type: ignore[assignment]
        return made

    return wrap if cls is None else wrap(cls)


# Python 3.11 and 3.12 compile a frozen class's two methods in
# `dataclasses._frozen_get_del_attr(cls, fields, globals)`; 3.13 builds every method of a
# class in one compilation, through another signature: left as it is.
_SHARED_FROZEN = sys.version_info < (3, 13) and hasattr(dataclasses, "_frozen_get_del_attr")


@contextmanager
def _frozen_methods_shared(frozen: bool):
    """While `dataclasses` makes a frozen class: its `__setattr__` and `__delattr__` from
    `_frozen_methods` instead of two compilations. Put back at once: only the class made
    here gets them (one made meanwhile by another thread would get the same behaviour)."""
    if not (frozen and _SHARED_FROZEN):
        yield
        return
    compiled = dataclasses._frozen_get_del_attr  # type: ignore[attr-defined]
    dataclasses._frozen_get_del_attr = _frozen_methods  # type: ignore[attr-defined]
    try:
        yield
    finally:
        dataclasses._frozen_get_del_attr = compiled  # type: ignore[attr-defined]


def _frozen_methods(cls: type, fields: list, globals: dict) -> tuple[Callable, Callable]:  # noqa: A002
    """What `dataclasses` compiles for a frozen class: assigning or deleting a field, or
    any attribute of an instance of the class itself (not of a subclass), raises
    FrozenInstanceError; a subclass's own attributes go to the next class in the MRO."""
    names = frozenset(f.name for f in fields)
    error = dataclasses.FrozenInstanceError

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise error(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise error(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    for method in (__setattr__, __delattr__):
        method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
    return __setattr__, __delattr__


def _key(names: list[str]) -> Callable[[Any], tuple]:
    """The tuple of these attributes (a 1-tuple for one, as the generated methods build)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        get = attrgetter(names[0])
        return lambda obj: (get(obj),)
    return lambda obj: ()


def _repr(names: list[str]) -> Callable[[Any], str]:
    getters = [(f"{name}=", attrgetter(name)) for name in names]

    @recursive_repr()
    def __repr__(self: Any) -> str:
        return f"{type(self).__qualname__}({', '.join(label + repr(get(self)) for label, get in getters)})"

    return __repr__


def _eq(key: Callable[[Any], tuple]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _hash(key: Callable[[Any], tuple]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(key(self))

    return __hash__
