"""The names a definitions-only copy (snlint.graph.definitions) calls in place of what it
left out, put in the module's namespace before the copy runs. No libcst, no torch."""

from __future__ import annotations

import argparse
from typing import Any, Callable

# `parser.parse_args()` -> `__snlint_parse_args__(parser)`.
PARSE_HELPER = "__snlint_parse_args__"
# A decorator the copy does not run: `@__snlint_undecorated__`.
UNDECORATED = "__snlint_undecorated__"
# A def whose default values call what the copy does not run: its body raises.
NOT_DEFINED = "__snlint_not_defined__"


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


class NotDefined(RuntimeError):
    """A function the definitions-only copy did not define."""


def not_defined(name: str, reason: str, *_: Any) -> None:
    raise NotDefined(f"snlint did not define {name}: {reason}, which the graph pass does "
                     "not run at import")


def install(namespace: dict[str, Any]) -> None:
    namespace[PARSE_HELPER] = parse_args_without_command_line
    namespace[UNDECORATED] = undecorated
    namespace[NOT_DEFINED] = not_defined
