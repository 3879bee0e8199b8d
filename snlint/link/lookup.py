"""What names and methods refer to: module globals across the project's files, and
the methods a class has with its project bases.

The evaluator's lookups: a global resolves through imports and star imports to the value
the defining module gives it (running that module's top level as far as needed), and a
method through the class's bases. Kept apart from statement and expression evaluation
because it works across files, with its own caches.
"""

from __future__ import annotations

from typing import Callable, Iterator, TypeVar

from snlint import facts as F
from snlint.link.index import ProjectIndex
from snlint.link.names import Definitions
from snlint.link.syntax import assignments_to
from snlint.link.values import (
    UNKNOWN, ClassV, ConstV, DictV, Frame, FuncV, Layer, ModuleV, NamespaceV, NameV, UnknownV, Value,
)

T = TypeVar("T")


def running_module(frame: Frame) -> Frame | None:
    """The run of the module body of `frame`'s file this frame is part of (the frame itself
    at the top level, else a caller's), if any."""
    running: Frame | None = frame
    while running is not None and not (running.name == "<module>" and running.file is frame.file):
        running = running.parent
    return running


class Lookup:
    index: ProjectIndex
    definitions: Definitions
    _globals: dict[tuple[str, str], Value]  # (path, name) -> its value, once computed
    _resolving: set[tuple[str, str]]  # being computed: a cycle reads UNKNOWN
    _class_files: dict[int, F.FileFacts] | None
    _bases: dict[tuple[int, int], list[Value]]  # (id() of a class, of a file) -> base_values, once stable
    _unstable_reads: int  # reads of a class's bases that could not be kept
    _of_class: dict[tuple[str, int, int], object]  # (question, id() of a class, of a file) -> answer

    def global_value(self, qual: str, text: str, frame: Frame) -> Value:
        """What the name `qual` (as the source pass resolved it) refers to, seen from
        `frame`'s file: a project class, function or constant, a torch name, or a NameV
        for anything outside the project."""
        if qual.startswith("*."):
            # A name from one of the file's star imports, found where the fixes find it.
            found = self.definitions.canonical(qual, frame.file)
            return NameV(qual[2:], text) if found.startswith("*.") else self.global_value(found, text, frame)
        torch_value = self.torch_name(qual, text)
        if torch_value is not None:
            return torch_value
        if qual.startswith(("torch.", "builtins.", "functools.", "collections.", "typing.")):
            return NameV(qual, text)
        resolved = self.index.resolve(qual, frame.file)
        if resolved is None:
            return NameV(qual, text)
        if not resolved.name:
            return ModuleV(resolved.file)
        head, _, rest = resolved.name.partition(".")
        value = self.module_global(resolved.file, head)
        for attr in rest.split(".") if rest else ():
            value = self.attribute(value, attr, frame)
        return value

    def module_local(self, e: F.Global, frame: Frame) -> tuple[Value, list[str]] | None:
        """A module-level variable the module body being run has assigned (`samples`,
        `samples.detach`): its value and the attributes after it. Read as it is when the
        code runs, from a function that module body calls too: a script that trains one
        model with `d_train()` and binds the name to another model after the loop
        (machine-learning-book's `disc_model`) trains the first."""
        module = frame.file.module
        if not module or not e.qual.startswith(module + "."):
            return None
        running = running_module(frame)
        head, *attrs = e.qual[len(module) + 1:].split(".")
        if running is None or head not in running.env:
            return None
        return running.env[head], attrs

    def module_global(self, file: F.FileFacts, name: str) -> Value:
        """The value a module-level name of `file` holds once the module has run, computed
        once and cached."""
        key = (file.path, name)
        if key in self._globals:
            return self._globals[key]
        if key in self._resolving:
            return UNKNOWN
        self._resolving.add(key)
        try:
            value: Value = UNKNOWN
            qual = f"{file.module}.{name}" if file.module else name
            frame = Frame(file, "<module>")
            for stmt in self.statements_about(file, name):
                if isinstance(stmt, F.DefStmt) and stmt.function.name == name:
                    value = FuncV(stmt.function, file)
                elif isinstance(stmt, F.ClassStmt) and stmt.cls.name == name:
                    value = ClassV(stmt.cls, file)
                elif isinstance(stmt, F.Assign):
                    for target in stmt.targets:
                        if isinstance(target, F.Global) and target.qual == qual:
                            value = with_origin(self.expr(stmt.value, frame), name, file, stmt)
                            # `model = model.to(device)` next reads the value so far.
                            frame.env[name] = value
                elif isinstance(stmt, F.ExprStmt) and isinstance(value, NamespaceV) and not value.parsed \
                        and isinstance(stmt.value, F.Call) and isinstance(stmt.value.func, F.Global) \
                        and stmt.value.func.qual.startswith(qual + "."):
                    # `parser.add_argument(...)` at module level: options of this parser.
                    frame.env[name] = value
                    self.expr(stmt.value, frame)
                elif isinstance(stmt, (F.If, F.Block)):
                    defined = self.branch_definition(stmt, name, file, frame)
                    if defined is not None:
                        value = defined
                        continue
                    # `if args.arch == "resnet": netD = ResNetD() else: netD = ResNetD(sn=False)`:
                    # one value when every branch builds the same class, else unknown.
                    found = [self.expr(a.value, frame) for a in assignments_to(stmt, qual)]
                    if found:
                        classes = {v.cls.qualname if isinstance(v, Layer) and v.cls else None for v in found}
                        value = found[-1] if len(classes) == 1 and None not in classes else UNKNOWN
            if isinstance(value, UnknownV):
                # A name the module imports (a package's `__init__` re-exporting a class),
                # or takes from a star import of its own: where the project defines it, as
                # the fixes resolve it (`snlint.link.names`).
                found = self.definitions.canonical(qual, file)
                if found != qual and not found.startswith("*."):
                    value = self.global_value(found, name, frame)
                if isinstance(value, NameV) and not value.qual.startswith(("torch.", "builtins.")):
                    value = UNKNOWN
            self._globals[key] = value
            return value
        finally:
            self._resolving.discard(key)

    def statements_about(self, file: F.FileFacts, name: str) -> list[F.Stmt]:
        """The module-level statements of `file` that `module_global` reads for `name`, in
        order: those that define or assign it or call a method of it, and every `if` and
        block (read for what they define inside). The others do nothing for `name`; an index
        built once per file keeps a file of thousands of names from being scanned once per
        name."""
        index = self._statement_index.get(file.path)
        if index is None:
            index = self._statement_index[file.path] = _statement_index(file)
        by_name, always = index
        found = by_name.get(name)
        if not found:
            return [file.body[i] for i in always]
        return [file.body[i] for i in sorted({*found, *always})]

    def branch_definition(self, stmt: F.If | F.Block, name: str, file: F.FileFacts,
                          frame: Frame) -> Value | None:
        """The class or function `name` defined under a module-level `if` or `try`: from
        the branch the test takes when it is known (`if param.arch == 0:` with the argparse
        default), else the one definition the branches agree on; None when none defines it."""
        if isinstance(stmt, F.Block):
            bodies = [stmt.body]
        else:
            truth = self.truth(self.expr(stmt.test, frame))
            bodies = [stmt.body] if truth is True else [stmt.orelse] if truth is False else [stmt.body, stmt.orelse]
        found: list[Value] = []
        for body in bodies:
            hit: Value | None = None
            for inner in body:
                if isinstance(inner, F.ClassStmt) and inner.cls.name == name:
                    hit = ClassV(inner.cls, file)
                elif isinstance(inner, F.DefStmt) and inner.function.name == name:
                    hit = FuncV(inner.function, file)
                elif isinstance(inner, (F.If, F.Block)):
                    hit = self.branch_definition(inner, name, file, frame) or hit
            if hit is not None:
                found.append(hit)
        if not found:
            return None
        if len(found) == 2 and found[0] != found[1]:
            return UNKNOWN  # each branch its own class, and no telling which runs
        return found[-1]

    # ------------------------------------------------------------ classes

    def methods_of(self, cls: F.ClassFacts, file: F.FileFacts) -> list[tuple]:
        """(name, function, defining class, its file) for each method an instance of `cls`
        has, inherited ones included (a framework's `feed_data` in its base model), bases
        first: a base's data-loading method runs before the subclass's training step."""
        chain: list[tuple[F.ClassFacts, F.FileFacts]] = []
        stack = [(cls, file)]
        while stack and len(chain) < 16:
            current, current_file = stack.pop(0)
            if any(c is current for c, _ in chain):
                continue
            chain.append((current, current_file))
            stack.extend(self.project_bases(current, current_file))
        seen: set[str] = set()
        out = []
        for owner, owner_file in chain:
            for name, fn in owner.methods:
                if name not in seen:
                    seen.add(name)
                    out.append((name, fn, owner, owner_file))
        depth = {id(owner): i for i, (owner, _) in enumerate(chain)}
        return sorted(out, key=lambda m: -depth[id(m[2])])

    def project_bases(self, cls: F.ClassFacts, file: F.FileFacts) -> list[tuple[F.ClassFacts, F.FileFacts]]:
        return [(value.cls, value.file) for value in self.base_values(cls, file) if isinstance(value, ClassV)]

    def base_values(self, cls: F.ClassFacts, file: F.FileFacts) -> Iterator[Value]:
        """What each of a class's bases is, read in `file`, one at a time (a caller may
        follow one base before the next is read, as it always did). Method lookups and
        module tests ask this of the same classes thousands of times: kept once every base
        is a name whose value cannot change any more (`stable_name`), else read again."""
        key = (id(cls), id(file))
        if key in self._bases:
            yield from self._bases[key]
            return
        stable = not self._resolving and all(self.stable_name(base, file) for base in cls.bases)
        if not stable:
            self._unstable_reads += 1
        frame = Frame(file, "<bases>")
        values = []
        for base in cls.bases:
            value = self.expr(base, frame)
            values.append(value)
            yield value
        if stable:
            self._bases[key] = values

    def of_class(self, what: str, cls: F.ClassFacts, file: F.FileFacts, compute: Callable[[], T]) -> T:
        """What `compute` finds of a class through its bases (its torch base, a method it
        inherits), kept when every base it read on the way was stable (`base_values`): the
        same question then has the same answer, and reading it again has no effect."""
        key = (what, id(cls), id(file))
        if key in self._of_class:
            return self._of_class[key]
        unstable = self._unstable_reads
        found = compute()
        if self._unstable_reads == unstable:
            self._of_class[key] = found
        return found

    def stable_name(self, e: F.Expr, file: F.FileFacts) -> bool:
        """Whether `e` is a global name whose value, once read, every later read gives too:
        a torch or outside name, a module, or a module-level name of a project file (its
        value is computed once, `module_global`), read while no module-level name is being
        computed (that one would read as unknown for now). Not a star-imported name, nor an
        attribute of a module-level value (`cfg.Base`: the value may change)."""
        if not isinstance(e, F.Global) or e.qual.startswith("*."):
            return False
        if self.torch_name(e.qual, e.text) is not None or \
                e.qual.startswith(("torch.", "builtins.", "functools.", "collections.", "typing.")):
            return True
        resolved = self.index.resolve(e.qual, file)
        return resolved is None or "." not in resolved.name

    def file_of(self, cls: F.ClassFacts) -> F.FileFacts | None:
        """The file that defines `cls`: a method runs there, with its imports, wherever the
        instance is used."""
        if self._class_files is None:
            self._class_files = {id(c): f for f in self.index.files for _, c in f.classes}
        return self._class_files.get(id(cls))

    def find_method(self, cls: F.ClassFacts, file: F.FileFacts, name: str,
                    seen: frozenset[str] = frozenset()) -> tuple[F.FunctionFacts, F.FileFacts, F.ClassFacts] | None:
        if not seen:
            return self.of_class(f"method {name}", cls, file, lambda: self._find_method(cls, file, name, seen))
        return self._find_method(cls, file, name, seen)

    def _find_method(self, cls: F.ClassFacts, file: F.FileFacts, name: str,
                     seen: frozenset[str]) -> tuple[F.FunctionFacts, F.FileFacts, F.ClassFacts] | None:
        if cls.qualname in seen:
            return None
        method = cls.method(name)
        if method is not None:
            return method, file, cls
        for base_cls, base_file in self.project_bases(cls, file):
            found = self.find_method(base_cls, base_file, name, seen | {cls.qualname})
            if found is not None:
                return found
        return None


