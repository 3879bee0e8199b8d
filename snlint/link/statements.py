"""Running statements: blocks, branches, loops and assignment.

The part of the evaluator that knows Python's control flow: which branch of an `if` runs
(both, when the test cannot be decided, with what each built marked ambiguous; a branch
on `isinstance(m, nn.Conv2d)` over `modules()` sees the modules that pass), how many
times a loop body runs, what an assignment target binds. Values come from the expression
evaluator; what a loop over a data loader yields and what binding a name tells about a
module come from the training semantics.
"""

from __future__ import annotations

from snlint import facts as F
from snlint.link import resolve
from snlint.link.lookup import running_module, with_origin
from snlint.link.syntax import text_of
from snlint.link.values import (
    UNKNOWN, ClassOfV, ClassV, ConstV, DictV, Frame, FuncV, Layer, ListV, ModulesIterV, ModulesV,
    NameFindV, NamespaceV, NameV, ParametersV, ParamV, TensorV, TorchTypeV, TupleV, UnknownV, Value,
    tensor_join, tensors,
)

# Iterations of one loop the evaluator unrolls; longer loops run once, over unknown items.
MAX_UNROLL = 64


class BudgetExceeded(Exception):
    """One entry point took more interpretation than any real model needs."""


class Statements:
    steps: int  # statements run for the current entry point
    budget: int

    def block(self, body: tuple[F.Stmt, ...], frame: Frame, module_level: bool = False) -> None:
        for stmt in body:
            if frame.returned is not None or frame.jumped:
                return
            self.stmt(stmt, frame, module_level)

    def stmt(self, stmt: F.Stmt, frame: Frame, module_level: bool = False) -> None:
        """Run one statement. `module_level`: a module's own statement (its assignments
        name module constants; its `def`s are globals, not closures)."""
        self.steps += 1
        if self.steps > self.budget:
            raise BudgetExceeded()
        handler = self.STATEMENTS.get(type(stmt))
        if handler is not None:
            handler(self, stmt, frame, module_level)

    def assign_stmt(self, stmt: F.Assign, frame: Frame, module_level: bool) -> None:
        calls_before = len(self.events.forwards)
        value = self.expr(stmt.value, frame)
        scored = stmt.value.value if isinstance(stmt.value, F.Subscript) else stmt.value  # `D(x)[-1]`
        if isinstance(scored, F.Call) and len(self.events.forwards) > calls_before:
            self.scored_into(stmt, scored, self.events.forwards[calls_before:])
        value = self.wrapped_loader(stmt.value, value, frame.file.path)
        if module_level and len(stmt.targets) == 1 and isinstance(stmt.targets[0], F.Global):
            value = with_origin(value, stmt.targets[0].qual.rsplit(".", 1)[-1], frame.file, stmt)
        reloaded = _calls(stmt.value, "torch.load") and isinstance(value, UnknownV)
        for target in stmt.targets:
            if reloaded:
                self.reload(target, frame)
            elif isinstance(target, (F.Local, F.Global)):
                self.assign(target, self.named_variable(text_of(target), value, frame), frame)
            else:
                self.assign(target, value, frame)

    def reload(self, target: F.Expr, frame: Frame) -> None:
        """`netD = torch.load(path)`, `G, D = torch.load(path)` (a model restored whole):
        a name that holds a module built here keeps it, as the module saved was one of
        those; any other name is unknown."""
        if isinstance(target, F.ListE):
            for item in target.items:
                self.reload(item, frame)
        elif not isinstance(self.expr(target, frame), Layer):
            self.assign(target, UNKNOWN, frame)

    def aug_assign_stmt(self, stmt: F.AugAssign, frame: Frame, module_level: bool) -> None:
        current = self.expr(stmt.target, frame)
        value = self.expr(stmt.value, frame)
        if isinstance(current, ListV) and stmt.op == "Add":
            self.extend(current, value)
        else:
            self.assign(stmt.target, UNKNOWN, frame)

    def expr_stmt(self, stmt: F.ExprStmt, frame: Frame, module_level: bool) -> None:
        self.expr(stmt.value, frame)

    def return_stmt(self, stmt: F.Return, frame: Frame, module_level: bool) -> None:
        frame.returned = self.expr(stmt.value, frame) if stmt.value is not None else ConstV(None)

    def while_stmt(self, stmt: F.While, frame: Frame, module_level: bool) -> None:
        frame.loop_depth += 1
        frame.loops.append(stmt.span)
        try:
            _widen_counters(stmt.body, frame)
            self.block(stmt.body, frame)
        finally:
            frame.loop_depth -= 1
            frame.loops.pop()
            frame.jumped = False

    def block_stmt(self, stmt: F.Block, frame: Frame, module_level: bool) -> None:
        if not _opens_no_grad(stmt.body) or frame.no_grad:
            self.block(stmt.body, frame, module_level)
            return
        frame.no_grad = True
        try:
            self.block(stmt.body, frame, module_level)
        finally:
            frame.no_grad = False

    def fallback_stmt(self, stmt: F.Fallback, frame: Frame, module_level: bool) -> None:
        """An `except` handler: what it builds and calls is recorded, but of the names and
        attributes it sets only those the `try` body left unknown take its values (`except
        StopIteration: self.batch = None` ends an epoch; it is not what every batch is)."""
        owner = frame.self_value
        env0 = dict(frame.env)
        attrs0 = dict(owner.attrs) if owner is not None else None
        returned, jumped = frame.returned, frame.jumped
        self.block(stmt.body, frame, module_level)
        frame.returned, frame.jumped = returned, jumped
        _replace(frame.env, _fill_unknown(env0, frame.env))
        if owner is not None and attrs0 is not None:
            owner.attrs = _fill_unknown(attrs0, owner.attrs)
            owner.children_order = [k for k in owner.children_order if k in owner.attrs]

    def jump_stmt(self, stmt: F.Jump, frame: Frame, module_level: bool) -> None:
        frame.jumped = True

    def def_stmt(self, stmt: F.DefStmt, frame: Frame, module_level: bool) -> None:
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
        self.both_branches(stmt.body, stmt.orelse, frame, module_level, _if_token(stmt, frame))

    def both_branches(self, body: tuple[F.Stmt, ...], orelse: tuple[F.Stmt, ...], frame: Frame,
                      module_level: bool, token: object | None = None) -> None:
        """An `if` whose test we cannot decide: run each branch from the same state, and
        where they disagree about a name or attribute, mark what they built as ambiguous.
        `token` names the `if` in `Frame.branches` (a new one by default)."""
        owner = frame.self_value
        env0 = dict(frame.env)
        attrs0 = dict(owner.attrs) if owner is not None else {}
        order0 = list(owner.children_order) if owner is not None else []
        branches0, token = frame.branches, token if token is not None else object()
        frame.cond_depth += 1
        try:
            frame.branches = (*branches0, (token, 0))
            self.block(body, frame, module_level)
            frame.jumped = False
            returned_then = frame.returned
            frame.returned = None
            env_then, attrs_then = dict(frame.env), dict(owner.attrs) if owner is not None else {}
            order_then = list(owner.children_order) if owner is not None else []
            _replace(frame.env, env0)
            if owner is not None:
                owner.attrs, owner.children_order = dict(attrs0), list(order0)
            frame.branches = (*branches0, (token, 1))
            self.block(orelse, frame, module_level)
            frame.jumped = False
            returned_else = frame.returned
        finally:
            frame.cond_depth -= 1
            frame.branches = branches0
        choices = not _building_module(frame)
        _replace(frame.env, merge_choices(env_then, frame.env, choices))
        if owner is not None:
            merged = merge_choices(attrs_then, owner.attrs, choices)
            order = order_then + [k for k in owner.children_order if k not in order_then]
            owner.attrs, owner.children_order = merged, [k for k in order if k in merged]
        if returned_then is not None and returned_else is not None:
            frame.returned = merge_choices({"r": returned_then}, {"r": returned_else}, choices)["r"]
        else:
            frame.returned = None
            if returned_then is not None or returned_else is not None:
                frame.early.append(returned_then if returned_then is not None else returned_else)

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

    def for_stmt(self, stmt: F.For, frame: Frame, module_level: bool) -> None:
        zipped = _zipped(stmt)
        indexed = _indexed_list(stmt.iter) if zipped is None else None
        values: tuple[Value, ...] = ()  # what each sequence a `zip` goes through is
        if zipped is not None:
            values = tuple(self.expr(e, frame) for e in zipped[1])
            iterable: Value = UNKNOWN
        elif indexed is not None:
            # `for n in range(len(seq)): stream += seq[n]` (pix2pixHD's discriminators)
            # goes through seq's indices as `for item in seq` goes through its items.
            seq = self.expr(indexed, frame)
            count = len(items_of(seq)) if isinstance(seq, (ListV, TupleV)) else 0
            iterable = ListV([ConstV(i) for i in range(count)]) if count else UNKNOWN
        else:
            iterable = self.expr(stmt.iter, frame)
        frame.loop_depth += 1
        frame.loops.append(stmt.span)
        try:
            batch = self.loader_batch(iterable, stmt.iter, stmt.span.line, frame.file.path) \
                if zipped is None else None
            if zipped is not None:
                self.zipped(stmt, *zipped, values, frame)
            elif batch is not None:
                self.assign_all(stmt.target, batch, frame)
                _widen_counters(stmt.body, frame)
                self.block(stmt.body, frame)
            elif isinstance(iterable, ModulesIterV) and iterable.children_only and not iterable.named \
                    and iterable.root.kind == "container" and 0 < len(items_of(iterable.root)) <= MAX_UNROLL:
                # `for m in seq.children(): layers.append(m)` (re-packing a Sequential's
                # layers into another): each child, as it is.
                self.unrolled(stmt, ([(stmt.target, value)] for value in items_of(iterable.root)), frame)
            elif isinstance(iterable, ModulesIterV):
                item: Value = ModulesV(iterable.root, children_only=iterable.children_only)
                if iterable.named:
                    item = TupleV((UNKNOWN, item))
                self.assign(stmt.target, item, frame)
                self.block(stmt.body, frame)
            elif isinstance(iterable, ParametersV):
                param = ParamV(iterable.root)
                self.assign(stmt.target, TupleV((UNKNOWN, param)) if iterable.named else param, frame)
                self.block(stmt.body, frame)
            elif isinstance(iterable, (ListV, TupleV, Layer, ConstV)) and 0 < len(items_of(iterable)) <= MAX_UNROLL:
                self.unrolled(stmt, ([(stmt.target, value)] for value in items_of(iterable)), frame)
            else:
                self.assign(stmt.target, UNKNOWN, frame)
                _widen_counters(stmt.body, frame)
                self.block(stmt.body, frame)
        finally:
            frame.loop_depth -= 1
            frame.loops.pop()
            frame.jumped = False
        self.block(stmt.orelse, frame)

    def zipped(self, stmt: F.For, targets: tuple[F.Expr, ...], sequences: tuple[F.Expr, ...],
               values: tuple[Value, ...], frame: Frame) -> None:
        """`for real_i, fake_i in zip(reals, fakes)`: each name takes the items of its own
        sequence (Synthetic2Realistic's pyramid of real and generated images, scored in
        separate calls), not all of them together: pair by pair when every sequence is a
        list of known length, else an item of each."""
        lengths = {len(v.items) for v in values if isinstance(v, (ListV, TupleV))}
        if all(isinstance(v, (ListV, TupleV)) for v in values) and len(lengths) == 1 \
                and 0 < min(lengths) <= MAX_UNROLL:
            self.unrolled(stmt, (list(zip(targets, row)) for row in zip(*(v.items for v in values))), frame)
            return
        for target, value, sequence in zip(targets, values, sequences):
            batch = self.loader_batch(value, sequence, stmt.span.line, frame.file.path)
            self.assign(target, batch if batch is not None else _an_item(value), frame)
        _widen_counters(stmt.body, frame)
        self.block(stmt.body, frame)

    def unrolled(self, stmt: F.For, bindings, frame: Frame) -> None:
        """The loop's body once per iteration, each binding its targets to its values
        (`bindings`: an iterable of [(target, value)]), until a `return` runs."""
        for binding in bindings:
            for target, value in binding:
                self.assign(target, value, frame)
            self.block(stmt.body, frame)
            frame.jumped = False
            if frame.returned is not None:
                break

    STATEMENTS = {
        F.Assign: assign_stmt, F.AugAssign: aug_assign_stmt, F.ExprStmt: expr_stmt,
        F.Return: return_stmt, F.If: if_stmt, F.For: for_stmt, F.While: while_stmt,
        F.Block: block_stmt, F.Fallback: fallback_stmt, F.Jump: jump_stmt, F.DefStmt: def_stmt,
    }

    # ------------------------------------------------------------ assignment

    def assign_all(self, target: F.Expr, value: Value, frame: Frame) -> None:
        if isinstance(target, F.ListE):
            for sub in target.items:
                self.assign_all(sub, value, frame)
        else:
            self.assign(target, value, frame)

    def assign(self, target: F.Expr, value: Value, frame: Frame) -> None:
        value = self.bound(target, value)
        handler = self.TARGETS.get(type(target))
        if handler is not None:
            handler(self, target, value, frame)

    def assign_local(self, target: F.Local, value: Value, frame: Frame) -> None:
        frame.env[target.name] = value

    def assign_global(self, target: F.Global, value: Value, frame: Frame) -> None:
        if target.qual.startswith(frame.file.module + ".") or not frame.file.module:
            name = target.qual[len(frame.file.module) + 1:] if frame.file.module else target.qual
            if "." not in name:
                frame.env[name] = value
            elif name.partition(".")[0] in frame.env:
                # `trainer.batch_norm = True`, `opt.norm = "instance"` in a script: an
                # attribute of a module-level object (the source pass writes it as one name).
                head, *attrs = name.split(".")
                chain: F.Expr = F.Local(head)
                for attr in attrs[:-1]:
                    chain = F.Attr(chain, attr)
                self.assign_attr(F.Attr(chain, attrs[-1]), value, frame)

    def assign_attr(self, target: F.Attr, value: Value, frame: Frame) -> None:
        owner = self.expr(target.value, frame)
        if isinstance(owner, Layer):
            owner.set_attr(target.attr, value)
        elif isinstance(owner, ParamV):
            # `for p in self.features.parameters(): p.requires_grad = False`
            if target.attr == "requires_grad" and self.truth(value) is False:
                self.frozen(owner.root, frame)
        elif isinstance(owner, NamespaceV) and owner.parsed:
            owner.attrs[target.attr] = value
        elif isinstance(owner, DictV) and owner.attrs:
            owner.items[target.attr] = value

    def assign_item(self, target: F.Subscript, value: Value, frame: Frame) -> None:
        owner = self.expr(target.value, frame)
        key = self.expr(target.index, frame)
        if isinstance(key, ConstV) and isinstance(key.value, slice):
            key = UNKNOWN  # `buf[:n] = x`: no one item
        if isinstance(owner, DictV) and isinstance(key, ConstV):
            owner.items[key.value] = value
        elif isinstance(owner, DictV) and isinstance(value, Layer):
            # `layers[f"conv{i}"] = nn.Conv2d(...)` in a loop: a computed key is one of
            # many, kept so the `nn.Sequential(layers)` built from it has the layer.
            owner.items[f"*{len(owner.items)}"] = value
        elif isinstance(owner, Layer) and owner.kind == "container":
            owner.set_attr(str(key.value) if isinstance(key, ConstV) else f"*{len(owner.attrs)}", value)
        elif isinstance(owner, (TensorV, UnknownV)) and isinstance(value, TensorV) and value.origins \
                and isinstance(target.value, (F.Local, F.Attr)):
            # `outputs[i] = img[:, crop]` (pix2pix's random crop into a new buffer): the buffer
            # holds the samples written into it.
            joined = tensor_join([owner, value]) if isinstance(owner, TensorV) else value
            self.assign(target.value, joined, frame)

    def assign_unpacked(self, target: F.ListE, value: Value, frame: Frame) -> None:
        items: tuple[Value, ...] = ()
        if isinstance(value, (TupleV, ListV)):
            items = tuple(value.items)
        elif isinstance(value, TensorV):
            # `x, skip = self.block(x)`: each part carries what the tensor carried.
            items = tuple(value for _ in target.items)
        for i, sub in enumerate(target.items):
            self.assign(sub, items[i] if i < len(items) else UNKNOWN, frame)

    TARGETS = {
        F.Local: assign_local, F.Global: assign_global, F.Attr: assign_attr,
        F.Subscript: assign_item, F.ListE: assign_unpacked,
    }

    def extend(self, target: ListV, value: Value) -> None:
        if isinstance(value, (ListV, TupleV)):
            target.items.extend(value.items)
        else:
            target.items.append(UNKNOWN)


