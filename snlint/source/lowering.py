"""What lowering one file (`lower_ast.py`) keeps while it reads it: how a name is
qualified, where calls, arguments and parameters are, what a class is keyed by, and the
file's facts at the end."""

from __future__ import annotations

import builtins
from typing import Callable, Sequence

from snlint import facts as F
from snlint.findings import Span
from snlint.source.configured import configured
from snlint.source.module_classes import module_classes
from snlint.source.names import file_names
from snlint.source.scopes import Scopes

_BUILTINS = frozenset(dir(builtins))


class Lowering:
    def __init__(self, scopes_info: Scopes, module_name: str, is_package: bool) -> None:
        # What a fix reads of the file besides the facts (`facts.Names`).
        self.sites: dict[Span, int] = {}
        self.quals: dict[int, str] = {}
        self.import_sites: dict[str, list[int]] = {}
        self.assigned: dict[str, list[int]] = {}  # module-level `name = value`: value nodes
        self.module = module_name
        self.is_package = is_package
        self.class_qualnames: set[str] = set()
        self.scopes_info = scopes_info
        self.imports = scopes_info.imports
        self.star = scopes_info.star
        self.module_names = scopes_info.module_names
        self.scopes: list[set[str]] = []
        self.class_stack: list[str] = []
        # Per function being lowered: names it imports more than once with different
        # targets, lowered as assignments where each import runs.
        self.rebound: list[set[str]] = []

    def site(self, span: Span, call: bool = False) -> None:
        """Record where a call, argument or parameter is. An argument that is nothing but a
        call has the call's span: the call is what a location there means."""
        if call or span not in self.sites:
            self.sites[span] = span.node  # type: ignore[assignment]

    def qualify(self, name: str, span: Span) -> F.Expr:
        """A name read at `span`: local, global (its qualified name recorded for the fixes
        by node), or unbound."""
        for scope in reversed(self.scopes):
            if name in scope:
                return F.Local(name, span=span)
        if name in self.imports:
            qual = self.imports[name]
        elif name in self.module_names:
            qual = f"{self.module}.{name}" if self.module else name
        elif name in _BUILTINS:
            qual = f"builtins.{name}"
        elif self.star:
            # Which `from x import *` it comes from is decided in the link step.
            qual = f"*.{name}"
        else:
            return F.Unknown(name, unbound=True, span=span)
        self.quals[span.node] = qual  # type: ignore[index]
        return F.Global(qual, text=name, span=span)

    def attribute(self, value: F.Expr, attr: str, span: Span) -> F.Expr:
        """`value.attr` at `span`: a global chain stays one qualified name (recorded by
        node), its text built from the parts (no codegen for every dotted name)."""
        if type(value) is F.Global:
            qual = f"{value.qual}.{attr}"
            self.quals[span.node] = qual  # type: ignore[index]
            return F.Global(qual, text=f"{value.text or value.qual}.{attr}", span=span)
        return F.Attr(value, attr, span=span)

    def function_facts(self, name: str, params: tuple[F.Param, ...], local: set[str], rebound: set[str],
                       lower_body: Callable[[], tuple[F.Stmt, ...]], span: Span,
                       decorators: tuple[F.Expr, ...] = ()) -> F.FunctionFacts:
        """A function's facts: its body lowered with its own names (`local`, and the imports
        it binds more than one way, `rebound`) in scope, and no class around it."""
        prefix = ".".join(filter(None, [self.module, *self.class_stack]))
        self.scopes.append(local | rebound)
        self.rebound.append(rebound)
        saved_classes = self.class_stack
        self.class_stack = []
        try:
            body = lower_body()
        finally:
            self.scopes.pop()
            self.rebound.pop()
            self.class_stack = saved_classes
        return F.FunctionFacts(name, f"{prefix}.{name}" if prefix else name, params, body, span,
                               is_method=bool(saved_classes), decorators=decorators)

    def class_qualname(self, name: str, line: int) -> str:
        """The key of a class named `name` whose name is on `line`, in the classes being
        lowered."""
        prefix = ".".join(filter(None, [self.module, *self.class_stack]))
        qualname = f"{prefix}.{name}" if prefix else name
        if qualname in self.class_qualnames:
            # The same name defined again (the other branch of a module-level `if`): a key
            # of its own, so that the link step analyses both and neither hides the other.
            qualname = f"{qualname}@{line}"
        self.class_qualnames.add(qualname)
        return qualname

    def file_facts(self, path: str, body: Sequence[F.Stmt], rewritable: bool) -> F.FileFacts:
        functions = tuple((s.function.name, s.function) for s in body if isinstance(s, F.DefStmt))
        classes = tuple((c.name, c) for c in module_classes(body))
        return F.FileFacts(path, self.module, tuple(body), functions, classes, self.is_package,
                           tuple(self.star), tuple(sorted(self.imports.items())),
                           file_names(self.module, self.sites, self.quals, self.import_sites,
                                      self.assigned, self.scopes_info),
                           *configured(tuple(body), classes), rewritable=rewritable)
