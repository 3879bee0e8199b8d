"""A small abstract interpreter over source facts.

It runs the project's code the way Python would, as far as literal values allow, to learn
which layers a module builds, which of them SN wraps and which init calls touch them. A
value it cannot follow is `UnknownV`, and rules skip what depends on one.

`Interpreter`'s handlers are named for the nodes they read and found through tables by
node type (`STATEMENTS`, `EXPRESSIONS`, `TARGETS`) and, for calls, by the callee's kind and
name. Torch semantics (`torch_semantics.py`) and training semantics
(`training_semantics.py`) add their kinds to the call tables.
"""

from __future__ import annotations

import operator
from typing import Callable, Iterator, TypeVar

from snlint import facts as F
from snlint.findings import Location
from snlint.link import configvalues, options, resolve
from snlint.link.events import D_NAME, FAKE_NAME, REAL_NAME, Events
from snlint.link.index import ProjectIndex
from snlint.link.names import Definitions
from snlint.link.provenance import Channels
from snlint.link.syntax import assignments_to, last_attr, text_of
from snlint.link.torch_semantics import TorchSemantics, in_init
from snlint.link.training_semantics import TrainingSemantics
from snlint.link.values import (
    MAX_DEPTH, UNKNOWN, ClassOfV, ClassV, ConstV, DictV, EnumMemberV, Frame, FuncV, LambdaV, Layer, ListV,
    ModulesIterV, ModulesV, ModuleV, NameFindV, NamespaceV, NameV, OneOfV, ParametersV, ParamV, PartialV,
    SNFuncV, SuperV, TensorV, TorchTypeV, TupleV, UnknownV, Value, WeightV, running_module, tensor_join,
    tensors,
)
from snlint.torchapi import PARTIAL

# The link step reads the events and name patterns from here.
__all__ = ["D_NAME", "FAKE_NAME", "REAL_NAME", "BudgetExceeded", "Events", "Interpreter", "PROJECT_BUDGET",
           "SPENT_STEP_BUDGET", "STEP_BUDGET"]

T = TypeVar("T")

# Statements one entry point (a class, a function, a module body) may interpret; past it
# the entry point is read with less precision, and says so (SN920). A model class that
# builds every network its options may pick takes about 20,000.
STEP_BUDGET = 25_000
# Statements one link may interpret before each further entry point gets the smaller
# budget: scripts that each re-run the same option plumbing are bounded by this plus the
# smaller budget per entry point, not by scripts x networks.
PROJECT_BUDGET = 150_000
SPENT_STEP_BUDGET = 2_500
# Iterations of one loop the evaluator unrolls; longer loops run once, over unknown items.
MAX_UNROLL = 64
# Where a name from outside the project comes from.
_OUTSIDE = ("torch.", "builtins.", "functools.", "collections.", "typing.")


class BudgetExceeded(Exception):
    """One entry point took more interpretation than any real model needs."""


def merged_tables(*tables: dict) -> dict:
    """One dispatch table from the parts' tables; a kind two parts claim is a mistake."""
    out: dict = {}
    for table in tables:
        overlap = out.keys() & table.keys()
        if overlap:
            raise ValueError(f"claimed twice: {sorted(map(str, overlap))}")
        out.update(table)
    return out


