"""A small abstract interpreter over source facts.

It runs `__init__` bodies, helpers and partials the way Python would, as far as literal
values allow, to learn which layers a module builds, which of them SN wraps (and where
that happens), and which init calls touch them. It never guesses: a value it cannot
follow is `UnknownV`, and rules skip what depends on one.
"""

from __future__ import annotations

import re

from snlint import facts as F
from snlint.findings import Location
from snlint.link import configvalues, options, resolve
from snlint.link.events import (
    D_NAME, DATA_SOURCE, DISCRIMINATOR_CLASS, FAKE_NAME, G_NAME, REAL_NAME, BatchNormCall,
    BatchReduction, Events, ForwardCall, InitEvent, Penalty, SNCall, SNEvent,
)
from snlint.link.index import ProjectIndex
from snlint.link.provenance import Channels, Data, Named, Output
from snlint.link.syntax import assignments_to, calls_in, last_attr, names_in, text_of, walk
from snlint.link.values import (
    UNKNOWN, ClassV, ConstV, DictV, Frame, FuncV, LambdaV, Layer, ListV, ModulesIterV,
    ClassOfV, ModulesV, ModuleV, NameFindV, NamespaceV, NameV, OneOfV, PartialV, SNApp, SNFuncV, SuperV, TensorV,
    TorchTypeV, TupleV,
    UnknownV, Value, WeightV, tensor_join, tensors,
)
from snlint.torchapi import (
    INIT_FUNCTION, INPLACE_TENSOR_INIT, KINDS, PARTIAL, SN_CUSTOM, SN_FUNCTIONS, layer_type,
    weight_norm_api,
)

MAX_DEPTH = 24
MAX_UNROLL = 64
# Statements one entry point (a class, a function, a module body) may interpret. Real
# __init__s take hundreds; the budget only stops pathological code from running away.
STEP_BUDGET = 200_000


class BudgetExceeded(Exception):
    """One entry point took more interpretation than any real model needs."""


