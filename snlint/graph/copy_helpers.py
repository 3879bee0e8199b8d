"""The names a definitions-only copy (snlint.graph.definitions) calls in place of what it
left out, put in the module's namespace before the copy runs."""

from __future__ import annotations

import argparse
import functools
import types
from typing import Any, Callable

# `parser.parse_args()` -> `__snlint_parse_args__(parser)`.
PARSE_HELPER = "__snlint_parse_args__"
# A decorator the copy does not run: `@__snlint_undecorated__`.
UNDECORATED = "__snlint_undecorated__"
# A default value that calls outside the allow-list: `__snlint_later__(lambda: expr)`,
# evaluated when the function is first called (at build), not at import.
LATER = "__snlint_later__"


def parse_args_without_command_line(parser: argparse.ArgumentParser, known: bool = False) -> Any:
    """What `parser.parse_args()` gives with no options; when an argument is required,
    a namespace of every default instead of the exit argparse would take."""
    try:
        if known:
            return parser.parse_known_args([])
        return parser.parse_args([])
    except SystemExit:
        namespace = argparse.Namespace(**{
            a.dest: a.default for a in parser._actions  # noqa: SLF001 - the one way to list them
            if a.dest not in (argparse.SUPPRESS, "help")})
        return (namespace, []) if known else namespace


def undecorated(*_: Any) -> Callable[[Any], Any]:
    """`@__snlint_undecorated__(...)`: the definition as written, not decorated."""
    return lambda thing: thing


class Later:
    """A default value the copy did not evaluate at import; `value()` evaluates it once."""

    def __init__(self, thunk: Callable[[], Any]) -> None:
        self.value = functools.cache(thunk)

    def __repr__(self) -> str:
        return "<default evaluated at the first call>"


def _real(value: Any) -> Any:
    return value.value() if isinstance(value, Later) else value


def _has_later(fn: Any) -> bool:
    return isinstance(fn, types.FunctionType) and (
        any(isinstance(v, Later) for v in fn.__defaults__ or ())
        or any(isinstance(v, Later) for v in (fn.__kwdefaults__ or {}).values()))


def _lazy(fn: types.FunctionType) -> Callable[..., Any]:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if fn.__defaults__:
            fn.__defaults__ = tuple(_real(v) for v in fn.__defaults__)
        if fn.__kwdefaults__:
            fn.__kwdefaults__ = {k: _real(v) for k, v in fn.__kwdefaults__.items()}
        # A caller that read the signature may hand a default on as given.
        return fn(*[_real(a) for a in args], **{k: _real(v) for k, v in kwargs.items()})

    return call


def _wrapped(value: Any) -> Any:
    if _has_later(value):
        return _lazy(value)
    if isinstance(value, (staticmethod, classmethod)) and _has_later(value.__func__):
        return type(value)(_lazy(value.__func__))
    return None


def _wrap_class(cls: type, seen: set[int]) -> None:
    if id(cls) in seen:
        return
    seen.add(id(cls))
    for name, value in list(vars(cls).items()):
        if isinstance(value, type) and value.__module__ == cls.__module__:
            _wrap_class(value, seen)
            continue
        wrapped = _wrapped(value)
        if wrapped is not None:
            setattr(cls, name, wrapped)


def defer_defaults(module: types.ModuleType, classes: list[type]) -> None:
    """After the copy ran: each function of the module with a `Later` default evaluates it
    at its first call. `classes`: those recorded as they were made (one an `if` branch's
    class of the same name replaced included)."""
    seen: set[int] = set()
    namespace = module.__dict__
    for name, value in list(namespace.items()):
        if isinstance(value, type) and getattr(value, "__module__", None) == module.__name__:
            _wrap_class(value, seen)
        elif isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
            wrapped = _wrapped(value)
            if wrapped is not None:
                namespace[name] = wrapped
    for cls in classes:
        _wrap_class(cls, seen)


def install(namespace: dict[str, Any]) -> None:
    namespace[PARSE_HELPER] = parse_args_without_command_line
    namespace[UNDECORATED] = undecorated
    namespace[LATER] = Later
