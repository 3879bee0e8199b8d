"""Binding a call's arguments, and running a function body with them.

The evaluator's function calls: parameters from positional and keyword arguments, the
defaults evaluated in the defining module, annotated project modules, and the parsed
options (`opt`, `args`) a function receives when the code that parses them cannot be
followed. Kept apart from call dispatch: this is what happens once the callee is known.
"""

from __future__ import annotations

from typing import Callable

from snlint import facts as F
from snlint.findings import Location
from snlint.link import options, resolve
from snlint.link.calls import MAX_DEPTH
from snlint.link.index import ProjectIndex
from snlint.link.statements import settled, without_grad
from snlint.link.values import (
    UNKNOWN, ClassV, ConstV, DictV, Frame, FuncV, Layer, NamespaceV, NameV, PartialV, TorchTypeV,
    TupleV, UnknownV, Value,
)


class Binding:
    index: ProjectIndex
    _options: dict | None  # the project's declared options, read once
    _project_options: Callable[[], dict] | None  # the whole project's, for a part of it
    _deciding: dict[int, set[str]]  # id() of a function's facts -> resolve.deciding of it

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
                    branches=frame.branches)
        if func.bound is not None:
            if isinstance(func.bound, Layer):
                sub.self_value = func.bound if func.fn.name == "__init__" else None
                sub.cls = func.cls
                if func.fn.name != "__init__":
                    # A method building parts of `self` (`self._make_layers()`) counts as its init.
                    sub.self_value = func.bound
            args = [func.bound, *args]
        self.bind_params(func.fn, args, kwargs, sub, use_defaults=True)
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
                    frame.env[p.name] = self.annotated(p, frame) or self.unpassed_parameter(p.name)
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

    def default(self, p: F.Param, frame: Frame) -> Value:
        if isinstance(p.default, F.Const):
            # A literal, most defaults (`ndf=64`), reads nothing of where it is evaluated.
            return self.const(p.default, frame)
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
        # An attribute of a module nothing set (`self.opt` in a `build_models` run for the
        # class built alone, DMIT) is as unknown as a parameter nobody passed.
        if isinstance(value, UnknownV) or isinstance(value, NameV) and value.qual.startswith("<layer>."):
            if not self.declared_options():
                return value
            return options.namespace(self._options, options.class_defaults(built) if built else {})
        if isinstance(value, NamespaceV) and value.origin == options.DEFAULTS_ORIGIN and built is not None \
                and (frame.function == "__init__" or frame.name.endswith(".__init__")):
            overrides = options.class_defaults(built)
            if overrides:
                return options.namespace(self._options or {}, overrides)
        return value
