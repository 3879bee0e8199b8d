"""Layers a module builds and nothing ever reads (`self.linear = nn.Linear(...)` whose only
use in `forward` is commented out): in the module's tree, but never run. Told by its
attribute's name when:
- no `.name` is read anywhere in the project, and no string says the name;
- the class's line defines `forward` and derives from nothing but `nn.Module` and project
  classes (a torch container runs its children without naming them);
- nothing in that line reaches its children without naming them (`self.children()`,
  `self._modules`, `vars(self)`, `getattr(self, name)`), and no code calls `.children()`
  or reads `._modules` of anything else.
A file the source pass could not fully read counts as reading every name.
"""

from __future__ import annotations

from functools import cached_property
from typing import Iterable

from snlint import facts as F
from snlint.link.syntax import fact_children

_MODULE = "torch.nn.Module"
_SELF_DYNAMIC = frozenset({"children", "named_children", "_modules", "__dict__", "get_submodule"})
_ELSEWHERE_DYNAMIC = frozenset({"children", "named_children", "_modules"})
# What an `Unknown` the source pass makes of an expression that reads no name says.
_READ_NOTHING = frozenset({"", "Ellipsis", "Imaginary", "bytes", "FormattedString"})
_NAME_BUILTINS = frozenset({"builtins.getattr", "builtins.setattr", "builtins.hasattr",
                            "builtins.delattr", "builtins.vars"})


class Reads:
    """What the files of one part read by attribute name (built when first asked)."""

    def __init__(self, files: Iterable[F.FileFacts]) -> None:
        self._files = list(files)
        self._own: dict[int, tuple[frozenset[str], bool]] = {}
        self._derived: dict[str, list[F.ClassFacts]] = {}  # a base's last name -> the classes naming it
        self._lineages: dict[int, list[F.ClassFacts] | None] = {}
        self._rank: dict[int, int] = {}  # id() of a class -> its place in `_by_name`'s order

    def unread(self, cls: F.ClassFacts, name: str) -> bool:
        """Whether nothing reads the attribute `name` of an instance of `cls`."""
        if not name.isidentifier():
            return False
        lineage = self._lineage(cls)
        if lineage is None:
            return False
        for member in lineage:
            loads, dynamic = self._summary(member)
            if dynamic or name in loads:
                return False
        loads, elsewhere = self._everywhere
        return not elsewhere and name not in loads

    # ---------------------------------------------------------------- classes

    @cached_property
    def _by_name(self) -> dict[str, list[F.ClassFacts]]:
        by_name: dict[str, list[F.ClassFacts]] = {}
        for file in self._files:
            for _, cls in file.classes:
                by_name.setdefault(cls.name, []).append(cls)
        for group in by_name.values():
            for cls in group:
                self._rank[id(cls)] = len(self._rank)
                for base in dict.fromkeys(_last(b) for b in cls.bases):
                    self._derived.setdefault(base, []).append(cls)
        return by_name

    def _lineage(self, cls: F.ClassFacts) -> list[F.ClassFacts] | None:
        """`cls`, the project classes it derives from and those that derive from it (by
        name: every class of that name); None when a base is neither `nn.Module` nor a
        project class, or no class of its line defines `forward`."""
        if id(cls) not in self._lineages:
            self._lineages[id(cls)] = self._find_lineage(cls)
        return self._lineages[id(cls)]

    def _find_lineage(self, cls: F.ClassFacts) -> list[F.ClassFacts] | None:
        by_name = self._by_name
        line: list[F.ClassFacts] = []
        todo = [cls]
        while todo:
            current = todo.pop()
            if any(c is current for c in line):
                continue
            line.append(current)
            for base in current.bases:
                if isinstance(base, F.Global) and base.qual == _MODULE:
                    continue
                found = by_name.get(_last(base))
                if not found:
                    return None
                todo.extend(found)
        if not any("forward" in c.method_names for c in line):
            return None
        # The classes deriving from one of the line's, each once, in the order of `by_name`.
        ids = {id(c) for c in line}
        derived = {id(c): c for name in dict.fromkeys(c.name for c in line) for c in self._derived.get(name, ())
                   if id(c) not in ids}
        line.extend(sorted(derived.values(), key=lambda c: self._rank[id(c)]))
        return line

    # ---------------------------------------------------------------- reads

    def _summary(self, cls: F.ClassFacts) -> tuple[frozenset[str], bool]:
        """The attribute names and strings `cls`'s methods read, and whether they reach
        `self`'s children without naming them."""
        found = self._own.get(id(cls))
        if found is None:
            loads: set[str] = set()
            selves = {m.params[0].name for _, m in cls.methods if m.params}
            dynamic = _walk([m for _, m in cls.methods], loads, selves, None)
            found = self._own[id(cls)] = (frozenset(loads), dynamic)
        return found

    @cached_property
    def _everywhere(self) -> tuple[set[str], bool]:
        """The names every file reads, and whether one reads the children of anything but
        `self` without naming them."""
        loads: set[str] = set()
        elsewhere = [False]
        for file in self._files:
            if file.names is not None and not file.names.complete:
                elsewhere[0] = True  # read with libcst alone, or as Python 2
            _walk(list(file.body), loads, set(), elsewhere)
        return loads, elsewhere[0]


def _last(e: F.Expr) -> str:
    if isinstance(e, F.Global):
        return (e.text or e.qual).rpartition(".")[2]
    if isinstance(e, F.Attr):
        return e.attr
    if isinstance(e, F.Local):
        return e.name
    return ""


def _walk(roots: list, loads: set[str], selves: set[str], elsewhere: list[bool] | None) -> bool:
    """Gather into `loads` the attribute names read and the strings written under
    `roots`; True when one reaches the children of a name in `selves` without naming
    them. `elsewhere[0]` is set when a `.children()` of anything else is read."""
    dynamic = False
    stack = list(roots)
    while stack:
        x = stack.pop()
        if isinstance(x, (tuple, list)):
            stack.extend(x)
            continue
        kind = type(x)
        if kind is F.Attr:
            on_self = isinstance(x.value, F.Local) and x.value.name in selves
            if on_self and x.attr in _SELF_DYNAMIC:
                dynamic = True
            elif elsewhere is not None and not on_self and x.attr in _ELSEWHERE_DYNAMIC:
                elsewhere[0] = True
            loads.add(x.attr)
            stack.append(x.value)
            continue
        if kind is F.Global:
            parts = (x.text or "").split(".")
            loads.update(parts[1:])
            if elsewhere is not None and _ELSEWHERE_DYNAMIC.intersection(parts[1:]):
                elsewhere[0] = True
            continue
        if kind is F.Const:
            if isinstance(x.value, str):
                loads.add(x.value)
            continue
        if kind is F.Unknown:
            # An expression the source pass did not read may read anything, its layers too.
            if x.text not in _READ_NOTHING and elsewhere is None:
                dynamic = True
            continue
        if kind is F.Call and isinstance(x.func, F.Global) and x.func.qual in _NAME_BUILTINS:
            args = [a.value for a in x.args]
            if args and isinstance(args[0], F.Local) and args[0].name in selves and \
                    (x.func.qual == "builtins.vars" or len(args) < 2 or not isinstance(args[1], F.Const)):
                dynamic = True
        if kind is F.Assign:
            # The attribute a statement stores is not read; what it is stored on is.
            for target in x.targets:
                stack.append(target.value if isinstance(target, F.Attr) else target)
            stack.append(x.value)
            continue
        stack.extend(fact_children(x))
    return dynamic
