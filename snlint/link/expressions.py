"""Evaluating expressions: literals, names, attributes, containers, operators.

The part of the evaluator that turns an expression into a value, as far as literal values
allow (`norm_type == "batch"` is known, a tensor's shape is not). Calls are handed to the
call evaluator; what a value's attribute is, for each kind of value, is here.
"""

from __future__ import annotations

from snlint import facts as F
from snlint.findings import Location
from snlint.link import resolve
from snlint.link.provenance import Channels
from snlint.link.statements import MAX_UNROLL, items_of, merge
from snlint.link.syntax import text_of
from snlint.link.values import (
    UNKNOWN, ClassOfV, ClassV, ConstV, DictV, EnumMemberV, Frame, FuncV, LambdaV, Layer, ListV, ModulesIterV,
    ModulesV, ModuleV, NamespaceV, NameV, OneOfV, PartialV, SNFuncV, SuperV, TensorV, TorchTypeV,
    TupleV, UnknownV, Value, WeightV, tensor_join,
)


class Expressions:
    def expr(self, e: F.Expr | None, frame: Frame) -> Value:
        kind = type(e)
        # Local names and calls, more than half of what the evaluator reads, skip the extra
        # call through the table (`local`, `call_expr` do the same).
        if kind is F.Local:
            return frame.env.get(e.name, UNKNOWN)  # type: ignore[union-attr]
        if kind is F.Call:
            return self.call(e, frame)  # type: ignore[arg-type]
        handler = self.EXPRESSIONS.get(kind)
        return UNKNOWN if handler is None else handler(self, e, frame)

    def const(self, e: F.Const, frame: Frame) -> Value:
        return ConstV(e.value)

    def local(self, e: F.Local, frame: Frame) -> Value:
        return frame.env.get(e.name, UNKNOWN)

    def global_name(self, e: F.Global, frame: Frame) -> Value:
        local = self.module_local(e, frame)
        if local is not None:
            value, attrs = local
            for attr in attrs:
                value = self.attribute(value, attr, frame)
            return value
        return self.global_value(e.qual, e.text, frame)

    def attribute_expr(self, e: F.Attr, frame: Frame) -> Value:
        return self.attribute(self.expr(e.value, frame), e.attr, frame)

    def call_expr(self, e: F.Call, frame: Frame) -> Value:
        return self.call(e, frame)

    def list_display(self, e: F.ListE, frame: Frame) -> Value:
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

    def dict_display(self, e: F.DictE, frame: Frame) -> Value:
        out = DictV()
        for k, v in e.items:
            if isinstance(k, F.Starred):
                # `{**defaults, **kwargs}` (a factory's defaults joined with what it was
                # given): what a known dict holds; an unknown one adds nothing known.
                unpacked = self.expr(v, frame)
                if isinstance(unpacked, DictV):
                    out.items.update(unpacked.items)
                continue
            key = self.expr(k, frame)
            out.items[key.value if isinstance(key, ConstV) else object()] = self.expr(v, frame)
        return out

    def item(self, e: F.Subscript, frame: Frame) -> Value:
        namespace = _namespace_of(e.value)
        if namespace is not None:
            module = self.expr(namespace, frame)
            if isinstance(module, ModuleV):
                return self.module_item(module, self.expr(e.index, frame), text_of(e.value), frame, e.span)
        container, key = self.expr(e.value, frame), self.expr(e.index, frame)
        if isinstance(key, ConstV) and isinstance(key.value, slice):
            # `layers[:-1]` of a list of children (GANomaly's NetD re-packing its encoder).
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
        return self.subscript(container, key)

    def binop(self, e: F.BinOp, frame: Frame) -> Value:
        left, right = self.expr(e.left, frame), self.expr(e.right, frame)
        if e.op == "Add" and isinstance(left, ListV) and isinstance(right, ListV):
            return ListV(left.items + right.items)
        if isinstance(left, ConstV) and isinstance(right, ConstV):
            return _arith(e.op, left.value, right.value)
        if isinstance(left, TensorV) and isinstance(right, TensorV) and left.origins and right.origins:
            # `clamp(G(x), -eps, eps) + x` (an adversarial example, a residual output):
            # each sample combines a part of each, so the batch is one of generated
            # samples if either part is generated; not real and generated samples side by
            # side, as `torch.cat((real, fake))` makes them.
            joined = tensor_join([left, right])
            return TensorV(joined.tags, joined.outputs, frozenset({Channels(
                (left.origins, right.origins), e.span.line, frame.file.path, ", combined with another tensor at {}")}))
        if isinstance(left, TensorV) or isinstance(right, TensorV):
            return tensor_join([left, right])
        return UNKNOWN

    def compare(self, e: F.Compare, frame: Frame) -> Value:
        return _compare(e.op, self.expr(e.left, frame), self.expr(e.right, frame))

    def negation(self, e: F.Not, frame: Frame) -> Value:
        truth = self.truth(self.expr(e.value, frame))
        return UNKNOWN if truth is None else ConstV(not truth)

    def boolop(self, e: F.BoolOp, frame: Frame) -> Value:
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

    def ifexp(self, e: F.IfExp, frame: Frame) -> Value:
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

    def lambda_value(self, e: F.Lambda, frame: Frame) -> Value:
        return LambdaV(e.params, e.body, frame.file, frame.env, e.star, e.dstar)

    def comprehension(self, e: F.Comprehension, frame: Frame) -> Value:
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
        F.Const: const, F.Local: local, F.Global: global_name, F.Attr: attribute_expr, F.Call: call_expr,
        F.ListE: list_display, F.DictE: dict_display, F.Subscript: item, F.BinOp: binop, F.Compare: compare,
        F.Not: negation, F.BoolOp: boolop, F.IfExp: ifexp, F.Lambda: lambda_value,
        F.Comprehension: comprehension,
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
                children = value.named_children()
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
            method = self.find_method(value.cls, self.file_of(value.cls) or frame.file, attr)
            if method is not None:
                return FuncV(method[0], method[1], bound=value, cls=method[2])
        return NameV(f"<layer>.{attr}")

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
        # `GANType.VANILLA.name`, the key pytorch-GANs' `get_gan` compares.
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
    }


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


def _namespace_of(e: F.Expr) -> F.Expr | None:
    """`models` in `models.__dict__` (an attribute, or one dotted global at module level)."""
    if isinstance(e, F.Attr) and e.attr == "__dict__":
        return e.value
    if isinstance(e, F.Global) and e.qual.endswith(".__dict__"):
        qual = e.qual[: -len(".__dict__")]
        return F.Global(qual, e.text.rpartition(".")[0], span=e.span)
    return None


def _any_item(items: list[Value] | tuple[Value, ...], text: str) -> Value | None:
    """An item of a list at an index not known here, where every item is the same kind of
    thing: one of the project's modules (`self.netsD[idx]`, StackGAN's discriminator per
    scale, called in a loop over the scales), or a tensor (`self.real_imgs[idx]`, whose
    items all come from the data). Anything else stays unknown."""
    if not items:
        return None
    # An item that is itself one of several modules (AttnGAN's `netsD`, one list on each
    # branch of `if cfg.GAN.B_DCGAN:`) offers each of them.
    modules = list(dict.fromkeys(o for i in items for o in (i.options if isinstance(i, OneOfV) else (i,))))
    if all(isinstance(i, Layer) and i.kind == "module" for i in modules):
        if len(modules) == 1:
            return modules[0]
        return OneOfV(tuple(modules), f"one of the {len(modules)} modules in {text or 'a list'}")
    if all(isinstance(i, TensorV) for i in items):
        return tensor_join(list(items))
    return None