def with_origin(value: Value, name: str, file: F.FileFacts, stmt: F.Stmt) -> Value:
    """A module constant or config dict remembers its assignment, for the graph pass's
    account of where a constructor argument came from."""
    if isinstance(value, ConstV) and not value.origin:
        return ConstV(value.value, f"{name} at {file.path}:{stmt.span.line}")
    if isinstance(value, DictV) and not value.origin:
        value.origin = f"{name} at {file.path}:{stmt.span.line}"
    return value


def _statement_index(file: F.FileFacts) -> tuple[dict[str, list[int]], list[int]]:
    """(name -> the indices of the module-level statements that concern it, the indices
    of those that may concern any name), for `Lookup.statements_about`."""
    prefix = f"{file.module}." if file.module else ""
    by_name: dict[str, list[int]] = {}
    always: list[int] = []

    def own(qual: str) -> str | None:
        return qual[len(prefix):] if qual.startswith(prefix) else None

    for i, stmt in enumerate(file.body):
        names: list[str | None] = []
        if isinstance(stmt, F.DefStmt):
            names.append(stmt.function.name)
        elif isinstance(stmt, F.ClassStmt):
            names.append(stmt.cls.name)
        elif isinstance(stmt, F.Assign):
            names.extend(own(t.qual) for t in stmt.targets if isinstance(t, F.Global))
        elif isinstance(stmt, F.ExprStmt) and isinstance(stmt.value, F.Call) \
                and isinstance(stmt.value.func, F.Global):
            rest = own(stmt.value.func.qual)
            if rest is not None and "." in rest:
                names.append(rest.partition(".")[0])  # `parser.add_argument(...)`
        elif isinstance(stmt, (F.If, F.Block)):
            always.append(i)
        for name in dict.fromkeys(n for n in names if n):
            by_name.setdefault(name, []).append(i)
    return by_name, always