def items_of(value: Value) -> list[Value]:
    """What iterating a value yields: list items, or a container module's children."""
    if isinstance(value, (ListV, TupleV)):
        return list(value.items)
    if isinstance(value, ConstV) and isinstance(value.value, str):
        return [ConstV(c) for c in value.value]  # `for t in mode:` over a layer-code string
    if isinstance(value, Layer) and value.kind == "container":
        if value.type == "ModuleDict":
            return [ConstV(k) for k in value.children_order]
        return [child for _, child in value.named_children()]
    return []


def _if_token(stmt: F.If, frame: Frame) -> object:
    """The token of an undecided `if`: one per run, except for a test of local names and
    constants only, which decides the same way wherever the frame runs it again on the same
    values (in a loop, or in another `if` of the same test: a discriminator testing its
    `norm` argument at each layer it builds)."""
    names: list[str] = []
    stack: list[F.Expr] = [stmt.test]
    while stack:
        e = stack.pop()
        if isinstance(e, F.Local):
            names.append(e.name)
        elif isinstance(e, F.Compare):
            stack.extend((e.left, e.right))
        elif isinstance(e, F.BoolOp):
            stack.extend(e.values)
        elif isinstance(e, F.Not):
            stack.append(e.value)
        elif not isinstance(e, F.Const):
            return object()
    if not names:
        return object()
    values = tuple(frame.env.get(n) for n in names)
    # By the test as written (spans aside), not by the `if`: PSGAN tests `norm == 'SN'` at
    # each layer it builds. The entry holds the values: no other object takes their ids.
    return frame.if_tokens.setdefault((stmt.test, *map(id, values)), (object(), values))[0]