class Interpreter:
    def __init__(self, index: ProjectIndex) -> None:
        self.index = index
        self.events = Events()
        self._globals: dict[tuple[str, str], Value] = {}
        self._resolving: set[tuple[str, str]] = set()
        self.steps = 0
        self.budget = STEP_BUDGET
        self._registries: set[str] | None = None
        self._scorers: dict[str, bool] = {}
        self._class_files: dict[int, F.FileFacts] | None = None
        self._options: dict | None = None

    # ------------------------------------------------------------ entry points

    def run_module(self, file: F.FileFacts) -> Frame:
        frame = Frame(file, "<module>")
        self.block(file.body, frame, module_level=True)
        return frame

    def run_function(self, fn: F.FunctionFacts, file: F.FileFacts) -> Value:
        """A helper on its own, with its defaults and unknown parameters."""
        frame = Frame(file, fn.name, function=fn.name)
        self.bind_params(fn, [], {}, frame, use_defaults=True)
        self.block(fn.body, frame)
        return frame.returned or UNKNOWN

    def instantiate_root(self, cls: F.ClassFacts, file: F.FileFacts) -> Layer:
        """Build a class the way its defaults allow, as a top-level object."""
        loc = Location(file.path, cls.span)
        root = Frame(file, f"<build {cls.name}>")
        return self.instantiate(ClassV(cls, file), (), self.root_options(cls, file), loc, root, root_build=True)

    def root_options(self, cls: F.ClassFacts, file: F.FileFacts) -> dict[str, Value]:
        """A class built alone that takes the parsed options (`def __init__(self, opt)`, the
        pix2pix / SPADE tradition) gets the options the project declares, with their
        defaults, as the training script's `opt` would hold them unless the user overrides
        them; unknown options stay unknown."""
        found = self.find_method(cls, file, "__init__")
        if found is None:
            return {}
        return self.option_arguments(found[0], cls)

    def option_arguments(self, fn: F.FunctionFacts, cls: F.ClassFacts) -> dict[str, Value]:
        """The parsed options for `fn`'s parameters that take them (`opt`, `args`), when the
        project declares options: `__init__(self, opt)`, or `initialize(self, opt)` in the
        DeblurGAN / older pix2pix tradition."""
        if self._options is None:
            self._options = options.option_defaults(self.index.files)
        if not self._options:
            return {}
        out: dict[str, Value] = {}
        for p in fn.params[1:]:
            if p.name in options.OPTION_PARAMS and p.default is None and p.kind in ("pos", "kwonly"):
                out[p.name] = options.namespace(self._options, options.class_defaults(cls))
        return out

    def run_methods(self, instance: Layer, file: F.FileFacts) -> None:
        """Every method but __init__ of a built instance, with `self` bound to it: a
        `train()` override, a forward that calls `F.batch_norm`, a trainer's steps."""
        if instance.cls is None:
            return
        for name, fn, owner, owner_file in self.methods_of(instance.cls, file):
            if name == "__init__" or name in instance.called_methods:
                continue  # a helper __init__ called already ran; running it again doubles SN
            frame = Frame(owner_file, f"{instance.cls.name}.{name}", self_value=instance, cls=owner,
                          function=name)
            self.bind_params(fn, [instance], self.option_arguments(fn, instance.cls), frame,
                             use_defaults=True)
            if name == "forward":
                # What a forward receives is a batch of tensors, whatever its name.
                for p in fn.params[1:]:
                    if isinstance(frame.env.get(p.name), UnknownV):
                        frame.env[p.name] = TensorV()
            self.block(fn.body, frame)

    # ------------------------------------------------------------ globals

    def global_value(self, qual: str, text: str, frame: Frame) -> Value:
        if qual.startswith("*."):
            # A name from one of the file's star imports: the last that defines it wins.
            for module in reversed(frame.file.star_imports):
                value = self.global_value(f"{module}.{qual[2:]}", text, frame)
                if not isinstance(value, (NameV, UnknownV)):
                    return value
            return NameV(qual[2:], text)
        if qual in SN_FUNCTIONS:
            return SNFuncV(SN_FUNCTIONS[qual], text or qual.rsplit(".", 1)[-1])
        ltype = layer_type(qual)
        if ltype is not None:
            return TorchTypeV(ltype)
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
        `samples.detach`): its value and the attributes after it."""
        module = frame.file.module
        if frame.name != "<module>" or not module or not e.qual.startswith(module + "."):
            return None
        head, *attrs = e.qual[len(module) + 1:].split(".")
        if head not in frame.env:
            return None
        return frame.env[head], attrs

    def module_global(self, file: F.FileFacts, name: str) -> Value:
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
            for stmt in file.body:
                if isinstance(stmt, F.DefStmt) and stmt.function.name == name:
                    value = FuncV(stmt.function, file)
                elif isinstance(stmt, F.ClassStmt) and stmt.cls.name == name:
                    value = ClassV(stmt.cls, file)
                elif isinstance(stmt, F.Assign):
                    for target in stmt.targets:
                        if isinstance(target, F.Global) and target.qual == qual:
                            value = _named(self.expr(stmt.value, frame), name, file, stmt)
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
                # or takes from a star import of its own.
                imported = file.imported(name)
                if imported is not None:
                    value = self.global_value(imported, name, frame)
                elif file.star_imports:
                    value = self.global_value(f"*.{name}", name, frame)
                if isinstance(value, NameV) and not value.qual.startswith(("torch.", "builtins.")):
                    value = UNKNOWN
            self._globals[key] = value
            return value
        finally:
            self._resolving.discard(key)

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

    # ------------------------------------------------------------ statements

    def block(self, body: tuple[F.Stmt, ...], frame: Frame, module_level: bool = False) -> None:
        for stmt in body:
            if frame.returned is not None or frame.jumped:
                return
            self.stmt(stmt, frame, module_level)

    def stmt(self, stmt: F.Stmt, frame: Frame, module_level: bool = False) -> None:
        self.steps += 1
        if self.steps > self.budget:
            raise BudgetExceeded()
        if isinstance(stmt, F.Assign):
            value = self.expr(stmt.value, frame)
            if module_level and len(stmt.targets) == 1 and isinstance(stmt.targets[0], F.Global):
                value = _named(value, stmt.targets[0].qual.rsplit(".", 1)[-1], frame.file, stmt)
            for target in stmt.targets:
                self.assign(target, value, frame)
        elif isinstance(stmt, F.AugAssign):
            current = self.expr(stmt.target, frame)
            value = self.expr(stmt.value, frame)
            if isinstance(current, ListV) and stmt.op == "Add":
                self.extend(current, value, frame)
            else:
                self.assign(stmt.target, UNKNOWN, frame)
        elif isinstance(stmt, F.ExprStmt):
            self.expr(stmt.value, frame)
        elif isinstance(stmt, F.Return):
            frame.returned = self.expr(stmt.value, frame) if stmt.value is not None else ConstV(None)
        elif isinstance(stmt, F.If):
            self.if_stmt(stmt, frame, module_level)
        elif isinstance(stmt, F.For):
            self.for_stmt(stmt, frame)
        elif isinstance(stmt, F.While):
            frame.loop_depth += 1
            frame.loops.append(stmt.span)
            try:
                self.block(stmt.body, frame)
            finally:
                frame.loop_depth -= 1
                frame.loops.pop()
                frame.jumped = False
        elif isinstance(stmt, F.Block):
            self.block(stmt.body, frame, module_level)
        elif isinstance(stmt, F.Jump):
            frame.jumped = True
        elif isinstance(stmt, F.DefStmt):
            if not module_level:
                frame.env[stmt.function.name] = FuncV(stmt.function, frame.file, closure=frame.env)

    def if_stmt(self, stmt: F.If, frame: Frame, module_level: bool) -> None:
        test = stmt.test
        narrowed = self.narrowing(test, frame)
        if narrowed is not None:
            name, inside, outside = narrowed
            saved = frame.env.get(name)
            frame.env[name] = inside
            self.block(stmt.body, frame, module_level)
            frame.jumped = False  # a `continue` for some modules is not one for all
            frame.env[name] = outside
            self.block(stmt.orelse, frame, module_level)
            frame.jumped = False
            # `if not isinstance(m, T): continue`: what follows sees only T.
            if not (stmt.body and isinstance(stmt.body[-1], (F.Jump, F.Return)) and not stmt.orelse) \
                    and saved is not None:
                frame.env[name] = saved
            return
        truth = self.truth(self.expr(test, frame))
        if truth is True:
            self.block(stmt.body, frame, module_level)
            return
        if truth is False:
            self.block(stmt.orelse, frame, module_level)
            return
        self.both_branches(stmt.body, stmt.orelse, frame, module_level)

    def both_branches(self, body: tuple[F.Stmt, ...], orelse: tuple[F.Stmt, ...], frame: Frame,
                      module_level: bool) -> None:
        """An `if` whose test we cannot decide: run each branch from the same state, and
        where they disagree about a name or attribute, mark what they built as ambiguous."""
        owner = frame.self_value
        env0 = dict(frame.env)
        attrs0 = dict(owner.attrs) if owner is not None else {}
        order0 = list(owner.children_order) if owner is not None else []
        frame.cond_depth += 1
        try:
            self.block(body, frame, module_level)
            frame.jumped = False
            returned_then = frame.returned
            frame.returned = None
            env_then, attrs_then = dict(frame.env), dict(owner.attrs) if owner is not None else {}
            order_then = list(owner.children_order) if owner is not None else []
            frame.env = dict(env0)
            if owner is not None:
                owner.attrs, owner.children_order = dict(attrs0), list(order0)
            self.block(orelse, frame, module_level)
            frame.jumped = False
            returned_else = frame.returned
        finally:
            frame.cond_depth -= 1
        choices = not _building_module(frame)
        frame.env = _merge_choices(env_then, frame.env, choices)
        if owner is not None:
            merged = _merge_choices(attrs_then, owner.attrs, choices)
            order = order_then + [k for k in owner.children_order if k not in order_then]
            owner.attrs, owner.children_order = merged, [k for k in order if k in merged]
        if returned_then is not None and returned_else is not None:
            frame.returned = _merge_choices({"r": returned_then}, {"r": returned_else}, choices)["r"]
        else:
            frame.returned = None

    def narrowing(self, test: F.Expr, frame: Frame) -> tuple[str, Value, Value] | None:
        """Tests that split a `modules()` variable: `isinstance(m, (nn.Conv2d, nn.Linear))`,
        `not ...`, `isinstance(m, A) or isinstance(m, B)`, and DCGAN's class-name tests
        (`m.__class__.__name__.find("Conv") != -1`, `"Norm" in classname`). The branch
        sees the modules that pass; the other branch the rest."""
        if isinstance(test, F.Not):
            inner = self.narrowing(test.value, frame)
            return None if inner is None else (inner[0], inner[2], inner[1])
        if isinstance(test, F.BoolOp) and test.op == "or":
            parts = [self.narrowing(v, frame) for v in test.values]
            if any(p is None for p in parts) or len({p[0] for p in parts}) != 1:
                return None
            insides = [p[1] for p in parts]
            if not all(isinstance(i, ModulesV) and i.types is not None and not i.name_has for i in insides):
                return None
            base = frame.env.get(parts[0][0])
            if not isinstance(base, ModulesV):
                return None
            types = tuple(t for i in insides for t in i.types)  # type: ignore[union-attr]
            return parts[0][0], base.narrowed(types=types), base.narrowed(exclude=base.exclude + types)
        if isinstance(test, F.Compare):
            return self.name_narrowing(test, frame)
        if not (isinstance(test, F.Call) and isinstance(test.func, F.Global)
                and test.func.qual == "builtins.isinstance" and len(test.args) == 2):
            return None
        subject = test.args[0].value
        if not isinstance(subject, F.Local):
            return None
        value = frame.env.get(subject.name)
        if not isinstance(value, ModulesV):
            return None
        types = self.type_names(self.expr(test.args[1].value, frame))
        if types is None:
            return None
        inside = value.narrowed(types=types if value.types is None else
                                tuple(t for t in types if t in value.types))
        outside = value.narrowed(exclude=value.exclude + types)
        return subject.name, inside, outside

    def name_narrowing(self, test: F.Compare, frame: Frame) -> tuple[str, Value, Value] | None:
        left, right = self.expr(test.left, frame), self.expr(test.right, frame)
        modules, needle, has = None, None, None
        if isinstance(left, NameFindV) and isinstance(right, ConstV) and right.value == -1 \
                and test.op in ("!=", "=="):
            modules, needle, has = left.modules, left.needle, test.op == "!="
        elif isinstance(left, NameFindV) and isinstance(right, ConstV) and right.value == 0 \
                and test.op in (">=", "<"):
            modules, needle, has = left.modules, left.needle, test.op == ">="
        elif isinstance(right, ClassOfV) and right.named and isinstance(left, ConstV) \
                and isinstance(left.value, str) and test.op in ("in", "not in"):
            modules, needle, has = right.modules, left.value, test.op == "in"
        if modules is None or needle is None:
            return None
        name = next((k for k, v in frame.env.items() if v is modules), None)
        if name is None:
            return None
        inside = modules.narrowed(name_has=modules.name_has + (needle,))
        outside = modules.narrowed(name_lacks=modules.name_lacks + (needle,))
        if not has:
            inside, outside = outside, inside
        return name, inside, outside

    def type_names(self, value: Value) -> tuple[str, ...] | None:
        if isinstance(value, TorchTypeV):
            return (value.name,)
        if isinstance(value, ClassV):
            return (value.cls.qualname,)
        if isinstance(value, (ListV, TupleV)):
            items = value.items
            names: list[str] = []
            for item in items:
                sub = self.type_names(item)
                if sub is None:
                    return None
                names.extend(sub)
            return tuple(names)
        if isinstance(value, NameV) and value.qual.startswith("torch.nn."):
            return (value.qual.rsplit(".", 1)[-1],)
        return None

    def for_stmt(self, stmt: F.For, frame: Frame) -> None:
        iterable = self.expr(stmt.iter, frame)
        frame.loop_depth += 1
        frame.loops.append(stmt.span)
        try:
            if isinstance(iterable, TensorV) or (
                    not isinstance(iterable, (ListV, TupleV, ModulesIterV))
                    and any(DATA_SOURCE.search(n) for n in names_in(stmt.iter))):
                # Batches of a data loader: what comes out is real data.
                if isinstance(iterable, TensorV) and iterable.tags:
                    batch = TensorV(iterable.tags, (), iterable.origins)
                else:
                    source = next((n for n in names_in(stmt.iter) if DATA_SOURCE.search(n)), "the data loader")
                    batch = TensorV(frozenset({"real"}), (), frozenset({
                        Data(f"a batch of `{source}` (line {stmt.span.line})")}))
                self.assign_all(stmt.target, batch, frame)
                self.block(stmt.body, frame)
            elif isinstance(iterable, ModulesIterV) and iterable.children_only and not iterable.named \
                    and iterable.root.kind == "container" and 0 < len(_items(iterable.root)) <= MAX_UNROLL:
                # `for m in seq.children(): layers.append(m)` (re-packing a Sequential's
                # layers into another): each child, as it is.
                for value in _items(iterable.root):
                    self.assign(stmt.target, value, frame)
                    self.block(stmt.body, frame)
                    frame.jumped = False
                    if frame.returned is not None:
                        break
            elif isinstance(iterable, ModulesIterV):
                item: Value = ModulesV(iterable.root, children_only=iterable.children_only)
                if iterable.named:
                    item = TupleV((UNKNOWN, item))
                self.assign(stmt.target, item, frame)
                self.block(stmt.body, frame)
            elif isinstance(iterable, (ListV, TupleV, Layer, ConstV)) and 0 < len(_items(iterable)) <= MAX_UNROLL:
                for value in _items(iterable):
                    self.assign(stmt.target, value, frame)
                    self.block(stmt.body, frame)
                    frame.jumped = False
                    if frame.returned is not None:
                        break
            else:
                self.assign(stmt.target, UNKNOWN, frame)
                self.block(stmt.body, frame)
        finally:
            frame.loop_depth -= 1
            frame.loops.pop()
            frame.jumped = False
        self.block(stmt.orelse, frame)

    def assign_all(self, target: F.Expr, value: Value, frame: Frame) -> None:
        if isinstance(target, F.ListE):
            for sub in target.items:
                self.assign_all(sub, value, frame)
        else:
            self.assign(target, value, frame)

    def assign(self, target: F.Expr, value: Value, frame: Frame) -> None:
        if isinstance(value, OneOfV) and value.role == "discriminator" or \
                isinstance(value, Layer) and "holds (key not known here)" in " ".join(value.via):
            # A registry's discriminators, for a key not known here: only a discriminator's
            # binding (`self.net_d`) is one of them; `self.net_g` is some other class.
            name = text_of(target)
            if isinstance(target, F.Attr) and not D_NAME.search(name) or G_NAME.search(name):
                value = UNKNOWN
        for layer in resolve.layers(value):
            name = text_of(target)
            if name and name not in layer.bound_names:
                layer.bound_names.append(name)
        if isinstance(target, F.Local):
            frame.env[target.name] = value
        elif isinstance(target, F.Global):
            if target.qual.startswith(frame.file.module + ".") or not frame.file.module:
                name = target.qual[len(frame.file.module) + 1:] if frame.file.module else target.qual
                if "." not in name:
                    frame.env[name] = value
        elif isinstance(target, F.Attr):
            owner = self.expr(target.value, frame)
            if isinstance(owner, Layer):
                owner.set_attr(target.attr, value)
            elif isinstance(owner, NamespaceV) and owner.parsed:
                owner.attrs[target.attr] = value
            elif isinstance(owner, DictV) and owner.attrs:
                owner.items[target.attr] = value
        elif isinstance(target, F.Subscript):
            owner = self.expr(target.value, frame)
            key = self.expr(target.index, frame)
            if isinstance(owner, DictV) and isinstance(key, ConstV):
                owner.items[key.value] = value
            elif isinstance(owner, DictV) and isinstance(value, Layer):
                # `layers[f"conv{i}"] = nn.Conv2d(...)` in a loop: a computed key is one of
                # many, kept so the `nn.Sequential(layers)` built from it has the layer.
                owner.items[f"*{len(owner.items)}"] = value
            elif isinstance(owner, Layer) and owner.kind == "container":
                owner.set_attr(str(key.value) if isinstance(key, ConstV) else f"*{len(owner.attrs)}", value)
        elif isinstance(target, F.ListE):
            items: tuple[Value, ...] = ()
            if isinstance(value, (TupleV, ListV)):
                items = tuple(value.items)
            elif isinstance(value, TensorV):
                # `x, skip = self.block(x)`: each part carries what the tensor carried.
                items = tuple(value for _ in target.items)
            for i, sub in enumerate(target.items):
                self.assign(sub, items[i] if i < len(items) else UNKNOWN, frame)

    # ------------------------------------------------------------ expressions

    def expr(self, e: F.Expr | None, frame: Frame) -> Value:
        if e is None:
            return UNKNOWN
        if isinstance(e, F.Const):
            return ConstV(e.value)
        if isinstance(e, F.Local):
            return frame.env.get(e.name, UNKNOWN)
        if isinstance(e, F.Global):
            local = self.module_local(e, frame)
            if local is not None:
                value, attrs = local
                for attr in attrs:
                    value = self.attribute(value, attr, frame)
                return value
            return self.global_value(e.qual, e.text, frame)
        if isinstance(e, F.Attr):
            return self.attribute(self.expr(e.value, frame), e.attr, frame)
        if isinstance(e, F.Call):
            return self.call(e, frame)
        if isinstance(e, F.ListE):
            items: list[Value] = []
            for item in e.items:
                if isinstance(item, F.Starred):
                    inner = self.expr(item.value, frame)
                    if isinstance(inner, (ListV, TupleV)):
                        items.extend(inner.items)
                    else:
                        items.append(UNKNOWN)
                else:
                    items.append(self.expr(item, frame))
            if e.kind == "tuple":
                return TupleV(tuple(items))
            return ListV(items, e.kind)
        if isinstance(e, F.DictE):
            out = DictV()
            for k, v in e.items:
                key = self.expr(k, frame)
                out.items[key.value if isinstance(key, ConstV) else object()] = self.expr(v, frame)
            return out
        if isinstance(e, F.Subscript):
            container, key = self.expr(e.value, frame), self.expr(e.index, frame)
            # A key the dict lacks (`--arch` with no default) is one the user passes.
            if isinstance(container, DictV) and not (isinstance(key, ConstV) and key.value in container.items):
                chosen = resolve.of_dict(container.items, text_of(e.value), Location(frame.file.path, e.span))
                if chosen is not None:
                    return chosen
            return self.subscript(container, key)
        if isinstance(e, F.BinOp):
            left, right = self.expr(e.left, frame), self.expr(e.right, frame)
            if e.op == "Add" and isinstance(left, ListV) and isinstance(right, ListV):
                return ListV(left.items + right.items)
            if isinstance(left, ConstV) and isinstance(right, ConstV):
                return _arith(e.op, left.value, right.value)
            if isinstance(left, TensorV) or isinstance(right, TensorV):
                return tensor_join([left, right])
            return UNKNOWN
        if isinstance(e, F.Compare):
            return _compare(e.op, self.expr(e.left, frame), self.expr(e.right, frame))
        if isinstance(e, F.Not):
            truth = self.truth(self.expr(e.value, frame))
            return UNKNOWN if truth is None else ConstV(not truth)
        if isinstance(e, F.BoolOp):
            values = [self.expr(v, frame) for v in e.values]
            truths = [self.truth(v) for v in values]
            if e.op == "and":
                if any(t is False for t in truths):
                    return ConstV(False)
                return values[-1] if all(t is True for t in truths) else UNKNOWN
            for v, t in zip(values, truths):
                if t is True:
                    return v
                if t is None:
                    return UNKNOWN
            return values[-1]
        if isinstance(e, F.IfExp):
            narrowed = self.narrowing(e.test, frame)
            if narrowed is not None:
                # `spectral_norm(m) if isinstance(m, nn.Conv2d) else m` (a lambda for apply)
                name, inside, outside = narrowed
                saved = frame.env.get(name)
                frame.env[name] = inside
                chosen = self.expr(e.body, frame)
                frame.env[name] = outside
                self.expr(e.orelse, frame)
                if saved is not None:
                    frame.env[name] = saved
                return chosen
            truth = self.truth(self.expr(e.test, frame))
            if truth is True:
                return self.expr(e.body, frame)
            if truth is False:
                return self.expr(e.orelse, frame)
            frame.cond_depth += 1
            try:
                a, b = self.expr(e.body, frame), self.expr(e.orelse, frame)
            finally:
                frame.cond_depth -= 1
            return _merge({"v": a}, {"v": b})["v"]
        if isinstance(e, F.Lambda):
            return LambdaV(e.params, e.body, frame.file, frame.env)
        if isinstance(e, F.Comprehension):
            return self.comprehension(e, frame)
        return UNKNOWN

    def comprehension(self, e: F.Comprehension, frame: Frame) -> Value:
        out = ListV()
        saved = dict(frame.env)
        frame.loop_depth += 1
        try:
            if not self.clauses(e, e.fors, frame, out):
                return UNKNOWN
        finally:
            frame.loop_depth -= 1
            frame.env = saved
        return out

    def clauses(self, e: F.Comprehension, fors: tuple[F.CompFor, ...], frame: Frame, out: ListV) -> bool:
        """Run the clauses from the first as nested loops, appending `elt` where every
        filter holds or may hold. False when the result is not a list one can know (a
        modules() walk)."""
        if not fors:
            out.items.append(self.expr(e.elt, frame))
            return True
        clause, rest = fors[0], fors[1:]
        iterable = self.expr(clause.iter, frame)
        if isinstance(iterable, (ListV, TupleV, Layer, ConstV)) and 0 < len(_items(iterable)) <= MAX_UNROLL:
            items = _items(iterable)
        elif isinstance(iterable, ModulesIterV):
            self.assign(clause.target, ModulesV(iterable.root, children_only=iterable.children_only), frame)
            self.expr(e.elt, frame)
            return False
        else:
            items = [UNKNOWN]
        for item in items:
            self.assign(clause.target, item, frame)
            # A filter known false drops the item (`[m for m in (conv, norm, act) if m is not None]`).
            if any(self.truth(self.expr(test, frame)) is False for test in clause.ifs):
                continue
            if not self.clauses(e, rest, frame, out):
                return False
        return True

    def subscript(self, value: Value, key: Value) -> Value:
        if isinstance(value, TensorV):
            return value
        if isinstance(value, ConstV) and isinstance(value.value, str) and isinstance(key, ConstV) \
                and isinstance(key.value, int) and -len(value.value) <= key.value < len(value.value):
            return ConstV(value.value[key.value])  # `mode[-1]`, a layer-code string
        if isinstance(value, (ListV, TupleV)) and isinstance(key, ConstV) and isinstance(key.value, int):
            try:
                return value.items[key.value]
            except IndexError:
                return UNKNOWN
        if isinstance(value, DictV) and isinstance(key, ConstV):
            return value.items.get(key.value, UNKNOWN)
        if isinstance(value, Layer) and isinstance(key, ConstV):
            if isinstance(key.value, int):
                children = value.children()
                try:
                    return children[key.value][1]
                except IndexError:
                    return UNKNOWN
            return value.attrs.get(str(key.value), UNKNOWN)
        return UNKNOWN

    def truth(self, value: Value) -> bool | None:
        if isinstance(value, ConstV):
            try:
                return bool(value.value)
            except Exception:
                return None
        if isinstance(value, (Layer, FuncV, ClassV, TorchTypeV, SNFuncV, PartialV, OneOfV)):
            return True
        if isinstance(value, ListV):
            return bool(value.items) if value.items else None
        return None

    def attribute(self, value: Value, attr: str, frame: Frame) -> Value:
        if isinstance(value, Layer):
            if attr in value.attrs:
                return value.attrs[attr]
            if attr in ("weight", "bias") or attr.endswith(("_weight", "weight_orig")):
                return WeightV(value, attr)
            if value.cls is not None:
                method = self.find_method(value.cls, self.file_of(value.cls) or frame.file, attr)
                if method is not None:
                    return FuncV(method[0], method[1], bound=value, cls=method[2])
            return NameV(f"<layer>.{attr}")
        if isinstance(value, ModulesV):
            if attr in ("weight", "bias"):
                return WeightV(value, attr)
            if attr == "__class__":
                return ClassOfV(value)
            return NameV(f"<modules>.{attr}")
        if isinstance(value, ClassOfV) and attr in ("__name__", "__qualname__"):
            return ClassOfV(value.modules, named=True)
        if isinstance(value, WeightV):
            if attr == "data":
                return value
            return NameV(f"<weight>.{attr}")
        if isinstance(value, TensorV):
            return value
        if isinstance(value, ModuleV):
            return self.global_value(f"{value.file.module}.{attr}", attr, frame)
        if isinstance(value, SuperV):
            for base_cls, base_file in self.project_bases(value.cls, value.file):
                method = base_cls.method(attr)
                if method is not None:
                    return FuncV(method, base_file, bound=value.self_value, cls=base_cls)
            return NameV(f"<super>.{attr}")
        if isinstance(value, NameV):
            return NameV(f"{value.qual}.{attr}", f"{value.text}.{attr}")
        if isinstance(value, NamespaceV) and value.parsed:
            if attr not in value.attrs:
                # Parsed by a parser whose `add_argument` calls did not all run here (an
                # options class's `initialize()`): the default the project declares.
                declared = self.declared_options().get(attr)
                if declared is not None:
                    return ConstV(declared["value"], f"--{attr} default at {declared['where']}")
            return value.attrs.get(attr, UnknownV(f"option {attr}"))
        if isinstance(value, DictV) and value.attrs:
            return value.items.get(attr, UnknownV(f"key {attr}"))
        return UNKNOWN

    # ------------------------------------------------------------ calls

    def call(self, e: F.Call, frame: Frame) -> Value:
        loc = Location(frame.file.path, e.span)
        func_expr = e.func
        found = self.registry_lookup(e, frame)
        if found is not None:
            return found
        copied = self.inplace_copy(e, frame)
        if copied is not None:
            return copied
        # Method calls on a value keep their receiver.
        local = self.module_local(func_expr, frame) if isinstance(func_expr, F.Global) else None
        if local is not None and local[1]:
            # `samples.detach()` on a module-level variable: lowered as one dotted global.
            receiver, attrs = local
            for attr in attrs[:-1]:
                receiver = self.attribute(receiver, attr, frame)
            handled = self.method_call(receiver, attrs[-1], e, frame, loc)
            if handled is not None:
                return handled
            callee = self.attribute(receiver, attrs[-1], frame)
        elif isinstance(func_expr, F.Attr):
            receiver = self.expr(func_expr.value, frame)
            handled = self.method_call(receiver, func_expr.attr, e, frame, loc)
            if handled is not None:
                return handled
            callee = self.attribute(receiver, func_expr.attr, frame)
        else:
            callee = self.expr(func_expr, frame)
            if isinstance(func_expr, F.Global) and "." in func_expr.qual and isinstance(callee, UnknownV):
                # `parser.parse_args()` in a function, `parser` a module-level global.
                receiver = self.global_value(func_expr.qual.rpartition(".")[0], "", frame)
                if isinstance(receiver, NamespaceV):
                    handled = self.method_call(receiver, func_expr.qual.rpartition(".")[2], e, frame, loc)
                    if handled is not None:
                        return handled
        if isinstance(func_expr, F.Global) and func_expr.qual == "builtins.super":
            if frame.self_value is not None and frame.cls is not None:
                return SuperV(frame.self_value, frame.cls, frame.file)
            return UNKNOWN
        args, kwargs = self.arguments(e, frame)
        return self.apply(callee, args, kwargs, e, frame, loc, text_of(func_expr))

    def inplace_copy(self, e: F.Call, frame: Frame) -> Value | None:
        """`input.resize_as_(real).copy_(real)`, `x.data.copy_(fake)`: the tutorial scripts'
        preallocated buffer now holds what was copied into it, whatever it held before."""
        method = last_attr(e.func)
        if method not in _COPIES_INTO or not e.args:
            return None
        source = self.expr(e.args[0].value, frame)
        if not isinstance(source, TensorV):
            return None
        target = e.func.value if isinstance(e.func, F.Attr) else None
        while isinstance(target, F.Call) and last_attr(target.func) in _RESHAPES_IN_PLACE:
            for a in target.args:
                self.expr(a.value, frame)
            target = target.func.value if isinstance(target.func, F.Attr) else target.func
            if isinstance(target, F.Global):  # a module-level `input.resize_as_`: drop the method
                target = F.Global(target.qual.rpartition(".")[0])
        if isinstance(e.func, F.Global):
            target = F.Global(e.func.qual.rpartition(".")[0])
        while isinstance(target, F.Attr) and target.attr == "data":
            target = target.value
        if isinstance(target, F.Global):
            local = self.module_local(target, frame)
            if local is not None and not local[1]:
                frame.env[target.qual.rpartition(".")[2]] = source
            return source
        if isinstance(target, (F.Local, F.Attr)):
            self.assign(target, source, frame)
        return source

    def registry_lookup(self, e: F.Call, frame: Frame) -> Value | None:
        """`ARCH_REGISTRY.get(key)`, `key` known, with a project class registered under it by
        `@ARCH_REGISTRY.register()`: that class."""
        registry, _, method = text_of(e.func).rpartition(".")
        if method != "get" or not registry or len(e.args) != 1:
            return None
        registry = registry.rpartition(".")[2]
        if self._registries is None:
            self._registries = resolve.registries(
                (c, f) for f in self.index.files for _, c in f.classes)
        if registry not in self._registries:
            return None
        key = self.expr(e.args[0].value, frame)
        if not (isinstance(key, ConstV) and isinstance(key.value, str)):
            # A key from a YAML file or the command line: the discriminator it picks is one
            # of the registry's discriminator classes (names them; the others are not).
            where = configvalues.where(Location(frame.file.path, e.span))
            found_all = [ClassV(c, f) for c, f in resolve.registered_classes(
                ((c, f) for f in self.index.files for _, c in f.classes), registry)
                if DISCRIMINATOR_CLASS.search(c.name)]
            if not found_all:
                return None
            found_all = _named_after_the_model(found_all, frame)
            why = (f"one of {len(found_all)} discriminator classes registry {registry} holds (key not known "
                   f"here)" if len(found_all) > 1 else
                   f"the only discriminator class registry {registry} holds (key not known here)")
            if len(found_all) == 1:
                return OneOfV((ClassV(found_all[0].cls, found_all[0].file, via=f"{why} at {where}"),),
                              why, role="discriminator")
            return OneOfV(tuple(found_all), why, role="discriminator")
        found = resolve.registered(((c, f) for f in self.index.files for _, c in f.classes),
                                   registry, key.value)
        if found is None:
            return None
        source = f" from the {key.origin}" if key.origin else ""
        return ClassV(found[0], found[1], via=f"registry {registry} key {key.value!r}{source} at "
                                              f"{configvalues.where(Location(frame.file.path, e.span))}")

    def arguments(self, e: F.Call, frame: Frame) -> tuple[list[Value], dict[str, Value]]:
        args: list[Value] = []
        kwargs: dict[str, Value] = {}
        for a in e.args:
            value = self.expr(a.value, frame)
            if a.star == "*":
                if isinstance(value, (ListV, TupleV)):
                    args.extend(value.items)
                else:
                    args.append(UnknownV("*args"))
            elif a.star == "**":
                if isinstance(value, DictV):
                    kwargs.update({str(k): v for k, v in value.items.items()})
            elif a.keyword is not None:
                kwargs[a.keyword] = value
            else:
                args.append(value)
        return args, kwargs

    def apply(self, callee: Value, args: list[Value], kwargs: dict[str, Value], e: F.Call | None,
              frame: Frame, loc: Location, text: str) -> Value:
        if frame.depth > MAX_DEPTH:
            return UNKNOWN
        if isinstance(callee, SNFuncV):
            return self.spectral_norm(callee.api, callee.text, args, kwargs, e, frame, loc)
        if isinstance(callee, TorchTypeV):
            built = self.build_torch(callee.name, args, kwargs, frame, loc)
            if callee.origin is not None and isinstance(built, Layer):
                built.origin = callee.origin
            return built
        if isinstance(callee, Layer):
            return self.forward_call(callee, text, args, frame, loc, e)
        if isinstance(callee, OneOfV):
            # Each candidate is built, or called, as the code would with that one.
            results = [self.apply(option, list(args), dict(kwargs), e, frame, loc, text)
                       for option in callee.options]
            if all(isinstance(r, Layer) for r in results):
                for r in results:
                    r.via.append(f"{callee.why} at {configvalues.where(loc)}")  # type: ignore[union-attr]
                if len(results) == 1:
                    return results[0]
                return OneOfV(tuple(results), callee.why, callee.role)
            return tensor_join(results) if any(isinstance(r, TensorV) for r in results) else UNKNOWN
        if isinstance(callee, UnknownV) and text and (D_NAME.search(text) or G_NAME.search(text)):
            return self.forward_call(None, text, args, frame, loc, e)
        if isinstance(callee, ClassV):
            if _is_dict_class(callee.cls):
                return configvalues.attr_dict(args, kwargs)
            return self.instantiate(callee, tuple(args), kwargs, loc, frame)
        if isinstance(callee, FuncV) and callee.fn.name == "forward" and isinstance(callee.bound, Layer) \
                and callee.bound.kind == "module":
            # `self.forward(x)` in a discriminator's own `compute_loss`: a call of the module.
            return self.forward_call(callee.bound, text, args, frame, loc, e)
        if isinstance(callee, FuncV):
            return self.invoke(callee, args, kwargs, frame, loc)
        if isinstance(callee, LambdaV):
            sub = Frame(callee.file, "<lambda>", frame, loc, depth=frame.depth + 1,
                        env=dict(callee.closure), loop_depth=frame.loop_depth)
            for name, value in zip(callee.params, args):
                sub.env[name] = value
            return self.expr(callee.body, sub)
        if isinstance(callee, PartialV):
            merged = {**callee.kwargs, **kwargs}
            built = self.apply(callee.func, list(callee.args) + args, merged, e, frame, loc,
                               callee.text or text)
            if callee.origin is not None and isinstance(built, Layer) and built.origin is None:
                built.origin = callee.origin
            return built
        if isinstance(callee, NameV):
            return self.named_call(callee, args, kwargs, e, frame, loc)
        return UNKNOWN

    def named_call(self, callee: NameV, args: list[Value], kwargs: dict[str, Value],
                   e: F.Call | None, frame: Frame, loc: Location) -> Value:
        qual = callee.qual
        if weight_norm_api(qual) and args and isinstance(args[0], Layer):
            args[0].weight_norm = weight_norm_api(qual)
            return args[0]
        if qual in resolve.COPIES and len(args) == 1:
            if isinstance(args[0], DictV):
                return DictV(dict(args[0].items), args[0].attrs, args[0].origin)
            if resolve.layers(args[0]):
                return resolve.copied(args[0], qual.rsplit(".", 1)[-1], loc)
        if resolve.is_wrapper(qual) and args and resolve.layers(args[0]):
            return args[0]
        configured = configvalues.named_config_call(qual, args, kwargs, loc, frame.file.path)
        if configured is not None:
            return configured
        if qual in PARTIAL and args:
            return PartialV(args[0], tuple(args[1:]), kwargs, callee.text)
        if INIT_FUNCTION.match(qual) and args:
            self.init_event(args[0], loc)
            return UNKNOWN
        if qual == "builtins.setattr" and len(args) >= 3:
            owner, name = args[0], args[1]
            if isinstance(owner, Layer):
                # A computed name (`f"conv{i}"`) is one of many: `[*]` in symbols.
                owner.set_attr(name.value if isinstance(name, ConstV) else f"*{len(owner.attrs)}", args[2])
            return ConstV(None)
        if qual == "builtins.getattr" and len(args) >= 2 and isinstance(args[1], ConstV):
            return self.attribute(args[0], str(args[1].value), frame)
        if qual in ("builtins.list", "builtins.tuple") and args:
            inner = args[0]
            if isinstance(inner, (ListV, TupleV)):
                return ListV(list(inner.items)) if qual.endswith("list") else TupleV(tuple(inner.items))
            return UNKNOWN
        if qual in ("builtins.list",) and not args:
            return ListV()
        if qual == "builtins.sum" and len(args) == 2 and isinstance(args[1], (ListV, TupleV)):
            # `sum(blocks, [])`: lists of layers flattened into one.
            return _concatenated([args[0]], start=args[1])
        if qual == "itertools.chain":
            return _concatenated([TupleV(tuple(args))])
        if qual == "itertools.chain.from_iterable" and args:
            return _concatenated(args[:1])
        if qual in ("builtins.dict", "collections.OrderedDict"):
            out = DictV(dict(kwargs))
            if args and isinstance(args[0], (ListV, TupleV)):
                for item in args[0].items:
                    if isinstance(item, TupleV) and len(item.items) == 2 and isinstance(item.items[0], ConstV):
                        out.items[item.items[0].value] = item.items[1]
            elif args and isinstance(args[0], DictV):
                out.items.update(args[0].items)
            return out
        if qual == "builtins.isinstance" and len(args) == 2:
            types = self.type_names(args[1])
            if isinstance(args[0], Layer) and types is not None:
                return ConstV(ModulesV(args[0]).matches_types(args[0], types))
            return UNKNOWN
        if qual == "builtins.type" and len(args) == 1 and isinstance(args[0], ModulesV):
            return ClassOfV(args[0])
        if qual == "builtins.range" or qual == "builtins.len":
            return UNKNOWN
        if qual == "torch.autograd.grad":
            self.gradient_penalty(args, kwargs, frame, loc)
            return UNKNOWN
        if qual == "torch.nn.functional.batch_norm":
            training = kwargs.get("training", args[5] if len(args) > 5 else None)
            per_sample = bool(args) and isinstance(args[0], TensorV) and _PER_SAMPLE in args[0].tags
            if training is not None and not (isinstance(training, ConstV) and not training.value) \
                    and not per_sample:
                self.events.batch_norm_calls.append(BatchNormCall(frame.self_value, loc))
            return tensor_join(args)
        if qual == "builtins.next":
            if args and isinstance(args[0], TensorV) and args[0].origins:
                return args[0]
            return TensorV(frozenset({"real"}), (), frozenset({Data(f"next() at line {loc.span.line}")}))
        if qual == "builtins.iter" and e is not None and e.args \
                and any(DATA_SOURCE.search(n) for n in names_in(e.args[0].value)):
            source = next(n for n in names_in(e.args[0].value) if DATA_SOURCE.search(n))
            return TensorV(frozenset({"real"}), (), frozenset({
                Data(f"a batch of `{source}` (line {loc.span.line})")}))
        if qual == "torch.cat" and args:
            return _concatenation(args, kwargs, loc)
        short = qual.rsplit(".", 1)[-1]
        if qual.startswith("torch.") and short in _REDUCTIONS and args and tensors(args[0]) \
                and _over_batch(args[1] if len(args) > 1 else kwargs.get("dim")):
            self.batch_reduction(f"torch.{short}(dim=0)", frame, loc)
        carried = [v for v in list(args) + list(kwargs.values()) if tensors(v)]
        if carried:
            return tensor_join(carried)
        if qual.startswith(("builtins.", "torch.")):
            return UNKNOWN
        # An unknown function that receives a module may do anything to it (add SN, say).
        for value in list(args) + list(kwargs.values()):
            if isinstance(value, Layer) and value.kind == "module":
                value.opaque = True
        return UNKNOWN

    def method_call(self, receiver: Value, name: str, e: F.Call, frame: Frame, loc: Location) -> Value | None:
        if name == "step" and isinstance(receiver, (UnknownV, NameV)):
            # `optimizer_d.step()`, `scaler.step(opt)`: the update so far is over.
            frame.root.optimizer_steps += 1
        if isinstance(receiver, ConstV) and isinstance(receiver.value, str) and name in _STR_METHODS:
            # `norm_type.lower()`, `mode.upper()`: factories normalise their key first.
            args, kwargs = self.arguments(e, frame)
            if kwargs or not all(isinstance(a, ConstV) for a in args):
                return UNKNOWN
            try:
                return ConstV(getattr(receiver.value, name)(*(a.value for a in args)))  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - a call Python itself would reject
                return UNKNOWN
        if isinstance(receiver, ListV):
            args, _ = self.arguments(e, frame)
            if name == "append" and args:
                receiver.items.append(args[0])
            elif name == "extend" and args:
                self.extend(receiver, args[0], frame)
            elif name == "insert" and len(args) >= 2:
                index = args[0].value if isinstance(args[0], ConstV) and isinstance(args[0].value, int) else len(receiver.items)
                receiver.items.insert(index, args[1])
            elif name == "pop":
                return receiver.items.pop() if receiver.items else UNKNOWN
            return ConstV(None)
        if isinstance(receiver, DictV):
            args, _ = self.arguments(e, frame)
            if name in ("values",):
                return ListV(list(receiver.items.values()))
            if name in ("items",):
                return ListV([TupleV((ConstV(k), v)) for k, v in receiver.items.items()])
            if name == "get" and args and isinstance(args[0], ConstV):
                return receiver.items.get(args[0].value, args[1] if len(args) > 1 else ConstV(None))
            if name == "update" and args and isinstance(args[0], DictV):
                receiver.items.update(args[0].items)
            if name == "pop" and args and isinstance(args[0], ConstV):
                return receiver.items.pop(args[0].value, args[1] if len(args) > 1 else UNKNOWN)
            return None
        if isinstance(receiver, OneOfV) and name in ("to", "cuda", "cpu", "float", "double", "half", "train"):
            self.arguments(e, frame)
            return receiver
        if isinstance(receiver, NamespaceV):
            args, kwargs = self.arguments(e, frame)
            return configvalues.parser_method(receiver, name, args, kwargs, loc)
        if isinstance(receiver, ClassOfV) and receiver.named and name in ("find", "startswith", "endswith"):
            args, _ = self.arguments(e, frame)
            if args and isinstance(args[0], ConstV) and isinstance(args[0].value, str):
                if name == "find":
                    return NameFindV(receiver.modules, args[0].value)
            return UNKNOWN
        if isinstance(receiver, TensorV):
            args, kwargs = self.arguments(e, frame)
            if name in _REDUCTIONS and _over_batch(args[0] if args else kwargs.get("dim")):
                self.batch_reduction(f".{name}(dim=0)", frame, loc)
            if name in ("view", "reshape") and args and isinstance(args[0], ConstV) and args[0].value == 1:
                # `x.view(1, b * c, h, w)`: a batch of one whose channels are the samples'
                # channels (AdaIN through `F.batch_norm`): statistics per sample.
                return TensorV(receiver.tags | {_PER_SAMPLE}, receiver.outputs, receiver.origins)
            return tensor_join([receiver, *args, *kwargs.values()])
        if isinstance(receiver, WeightV):
            if name in INPLACE_TENSOR_INIT:
                self.arguments(e, frame)
                self.init_event(receiver, loc)
                return UNKNOWN
            return None
        if isinstance(receiver, Layer):
            args, kwargs = self.arguments(e, frame)
            if name in ("add_module", "register_module") and len(args) >= 2:
                key = args[0].value if isinstance(args[0], ConstV) else f"*{len(receiver.attrs)}"
                receiver.set_attr(str(key), args[1])
                return ConstV(None)
            if name == "append" and receiver.kind == "container" and args:
                receiver.set_attr(str(len(receiver.attrs)), args[0])
                return ConstV(None)
            if name == "extend" and receiver.kind == "container" and args and isinstance(args[0], (ListV, TupleV)):
                for item in args[0].items:
                    receiver.set_attr(str(len(receiver.attrs)), item)
                return ConstV(None)
            if name in ("modules", "named_modules", "children", "named_children"):
                return ModulesIterV(receiver, named=name.startswith("named"),
                                    children_only=name.endswith("children"))
            if name == "apply" and args:
                self.apply(args[0], [ModulesV(receiver)], {}, e, frame, loc, text_of(e.args[0].value))
                return receiver
            if name == "requires_grad_" and args and self.truth(args[0]) is False:
                self.frozen(receiver, frame)
                return receiver
            if name in ("to", "cuda", "cpu", "float", "double", "half", "train", "requires_grad_"):
                return receiver
            if name == "eval" or (name == "train" and args and self.truth(args[0]) is False):
                self.kept_in_eval(receiver, frame)
                return receiver
            return None
        if isinstance(receiver, ModulesV):
            if name == "eval" or name == "train":
                args, _ = self.arguments(e, frame)
                if name == "eval" or (args and self.truth(args[0]) is False):
                    for _, layer in receiver.members():
                        self.kept_in_eval(layer, frame)
                return ConstV(None)
            if name in ("modules", "named_modules", "children", "named_children"):
                return ModulesIterV(receiver.root, named=name.startswith("named"),
                                    children_only=name.endswith("children"))
            return None
        return None

    def kept_in_eval(self, layer: Layer, frame: Frame) -> None:
        """`.eval()` that lasts: in a `train()` override (it runs after every `.train()`),
        or in `__init__` on a frozen part. An `.eval()` in training code is for validation."""
        scope = frame.owner_frame
        if scope is None or scope.function not in ("train", "__init__") and not scope.name.endswith(".__init__"):
            return
        for target in [layer] + [m for _, m in layer.descendants()]:
            target.kept_in_eval = True
            self.events.kept_sites.add((target.call.path, target.call.span))

    def frozen(self, layer: Layer, frame: Frame) -> None:
        """`requires_grad_(False)` in an `__init__`: a pretrained part that never trains.
        Training code that toggles it around a generator step does not count."""
        scope = frame.owner_frame
        if scope is None or scope.function != "__init__" and not scope.name.endswith(".__init__"):
            return
        for target in [layer] + [m for _, m in layer.descendants()]:
            target.frozen = True

    def batch_reduction(self, what: str, frame: Frame, loc: Location) -> None:
        scope = frame.owner_frame
        owner = scope.self_value if scope is not None else None
        self.events.batch_reductions.append(BatchReduction(owner, loc, what))

    def forward_call(self, module: Layer | None, text: str, args: list[Value], frame: Frame,
                     loc: Location, e: F.Call | None) -> Value:
        first = args[0] if args else UNKNOWN
        first_expr = e.args[0].value if e is not None and e.args else None
        kind = _input_kind(first, first_expr)
        root = frame.root
        # The update key holds id(root): keep the root alive so no later frame reuses its id.
        self.events.update_roots.append(root)
        # One update: one loop body of one entry point, up to the next optimizer step (a
        # discriminator step and the generator step after it score apart by design).
        call = ForwardCall(module, text, loc, kind, (id(root), tuple(root.loops), root.optimizer_steps),
                           frame.function or root.function or root.name, len(self.events.forwards), loc,
                           _chain(frame, loc),
                           origins=first.origins if isinstance(first, TensorV) else frozenset(),
                           names=tuple(names_in(first_expr)))
        self.events.forwards.append(call)
        is_generator = G_NAME.search(text or "") is not None or (
            module is not None and (re.search("generator", module.short_type, re.I) is not None
                                    or any(G_NAME.search(n) for n in module.bound_names)))
        out = tensor_join(args) if args else TensorV()
        is_discriminator = D_NAME.search(text or "") is not None
        if module is not None and module.cls is None and not is_generator:
            origins = out.origins  # a torch layer only transforms what it is given
        else:
            origins = frozenset({Output(module, text, loc.span.line, out.origins,
                                        "generator" if is_generator else
                                        "discriminator" if is_discriminator else "")})
        if self.scores_with_discriminator(module):
            self.run_forward(module, args, frame, loc)  # type: ignore[arg-type]
        if is_generator:
            return TensorV(frozenset({"fake"}), ((module, loc),) if module is not None else (), origins)
        return TensorV(out.tags if not is_discriminator else frozenset(),
                       ((module, loc),) if module is not None else (("?", call),), origins)

    def scores_with_discriminator(self, module: Layer | None) -> bool:
        """A loss module holding the discriminator (`self.discriminator(inputs)` in its
        forward): what it scores is what its caller passes, so its forward runs with them."""
        if module is None or module.cls is None:
            return False
        key = module.cls.qualname
        if key not in self._scorers:
            fn = module.cls.method("forward")
            self._scorers[key] = fn is not None and any(
                D_NAME.search(text_of(c.func)) and text_of(c.func).startswith("self.")
                for stmt in walk(fn.body) for c in calls_in(stmt))
        return self._scorers[key]

    def run_forward(self, module: Layer, args: list[Value], frame: Frame, loc: Location) -> None:
        cls = module.cls
        file = self.file_of(cls) if cls is not None else None
        found = self.find_method(cls, file, "forward") if cls is not None and file is not None else None
        if found is None or frame.runs(found[0].qualname):
            return
        self.invoke(FuncV(found[0], found[1], bound=module, cls=found[2]), list(args), {}, frame, loc)

    def gradient_penalty(self, args: list[Value], kwargs: dict[str, Value], frame: Frame,
                         loc: Location) -> None:
        create_graph = kwargs.get("create_graph")
        if create_graph is None or self.truth(create_graph) is False:
            return
        outputs = kwargs.get("outputs", args[0] if args else UNKNOWN)
        for tensor in tensors(outputs):
            for module, where in tensor.outputs:
                # One call may score one of several candidates: each has its forward.
                forward = next((f for f in reversed(self.events.forwards)
                                if (f.node == where and f.module is module) or (module == "?" and f is where)),
                               None)
                if forward is not None:
                    self.events.penalties.append(Penalty(forward, loc))

    def extend(self, target: ListV, value: Value, frame: Frame) -> None:
        if isinstance(value, (ListV, TupleV)):
            target.items.extend(value.items)
        else:
            target.items.append(UNKNOWN)

    # ------------------------------------------------------------ what calls build

    def build_torch(self, name: str, args: list[Value], kwargs: dict[str, Value], frame: Frame,
                    loc: Location) -> Value:
        kind = KINDS[name]
        layer = Layer(name, kind, loc, frame, args=tuple(args), kwargs=dict(kwargs),
                      in_loop=frame.loop_depth > 0, conditional=frame.cond_depth > 0)
        if kind == "container":
            items: list[tuple[str, Value]] = []
            if name == "ModuleDict" or (args and isinstance(args[0], DictV)):
                source = args[0] if args and isinstance(args[0], DictV) else DictV(dict(kwargs))
                items = [(str(k), v) for k, v in source.items.items()]
            elif name == "ModuleList":
                if args and isinstance(args[0], (ListV, TupleV)):
                    items = [(str(i), v) for i, v in enumerate(args[0].items)]
            else:
                items = [(str(i), v) for i, v in enumerate(args)]
            for key, value in items:
                layer.set_attr(key, value)
        elif kind == "attention":
            out_proj = Layer("Linear", "linear", loc, frame, in_loop=layer.in_loop, bypassed=True)
            layer.set_attr("out_proj", out_proj)
        return layer

    def instantiate(self, cls_value: ClassV, args: tuple[Value, ...], kwargs: dict[str, Value],
                    loc: Location, frame: Frame, root_build: bool = False) -> Value:
        cls, file = cls_value.cls, cls_value.file
        kind = self.class_kind(cls, file)
        if kind == "sn_wrapper":
            target = args[0] if args else kwargs.get("module", UNKNOWN)
            reshape = _reshape_along_dim0(cls, file)
            return self.apply_sn(SN_CUSTOM, cls.name, target, {}, None, frame, loc, reshape)
        torch_base = self.torch_base(cls, file)
        if kind is None and torch_base is None:
            if cls.method("__init__") is None and not cls.methods:
                return UNKNOWN
        if kind is None and torch_base is None:
            # A plain object (a trainer holding `self.netD`): built so its methods can run.
            layer_kind = "object"
        else:
            layer_kind = KINDS.get(torch_base or "", "module") if torch_base not in (None, "Module") else "module"
        layer = Layer(cls.qualname, layer_kind, loc, frame, cls=cls, args=args, kwargs=dict(kwargs),
                      in_loop=frame.loop_depth > 0, conditional=frame.cond_depth > 0,
                      base_type=torch_base if torch_base != "Module" else None)
        if cls_value.via:
            layer.via.append(cls_value.via)
        if kind == "sn_mixin":
            layer.sn.append(SNApp(SN_CUSTOM, cls.name, loc, loc, frame))
        init = self.find_method(cls, file, "__init__")
        if init is not None and frame.depth < MAX_DEPTH and not frame.runs(init[0].qualname):
            fn, fn_file, owner_cls = init
            sub = Frame(fn_file, f"{cls.name}.__init__", frame, None if root_build else loc,
                        self_value=layer, cls=owner_cls, depth=frame.depth + 1,
                        qualname=fn.qualname)
            layer.init_frame = sub
            self.bind_params(fn, [layer, *args], kwargs, sub, use_defaults=True)
            self.block(fn.body, sub)
        self.events.instances.append(layer)
        return layer

    def invoke(self, func: FuncV, args: list[Value], kwargs: dict[str, Value], frame: Frame,
               loc: Location) -> Value:
        if frame.depth >= MAX_DEPTH or frame.runs(func.fn.qualname):
            # A function already being interpreted further up: following it again would
            # explore its paths exponentially and learn nothing new.
            return UNKNOWN
        if isinstance(func.bound, Layer) and func.fn.name != "__init__":
            func.bound.called_methods.add(func.fn.name)
        sub = Frame(func.file, func.fn.name, frame, loc, depth=frame.depth + 1,
                    env=dict(func.closure) if func.closure else {}, loop_depth=frame.loop_depth,
                    cond_depth=frame.cond_depth, function=func.fn.name, qualname=func.fn.qualname)
        if func.bound is not None:
            if isinstance(func.bound, Layer):
                sub.self_value = func.bound if func.fn.name == "__init__" else None
                sub.cls = func.cls
                if func.fn.name != "__init__":
                    # A method building parts of `self` (`self._make_layers()`) counts as its init.
                    sub.self_value = func.bound
            args = [func.bound, *args]
        self.bind_params(func.fn, args, kwargs, sub, use_defaults=True)
        passed = len(args) + len(kwargs)
        named = resolve.deciding(func.fn)
        strings = [(p.name, sub.env[p.name]) for p in func.fn.params
                   if p.name in named and isinstance(sub.env.get(p.name), ConstV)
                   and isinstance(sub.env[p.name].value, str)
                   and (p.name in kwargs or func.fn.params.index(p) < passed)]
        self.block(func.fn.body, sub)
        return resolve.built_by(sub.returned or UNKNOWN, func.fn, sub, loc, strings)

    def bind_params(self, fn: F.FunctionFacts, args: list[Value], kwargs: dict[str, Value],
                    frame: Frame, use_defaults: bool) -> None:
        remaining = list(args)
        extra_kwargs = dict(kwargs)
        for p in fn.params:
            if p.kind in ("pos", "posonly"):
                if remaining:
                    frame.env[p.name] = remaining.pop(0)
                elif p.name in extra_kwargs:
                    frame.env[p.name] = extra_kwargs.pop(p.name)
                elif p.default is not None and use_defaults:
                    frame.env[p.name] = self.default(p, frame)
                else:
                    frame.env[p.name] = self.annotated(p, frame) or _unknown_parameter(p.name)
            elif p.kind == "star":
                frame.env[p.name] = TupleV(tuple(remaining))
                remaining = []
            elif p.kind == "kwonly":
                if p.name in extra_kwargs:
                    frame.env[p.name] = extra_kwargs.pop(p.name)
                elif p.default is not None and use_defaults:
                    frame.env[p.name] = self.default(p, frame)
                else:
                    frame.env[p.name] = UnknownV(f"parameter {p.name}")
            elif p.kind == "dstar":
                frame.env[p.name] = DictV(dict(extra_kwargs))
                extra_kwargs = {}
        for p in fn.params:
            if p.name in options.OPTION_PARAMS and p.kind in ("pos", "kwonly"):
                frame.env[p.name] = self.parsed_options(frame.env.get(p.name), frame)

    def declared_options(self) -> dict:
        if self._options is None:
            self._options = options.option_defaults(self.index.files)
        return self._options

    def parsed_options(self, value: Value | None, frame: Frame) -> Value | None:
        """What `opt` holds when the code that parses it cannot be followed (an options
        class's `parse()`, a YAML file): the options the project declares, with their
        defaults, as a run without flags has them. A model class's own
        `parser.set_defaults(...)` applies where the options reach its `__init__`."""
        built = frame.self_value.cls if frame.self_value is not None else None
        if isinstance(value, UnknownV):
            if self._options is None:
                self._options = options.option_defaults(self.index.files)
            if not self._options:
                return value
            return options.namespace(self._options, options.class_defaults(built) if built else {})
        if isinstance(value, NamespaceV) and value.origin == options.DEFAULTS_ORIGIN and built is not None \
                and (frame.function == "__init__" or frame.name.endswith(".__init__")):
            overrides = options.class_defaults(built)
            if overrides:
                return options.namespace(self._options or {}, overrides)
        return value

    def annotated(self, p: F.Param, frame: Frame) -> Value | None:
        """`def d_step(netD: Critic, ...)`: an instance of the annotated project module."""
        if p.annotation is None or frame.depth >= MAX_DEPTH:
            return None
        outer = Frame(frame.file, "<annotations>", frame.parent, frame.call_site, depth=frame.depth)
        value = self.expr(p.annotation, outer)
        if isinstance(value, ClassV) and self.class_kind(value.cls, value.file) == "module":
            return self.instantiate(value, (), {}, Location(frame.file.path, p.span), outer)
        return None

    def default(self, p: F.Param, frame: Frame) -> Value:
        # Defaults are evaluated in the defining module, outside the function.
        outer = Frame(frame.file, "<defaults>", frame.parent, frame.call_site, depth=frame.depth)
        value = self.expr(p.default, outer)
        # A layer type taken from a default (`norm_layer=nn.BatchNorm2d`) reports there.
        origin = Location(frame.file.path, p.span)
        if isinstance(value, TorchTypeV):
            return TorchTypeV(value.name, origin)
        if isinstance(value, PartialV):
            return PartialV(value.func, value.args, value.kwargs, value.text, origin)
        return value

    # ------------------------------------------------------------ spectral norm

    def spectral_norm(self, api: str, text: str, args: list[Value], kwargs: dict[str, Value],
                      e: F.Call | None, frame: Frame, loc: Location) -> Value:
        self.events.sn_calls.append(SNCall(api, text, loc))
        target = args[0] if args else kwargs.get("module", UNKNOWN)
        options: dict[str, tuple[Value, Location | None]] = {}
        positional = ["module", "name", "n_power_iterations", "eps", "dim"]
        for i, value in enumerate(args[1:], start=1):
            if i < len(positional):
                options[positional[i]] = (value, None)
        for key, value in kwargs.items():
            options[key] = (value, None)
        if e is not None:
            positional_args = [a for a in e.args if a.keyword is None and not a.star]
            for i, a in enumerate(positional_args[1:], start=1):
                if i < len(positional) and positional[i] in options:
                    options[positional[i]] = (options[positional[i]][0], Location(loc.path, a.span))
            for a in e.args:
                if a.keyword in options:
                    options[a.keyword] = (options[a.keyword][0], Location(loc.path, a.span))
        return self.apply_sn(api, text, target, options, e, frame, loc)

    def apply_sn(self, api: str, text: str, target: Value,
                 options: dict[str, tuple[Value, Location | None]], e: F.Call | None,
                 frame: Frame, loc: Location, reshape: Location | None = None) -> Value:
        name_value, name_loc = options.get("name", (ConstV("weight"), None))
        dim_value, dim_loc = options.get("dim", (ConstV(None), None))
        name = name_value.value if isinstance(name_value, ConstV) else None
        dim = dim_value.value if isinstance(dim_value, ConstV) and isinstance(dim_value.value, int) else None
        dim_explicit = "dim" in options and not (isinstance(dim_value, ConstV) and dim_value.value is None)

        def one(layer: Layer, from_filter: bool, types: tuple[str, ...]) -> None:
            site = loc if from_filter or layer.frame.is_within(frame) else frame.seen_from(layer.frame, loc)
            app = SNApp(api, text, loc, site, frame, name, name_loc, dim, dim_loc, dim_explicit,
                        from_filter, types, reshape)
            layer.sn.append(app)
            self.events.sn.append(SNEvent(app, layer))

        if isinstance(target, Layer):
            one(target, False, ())
        elif isinstance(target, ModulesV):
            for _, layer in target.members():
                one(layer, True, target.types or ())
        return target

    def init_event(self, target: Value, loc: Location) -> None:
        if not isinstance(target, WeightV):
            return
        owners: list[Layer] = []
        if isinstance(target.owner, Layer):
            owners = [target.owner]
        elif isinstance(target.owner, ModulesV):
            owners = [m for _, m in target.owner.members()]
        for layer in owners:
            self.events.inits.append(InitEvent(loc, layer, tuple(layer.sn), target.name))

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
        out = []
        frame = Frame(file, "<bases>")
        for base in cls.bases:
            value = self.expr(base, frame)
            if isinstance(value, ClassV):
                out.append((value.cls, value.file))
        return out

    def file_of(self, cls: F.ClassFacts) -> F.FileFacts | None:
        """The file that defines `cls`: a method runs there, with its imports, wherever the
        instance is used."""
        if self._class_files is None:
            self._class_files = {id(c): f for f in self.index.files for _, c in f.classes}
        return self._class_files.get(id(cls))

    def find_method(self, cls: F.ClassFacts, file: F.FileFacts, name: str,
                    seen: frozenset[str] = frozenset()) -> tuple[F.FunctionFacts, F.FileFacts, F.ClassFacts] | None:
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

    def torch_base(self, cls: F.ClassFacts, file: F.FileFacts, seen: frozenset[str] = frozenset()) -> str | None:
        """The torch.nn type a project class derives from (`Conv2d`, or `Module`)."""
        if cls.qualname in seen:
            return None
        frame = Frame(file, "<bases>")
        found: str | None = None
        for base in cls.bases:
            value = self.expr(base, frame)
            if isinstance(value, TorchTypeV):
                if value.name != "Module" or found is None:
                    found = value.name
            elif isinstance(value, ClassV):
                sub = self.torch_base(value.cls, value.file, seen | {cls.qualname})
                if sub is not None and (sub != "Module" or found is None):
                    found = sub
            elif not (isinstance(value, NameV) and value.qual.startswith(("builtins.", "typing.", "torch."))):
                # A base from outside the project (`BaseNetwork` from a package we do not
                # see) is most likely a module; treat it as one so its layers are read.
                if found is None and cls.method("__init__") is not None:
                    found = "Module"
        return found

    def class_kind(self, cls: F.ClassFacts, file: F.FileFacts) -> str | None:
        """"sn_wrapper" (hand-written SN around a module), "sn_mixin" (an SN layer class),
        "module" (another nn.Module), None (not a module)."""
        torch_base = self.torch_base(cls, file)
        if _is_hand_written_sn(cls, self, file):
            init = cls.method("__init__")
            params = [p.name for p in init.params[1:]] if init else []
            if torch_base in KINDS and KINDS.get(torch_base) in ("conv", "conv_transpose", "linear", "embedding"):
                return "sn_mixin"
            if params and params[0] in ("module", "layer", "m", "mod", "net"):
                return "sn_wrapper"
            return "sn_mixin" if torch_base not in (None, "Module") else "sn_wrapper"
        if torch_base is not None:
            return "module"
        return None


_SN_METHODS = frozenset({"_update_u_v", "update_u_v", "power_iteration", "_power_iteration",
                         "l2normalize", "_l2normalize", "compute_weight", "W_", "sn_weight",
                         "_make_params", "sv", "_noupdate_u_v"})
_SN_NAMES = frozenset({"spectralnorm", "sn", "spectralnormalization", "spectralnormwrapper"})


def _is_hand_written_sn(cls: F.ClassFacts, interp: Interpreter, file: F.FileFacts,
                        seen: frozenset[str] = frozenset()) -> bool:
    """A class that implements SN itself: power iteration in its methods, or named so."""
    if cls.qualname in seen:
        return False
    if cls.method_names & _SN_METHODS or cls.name.lower().replace("_", "") in _SN_NAMES:
        return True
    return any(_is_hand_written_sn(b, interp, f, seen | {cls.qualname})
               for b, f in interp.project_bases(cls, file))


def _named(value: Value, name: str, file: F.FileFacts, stmt: F.Stmt) -> Value:
    """A module constant or config dict remembers its assignment, for the graph pass's
    account of where a constructor argument came from."""
    if isinstance(value, ConstV) and not value.origin:
        return ConstV(value.value, f"{name} at {file.path}:{stmt.span.line}")
    if isinstance(value, DictV) and not value.origin:
        value.origin = f"{name} at {file.path}:{stmt.span.line}"
    return value


def _is_dict_class(cls: F.ClassFacts) -> bool:
    """A project class deriving from dict: a configuration read by attribute (AttrDict)."""
    return any(isinstance(b, F.Global) and b.qual in ("builtins.dict", "collections.OrderedDict")
               for b in cls.bases)


def _merge(a: dict, b: dict) -> dict:
    out = dict(b)
    for key, value in a.items():
        if key not in b:
            out[key] = value
        elif b[key] is not value:
            other = b[key]
            for v in (value, other):
                if isinstance(v, Layer):
                    v.ambiguous = True
            out[key] = other if isinstance(other, Layer) else value
    return out


def _building_module(frame: Frame) -> bool:
    """Whether this frame runs for a module's own code (its __init__, a helper building its
    blocks, its forward): there an undecided `if` keeps `_merge`'s one reading, so that
    the module's layers stay layers."""
    scope: Frame | None = frame
    while scope is not None:
        if scope.self_value is not None and scope.self_value.kind != "object":
            return True
        scope = scope.parent
    return False