class Interpreter(TorchSemantics, TrainingSemantics):
    def __init__(self, index: ProjectIndex, options: Callable[[], dict] | None = None) -> None:
        """`options`: the command-line options the whole project declares
        (`options.DeclaredOptions`), when `index` holds a part of it (`link.groups`)."""
        self.index = index
        self.definitions = Definitions(index)
        self.events = Events()
        self._globals: dict[tuple[str, str], Value] = {}  # (path, name) -> its value, once computed
        self._statement_index: dict[str, tuple] = {}  # statements_about's, by path
        self._forwards_by_root: dict[int, list] = {}  # TrainingSemantics.backward's index
        self._forwards_indexed = 0
        self._resolving: set[tuple[str, str]] = set()  # globals being computed: a cycle reads UNKNOWN
        self.steps = 0  # statements run for the current entry point
        self.total_steps = 0  # and for every entry point before it: the link's work
        self.budget = STEP_BUDGET
        self._registries: set[str] | None = None
        self._scorers: dict[str, bool] = {}
        self._players: dict[str, str | None] = {}
        self._class_files: dict[int, F.FileFacts] | None = None
        self._options: dict | None = None  # the project's declared options, read once
        self._project_options = options  # the whole project's, for a part of it
        self._deciding: dict[int, set[str]] = {}  # id() of a function's facts -> resolve.deciding of it
        self._named_handlers: dict = {}  # qualified name -> its handler, once found
        self._layer_types: dict[str, str | None] = {}
        # (id() of a class, of a file) -> base_values, once stable; and the reads of a
        # class's bases that could not be kept.
        self._bases: dict[tuple[int, int], list[Value]] = {}
        self._unstable_reads = 0
        self._of_class: dict[tuple[str, int, int], object] = {}  # (question, id() of a class, of a file) -> answer
        self._keywords: dict[str, set[tuple[type, object]]] | None = None  # passed_otherwise's

    # ------------------------------------------------------------ entry points

    def start_entry(self) -> None:
        """Count a new entry point's work from zero, within the budget the project's work
        so far leaves it."""
        self.total_steps += self.steps
        self.steps = 0
        self.budget = STEP_BUDGET if self.total_steps < PROJECT_BUDGET else SPENT_STEP_BUDGET

    def run_module(self, file: F.FileFacts) -> Frame:
        frame = Frame(file, "<module>")
        self.block(file.body, frame, module_level=True)
        return frame

    def run_function(self, fn: F.FunctionFacts, file: F.FileFacts) -> Value:
        """A helper on its own, with its defaults and unknown parameters."""
        frame = Frame(file, fn.name, function=fn.name, no_grad=without_grad(fn))
        self.bind_params(fn, [], {}, frame)
        self.block(fn.body, frame)
        return settled(frame) or UNKNOWN

    def passed_otherwise(self, keyword: str, default: object) -> bool:
        """Whether a call of the project (the whole project, when this is a part of it)
        passes `keyword` a literal other than `default`."""
        if self._keywords is None:
            whole = self._project_options
            files = whole.files if isinstance(whole, options.DeclaredOptions) else self.index.files
            self._keywords = options.keyword_literals(files)
        return bool(self._keywords.get(keyword, set()) - {(type(default), default)})

    def instantiate_root(self, cls: F.ClassFacts, file: F.FileFacts) -> Layer:
        """Build a class the way its defaults allow, as a top-level object."""
        loc = Location(file.path, cls.span)
        root = Frame(file, f"<build {cls.name}>")
        # A class that takes the parsed options (`def __init__(self, opt)`) gets the
        # options the project declares, with their defaults.
        init = self.find_method(cls, file, "__init__")
        kwargs = self.option_arguments(init[0], cls) if init is not None else {}
        return self.instantiate(ClassV(cls, file), (), kwargs, loc, root, root_build=True)

    def run_methods(self, instance: Layer, file: F.FileFacts) -> None:
        """Every method but __init__ of a built instance, with `self` bound to it: a
        `train()` override, a forward that calls `F.batch_norm`, a trainer's steps."""
        if instance.cls is None:
            return
        for name, fn, owner, owner_file in self.methods_of(instance.cls, file):
            if name == "__init__" or name in instance.called_methods:
                continue  # a helper __init__ called already ran; running it again doubles SN
            frame = Frame(owner_file, f"{instance.cls.name}.{name}", self_value=instance, cls=owner,
                          function=name, no_grad=without_grad(fn))
            self.bind_params(fn, [instance], self.option_arguments(fn, instance.cls), frame)
            for p in fn.params[1:]:
                # `def forward(self, x, step=0)` that the project also calls with `step=1`:
                # the default decides nothing when the method runs on its own.
                if isinstance(p.default, F.Const) and self.passed_otherwise(p.name, p.default.value):
                    frame.env[p.name] = UnknownV(f"parameter {p.name}")
                if name == "forward" and isinstance(frame.env.get(p.name), UnknownV):
                    frame.env[p.name] = TensorV()  # a batch of tensors, whatever its name
            self.block(fn.body, frame)

    # ------------------------------------------------------------ statements
    # Handlers by node type: `STATEMENTS`, `TARGETS`.

    def block(self, body: tuple[F.Stmt, ...], frame: Frame, module_level: bool = False) -> None:
        for stmt in body:
            if frame.returned is not None or frame.jumped:
                return
            self.stmt(stmt, frame, module_level)

    def stmt(self, stmt: F.Stmt, frame: Frame, module_level: bool) -> None:
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
        elif isinstance(current, Layer) and stmt.op == "Add" and self.extend_container(current, value):
            pass
        else:
            self.assign(stmt.target, UNKNOWN, frame)

    def expr_stmt(self, stmt: F.ExprStmt, frame: Frame, module_level: bool) -> None:
        reductions = len(self.events.batch_reductions)
        self.expr(stmt.value, frame)
        if _updates_own_state(stmt.value):
            # `self.w_avg.copy_(x.detach().mean(dim=0).lerp(...))` (StyleGAN's W average),
            # a running statistic: the reduction goes into a buffer, not into this
            # forward's output, so no sample's score depends on the others through it.
            del self.events.batch_reductions[reductions:]

    def return_stmt(self, stmt: F.Return, frame: Frame, module_level: bool) -> None:
        frame.returned = self.expr(stmt.value, frame) if stmt.value is not None else ConstV(None)

    def while_stmt(self, stmt: F.While, frame: Frame, module_level: bool) -> None:
        _train_mode_in_loop(stmt.body, frame)
        with frame.looping(stmt.span):
            _widen_counters(stmt.body, frame)
            frame.read_once += 1
            try:
                self.block(stmt.body, frame)
            finally:
                frame.read_once -= 1

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
        attrs0, _ = _parts(owner)
        returned, jumped = frame.returned, frame.jumped
        self.block(stmt.body, frame, module_level)
        frame.returned, frame.jumped = returned, jumped
        _replace(frame.env, _fill_unknown(env0, frame.env))
        if owner is not None:
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
                      module_level: bool, token: object) -> None:
        """An `if` whose test we cannot decide: run each branch from the same state, and
        where they disagree about a name or attribute, mark what they built as ambiguous.
        `token` names the `if` in `Frame.branches`."""
        owner = frame.self_value
        env0 = dict(frame.env)
        attrs0, order0 = _parts(owner)
        branches0 = frame.branches
        root = frame.root
        eval0 = root.in_eval
        frame.cond_depth += 1
        try:
            frame.branches = (*branches0, (token, 0))
            self.block(body, frame, module_level)
            frame.jumped = False
            returned_then = frame.returned
            frame.returned = None
            env_then = dict(frame.env)
            attrs_then, order_then = _parts(owner)
            eval_then, root.in_eval = root.in_eval, eval0
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
        # In eval mode after the `if` only what either branch leaves in eval mode.
        root.in_eval = eval_then & root.in_eval
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
        `not ...`, `isinstance(m, A) or isinstance(m, B)`, and class-name tests
        (`classname.find("Conv") != -1`, `"Norm" in classname`). The branch sees the
        modules that pass; the other branch the rest."""
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
        if not (_calls(test, "builtins.isinstance") and len(test.args) == 2):
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
            # `for n in range(len(seq))` goes through seq's indices as `for item in seq`
            # goes through its items.
            seq = self.expr(indexed, frame)
            count = len(items_of(seq)) if isinstance(seq, (ListV, TupleV)) else 0
            iterable = ListV([ConstV(i) for i in range(count)]) if count else UNKNOWN
        else:
            iterable = self.expr(stmt.iter, frame)
        _train_mode_in_loop(stmt.body, frame)
        with frame.looping(stmt.span):
            batch = self.loader_batch(iterable, stmt.iter, stmt.span.line, frame.file.path) \
                if zipped is None else None
            if zipped is not None:
                self.zipped(stmt, *zipped, values, frame)
            elif batch is not None:
                self.assign_all(stmt.target, batch, frame)
                _widen_counters(stmt.body, frame)
                self.block(stmt.body, frame)
            elif isinstance(iterable, ModulesIterV) and iterable.children_only \
                    and iterable.root.kind == "container" and 0 < len(items_of(iterable.root)) <= MAX_UNROLL:
                # `for m in seq.children(): layers.append(m)`, `for name, m in
                # seq.named_children(): new.add_module(name, m)` (re-packing a Sequential's
                # layers into another, as a progressive discriminator's growing does): each
                # child, as it is, under its name.
                children = iterable.root.named_children() if iterable.named else \
                    [(None, value) for value in items_of(iterable.root)]
                self.unrolled(stmt, ([(stmt.target, TupleV((ConstV(name), value)) if iterable.named else value)]
                                     for name, value in children), frame)
            elif isinstance(iterable, (ModulesIterV, ParametersV)):
                # Once, over all the modules (or parameters) together.
                item: Value = ModulesV(iterable.root, children_only=iterable.children_only) \
                    if isinstance(iterable, ModulesIterV) else ParamV(iterable.root)
                self.assign(stmt.target, TupleV((UNKNOWN, item)) if iterable.named else item, frame)
                self.block(stmt.body, frame)
            elif isinstance(iterable, (ListV, TupleV, Layer, ConstV)) and 0 < len(items_of(iterable)) <= MAX_UNROLL:
                self.unrolled(stmt, ([(stmt.target, value)] for value in items_of(iterable)), frame)
            else:
                self.assign(stmt.target, UNKNOWN, frame)
                _widen_counters(stmt.body, frame)
                frame.read_once += 1
                try:
                    self.block(stmt.body, frame)
                finally:
                    frame.read_once -= 1
        self.block(stmt.orelse, frame)

    def zipped(self, stmt: F.For, targets: tuple[F.Expr, ...], sequences: tuple[F.Expr, ...],
               values: tuple[Value, ...], frame: Frame) -> None:
        """`for real_i, fake_i in zip(reals, fakes)`: each name takes the items of its own
        sequence: pair by pair when every sequence is a list of known length, else an item
        of each."""
        lengths = {len(v.items) for v in values if isinstance(v, (ListV, TupleV))}
        if all(isinstance(v, (ListV, TupleV)) for v in values) and len(lengths) == 1 \
                and 0 < min(lengths) <= MAX_UNROLL:
            self.unrolled(stmt, (list(zip(targets, row)) for row in zip(*(v.items for v in values))), frame)
            return
        for target, value, sequence in zip(targets, values, sequences):
            batch = self.loader_batch(value, sequence, stmt.span.line, frame.file.path)
            self.assign(target, batch if batch is not None else _an_item(value), frame)
        _widen_counters(stmt.body, frame)
        frame.read_once += 1
        try:
            self.block(stmt.body, frame)
        finally:
            frame.read_once -= 1

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
            # `outputs[i] = img[:, crop]`: the buffer holds the samples written into it.
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

    # ------------------------------------------------------------ expressions
    # Handlers by node type: `EXPRESSIONS`; by the value's kind: `ATTRIBUTES`.

    def expr(self, e: F.Expr | None, frame: Frame) -> Value:
        kind = type(e)
        # Local names and calls, more than half of what the evaluator reads, skip the table.
        if kind is F.Local:
            return frame.env.get(e.name, UNKNOWN)  # type: ignore[union-attr]
        if kind is F.Call:
            return self.call(e, frame)  # type: ignore[arg-type]
        handler = self.EXPRESSIONS.get(kind)
        return UNKNOWN if handler is None else handler(self, e, frame)

    def const_expr(self, e: F.Const, frame: Frame) -> Value:
        return ConstV(e.value)

    def global_expr(self, e: F.Global, frame: Frame) -> Value:
        local = self.module_local(e, frame)
        if local is not None:
            value, attrs = local
            for attr in attrs:
                value = self.attribute(value, attr, frame)
            return value
        return self.global_value(e.qual, e.text, frame)

    def attr_expr(self, e: F.Attr, frame: Frame) -> Value:
        return self.attribute(self.expr(e.value, frame), e.attr, frame)

    def list_expr(self, e: F.ListE, frame: Frame) -> Value:
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

    def dict_expr(self, e: F.DictE, frame: Frame) -> Value:
        out = DictV()
        for k, v in e.items:
            if isinstance(k, F.Starred):
                # `{**defaults, **kwargs}`: an unknown dict adds nothing known.
                unpacked = self.expr(v, frame)
                if isinstance(unpacked, DictV):
                    out.items.update(unpacked.items)
                continue
            key = self.expr(k, frame)
            out.items[key.value if isinstance(key, ConstV) else object()] = self.expr(v, frame)
        return out

    def subscript_expr(self, e: F.Subscript, frame: Frame) -> Value:
        namespace = _namespace_of(e.value)
        if namespace is not None:
            module = self.expr(namespace, frame)
            if isinstance(module, ModuleV):
                return self.module_item(module, self.expr(e.index, frame), text_of(e.value), frame, e.span)
        container, key = self.expr(e.value, frame), self.expr(e.index, frame)
        if isinstance(key, ConstV) and isinstance(key.value, slice):
            # `layers[:-1]` of a list of children.
            if isinstance(container, ListV):
                return ListV(container.items[key.value])
            if isinstance(container, TupleV):
                return TupleV(container.items[key.value])
            return self.subscript(container, UNKNOWN)
        # A key the dict lacks (`--arch` with no default) is one the user passes.
        if isinstance(container, DictV) and not (isinstance(key, ConstV) and key.value in container.items):
            chosen = resolve.of_dict(container.items, text_of(e.value), Location(frame.file.path, e.span))
            if chosen is not None:
                return chosen
        if isinstance(container, (ListV, TupleV)) and not isinstance(key, ConstV) \
                and not isinstance(e.index, F.Unknown):  # a slice lowers to Unknown
            some = _any_item(container.items, text_of(e.value))
            if some is not None:
                return some
        if isinstance(container, Layer) and container.kind == "container" and not isinstance(key, ConstV) \
                and not isinstance(e.index, F.Unknown):
            # `self.from_rgb[index](x)` in a progressive forward: whichever block the index
            # picks, the call transforms its input, so what a later `x.var(0)` reduces is
            # still the batch.
            some = _any_child(container, text_of(e.value))
            if some is not None:
                return some
        return self.subscript(container, key)

    def binop_expr(self, e: F.BinOp, frame: Frame) -> Value:
        left, right = self.expr(e.left, frame), self.expr(e.right, frame)
        if e.op == "Add" and isinstance(left, ListV) and isinstance(right, ListV):
            return ListV(left.items + right.items)
        if isinstance(left, ConstV) and isinstance(right, ConstV):
            return _arith(e.op, left.value, right.value)
        if isinstance(left, TensorV) and isinstance(right, TensorV) and left.origins and right.origins:
            # `clamp(G(x), -eps, eps) + x`: each sample combines a part of each, so the batch
            # is generated if either part is (not side by side, as `torch.cat` makes them).
            joined = tensor_join([left, right])
            return TensorV(joined.tags, joined.outputs, frozenset({Channels(
                (left.origins, right.origins), e.span.line, frame.file.path, ", combined with another tensor at {}")}))
        if isinstance(left, TensorV) or isinstance(right, TensorV):
            return tensor_join([left, right])
        return UNKNOWN

    def compare_expr(self, e: F.Compare, frame: Frame) -> Value:
        return _compare(e.op, self.expr(e.left, frame), self.expr(e.right, frame))

    def not_expr(self, e: F.Not, frame: Frame) -> Value:
        truth = self.truth(self.expr(e.value, frame))
        return UNKNOWN if truth is None else ConstV(not truth)

    def boolop_expr(self, e: F.BoolOp, frame: Frame) -> Value:
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

    def ifexp_expr(self, e: F.IfExp, frame: Frame) -> Value:
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
        return merge({"v": a}, {"v": b})["v"]

    def lambda_expr(self, e: F.Lambda, frame: Frame) -> Value:
        return LambdaV(e.params, e.body, frame.file, frame.env, e.star, e.dstar)

    def comprehension_expr(self, e: F.Comprehension, frame: Frame) -> Value:
        out = ListV()
        saved = dict(frame.env)
        frame.loop_depth += 1
        try:
            if not self.clauses(e, e.fors, frame, out):
                return UNKNOWN
        finally:
            frame.loop_depth -= 1
            frame.env.clear()  # the same dict: closures of this frame read through it
            frame.env.update(saved)
        return out

    EXPRESSIONS = {
        F.Const: const_expr, F.Global: global_expr, F.Attr: attr_expr,
        F.ListE: list_expr, F.DictE: dict_expr, F.Subscript: subscript_expr, F.BinOp: binop_expr,
        F.Compare: compare_expr, F.Not: not_expr, F.BoolOp: boolop_expr, F.IfExp: ifexp_expr,
        F.Lambda: lambda_expr, F.Comprehension: comprehension_expr,
    }

    def clauses(self, e: F.Comprehension, fors: tuple[F.CompFor, ...], frame: Frame, out: ListV) -> bool:
        """Run the clauses from the first as nested loops, appending `elt` where every
        filter holds or may hold. False when the result is not a list one can know (a
        modules() walk)."""
        if not fors:
            out.items.append(self.expr(e.elt, frame))
            return True
        clause, rest = fors[0], fors[1:]
        iterable = self.expr(clause.iter, frame)
        if isinstance(iterable, (ListV, TupleV, Layer, ConstV)) and 0 < len(items_of(iterable)) <= MAX_UNROLL:
            items = items_of(iterable)
        elif isinstance(iterable, ModulesIterV):
            self.assign(clause.target, ModulesV(iterable.root, children_only=iterable.children_only), frame)
            self.expr(e.elt, frame)
            return False
        elif isinstance(iterable, TensorV):
            # `[fi.detach() for fi in fake_images]`: each item is what the whole is.
            items = [iterable]
        else:
            items = [UNKNOWN]
        once = len(items) == 1 and items[0] is UNKNOWN
        frame.read_once += once
        try:
            return self.each_item(e, clause, rest, items, frame, out)
        finally:
            frame.read_once -= once

    def each_item(self, e: F.Comprehension, clause: F.CompFor, rest: tuple[F.CompFor, ...],
                  items: list, frame: Frame, out: ListV) -> bool:
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
            return _at(value.items, key.value)
        if isinstance(value, DictV) and isinstance(key, ConstV):
            return value.items.get(key.value, UNKNOWN)
        if isinstance(value, Layer) and isinstance(key, ConstV):
            if isinstance(key.value, int):
                return _at([child for _, child in value.named_children()], key.value)
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

    # ------------------------------------------------------------ attributes, by the value's kind

    def attribute(self, value: Value, attr: str, frame: Frame) -> Value:
        handler = self.ATTRIBUTES.get(type(value))
        return UNKNOWN if handler is None else handler(self, value, attr, frame)

    def layer_attribute(self, value: Layer, attr: str, frame: Frame) -> Value:
        if attr in value.attrs:
            return value.attrs[attr]
        if attr in ("weight", "bias") or attr.endswith(("_weight", "weight_orig")):
            return WeightV(value, attr)
        if value.cls is not None:
            file = self.file_of(value.cls) or frame.file
            method = self.find_method(value.cls, file, attr)
            if method is not None:
                # Read on an instance, a static method gets no `self` and a class method
                # the instance's class (`self.apply(self._apply_sn)` with a static
                # `_apply_sn(m)`: `m` is each module, not the discriminator).
                kinds = {text_of(d) for d in method[0].decorators}
                if "staticmethod" in kinds:
                    return FuncV(method[0], method[1], cls=method[2])
                if "classmethod" in kinds:
                    return FuncV(method[0], method[1], bound=ClassV(value.cls, file), cls=method[2])
                return FuncV(method[0], method[1], bound=value, cls=method[2])
            if attr == "module" and value.kind == "module":
                # `nn.DataParallel(netD)` is netD here (`wrapper_call`); a project module
                # with no `module` of its own has one only so wrapped: it is netD again
                # (`netD.module(real)`).
                return value
        return NameV(f"<layer>.{attr}")

    def one_of_attribute(self, value: OneOfV, attr: str, frame: Frame) -> Value:
        """A submodule of one of several instances (`netD.COND_DNET`, `netD` one of the
        classes a config key picks): the same submodule of whichever it is. Anything else
        read from one of them stays unknown."""
        found = [self.attribute(o, attr, frame) if isinstance(o, Layer) else UNKNOWN for o in value.options]
        if not found or not all(isinstance(f, Layer) for f in found):
            return UNKNOWN
        unique = list(dict.fromkeys(found))
        return unique[0] if len(unique) == 1 else OneOfV(tuple(unique), value.why)

    def class_attribute(self, value: ClassV, attr: str, frame: Frame) -> Value:
        """A static or class method read from its class (`gan_factory.discriminator_factory(
        kind)`); a class method gets the class. Not a plain method called with its instance
        (`Base.__init__(self, opt)`), which the link leaves as it always has."""
        method = self.find_method(value.cls, value.file, attr)
        if method is None:
            return _enum_member(value.cls, attr) or UNKNOWN
        fn, file, owner = method
        kinds = {text_of(d) for d in fn.decorators}
        if "staticmethod" in kinds:
            return FuncV(fn, file, cls=owner)
        if "classmethod" in kinds:
            return FuncV(fn, file, bound=value, cls=owner)
        return UNKNOWN

    def modules_attribute(self, value: ModulesV, attr: str, frame: Frame) -> Value:
        if attr in ("weight", "bias"):
            return WeightV(value, attr)
        if attr == "__class__":
            return ClassOfV(value)
        return NameV(f"<modules>.{attr}")

    def class_of_attribute(self, value: ClassOfV, attr: str, frame: Frame) -> Value:
        if attr in ("__name__", "__qualname__"):
            return ClassOfV(value.modules, named=True)
        return UNKNOWN

    def weight_attribute(self, value: WeightV, attr: str, frame: Frame) -> Value:
        if attr == "data":
            return value
        return NameV(f"<weight>.{attr}")

    def tensor_attribute(self, value: TensorV, attr: str, frame: Frame) -> Value:
        return value

    def module_item(self, module: ModuleV, key: Value, text: str, frame: Frame, span) -> Value:
        """A module's namespace read by a key: the name itself when known, else one of the
        module's discriminator classes."""
        if isinstance(key, ConstV) and isinstance(key.value, str):
            return self.module_attribute(module, key.value, frame)
        return resolve.of_module(module, text, Location(frame.file.path, span)) or UNKNOWN

    def module_attribute(self, value: ModuleV, attr: str, frame: Frame) -> Value:
        return self.global_value(f"{value.file.module}.{attr}", attr, frame)

    def super_attribute(self, value: SuperV, attr: str, frame: Frame) -> Value:
        for base_cls, base_file in self.project_bases(value.cls, value.file):
            method = base_cls.method(attr)
            if method is not None:
                return FuncV(method, base_file, bound=value.self_value, cls=base_cls)
        return NameV(f"<super>.{attr}")

    def name_attribute(self, value: NameV, attr: str, frame: Frame) -> Value:
        return NameV(f"{value.qual}.{attr}", f"{value.text}.{attr}")

    def namespace_attribute(self, value: NamespaceV, attr: str, frame: Frame) -> Value:
        if not value.parsed:
            return UNKNOWN
        if attr not in value.attrs:
            # Parsed by a parser whose `add_argument` calls did not all run here (an
            # options class's `initialize()`): the default the project declares.
            declared = self.declared_options().get(attr)
            if declared is not None:
                return ConstV(declared["value"], f"--{attr} default at {declared['where']}")
        return value.attrs.get(attr, UnknownV(f"option {attr}"))

    def enum_member_attribute(self, value: EnumMemberV, attr: str, frame: Frame) -> Value:
        # `GANType.VANILLA.name`, a key a factory compares.
        if attr == "name":
            return ConstV(value.name)
        if attr == "value" and isinstance(value.value, F.Const):
            return ConstV(value.value.value)
        return UNKNOWN

    def dict_attribute(self, value: DictV, attr: str, frame: Frame) -> Value:
        if not value.attrs:
            return UNKNOWN
        return value.items.get(attr, UnknownV(f"key {attr}"))

    ATTRIBUTES = {
        Layer: layer_attribute, ModulesV: modules_attribute, ClassOfV: class_of_attribute,
        WeightV: weight_attribute, TensorV: tensor_attribute, ModuleV: module_attribute,
        SuperV: super_attribute, NameV: name_attribute, NamespaceV: namespace_attribute,
        DictV: dict_attribute, ClassV: class_attribute, EnumMemberV: enum_member_attribute,
        OneOfV: one_of_attribute,
    }

    # ------------------------------------------------------------ lookup
    # A global resolves through imports to the value the defining module gives it (running
    # that module's top level as far as needed), and a method through the class's bases.

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
        if qual.startswith(_OUTSIDE):
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
        `samples.detach`): its value and the attributes after it, as it is when the code
        runs, from a function that module body calls too."""
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
                # A name the module imports or takes from a star import of its own: where
                # the project defines it (`snlint.link.names`).
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
        block, from an index built once per file."""
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
        has, inherited ones included, bases first: a base's data-loading method runs before
        the subclass's training step."""
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
        follow one base before the next is read); kept once every base is a name whose
        value cannot change any more (`stable_name`), else read again."""
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

    def of_class(self, what: str, cls: F.ClassFacts, file: F.FileFacts, seen: frozenset[str],
                 compute: Callable[[], T]) -> T:
        """What `compute` finds of a class through its bases (its torch base, a method it
        inherits), kept when every base it read on the way was stable (`base_values`): the
        same question then has the same answer. `seen`: the classes a search through the
        bases came from (none for a question asked from outside, the only one kept)."""
        if seen:
            return compute()
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
        a torch or outside name, a module, or a module-level name of a project file
        (`module_global`); not a star-imported name, nor an attribute of a module-level
        value (`cfg.Base`: the value may change)."""
        if not isinstance(e, F.Global) or e.qual.startswith("*."):
            return False
        if self.torch_name(e.qual, e.text) is not None or e.qual.startswith(_OUTSIDE):
            return True
        resolved = self.index.resolve(e.qual, file)
        return resolved is None or "." not in resolved.name

    def file_of(self, cls: F.ClassFacts) -> F.FileFacts | None:
        """The file that defines `cls`: a method runs there, with its imports, wherever the
        instance is used."""
        if self._class_files is None:
            self._class_files = {id(c): f for c, f in self.project_classes()}
        return self._class_files.get(id(cls))

    def project_classes(self) -> list[tuple[F.ClassFacts, F.FileFacts]]:
        return [(c, f) for f in self.index.files for _, c in f.classes]

    def find_method(self, cls: F.ClassFacts, file: F.FileFacts, name: str,
                    seen: frozenset[str] = frozenset()) -> tuple[F.FunctionFacts, F.FileFacts, F.ClassFacts] | None:
        return self.of_class(f"method {name}", cls, file, seen,
                             lambda: self._find_method(cls, file, name, seen))

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

    # ------------------------------------------------------------ calls
    # Dispatched by the callee's kind (`CALLEES`), by the qualified name of a function from
    # outside the project (`NAMED_CALLS`, `NAMED_FAMILIES`), and by the receiver's kind for
    # a method call (`RECEIVERS`); the torch and training semantics add their kinds.

    def call(self, e: F.Call, frame: Frame) -> Value:
        loc = Location(frame.file.path, e.span)
        func_expr = e.func
        found = self.registry_lookup(e, frame)
        if found is not None:
            return found
        copied = self.inplace_copy(e, frame)
        if copied is not None:
            return copied
        if last_attr(func_expr) == "apply":  # the only callee it reads; a cheap look first
            normalized = self.hand_written_sn_apply(e, frame, loc)
            if normalized is not None:
                return normalized
        # Method calls on a value keep their receiver.
        local = self.module_local(func_expr, frame) if isinstance(func_expr, F.Global) else None
        receiver: Value | None = None
        if local is not None and local[1]:
            # `samples.detach()` on a module-level variable: lowered as one dotted global.
            receiver, attrs = local
            for attr in attrs[:-1]:
                receiver = self.attribute(receiver, attr, frame)
            method = attrs[-1]
        elif isinstance(func_expr, F.Attr):
            receiver, method = self.expr(func_expr.value, frame), func_expr.attr
        text = text_of(func_expr)
        if receiver is not None:
            handled = self.method_call(receiver, method, e, frame, loc)
            if handled is not None:
                return handled
            callee = self.attribute(receiver, method, frame)
            if method == "forward" and isinstance(receiver, Layer) and not isinstance(callee, FuncV):
                # `netD.forward(x)` of a torch module (`nn.Sequential`), or of a project class
                # whose forward is torch's: a call of the module, as `netD(x)`.
                callee, text = receiver, text.rpartition(".")[0]
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
        # What the call returned, or the batch it fetches from a data source (`fetched`,
        # snlint.link.training_semantics).
        return self.fetched(text, self.apply(callee, args, kwargs, e, frame, loc, text), loc)

    def arguments(self, e: F.Call, frame: Frame) -> tuple[list[Value], dict[str, Value]]:
        args: list[Value] = []
        kwargs: dict[str, Value] = {}
        for a in e.args:
            value = self.expr(a.value, frame)
            if a.star == "*":
                if isinstance(value, (ListV, TupleV)):
                    args.extend(value.items)
                elif isinstance(value, Layer) and value.kind == "container":
                    # `nn.Sequential(*blocks)` of a local `nn.ModuleList()`: its modules.
                    args.extend(layer for _, layer in value.named_children())
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

    # ------------------------------------------------------------ by the callee's kind

    def apply(self, callee: Value, args: list[Value], kwargs: dict[str, Value], e: F.Call | None,
              frame: Frame, loc: Location, text: str) -> Value:
        """Call `callee`. `e` is the call as written, when there is one; `text` how the
        callee is written (`netD`, `self.D`)."""
        if frame.depth > MAX_DEPTH:
            return UNKNOWN
        handler = self.CALLEES.get(type(callee))
        return UNKNOWN if handler is None else handler(self, callee, args, kwargs, e, frame, loc, text)

    def call_one_of(self, callee: OneOfV, args, kwargs, e, frame, loc, text) -> Value:
        # Each candidate is built, or called, as the code would with that one; a module
        # whose forward cannot take these arguments is not what this call reaches.
        options = list(callee.options)
        if e is None or not any(a.star for a in e.args):
            options = [o for o in options if self.accepts(o, len(args), set(kwargs))] or options
        results = [self.apply(option, list(args), dict(kwargs), e, frame, loc, text)
                   for option in options]
        if all(isinstance(r, Layer) for r in results):
            # A name an undecided `if` bound to one class or another says so here.
            why = callee.why or f"one of {len(results)} classes {text or 'a name'} may name"
            for r in results:
                r.via.append(f"{why} at {configvalues.where(loc)}")  # type: ignore[union-attr]
            if len(results) == 1:
                return results[0]
            return OneOfV(tuple(results), callee.why, callee.role)
        return tensor_join(results) if any(isinstance(r, TensorV) for r in results) else UNKNOWN

    def accepts(self, option: Value, positional: int, keywords: set[str]) -> bool:
        """Whether a project module's `forward` takes `positional` arguments and these
        keywords (True for anything else: only a call that would raise is ruled out)."""
        if not isinstance(option, Layer) or option.kind != "module" or option.cls is None:
            return True
        file = self.file_of(option.cls)
        found = self.find_method(option.cls, file, "forward") if file is not None else None
        if found is None:
            return True
        params = found[0].params[1:]  # after self
        if any(p.kind in ("star", "dstar") for p in params):
            return True
        named = [p for p in params if p.kind in ("pos", "posonly")]
        if positional > len(named) or not keywords <= {p.name for p in params if p.kind != "posonly"}:
            return False
        given = {p.name for p in named[:positional]} | keywords
        return all(p.default is not None or p.name in given for p in params)

    def call_class(self, callee: ClassV, args, kwargs, e, frame, loc, text) -> Value:
        if _is_dict_class(callee.cls):
            return configvalues.attr_dict(args, kwargs)
        return self.instantiate(callee, tuple(args), kwargs, loc, frame)

    def call_function(self, callee: FuncV, args, kwargs, e, frame, loc, text) -> Value:
        if callee.fn.name == "forward" and isinstance(callee.bound, Layer) and callee.bound.kind == "module":
            # `self.forward(x)` in a discriminator's own `compute_loss`: a call of the module.
            return self.forward_call(callee.bound, args, kwargs, e, frame, loc, text)
        result = self.invoke(callee, args, kwargs, frame, loc)
        if isinstance(callee.bound, Layer) and callee.bound.kind == "module":
            return self.method_returned(callee.bound, result, frame, loc, text)
        return result

    def call_lambda(self, callee: LambdaV, args, kwargs, e, frame, loc, text) -> Value:
        sub = Frame(callee.file, "<lambda>", frame, loc, depth=frame.depth + 1,
                    env=dict(callee.closure), loop_depth=frame.loop_depth, branches=frame.branches,
                    read_once=frame.read_once)
        rest, named = list(args), dict(kwargs)
        for name in callee.params:
            if rest:
                sub.env[name] = rest.pop(0)
            elif name in named:
                sub.env[name] = named.pop(name)
        if callee.star:
            sub.env[callee.star] = TupleV(tuple(rest))
        if callee.dstar:
            # `lambda x, **kw: torch.mean(x, **kw)`: the keywords reach the calls inside.
            sub.env[callee.dstar] = DictV(named)
        return self.expr(callee.body, sub)

    def call_partial(self, callee: PartialV, args, kwargs, e, frame, loc, text) -> Value:
        merged = {**callee.kwargs, **kwargs}
        built = self.apply(callee.func, list(callee.args) + args, merged, e, frame, loc,
                           callee.text or text)
        if callee.origin is not None and isinstance(built, Layer) and built.origin is None:
            built.origin = callee.origin
        return built

    def call_name(self, callee: NameV, args, kwargs, e, frame, loc, text) -> Value:
        return self.named_call(callee, args, kwargs, e, frame, loc)

    CALLEES: dict[type, Callable] = {
        OneOfV: call_one_of, ClassV: call_class, FuncV: call_function, LambdaV: call_lambda,
        PartialV: call_partial, NameV: call_name,
    }

    # ------------------------------------------------------------ by the function's name

    def named_call(self, callee: NameV, args: list[Value], kwargs: dict[str, Value],
                   e: F.Call | None, frame: Frame, loc: Location) -> Value:
        """A function from outside the project. A handler that returns None does not know
        this call (`getattr` with a computed name): what is left is the default."""
        qual = callee.qual
        handler = self.named_handler(qual)
        if handler is not None:
            handled = handler(self, callee, args, kwargs, e, frame, loc)
            if handled is not None:
                return handled
        configured = configvalues.named_config_call(qual, args, kwargs, loc, frame.file.path)
        if configured is not None:
            return configured
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

    def named_handler(self, qual: str) -> Callable | None:
        """The handler the tables give `qual`, looked up once per name: the families match
        by pattern, and training code calls the same few names thousands of times."""
        if qual not in self._named_handlers:
            self._named_handlers[qual] = self.NAMED_CALLS.get(qual) or next(
                (h for matches, h in self.NAMED_FAMILIES if matches(qual)), None)
        return self._named_handlers[qual]

    def copy_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        if len(args) != 1:
            return None
        if isinstance(args[0], DictV):
            return DictV(dict(args[0].items), args[0].attrs, args[0].origin)
        if resolve.layers(args[0]):
            return resolve.copied(args[0], callee.qual.rsplit(".", 1)[-1], loc)
        return None

    def partial_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        return PartialV(args[0], tuple(args[1:]), kwargs, callee.text) if args else None

    def setattr_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        if len(args) < 3:
            return None
        owner, name = args[0], args[1]
        if isinstance(owner, Layer):
            if isinstance(name, ConstV):
                owner.set_attr(name.value, args[2])
            else:
                # A computed name (`f"conv{i}"`) is one of many: `[*]` in symbols. The one
                # pass over a loop whose count is not known here stands for every pass, so
                # a value that is one of several computed children (`getattr(netD,
                # "model" + str(j))`, pix2pixHD's multiscale copy) sets each of them.
                values = _computed_children(args[2]) or [args[2]]
                for value in values:
                    owner.set_attr(f"*{len(owner.attrs)}", value)
        return ConstV(None)

    def getattr_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        if len(args) >= 2 and isinstance(args[0], ModuleV):
            return self.module_item(args[0], args[1], "", frame, loc.span)
        if len(args) >= 2 and isinstance(args[1], ConstV):
            return self.attribute(args[0], str(args[1].value), frame)
        if len(args) >= 2 and isinstance(args[0], Layer):
            # A computed name reads one of the children a computed `setattr` added.
            children = [v for k, v in args[0].attrs.items() if k.startswith("*") and isinstance(v, Layer)]
            if len(children) == 1:
                return children[0]
            if children:
                return OneOfV(tuple(children), f"one of the {len(children)} modules a computed name reads",
                              role="computed")
        return None

    def sequence_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        is_list = callee.qual.endswith("list")
        if not args:
            return ListV() if is_list else None
        inner = args[0]
        if isinstance(inner, ModulesIterV) and inner.children_only and not inner.named \
                and inner.root.kind == "container":
            # `list(model.main.children())`: a Sequential's layers, to re-pack.
            inner = ListV(list(items_of(inner.root)))
        if isinstance(inner, (ListV, TupleV)):
            return ListV(list(inner.items)) if is_list else TupleV(tuple(inner.items))
        return UNKNOWN

    def sum_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        if len(args) == 2 and isinstance(args[1], (ListV, TupleV)):
            # `sum(blocks, [])`: lists of layers flattened into one.
            return _concatenated([args[0]], start=args[1])
        return None

    def chain_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        return _concatenated([TupleV(tuple(args))])

    def chain_from_iterable_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        return _concatenated(args[:1]) if args else None

    def dict_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        out = DictV(dict(kwargs))
        if args and isinstance(args[0], (ListV, TupleV)):
            for item in args[0].items:
                if isinstance(item, TupleV) and len(item.items) == 2 and isinstance(item.items[0], ConstV):
                    out.items[item.items[0].value] = item.items[1]
        elif args and isinstance(args[0], DictV):
            out.items.update(args[0].items)
        return out

    def isinstance_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        if len(args) != 2:
            return None
        types = self.type_names(args[1])
        if isinstance(args[0], Layer) and types is not None:
            return ConstV(ModulesV(args[0], types=types).matches(args[0]))
        return UNKNOWN

    def type_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        if len(args) == 1 and isinstance(args[0], ModulesV):
            return ClassOfV(args[0])
        return None

    def map_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        """`map(netD, [real, fake])`: the function called on each item, in order."""
        if len(args) != 2 or not isinstance(args[1], (ListV, TupleV)) or not 0 < len(args[1].items) <= MAX_UNROLL:
            return None
        text = text_of(e.args[0].value) if e is not None and e.args else ""
        return ListV([self.apply(args[0], [item], {}, None, frame, loc, text) for item in args[1].items])

    def unknown_result(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        return UNKNOWN  # `len(x)` of a tensor is a number, not the tensor

    NAMED_CALLS: dict[str, Callable] = {
        **dict.fromkeys(resolve.COPIES, copy_call),
        **dict.fromkeys(PARTIAL, partial_call),
        "builtins.setattr": setattr_call, "builtins.getattr": getattr_call,
        "builtins.list": sequence_call, "builtins.tuple": sequence_call, "builtins.sum": sum_call,
        "itertools.chain": chain_call, "itertools.chain.from_iterable": chain_from_iterable_call,
        "builtins.dict": dict_call, "collections.OrderedDict": dict_call,
        "builtins.isinstance": isinstance_call, "builtins.type": type_call,
        "builtins.range": unknown_result, "builtins.len": unknown_result, "builtins.map": map_call,
    }
    # (matches(qual), handler): names known by their shape, not one by one.
    NAMED_FAMILIES: list[tuple[Callable[[str], bool], Callable]] = []

    # ------------------------------------------------------------ by the receiver's kind

    def method_call(self, receiver: Value, name: str, e: F.Call, frame: Frame, loc: Location) -> Value | None:
        """`receiver.name(...)`, when the receiver's kind says what it does; None leaves
        the call to the attribute's value (a method of a project class)."""
        builtin = _DUNDER_BUILTINS.get(name)
        if builtin is not None and not e.args:
            # `it.__next__()` is `next(it)` (an endless generator over the loader).
            return self.named_call(NameV(builtin), [receiver], {}, e, frame, loc)
        handler = self.RECEIVERS.get(type(receiver))
        return None if handler is None else handler(self, receiver, name, e, frame, loc)

    def string_method(self, receiver: ConstV, name: str, e, frame, loc) -> Value | None:
        if not (isinstance(receiver.value, str) and name in _STR_METHODS):
            return None
        # `norm_type.lower()`, `mode.upper()`: factories normalise their key first.
        args, kwargs = self.arguments(e, frame)
        if kwargs or not all(isinstance(a, ConstV) for a in args):
            return UNKNOWN
        try:
            return ConstV(getattr(receiver.value, name)(*(a.value for a in args)))  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - a call Python itself would reject
            return UNKNOWN

    def list_method(self, receiver: ListV, name: str, e, frame, loc) -> Value | None:
        args, _ = self.arguments(e, frame)
        if name == "append" and args:
            receiver.items.append(args[0])
        elif name == "extend" and args:
            self.extend(receiver, args[0])
        elif name == "insert" and len(args) >= 2:
            index = args[0].value if isinstance(args[0], ConstV) and isinstance(args[0].value, int) else len(receiver.items)
            receiver.items.insert(index, args[1])
        elif name == "pop":
            return receiver.items.pop() if receiver.items else UNKNOWN
        return ConstV(None)

    def dict_method(self, receiver: DictV, name: str, e, frame, loc) -> Value | None:
        if name not in ("values", "items", "get", "update", "pop"):
            return None  # the call evaluates the arguments, once
        args, _ = self.arguments(e, frame)
        if name == "values":
            return ListV(list(receiver.items.values()))
        if name == "items":
            return ListV([TupleV((ConstV(k), v)) for k, v in receiver.items.items()])
        if name == "get" and args and isinstance(args[0], ConstV):
            return receiver.items.get(args[0].value, args[1] if len(args) > 1 else ConstV(None))
        if name == "update" and args and isinstance(args[0], DictV):
            receiver.items.update(args[0].items)
        if name == "pop" and args and isinstance(args[0], ConstV):
            return receiver.items.pop(args[0].value, args[1] if len(args) > 1 else UNKNOWN)
        return None

    def namespace_method(self, receiver: NamespaceV, name: str, e, frame, loc) -> Value | None:
        args, kwargs = self.arguments(e, frame)
        return configvalues.parser_method(receiver, name, args, kwargs, loc)

    RECEIVERS: dict[type, Callable] = {
        ConstV: string_method, ListV: list_method, DictV: dict_method, NamespaceV: namespace_method,
    }

    # ------------------------------------------------------------ binding

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
                    cond_depth=frame.cond_depth, function=func.fn.name, qualname=func.fn.qualname,
                    branches=frame.branches, read_once=frame.read_once)
        if isinstance(func.bound, Layer):
            # A method building parts of `self` (`self._make_layers()`) counts as its init.
            sub.self_value, sub.cls = func.bound, func.cls
        if func.bound is not None:
            args = [func.bound, *args]
        self.bind_params(func.fn, args, kwargs, sub)
        sub.no_grad = without_grad(func.fn)
        passed = len(args) + len(kwargs)
        # Which parameters the body compares is asked only of a call passing a string.
        strings = [(p.name, sub.env[p.name]) for p in func.fn.params
                   if isinstance(sub.env.get(p.name), ConstV) and isinstance(sub.env[p.name].value, str)
                   and p.name in self.deciding_params(func.fn)
                   and (p.name in kwargs or func.fn.params.index(p) < passed)]
        self.block(func.fn.body, sub)
        sub.returned = settled(sub)
        return resolve.built_by(sub.returned or UNKNOWN, func.fn, sub, loc, strings)

    def deciding_params(self, fn: F.FunctionFacts) -> set[str]:
        """`resolve.deciding(fn)`, read once per function: it walks the whole body, and a
        helper is invoked at every call site (the facts are frozen, so it cannot change)."""
        found = self._deciding.get(id(fn))
        if found is None:
            found = self._deciding[id(fn)] = resolve.deciding(fn)
        return found

    def bind_params(self, fn: F.FunctionFacts, args: list[Value], kwargs: dict[str, Value],
                    frame: Frame) -> None:
        remaining = list(args)
        extra_kwargs = dict(kwargs)
        for p in fn.params:
            if p.kind == "star":
                frame.env[p.name] = TupleV(tuple(remaining))
                remaining = []
            elif p.kind in ("pos", "posonly") and remaining:
                frame.env[p.name] = remaining.pop(0)
            elif p.name in extra_kwargs and p.kind != "dstar":
                frame.env[p.name] = extra_kwargs.pop(p.name)
            elif p.default is not None and p.kind != "dstar":
                frame.env[p.name] = self.default(p, frame)
            elif p.kind in ("pos", "posonly"):
                frame.env[p.name] = self.annotated(p, frame) or self.unpassed_parameter(p.name)
            elif p.kind == "kwonly":
                frame.env[p.name] = UnknownV(f"parameter {p.name}")
            elif p.kind == "dstar":
                frame.env[p.name] = DictV(dict(extra_kwargs))
                extra_kwargs = {}
        for p in fn.params:
            if p.name in options.OPTION_PARAMS and p.kind in ("pos", "kwonly"):
                frame.env[p.name] = self.parsed_options(frame.env.get(p.name), frame)

    def default(self, p: F.Param, frame: Frame) -> Value:
        if isinstance(p.default, F.Const):
            # A literal, most defaults (`ndf=64`), reads nothing of where it is evaluated.
            return self.const_expr(p.default, frame)
        # Defaults are evaluated in the defining module, outside the function.
        outer = Frame(frame.file, "<defaults>", frame.parent, frame.call_site, depth=frame.depth)
        value = self.expr(p.default, outer)
        # A layer type taken from a default (`norm_layer=nn.BatchNorm2d`) reports there.
        if isinstance(value, TorchTypeV):
            return TorchTypeV(value.name, Location(frame.file.path, p.span))
        if isinstance(value, PartialV):
            return PartialV(value.func, value.args, value.kwargs, value.text, Location(frame.file.path, p.span))
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

    # ------------------------------------------------------------ parsed options

    def option_arguments(self, fn: F.FunctionFacts, cls: F.ClassFacts) -> dict[str, Value]:
        """The parsed options for `fn`'s parameters that take them (`opt`, `args`), when the
        project declares options."""
        if not self.declared_options():
            return {}
        out: dict[str, Value] = {}
        for p in fn.params[1:]:
            if p.name in options.OPTION_PARAMS and p.default is None and p.kind in ("pos", "kwonly"):
                out[p.name] = options.namespace(self._options, options.class_defaults(cls))
        return out

    def declared_options(self) -> dict:
        """The options the project declares (`--ndf`, with its default and where)."""
        if self._options is None:
            self._options = self._project_options() if self._project_options is not None \
                else options.option_defaults(self.index.files)
        return self._options

    def parsed_options(self, value: Value | None, frame: Frame) -> Value | None:
        """What `opt` holds when the code that parses it cannot be followed (an options
        class's `parse()`, a YAML file): the options the project declares, with their
        defaults, as a run without flags has them. A model class's own
        `parser.set_defaults(...)` applies where the options reach its `__init__`."""
        built = frame.self_value.cls if frame.self_value is not None else None
        # An attribute of a module nothing set (`self.opt` of a class built alone) is as
        # unknown as a parameter nobody passed.
        if isinstance(value, UnknownV) or isinstance(value, NameV) and value.qual.startswith("<layer>."):
            if not self.declared_options():
                return value
            return options.namespace(self._options, options.class_defaults(built) if built else {})
        if isinstance(value, NamespaceV) and value.origin == options.DEFAULTS_ORIGIN and built is not None \
                and in_init(frame):
            overrides = options.class_defaults(built)
            if overrides:
                return options.namespace(self._options or {}, overrides)
        return value

    # Each part's tables hold the kinds it knows; a kind two parts claim fails here, at
    # import, rather than letting one part silently shadow the other.
    CALLEES = merged_tables(CALLEES, TorchSemantics.CALLEES, TrainingSemantics.CALLEES)
    NAMED_CALLS = merged_tables(NAMED_CALLS, TorchSemantics.NAMED_CALLS, TrainingSemantics.NAMED_CALLS)
    NAMED_FAMILIES = [*NAMED_FAMILIES, *TorchSemantics.NAMED_FAMILIES, *TrainingSemantics.NAMED_FAMILIES]
    RECEIVERS = merged_tables(RECEIVERS, TorchSemantics.RECEIVERS, TrainingSemantics.RECEIVERS)


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
    values (a discriminator testing its `norm` argument at each layer it builds)."""
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
    # By the test as written (spans aside), not by the `if`. The entry holds the values:
    # no other object takes their ids.
    return frame.if_tokens.setdefault((stmt.test, *map(id, values)), (object(), values))[0]


def _parts(owner: Layer | None) -> tuple[dict[str, Value], list[str]]:
    """A copy of the attributes and the order of children of the module being built."""
    return (dict(owner.attrs), list(owner.children_order)) if owner is not None else ({}, [])


def _at(items: list[Value] | tuple[Value, ...], index: int) -> Value:
    """`items[index]`; unknown past either end."""
    return items[index] if -len(items) <= index < len(items) else UNKNOWN


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
    classes it builds. Any other early return (a guard's `return x`) leaves the body's last
    `return` as what it returns."""
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