def _fill_unknown(before: dict, after: dict) -> dict:
    """`before`, with the names it lacks or holds as unknown taken from `after`."""
    out = dict(before)
    for key, value in after.items():
        if key not in before or isinstance(before[key], UnknownV):
            out[key] = value
    return out


def merge(a: dict, b: dict) -> dict:
    """Two readings of one set of names (the branches of an undecided `if`): where they
    disagree, the layers either built are ambiguous, and a layer is kept over anything
    else."""
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
    blocks, its forward): there an undecided `if` keeps `merge`'s one reading, so that
    the module's layers stay layers."""
    scope: Frame | None = frame
    while scope is not None:
        if scope.self_value is not None and scope.self_value.kind != "object":
            return True
        scope = scope.parent
    return False


def settled(frame: Frame) -> Value | None:
    """What a finished body returns. A factory of `if kind == "a": return A(...)` tests
    ending in a `raise` (or a last `return B(...)`) returns one of the instances of project
    classes it builds, as an `if`/`else` assigning them does. Any other early return leaves
    the body's last `return` as what it returns: a guard's `return x` in a forward is not
    what the forward computes, and a function returning one of several classes
    (`get_netD_cls(name)`) is read again by a caller that picks by the same key, which one
    unknown key for both would not hold to."""
    if not frame.early:
        return frame.returned
    values = [*frame.early, *([frame.returned] if frame.returned is not None else [])]
    if any(not isinstance(v, Layer) or resolve.project_class(v) is None
           for o in values for v in resolve.options(o)):
        return frame.returned
    chosen = values[0]
    for value in values[1:]:
        chosen = resolve.one_of(chosen, value) or chosen
    return chosen