def _merge_choices(a: dict, b: dict, choices: bool) -> dict:
    """`_merge`, except that where an undecided `if` in a factory or a plain object (a
    trainer, a model class) leaves a name to instances of different project classes, the
    name holds one of them (`OneOfV`), when `choices`."""
    if not choices:
        return _merge(a, b)
    chosen = {k: resolve.one_of(v, b[k]) for k, v in a.items() if k in b and b[k] is not v}
    out = _merge(a, b)
    out.update({k: v for k, v in chosen.items() if v is not None})
    return out


def _arith(op: str, a: object, b: object) -> Value:
    try:
        if op == "Add":
            return ConstV(a + b)  # type: ignore[operator]
        if op == "Multiply":
            return ConstV(a * b)  # type: ignore[operator]
        if op == "Subtract":
            return ConstV(a - b)  # type: ignore[operator]
        if op == "FloorDivide":
            return ConstV(a // b)  # type: ignore[operator]
    except Exception:
        pass
    return UNKNOWN


def _unknown_parameter(name: str) -> Value:
    """A parameter nobody passed: training helpers name their tensors for what they hold."""
    if FAKE_NAME.search(name):
        return TensorV(frozenset({"fake"}), (), frozenset({Named("fake", name)}))
    if REAL_NAME.search(name) and not D_NAME.search(name) and not G_NAME.search(name):
        return TensorV(frozenset({"real"}), (), frozenset({Named("real", name)}))
    return UnknownV(f"parameter {name}")


def _concatenation(args: list[Value], kwargs: dict[str, Value], loc: Location) -> TensorV:
    """`torch.cat(seq, dim)`. Along the batch (dim 0, the default) it joins batches: real
    and generated parts make one mixed batch. Along any other axis each sample gains
    channels (a conditional discriminator's `(cond, fake)` pair): one batch of what the
    generated part makes it."""
    dim = args[1] if len(args) > 1 else kwargs.get("dim", kwargs.get("axis"))
    parts = tensors(args[0])
    joined = tensor_join(parts)
    if isinstance(dim, ConstV) and isinstance(dim.value, int) and dim.value != 0:
        return TensorV(joined.tags, joined.outputs,
                       frozenset({Channels(tuple(p.origins for p in parts), loc.span.line)}))
    return joined


def _input_kind(value: Value, expr: F.Expr | None) -> str:
    tags: frozenset[str] = value.tags if isinstance(value, TensorV) else frozenset()
    if not tags and expr is not None:
        names = names_in(expr)
        if any(FAKE_NAME.search(n) for n in names):
            tags = tags | {"fake"}
        if any(REAL_NAME.search(n) and not FAKE_NAME.search(n) for n in names):
            tags = tags | {"real"}
    if "real" in tags and "fake" in tags:
        return "mixed"
    if "fake" in tags:
        return "fake"
    if "real" in tags:
        return "real"
    return "unknown"


def _items(value: Value) -> list[Value]:
    """What iterating a value yields: list items, or a container module's children."""
    if isinstance(value, (ListV, TupleV)):
        return list(value.items)
    if isinstance(value, ConstV) and isinstance(value.value, str):
        return [ConstV(c) for c in value.value]  # `for t in mode:` over a layer-code string
    if isinstance(value, Layer) and value.kind == "container":
        if value.type == "ModuleDict":
            return [ConstV(k) for k in value.children_order]
        return [child for _, child in value.children()]
    return []


def _concatenated(outer: list[Value], start: Value | None = None) -> Value:
    """The items of each list in `outer[0]`, in order: `sum(blocks, [])` and
    `itertools.chain(*blocks)`. Unknown unless every part is a list one can read."""
    items = list(start.items) if isinstance(start, (ListV, TupleV)) else []
    if not outer or not isinstance(outer[0], (ListV, TupleV)):
        return UNKNOWN
    for part in outer[0].items:
        if not isinstance(part, (ListV, TupleV)):
            return UNKNOWN
        items.extend(part.items)
    return ListV(items)


def _compare(op: str, left: Value, right: Value) -> Value:
    """Comparisons of literals (`norm_type == "batch"`), so factories pick one branch."""
    if isinstance(right, (ListV, TupleV)) and op in ("in", "not in") and isinstance(left, ConstV) \
            and all(isinstance(i, ConstV) for i in right.items):
        inside = left.value in [i.value for i in right.items]  # type: ignore[attr-defined]
        return ConstV(inside if op == "in" else not inside)
    if not (isinstance(left, ConstV) and isinstance(right, ConstV)):
        return UNKNOWN
    a, b = left.value, right.value
    try:
        result = {"==": lambda: a == b, "!=": lambda: a != b, "is": lambda: a is b,
                  "is not": lambda: a is not b, "in": lambda: a in b, "not in": lambda: a not in b,
                  "<": lambda: a < b, "<=": lambda: a <= b, ">": lambda: a > b,
                  ">=": lambda: a >= b}[op]()
    except Exception:  # noqa: BLE001 - a comparison Python itself would reject
        return UNKNOWN
    return ConstV(bool(result))


def _chain(frame: Frame, loc: Location) -> tuple[Location, ...]:
    out = [loc]
    while frame.call_site is not None and frame.parent is not None:
        out.append(frame.call_site)
        frame = frame.parent
    return tuple(out)


# A tensor reshaped to a batch of one (`x.view(1, b * c, h, w)`).
_PER_SAMPLE = "per-sample"

# In-place tensor methods that make the receiver hold their argument's data, and the ones
# that only reshape it first (`input.resize_as_(real).copy_(real)`).
_COPIES_INTO = frozenset({"copy_", "set_"})
_RESHAPES_IN_PLACE = frozenset({"resize_as_", "resize_"})


def _named_after_the_model(candidates: list[ClassV], frame: Frame) -> list[ClassV]:
    """A framework's `StyleGAN2Model` builds its `StyleGAN2Discriminator` from its config:
    of a registry's discriminators, the one named after the model class that builds it,
    when exactly one is."""
    scope: Frame | None = frame
    while scope is not None:
        owner = scope.self_value
        if owner is not None and owner.cls is not None and owner.kind == "object":
            stem = re.sub(r"_?model$", "", owner.cls.name, flags=re.I).lower()
            named = [c for c in candidates if stem and c.cls.name.lower().startswith(stem)]
            return named if len(named) == 1 else candidates
        scope = scope.parent
    return candidates


# String methods whose result follows from literal arguments alone.
_STR_METHODS = frozenset({"lower", "upper", "casefold", "strip", "lstrip", "rstrip", "replace",
                          "startswith", "endswith", "title", "capitalize"})

_REDUCTIONS = frozenset({"std", "var", "mean", "sum", "max", "min", "amax", "amin", "logsumexp",
                         "prod", "norm", "std_mean", "var_mean", "median"})


def _over_batch(dim: Value | None) -> bool:
    """A reduction's `dim` that includes the batch axis (0)."""
    if isinstance(dim, ConstV):
        return dim.value == 0 or (isinstance(dim.value, tuple) and 0 in dim.value)
    if isinstance(dim, (ListV, TupleV)):
        return any(isinstance(i, ConstV) and i.value == 0 for i in dim.items)
    return False


def _reshape_along_dim0(cls: F.ClassFacts, file: F.FileFacts) -> Location | None:
    """Where a hand-written SN flattens the weight to (shape[0], -1): `w.view(height, -1)`
    with `height = w.data.shape[0]` (or `w.size(0)`). Right for conv and linear; for a
    ConvTranspose, whose output axis is 1, it normalizes the wrong matrix (SN105)."""
    for _, fn in cls.methods:
        dim0: set[str] = set()
        for stmt in walk(fn.body):
            if isinstance(stmt, F.Assign) and _is_dim0(stmt.value, dim0):
                dim0.update(t.name for t in stmt.targets if isinstance(t, F.Local))
            for call in calls_in(stmt):
                if isinstance(call.func, F.Attr) and call.func.attr in ("view", "reshape") \
                        and call.args and _is_dim0(call.args[0].value, dim0):
                    return Location(file.path, call.span)
    return None


def _is_dim0(e: F.Expr, dim0: set[str]) -> bool:
    if isinstance(e, F.Local):
        return e.name in dim0
    if isinstance(e, F.Subscript):
        return isinstance(e.index, F.Const) and e.index.value == 0 and \
            isinstance(e.value, F.Attr) and e.value.attr == "shape"
    if isinstance(e, F.Call):
        return isinstance(e.func, F.Attr) and e.func.attr == "size" and len(e.args) == 1 \
            and isinstance(e.args[0].value, F.Const) and e.args[0].value.value == 0
    return False