def _train_mode_in_loop(body: tuple[F.Stmt, ...], frame: Frame) -> None:
    """Before a loop: a `.train()` anywhere in its body runs before the calls of the next
    iteration, which the single run of the body does not see: no module counts as left
    in eval mode inside it (`netD.eval()` before the epochs, `netD.train()` after each)."""
    if frame.root.in_eval and any(_named_train(call.func) for stmt in F.statements(body)
                                  for call in F.calls_in(stmt)):
        frame.root.in_eval = frozenset()


def _named_train(func: F.Expr) -> bool:
    """`x.train` as written: an attribute, or a module-level name's (`netD.train`)."""
    if isinstance(func, F.Attr):
        return func.attr == "train"
    return isinstance(func, F.Global) and func.qual.rpartition(".")[2] == "train"


def _widen_counters(body: tuple[F.Stmt, ...], frame: Frame) -> None:
    """Before a loop run once for all its iterations: a number the body steps
    (`global_step += 1`) is not the value it starts at, so `if global_step > start:` is
    undecided, not never taken."""
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


# The standard library's enumerations: a class deriving from one has its members as
# class-level assignments (`VANILLA = 0`).
ENUM_BASES = frozenset({"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"})


def _enum_member(cls: F.ClassFacts, name: str) -> EnumMemberV | None:
    if not any(isinstance(b, F.Global) and b.qual in ENUM_BASES for b in cls.bases):
        return None
    for stmt in cls.body:
        if isinstance(stmt, F.Assign) and len(stmt.targets) == 1 and not name.startswith("_") \
                and isinstance(stmt.targets[0], F.Unknown) and stmt.targets[0].text == name:
            return EnumMemberV(cls, name, stmt.value)
    return None


