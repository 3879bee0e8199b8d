"""A file's names as the project defines them, for the fixes.

The source pass qualifies a name through its own file's imports (`models.sn.spectral_norm`);
here the project's files take it to the module that defines it, through re-exports, star
imports and module-level aliases (`torch.nn.utils.spectral_norm`).
"""

from __future__ import annotations

from dataclasses import replace

from snlint import facts as F
from snlint.link.index import ProjectIndex
from snlint.torchapi import SN_FUNCTIONS, layer_type

# Re-exports chained further than this are a cycle.
_DEPTH = 16
_PARTIAL = "functools.partial"


class Definitions:
    """Where qualified names are defined in the project (cached across files)."""

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index
        self._defined: dict[str, set[str]] = {}
        self._canonical: dict[tuple[str, str], str] = {}

    def canonical(self, qual: str, file: F.FileFacts) -> str:
        """What `qual` (as the source pass qualified it in `file`) refers to: where the
        project defines it, or the name itself when the project does not."""
        key = (qual, file.path)
        if key not in self._canonical:
            self._canonical[key] = self._follow(qual, file, 0)
        return self._canonical[key]

    def _follow(self, qual: str, file: F.FileFacts, depth: int) -> str:
        if depth > _DEPTH:
            return qual
        if qual.startswith("*."):
            return self._starred(qual[2:], file, depth)
        found = self.index.resolve(qual, file)
        if found is None or not found.name:
            return qual
        target = found.file
        head, _, rest = found.name.partition(".")
        tail = f".{rest}" if rest else ""
        alias = _alias(target, head)
        if alias is not None:
            return self._follow(alias + tail, target, depth + 1)
        if head not in self.defined(target):
            imported = target.imported(head)
            if imported is not None:
                return self._follow(imported + tail, target, depth + 1)
            if target.star_imports:
                return self._starred(f"{head}{tail}", target, depth + 1)
        return f"{target.module}.{found.name}" if target.module else found.name

    def _starred(self, name: str, file: F.FileFacts, depth: int) -> str:
        # The last star import that has the name wins, as at run time.
        head = name.partition(".")[0]
        for module in reversed(file.star_imports):
            candidate = f"{module}.{name}"
            found = self.index.resolve(candidate, file)
            if found is not None and found.name:
                owner = found.file
                if head in self.defined(owner) or owner.imported(head) is not None:
                    return self._follow(candidate, file, depth + 1)
            elif found is None and (candidate in SN_FUNCTIONS or layer_type(candidate)):
                return candidate
        usual = _USUAL_NAMES.get(head)
        if usual is not None and any(self.index.module(m, file) is None for m in file.star_imports):
            # A package from outside the project that hands torch's modules on by their
            # usual names (`from torch_snippets import *`).
            return usual + name[len(head):]
        return f"*.{name}"

    def defined(self, file: F.FileFacts) -> set[str]:
        """Names `file` defines at module level (functions, classes, assignments)."""
        if file.path not in self._defined:
            self._defined[file.path] = _module_level(file.body, f"{file.module}." if file.module else "")
        return self._defined[file.path]

    def partial_of(self, qual: str) -> str | None:
        """What a module-level `qual = functools.partial(f, ...)` wraps (`f`, resolved)."""
        module, _, name = qual.rpartition(".")
        found = self.index.resolve(qual, None) if module else None
        if found is None or found.name != name:
            return None
        wrapped = _partial_value(found.file, name)
        return self.canonical(wrapped, found.file) if wrapped is not None else None


# The names PyTorch code gives torch's modules, which a star import may bring.
_USUAL_NAMES = {"nn": "torch.nn", "F": "torch.nn.functional", "torch": "torch", "optim": "torch.optim"}


def resolved(definitions: Definitions, file: F.FileFacts) -> F.Names:
    """`file`'s names, each resolved to where the project defines it."""
    names = file.names
    quals = {i: definitions.canonical(q, file) for i, q in names.quals.items()}
    scope = {n: definitions.canonical(q, file) for n, q in names.scope.items()}
    partials: dict[str, str] = {}
    for qual in {*quals.values(), *scope.values()}:
        if qual not in SN_FUNCTIONS and not qual.startswith(("torch.", "builtins.")):
            wrapped = definitions.partial_of(qual)
            if wrapped is not None:
                partials[qual] = wrapped
    return replace(names, quals=quals, scope=scope, partials=partials)


def _alias(file: F.FileFacts, name: str) -> str | None:
    """The name chain a module-level `name = a.b.c` (assigned once) binds it to."""
    value = file.names.aliases.get(name)
    return file.names.quals.get(value) if value is not None else None


def _partial_value(file: F.FileFacts, name: str) -> str | None:
    if name not in file.names.aliases:
        return None  # bound more than once, or not by an assignment
    qual = f"{file.module}.{name}" if file.module else name
    for stmt in file.body:
        if isinstance(stmt, F.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], F.Global) and stmt.targets[0].qual == qual:
            value = stmt.value
            if isinstance(value, F.Call) and isinstance(value.func, F.Global) \
                    and value.func.qual == _PARTIAL:
                first = value.positional()
                if first and isinstance(first[0].value, F.Global):
                    return first[0].value.qual
    return None


def _module_level(body: tuple[F.Stmt, ...], prefix: str) -> set[str]:
    out: set[str] = set()
    for stmt in body:
        if isinstance(stmt, F.DefStmt):
            out.add(stmt.function.name)
        elif isinstance(stmt, F.ClassStmt):
            out.add(stmt.cls.name)
        elif isinstance(stmt, F.Assign):
            for target in stmt.targets:
                if isinstance(target, F.Global) and target.qual.startswith(prefix) \
                        and "." not in target.qual[len(prefix):]:
                    out.add(target.qual[len(prefix):])
        elif isinstance(stmt, F.If):
            out |= _module_level(stmt.body, prefix) | _module_level(stmt.orelse, prefix)
        elif isinstance(stmt, F.Block):
            out |= _module_level(stmt.body, prefix)
    return out