def merge_choices(a: dict, b: dict, choices: bool) -> dict:
    """`merge`, except that where an undecided `if` in a factory or a plain object (a
    trainer, a model class) leaves a name to instances of different project classes, the
    name holds one of them (`OneOfV`), when `choices`."""
    if not choices:
        return merge(a, b)
    chosen = {k: resolve.one_of(v, b[k]) for k, v in a.items() if k in b and b[k] is not v}
    out = merge(a, b)
    out.update({k: v for k, v in chosen.items() if v is not None})
    return out


def _zipped(stmt: F.For) -> tuple[tuple[F.Expr, ...], tuple[F.Expr, ...]] | None:
    """(the names, the sequences) of `for a, b in zip(xs, ys)`: as many names as
    sequences, none starred."""
    iterable, target = stmt.iter, stmt.target
    if not (_calls(iterable, "builtins.zip") and isinstance(target, F.ListE)):
        return None
    args = iterable.args
    if len(args) != len(target.items) or len(args) < 2 \
            or any(a.keyword is not None or a.star for a in args) \
            or any(isinstance(t, F.Starred) for t in target.items):
        return None
    return tuple(target.items), tuple(a.value for a in args)


def _an_item(value: Value) -> Value:
    """What one item of a sequence holds, as far as the tensors in it go: a tensor (a
    batch's rows), or every tensor a list holds joined; anything else is unknown."""
    if isinstance(value, TensorV):
        return value
    if isinstance(value, (ListV, TupleV)) and tensors(value):
        return tensor_join([value])
    return UNKNOWN