_ARITHMETIC = {"Add": operator.add, "Multiply": operator.mul, "Subtract": operator.sub,
               "FloorDivide": operator.floordiv}
_COMPARISONS = {"==": operator.eq, "!=": operator.ne, "is": operator.is_, "is not": operator.is_not,
                "in": lambda a, b: a in b, "not in": lambda a, b: a not in b, "<": operator.lt,
                "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _arith(op: str, a: object, b: object) -> Value:
    if op not in _ARITHMETIC:
        return UNKNOWN
    try:
        return ConstV(_ARITHMETIC[op](a, b))
    except Exception:  # noqa: BLE001 - an operation Python itself would reject
        return UNKNOWN


def _compare(op: str, left: Value, right: Value) -> Value:
    """Comparisons of literals (`norm_type == "batch"`), so factories pick one branch."""
    if isinstance(right, (ListV, TupleV)) and op in ("in", "not in") and isinstance(left, ConstV) \
            and all(isinstance(i, ConstV) for i in right.items):
        inside = left.value in [i.value for i in right.items]  # type: ignore[attr-defined]
        return ConstV(inside if op == "in" else not inside)
    if not (isinstance(left, ConstV) and isinstance(right, ConstV)):
        return UNKNOWN
    try:
        return ConstV(bool(_COMPARISONS[op](left.value, right.value)))
    except Exception:  # noqa: BLE001 - a comparison Python itself would reject
        return UNKNOWN


def _namespace_of(e: F.Expr) -> F.Expr | None:
    """`models` in `models.__dict__` (an attribute, or one dotted global at module level)."""
    if isinstance(e, F.Attr) and e.attr == "__dict__":
        return e.value
    if isinstance(e, F.Global) and e.qual.endswith(".__dict__"):
        qual = e.qual[: -len(".__dict__")]
        return F.Global(qual, e.text.rpartition(".")[0], span=e.span)
    return None


def _any_item(items: list[Value] | tuple[Value, ...], text: str) -> Value | None:
    """An item of a list at an index not known here, where every item is one of the
    project's modules (`self.netsD[idx]`), or every item a tensor. Anything else stays
    unknown."""
    if not items:
        return None
    # An item that is itself one of several modules offers each of them.
    modules = list(dict.fromkeys(o for i in items for o in (i.options if isinstance(i, OneOfV) else (i,))))
    if all(isinstance(i, Layer) and i.kind == "module" for i in modules):
        if len(modules) == 1:
            return modules[0]
        return OneOfV(tuple(modules), f"one of the {len(modules)} modules in {text or 'a list'}")
    if all(isinstance(i, TensorV) for i in items):
        return tensor_join(list(items))
    return None


def _any_child(container: Layer, text: str) -> Value | None:
    """A child of a Sequential or ModuleList at an index not known here: the child when
    there is one kind, else one of them."""
    children = list(dict.fromkeys(child for _, child in container.named_children()))
    if not children or len(children) > MAX_UNROLL:
        return None
    if len(children) == 1:
        return children[0]
    return OneOfV(tuple(children), f"one of the {len(children)} modules in {text or 'a container'}")


def _updates_own_state(e: F.Expr) -> bool:
    """Whether `e` is an in-place update of the module's own state, its value unused:
    `self.w_avg.copy_(...)`, `self.running_mean.mul_(m).add_(...)`."""
    if not (isinstance(e, F.Call) and isinstance(e.func, F.Attr) and e.func.attr.endswith("_")
            and not e.func.attr.startswith("_")):
        return False
    receiver = e.func.value
    while isinstance(receiver, F.Call) and isinstance(receiver.func, F.Attr) \
            and receiver.func.attr.endswith("_"):
        receiver = receiver.func.value
    return isinstance(receiver, F.Attr) and isinstance(receiver.value, F.Local) \
        and receiver.value.name == "self"


def _computed_children(value: Value) -> list[Value]:
    """The children a computed `getattr` may read (`getattr_call`), each of them; empty
    for anything else (one of several classes a factory may build is one, not all)."""
    if isinstance(value, OneOfV) and value.role == "computed":
        return list(value.options)
    return []


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
    of those that may concern any name), for `Interpreter.statements_about`."""
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


def _is_dict_class(cls: F.ClassFacts) -> bool:
    """A project class deriving from dict: a configuration read by attribute (AttrDict)."""
    return any(isinstance(b, F.Global) and b.qual in ("builtins.dict", "collections.OrderedDict")
               for b in cls.bases)


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


# String methods whose result follows from literal arguments alone.
_STR_METHODS = frozenset({"lower", "upper", "casefold", "strip", "lstrip", "rstrip", "replace",
                          "startswith", "endswith", "title", "capitalize"})


# Methods that are what a builtin calls: `x.__next__()` is `next(x)`.
_DUNDER_BUILTINS = {"__next__": "builtins.next", "__iter__": "builtins.iter", "__len__": "builtins.len"}
