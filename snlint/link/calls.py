"""Evaluating calls: what is called, and which handler knows what calling it does.

A call is dispatched three ways: by the callee's kind (`CALLEES`: a project function, a
class, a lambda, a partial, a name from outside the project), by the qualified name of a
function from outside the project (`NAMED_CALLS`, `NAMED_FAMILIES`: `setattr`, `dict`,
`itertools.chain`), and by the receiver's kind for a method call (`RECEIVERS`: list and
dict methods, string methods of a literal). The tables here hold Python's own kinds; the
torch and training semantics add theirs, and `Interpreter` merges them.
"""

from __future__ import annotations

from typing import Callable

from snlint import facts as F
from snlint.findings import Location
from snlint.link import configvalues, resolve
from snlint.link.statements import MAX_UNROLL, items_of
from snlint.link.syntax import last_attr, text_of
from snlint.link.values import (
    UNKNOWN, ClassOfV, ClassV, ConstV, DictV, Frame, FuncV, LambdaV, Layer, ListV, ModulesIterV, ModulesV,
    ModuleV, NamespaceV, NameV, OneOfV, PartialV, SuperV, TensorV, TupleV, UnknownV, Value, tensor_join,
    tensors,
)
from snlint.torchapi import PARTIAL

# How deep calls nest before the evaluator stops following them.
MAX_DEPTH = 24


class Calls:
    _named_handlers: dict[str, Callable | None]  # qualified name -> its handler, once found

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
        text = text_of(func_expr)
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
                    # `nn.Sequential(*blocks)` of a local `nn.ModuleList()` (SinGAN's
                    # discriminator): its modules, in order.
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
        # whose forward cannot take these arguments is not what this call reaches
        # (`self.netD(data, labels)` in the branch for the conditional discriminator).
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
            return self.forward_call(callee.bound, text, args, frame, loc, e, kwargs)
        return self.invoke(callee, args, kwargs, frame, loc)

    def call_lambda(self, callee: LambdaV, args, kwargs, e, frame, loc, text) -> Value:
        sub = Frame(callee.file, "<lambda>", frame, loc, depth=frame.depth + 1,
                    env=dict(callee.closure), loop_depth=frame.loop_depth, branches=frame.branches)
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
            # A computed name (`f"conv{i}"`) is one of many: `[*]` in symbols.
            owner.set_attr(name.value if isinstance(name, ConstV) else f"*{len(owner.attrs)}", args[2])
        return ConstV(None)

    def getattr_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        if len(args) >= 2 and isinstance(args[0], ModuleV):
            return self.module_item(args[0], args[1], "", frame, loc.span)
        if len(args) >= 2 and isinstance(args[1], ConstV):
            return self.attribute(args[0], str(args[1].value), frame)
        return None

    def sequence_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        is_list = callee.qual.endswith("list")
        if not args:
            return ListV() if is_list else None
        inner = args[0]
        if isinstance(inner, ModulesIterV) and inner.children_only and not inner.named \
                and inner.root.kind == "container":
            # `list(model.main.children())`: a Sequential's layers, to re-pack (GANomaly).
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
            return ConstV(ModulesV(args[0]).matches_types(args[0], types))
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

    def namespace_method(self, receiver: NamespaceV, name: str, e, frame, loc) -> Value | None:
        args, kwargs = self.arguments(e, frame)
        return configvalues.parser_method(receiver, name, args, kwargs, loc)

    RECEIVERS: dict[type, Callable] = {
        ConstV: string_method, ListV: list_method, DictV: dict_method, NamespaceV: namespace_method,
    }


def merged_tables(*tables: dict) -> dict:
    """One dispatch table from the parts' tables; a kind two parts claim is a mistake."""
    out: dict = {}
    for table in tables:
        overlap = out.keys() & table.keys()
        if overlap:
            raise ValueError(f"claimed twice: {sorted(map(str, overlap))}")
        out.update(table)
    return out


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