def _indexed_list(iterable: F.Expr) -> F.Expr | None:
    """`seq` of `range(len(seq))`, a name or an attribute: the loop goes through its
    indices."""
    if _calls(iterable, "builtins.range") and len(iterable.args) == 1:
        inner = iterable.args[0]
        if inner.keyword is None and not inner.star and _calls(inner.value, "builtins.len") \
                and len(inner.value.args) == 1:
            seq = inner.value.args[0]
            if seq.keyword is None and not seq.star and isinstance(seq.value, (F.Local, F.Attr, F.Global)):
                return seq.value
    return None


# Context managers under which no gradient is recorded: nothing called there trains.
_NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                      "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode"})


def without_grad(fn: F.FunctionFacts) -> bool:
    """A function decorated `@torch.no_grad()` (or `@torch.inference_mode()`): nothing it
    calls trains."""
    return any((d.func if isinstance(d, F.Call) else d).qual in _NO_GRAD for d in fn.decorators
               if isinstance(d.func if isinstance(d, F.Call) else d, F.Global))


def _opens_no_grad(body: tuple[F.Stmt, ...]) -> bool:
    """A `with` block whose context managers (its leading expression statements, as the
    source pass lowers them) include `torch.no_grad()` or `torch.set_grad_enabled(False)`."""
    for stmt in body:
        if not isinstance(stmt, F.ExprStmt) or not isinstance(stmt.value, F.Call):
            return False
        call = stmt.value
        if isinstance(call.func, F.Global) and call.func.qual in _NO_GRAD:
            return True
        if _calls(call, "torch.set_grad_enabled") and len(call.args) == 1 \
                and isinstance(call.args[0].value, F.Const) and call.args[0].value.value is False:
            return True
    return False


