"""One parsed file as the fixes see it: the libcst tree, node positions, parents, and
what the file's names mean (imports and module-level aliases).

A fix starts from a finding's span and finds the node at exactly that position, then
works from the syntax there. Nothing here knows about rules.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterator, TypeVar

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from snlint.findings import Span
from snlint.torchapi import SN_FUNCTIONS


N = TypeVar("N", bound=cst.CSTNode)

PARAM_SN = "torch.nn.utils.parametrizations.spectral_norm"
HOOK_SN = "torch.nn.utils.spectral_norm"


def scope_bindings(wrapper: MetadataWrapper) -> dict[str, list[Any]]:
    """Every binding of a file by name, in every scope (libcst scope analysis: each
    assignment with the accesses that read it)."""
    from libcst.metadata import ScopeProvider

    out: dict[str, list[Any]] = {}
    for scope in {s for s in wrapper.resolve(ScopeProvider).values() if s is not None}:
        for assignment in scope.assignments:
            out.setdefault(assignment.name, []).append(assignment)
    return out


def dotted(node: cst.CSTNode | None) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr.value}" if head is not None else None
    return None


class _Names(cst.CSTVisitor):
    """Imports, module-level aliases, and how often each name is bound and read."""

    def __init__(self) -> None:
        self.imports: dict[str, str] = {}  # local name -> qualified name
        self.aliases: dict[str, cst.BaseExpression] = {}  # module-level `SN = nn.utils.x`
        self.bound: Counter[str] = Counter()  # binding sites of each name other than imports
        self.import_targets: dict[str, set[str]] = {}  # local name -> what its imports bind
        self.loads: Counter[str] = Counter()  # reads of each name (not in imports)
        self.import_nodes: dict[str, tuple[cst.CSTNode, cst.ImportAlias]] = {}
        self._depth = 0  # function/class nesting
        self._in_import = 0

    # scopes
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.bound[node.name.value] += 1
        for p in _all_params(node.params):
            self.bound[p.name.value] += 1
        self._depth += 1

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._depth -= 1

    def visit_Lambda(self, node: cst.Lambda) -> None:
        for p in _all_params(node.params):
            self.bound[p.name.value] += 1

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.bound[node.name.value] += 1
        self._depth += 1

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._depth -= 1

    # imports
    def visit_Import(self, node: cst.Import) -> None:
        self._in_import += 1
        for alias in node.names:
            full = dotted(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
                self.imports[local] = full
            else:
                local = full.split(".")[0]
                self.imports[local] = local
            self.import_targets.setdefault(local, set()).add(self.imports[local])
            self.import_nodes[local] = (node, alias)

    def leave_Import(self, node: cst.Import) -> None:
        self._in_import -= 1

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._in_import += 1
        if node.relative or isinstance(node.names, cst.ImportStar):
            base = None
        else:
            base = dotted(node.module)
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = dotted(alias.name) or ""
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            full = f"{base}.{name}" if base is not None else f"?.{name}"
            self.imports[local] = full
            self.import_targets.setdefault(local, set()).add(full)
            self.import_nodes[local] = (node, alias)

    def leave_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._in_import -= 1

    # other bindings and reads
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            for name in _target_names(target.target):
                self.bound[name] += 1
        if self._depth == 0 and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.aliases[node.targets[0].target.value] = node.value

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        for name in _target_names(node.target):
            self.bound[name] += 1

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        for name in _target_names(node.target):
            self.bound[name] += 1

    def visit_For(self, node: cst.For) -> None:
        for name in _target_names(node.target):
            self.bound[name] += 1

    def visit_CompFor(self, node: cst.CompFor) -> None:
        for name in _target_names(node.target):
            self.bound[name] += 1

    def visit_AsName(self, node: cst.AsName) -> None:
        if not self._in_import:
            for name in _target_names(node.name):
                self.bound[name] += 1

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        for name in _target_names(node.target):
            self.bound[name] += 1

    def visit_Name(self, node: cst.Name) -> None:
        if not self._in_import:
            self.loads[node.value] += 1

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        # `x.attr`: the attribute's name is not a read of a variable `attr`.
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)  # `f(name=...)`: the keyword is not a read
        return False

    def visit_Param(self, node: cst.Param) -> bool:
        if node.default is not None:
            node.default.visit(self)
        if node.annotation is not None:
            node.annotation.visit(self)
        return False


def _all_params(params: cst.Parameters) -> Iterator[cst.Param]:
    yield from params.posonly_params
    yield from params.params
    if isinstance(params.star_arg, cst.Param):
        yield params.star_arg
    yield from params.kwonly_params
    if params.star_kwarg is not None:
        yield params.star_kwarg


def _target_names(node: cst.CSTNode) -> Iterator[str]:
    if isinstance(node, cst.Name):
        yield node.value
    elif isinstance(node, (cst.Tuple, cst.List)):
        for el in node.elements:
            yield from _target_names(el.value)
    elif isinstance(node, cst.StarredElement):
        yield from _target_names(node.value)


class ParsedFile:
    """A parsed file. Raises libcst.ParserSyntaxError when the text does not parse."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self.module = cst.parse_module(text)
        wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
        self.positions = wrapper.resolve(PositionProvider)
        self.parents = wrapper.resolve(ParentNodeProvider)
        self._by_span: dict[Span, list[cst.CSTNode]] = {}
        for node, rng in self.positions.items():
            span = Span(rng.start.line, rng.start.column + 1, rng.end.line, rng.end.column + 1)
            self._by_span.setdefault(span, []).append(node)
            if isinstance(node, cst.Param):
                # The source pass spans a parameter from its name to the end of its default.
                end_node = node.default or (node.annotation if node.annotation else node.name)
                end = self.positions[end_node].end if end_node in self.positions else rng.end
                wide = Span(rng.start.line, rng.start.column + 1, end.line, end.column + 1)
                if wide != span:
                    self._by_span.setdefault(wide, []).append(node)
        names = _Names()
        self.module.visit(names)
        self.names = names
        self._bindings: dict[str, list[Any]] | None = None

    def bindings(self) -> dict[str, list[Any]]:
        """The file's bindings by name from libcst's scope analysis (computed once)."""
        if self._bindings is None:
            self._bindings = scope_bindings(MetadataWrapper(self.module, unsafe_skip_copy=True))
        return self._bindings

    # ---------------------------------------------------------------- positions

    def at(self, span: Span, kind: type[N]) -> N | None:
        """The node of type `kind` at exactly `span` (the outermost one if several)."""
        found = [n for n in self._by_span.get(span, ()) if isinstance(n, kind)]
        if not found:
            return None
        # Outermost first: an ancestor precedes its descendants with the same span.
        for node in found:
            if not any(self.parent(node) is other for other in found):
                return node  # type: ignore[return-value]
        return found[0]  # type: ignore[return-value]

    def range(self, node: cst.CSTNode) -> tuple[tuple[int, int], tuple[int, int]]:
        rng = self.positions[node]
        return (rng.start.line, rng.start.column), (rng.end.line, rng.end.column)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parents.get(node)
        while current is not None:
            yield current
            current = self.parents.get(current)

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    # ---------------------------------------------------------------- names

    def qualify(self, node: cst.CSTNode | None, _seen: frozenset = frozenset()) -> str | None:
        """The qualified name an expression refers to (`nn.BatchNorm2d` ->
        `torch.nn.BatchNorm2d`), through imports and module-level aliases; None when
        it is not a name chain or its head is unknown."""
        if isinstance(node, cst.Name):
            name = node.value
            targets = self.names.import_targets.get(name, set())
            bound = self.names.bound[name]
            if targets:
                # Imported (possibly in several places, as long as all agree) and never
                # rebound otherwise; a relative import's target is unknown ("?.").
                if bound or len(targets) != 1:
                    return None
                full = next(iter(targets))
                return None if full.startswith("?.") else full
            alias = self.names.aliases.get(name)
            if alias is not None and bound == 1 and name not in _seen:
                return self.qualify(alias, _seen | {name})
            return None
        if isinstance(node, cst.Attribute):
            head = self.qualify(node.value, _seen)
            return f"{head}.{node.attr.value}" if head is not None else None
        return None

    def sn_api(self, node: cst.CSTNode | None) -> str | None:
        """"hook" / "parametrization" when `node` names one of torch's SN functions."""
        qual = self.qualify(node)
        if qual is None:
            return None
        return SN_FUNCTIONS.get(qual)

    def sn_partial_api(self, node: cst.CSTNode | None) -> str | None:
        """The SN API of a module-level `SN = functools.partial(spectral_norm, ...)`."""
        if not isinstance(node, cst.Name) or self.names.bound[node.value] != 1:
            return None
        value = self.names.aliases.get(node.value)
        if (isinstance(value, cst.Call) and self.qualify(value.func) == "functools.partial"
                and value.args and value.args[0].keyword is None and not value.args[0].star):
            return self.sn_api(value.args[0].value)
        return None

    def is_free(self, name: str) -> bool:
        """No binding and no read of `name` anywhere in the file."""
        return (not self.names.bound[name] and name not in self.names.import_targets
                and not self.names.loads[name])

    def binding_for(self, qualified: str) -> str | None:
        """A local name chain that refers to `qualified`: an import of it, or an import of
        a module above it plus the attribute path (`nn` for torch.nn -> `nn.GroupNorm`)."""
        best: tuple[int, str] | None = None
        for local in self.names.imports:
            full = self.qualify(cst.Name(local))
            if full is None:
                continue
            if full == qualified:
                return local
            if qualified.startswith(full + "."):
                rest = qualified[len(full) + 1:]
                candidate = (rest.count("."), f"{local}.{rest}")
                if best is None or candidate < best:
                    best = candidate
        return best[1] if best else None

    def sn_callees(self) -> Counter[str]:
        """How often each spelling of a torch SN function (or a module-level partial of
        one) is called in the file."""
        counts: Counter[str] = Counter()
        for node in self.positions:
            if isinstance(node, cst.Call) and (self.sn_api(node.func) or self.sn_partial_api(node.func)):
                text = dotted(node.func)
                if text is not None:
                    counts[text] += 1
        return counts

    def sn_names(self) -> list[str]:
        """Local names bound (once) to a torch SN function, by import or alias."""
        out = []
        for local in sorted(set(self.names.imports) | set(self.names.aliases)):
            if self.sn_api(cst.Name(local)) is not None:
                out.append(local)
        return out