def _calls(e: F.Expr, qual: str) -> bool:
    """`e` is a call of the global `qual` (`builtins.range`, `torch.load`)."""
    return isinstance(e, F.Call) and isinstance(e.func, F.Global) and e.func.qual == qual


def _replace(env: dict[str, Value], values: dict[str, Value]) -> None:
    """`env` made to hold `values`, the same dict: a function or lambda defined in this
    frame reads its names through it when it runs (`def_stmt`), as a Python closure reads
    the variable's latest value, whatever branch or handler ran in between."""
    if values is not env:  # `values` is another dict: clearing `env` leaves it whole
        env.clear()
        env.update(values)


def _widen_counters(body: tuple[F.Stmt, ...], frame: Frame) -> None:
    """Before a loop run once for all its iterations (a training loop over batches, a
    `while`): a number the body steps (`global_step += 1`, a module global or a local) is
    not the value it starts at, so `if global_step > disc_iter_start:` (wav2lip's
    discriminator, trained after 30k steps) is undecided, not never taken. Not for a loop
    unrolled item by item (building layers), whose body runs once per item."""
    running = None
    for stmt in F.statements(body):
        if not isinstance(stmt, F.AugAssign):
            continue
        target = stmt.target
        if isinstance(target, F.Local):
            env, name = frame.env, target.name
        elif isinstance(target, F.Global) and frame.file.module and "." not in \
                target.qual.removeprefix(frame.file.module + "."):
            running = running or running_module(frame)
            if running is None:
                continue
            env, name = running.env, target.qual.removeprefix(frame.file.module + ".")
        else:
            continue
        value = env.get(name)
        if isinstance(value, ConstV) and isinstance(value.value, (int, float)) and not isinstance(value.value, bool):
            env[name] = UNKNOWN
