"""What torch code does to modules: which classes are modules, what a torch layer type
builds, where SN is applied (either API, or a hand-written wrapper) and to which layers,
init calls, the module methods that change a module (`add_module`, `apply`, `eval`), and
which class a framework's registry builds.
"""

from __future__ import annotations

import re
from typing import Callable

from snlint import facts as F
from snlint.findings import Location
from snlint.link import configvalues, resolve
from snlint.link.events import DISCRIMINATOR_CLASS, Events
from snlint.link.model import InitFact, SNApplied, SNCallFact, SNFact
from snlint.link.index import ProjectIndex
from snlint.link.syntax import calls_in, fact_nodes, text_of
from snlint.link.values import (
    MAX_DEPTH, UNKNOWN, ClassOfV, ClassV, ConstV, DictV, Frame, Layer, ListV, ModulesIterV, ModulesV,
    NameFindV, NameV, OneOfV, ParametersV, ParamV, SNFuncV, SuperV, TorchTypeV, TupleV, Value,
    WeightV,
)
from snlint.torchapi import (
    INIT_FUNCTION, INPLACE_TENSOR_INIT, KINDS, SN_CUSTOM, SN_FUNCTIONS, WN_FUNCTIONS, layer_type,
    weight_norm_api,
)

# The methods of an nn.Module the interpreter models (`layer_method`); any other is the
# project's own method, left to the call.
_MOVES = frozenset({"to", "cuda", "cpu", "float", "double", "half"})  # device and dtype
_LAYER_METHODS = _MOVES | {
    "add_module", "register_module", "append", "extend", "modules", "named_modules", "children",
    "named_children", "parameters", "named_parameters", "apply", "requires_grad_", "eval", "train"}


def in_init(frame: Frame) -> bool:
    """Whether `frame` runs an `__init__`: called, or building an instance (`D.__init__`)."""
    return frame.function == "__init__" or frame.name.endswith(".__init__")


def _overrides_train(owner: Layer | None, layer: Layer) -> bool:
    """Whether a `train` method running for `owner` is an nn.Module's `train()` override
    keeping one of its own parts (`layer`) in eval mode, rather than a plain object's
    training loop named `train`."""
    if owner is None or owner.kind != "module":
        return False
    return layer is owner or any(part is layer for _, part in owner.descendants())


class TorchSemantics:
    index: ProjectIndex
    events: Events
    _registries: set[str] | None  # the project's class registries, found once
    _layer_types: dict[str, str | None]  # qualified name -> the torch layer type it names

    def torch_name(self, qual: str, text: str) -> Value | None:
        """What a torch name is, when it is more than a name: an SN function, a layer type."""
        if qual in SN_FUNCTIONS:
            return SNFuncV(SN_FUNCTIONS[qual], text or qual.rsplit(".", 1)[-1])
        if qual not in self._layer_types:
            # Every global read asks; the layer-type pattern is matched once per name.
            self._layer_types[qual] = layer_type(qual)
        found = self._layer_types[qual]
        return None if found is None else TorchTypeV(found)

    # ------------------------------------------------------------ building modules

    def call_torch_type(self, callee: TorchTypeV, args, kwargs, e, frame, loc, text) -> Value:
        """`nn.Conv2d(...)`: a torch layer (a container holding what it is given)."""
        name = callee.name
        kind = KINDS[name]
        layer = Layer(name, kind, loc, frame, args=tuple(args), kwargs=dict(kwargs),
                      in_loop=frame.loop_depth > 0, conditional=frame.cond_depth > 0, read_once=frame.read_once > 0,
                      branches=frame.branches)
        if kind == "container":
            _hold(layer, name, args, kwargs)
        elif kind == "attention":
            out_proj = Layer("Linear", "linear", loc, frame, in_loop=layer.in_loop, bypassed=True)
            layer.set_attr("out_proj", out_proj)
        if callee.origin is not None:
            layer.origin = callee.origin
        return layer

    def instantiate(self, cls_value: ClassV, args: tuple[Value, ...], kwargs: dict[str, Value],
                    loc: Location, frame: Frame, root_build: bool = False) -> Value:
        cls, file = cls_value.cls, cls_value.file
        kind = self.class_kind(cls, file)
        if kind == "sn_wrapper":
            target = args[0] if args else kwargs.get("module", UNKNOWN)
            reshape = _reshape_along_dim0(cls, file)
            return self.apply_sn(SN_CUSTOM, cls.name, target, {}, frame, loc, reshape)
        torch_base = self.torch_base(cls, file)
        if kind is None and torch_base is None:
            if not cls.methods and not _attribute_bag(cls):
                return UNKNOWN  # a dataclass or NamedTuple: its fields come from what it was given
            layer_kind = "object"  # a trainer holding `self.netD`: built so its methods can run
        else:
            layer_kind = KINDS.get(torch_base or "", "module")
        layer = Layer(cls.qualname, layer_kind, loc, frame, cls=cls, args=args, kwargs=dict(kwargs),
                      in_loop=frame.loop_depth > 0, conditional=frame.cond_depth > 0, read_once=frame.read_once > 0,
                      base_type=torch_base if torch_base != "Module" else None, branches=frame.branches)
        if cls_value.via:
            layer.via.append(cls_value.via)
        if kind == "sn_mixin":
            layer.sn.append(SNFact(SN_CUSTOM, cls.name, loc, loc))
        elif layer_kind in _WEIGHTED and _normalizes_own_weight(cls):
            layer.weight_norm = "own"
        init = self.find_method(cls, file, "__init__")
        if init is not None and frame.depth < MAX_DEPTH and not frame.runs(init[0].qualname):
            fn, fn_file, owner_cls = init
            sub = Frame(fn_file, f"{cls.name}.__init__", frame, None if root_build else loc,
                        self_value=layer, cls=owner_cls, depth=frame.depth + 1,
                        qualname=fn.qualname, branches=frame.branches, read_once=frame.read_once)
            layer.init_frame = sub
            self.bind_params(fn, [layer, *args], kwargs, sub)
            self.block(fn.body, sub)
        elif init is None and layer_kind == "container" and torch_base is not None:
            # `class Blocks(nn.Sequential): pass` built as `Blocks(conv, act)`: torch's
            # own __init__ holds them.
            _hold(layer, torch_base, args, kwargs)
        self.events.instances.append(layer)
        return layer

    def torch_base(self, cls: F.ClassFacts, file: F.FileFacts, seen: frozenset[str] = frozenset()) -> str | None:
        """The torch.nn type a project class derives from (`Conv2d`, or `Module`)."""
        return self.of_class("torch base", cls, file, seen,
                             lambda: self._torch_base(cls, file, seen))

    def _torch_base(self, cls: F.ClassFacts, file: F.FileFacts, seen: frozenset[str]) -> str | None:
        if cls.qualname in seen:
            return None
        found: str | None = None
        for value in self.base_values(cls, file):
            if isinstance(value, TorchTypeV):
                if value.name != "Module" or found is None:
                    found = value.name
            elif isinstance(value, ClassV):
                sub = self.torch_base(value.cls, value.file, seen | {cls.qualname})
                if sub is not None and (sub != "Module" or found is None):
                    found = sub
            elif not (isinstance(value, NameV) and value.qual.startswith(("builtins.", "typing.", "torch."))):
                # A base from a package we do not see is most likely a module.
                if found is None and cls.method("__init__") is not None:
                    found = "Module"
        return found

    def class_kind(self, cls: F.ClassFacts, file: F.FileFacts) -> str | None:
        """"sn_wrapper" (hand-written SN around a module), "sn_mixin" (an SN layer class),
        "module" (another nn.Module), None (not a module)."""
        torch_base = self.torch_base(cls, file)
        if self.hand_written_sn(cls, file):
            if KINDS.get(torch_base) in ("conv", "conv_transpose", "linear", "embedding"):
                return "sn_mixin"
            init = cls.method("__init__")
            wrapped = init.params[1].name if init and len(init.params) > 1 else None
            if wrapped in ("module", "layer", "m", "mod", "net"):
                return "sn_wrapper"
            return "sn_mixin" if torch_base not in (None, "Module") else "sn_wrapper"
        if torch_base is not None:
            return "module"
        return None

    def hand_written_sn_apply(self, e: F.Call, frame: Frame, loc: Location) -> Value | None:
        """`SpectralNorm.apply(module, name)` of a hand-written SN class (torch's own hook SN
        vendored into a project): SN on the module."""
        func = e.func
        if isinstance(func, F.Attr) and func.attr == "apply" and text_of(func.value):
            owner = self.expr(func.value, frame)  # a name, read again without side effects
        elif isinstance(func, F.Global) and func.qual.endswith(".apply"):
            owner = self.global_value(func.qual.rpartition(".")[0], "", frame)
        else:
            return None
        if not isinstance(owner, ClassV) or self.class_kind(owner.cls, owner.file) != "sn_wrapper":
            return None
        cls = owner.cls
        if cls.name.lower().replace("_", "") not in _SN_NAMES and not cls.method_names & _POWER_ITERATION:
            return None  # `compute_weight` alone is any reparametrization's (`EqualLR.apply`)
        args, kwargs = self.arguments(e, frame)
        target = args[0] if args else kwargs.get("module", UNKNOWN)
        name = args[1] if len(args) > 1 else kwargs.get("name", ConstV("weight"))
        # Named as the project applies it: the function around the call that was handed the
        # module (`spectral_norm(module)`), else the call.
        text = f"{owner.cls.name}.apply"
        if frame.function and frame.cls is None and frame.parent is not None \
                and any(v is target for v in frame.env.values()):
            text = frame.function
        self.apply_sn(SN_CUSTOM, text, target, {"name": (name, None)}, frame, loc,
                      _reshape_along_dim0(owner.cls, owner.file))
        return UNKNOWN

    def hand_written_sn(self, cls: F.ClassFacts, file: F.FileFacts, seen: frozenset[str] = frozenset()) -> bool:
        """A class that implements SN itself: power iteration in its methods, or named so."""
        return self.of_class("hand-written SN", cls, file, seen,
                             lambda: self._hand_written_sn(cls, file, seen))

    def _hand_written_sn(self, cls: F.ClassFacts, file: F.FileFacts, seen: frozenset[str]) -> bool:
        if cls.qualname in seen:
            return False
        if cls.method_names & _SN_METHODS or cls.name.lower().replace("_", "") in _SN_NAMES:
            return True
        return any(self.hand_written_sn(b, f, seen | {cls.qualname})
                   for b, f in self.project_bases(cls, file))

    def registry_lookup(self, e: F.Call, frame: Frame) -> Value | None:
        """`ARCH_REGISTRY.get(key)`, `key` known, with a project class registered under it by
        `@ARCH_REGISTRY.register()`: that class."""
        if len(e.args) != 1 or isinstance(e.func, F.Attr) and e.func.attr != "get":
            return None  # the method as written is the attribute: no need to spell the rest
        registry, _, method = text_of(e.func).rpartition(".")
        if method != "get" or not registry:
            return None
        registry = registry.rpartition(".")[2]
        if self._registries is None:
            self._registries = resolve.registries(self.project_classes())
        if registry not in self._registries:
            return None
        classes = self.project_classes()
        key = self.expr(e.args[0].value, frame)
        where = configvalues.where(Location(frame.file.path, e.span))
        if isinstance(key, ConstV) and isinstance(key.value, str):
            found = resolve.registered(classes, registry, key.value)
            if found is None:
                return None
            source = f" from the {key.origin}" if key.origin else ""
            return ClassV(*found, via=f"registry {registry} key {key.value!r}{source} at {where}")
        # A key from a YAML file or the command line: the discriminator it picks is one of
        # the registry's discriminator classes.
        found_all = [ClassV(c, f) for c, f in resolve.registered_classes(classes, registry)
                     if DISCRIMINATOR_CLASS.search(c.name)]
        if not found_all:
            return None
        found_all = _named_after_the_model(found_all, frame)
        if len(found_all) == 1:
            why = f"the only discriminator class registry {registry} holds {resolve.KEY_NOT_KNOWN}"
            only = ClassV(found_all[0].cls, found_all[0].file, via=f"{why} at {where}")
            return OneOfV((only,), why, role="discriminator")
        why = (f"one of {len(found_all)} discriminator classes registry {registry} holds "
               f"{resolve.KEY_NOT_KNOWN}")
        return OneOfV(tuple(found_all), why, role="discriminator")

    # ------------------------------------------------------------ spectral norm and init

    def call_sn_function(self, callee: SNFuncV, args, kwargs, e, frame, loc, text) -> Value:
        api, text = callee.api, callee.text
        self.events.sn_calls.append(SNCallFact(api, text, loc))
        target = args[0] if args else kwargs.get("module", UNKNOWN)
        # Each option's value, and where the call passes it.
        options: dict[str, tuple[Value, Location | None]] = {
            **{name: (value, None) for name, value in zip(_SN_PARAMETERS, args[1:])},
            **{key: (value, None) for key, value in kwargs.items()}}
        if e is not None:
            written = [a for a in e.args if a.keyword is None and not a.star][1:]
            passed = [*zip(_SN_PARAMETERS, written), *((a.keyword, a) for a in e.args)]
            for name, a in passed:
                if name in options:
                    options[name] = (options[name][0], Location(loc.path, a.span))
        return self.apply_sn(api, text, target, options, frame, loc)

    def apply_sn(self, api: str, text: str, target: Value,
                 options: dict[str, tuple[Value, Location | None]], frame: Frame, loc: Location,
                 reshape: Location | None = None) -> Value:
        name_value = options.get("name", (ConstV("weight"), None))[0]
        dim_value, dim_loc = options.get("dim", (ConstV(None), None))
        name = name_value.value if isinstance(name_value, ConstV) else None
        dim = dim_value.value if isinstance(dim_value, ConstV) and isinstance(dim_value.value, int) else None

        def one(layer: Layer, from_filter: bool) -> None:
            site = loc if from_filter or layer.frame.is_within(frame) else frame.seen_from(layer.frame, loc)
            app = SNFact(api, text, loc, site, name=name, dim=dim, dim_arg=dim_loc,
                         from_filter=from_filter, reshape=reshape)
            self.events.sn.append(SNApplied(app, layer, len(layer.sn)))
            layer.sn.append(app)

        if isinstance(target, Layer):
            one(target, False)
        elif isinstance(target, ModulesV):
            for _, layer in target.members():
                one(layer, True)
        return target

    def extend_container(self, receiver: Layer, value: Value) -> bool:
        """`self.layers += [conv, bn, act]` on a ModuleList (its `extend`), or `+=` of
        another container: the items join it, in order. False where it is no container or
        the items are not known."""
        if receiver.kind != "container":
            return False
        if isinstance(value, (ListV, TupleV)):
            items = list(value.items)
        elif isinstance(value, Layer) and value.kind == "container":
            items = [child for _, child in value.named_children()]
        else:
            return False
        for item in items:
            receiver.set_attr(str(len(receiver.attrs)), item)
        return True

    def init_event(self, target: Value, loc: Location) -> None:
        if not isinstance(target, WeightV):
            return
        owners: list[Layer] = []
        if isinstance(target.owner, Layer):
            owners = [target.owner]
        elif isinstance(target.owner, ModulesV):
            owners = [m for _, m in target.owner.members()]
        for layer in owners:
            self.events.inits.append(InitFact(loc, layer, tuple(layer.sn), target.name))

    # ------------------------------------------------------------ module state

    def kept_in_eval(self, layer: Layer, frame: Frame) -> None:
        """`.eval()` that lasts: in a `train()` override (it runs after every `.train()`),
        or in `__init__` on a frozen part. An `.eval()` in training code is for validation."""
        scope = frame.owner_frame
        if scope is None or scope.function != "train" and not in_init(scope):
            return
        if scope.function == "train" and not _overrides_train(scope.self_value, layer):
            return  # a training loop named `train`, sampling in eval mode
        for target in [layer] + [m for _, m in layer.descendants()]:
            target.kept_in_eval = True
            # Held in eval through every `.train()`, a fixed feature network is as good as
            # frozen; an `.eval()` in `__init__` lasts only until the first `.train()`.
            target.frozen = target.frozen or scope.function == "train"
            self.events.kept_sites.add((target.call.path, target.call.span))

    def frozen(self, layer: Layer, frame: Frame) -> None:
        """`requires_grad_(False)` in an `__init__`: a pretrained part that never trains.
        Training code that toggles it around a generator step does not count."""
        scope = frame.owner_frame
        if scope is None or not in_init(scope):
            return
        for target in [layer] + [m for _, m in layer.descendants()]:
            target.frozen = True

    # ------------------------------------------------------------ calls torch knows

    CALLEES: dict[type, Callable] = {SNFuncV: call_sn_function, TorchTypeV: call_torch_type}

    def weight_norm_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        if args and isinstance(args[0], Layer):
            args[0].weight_norm = weight_norm_api(callee.qual)
            return args[0]
        if args and isinstance(args[0], ModulesV):
            # `for m in self.modules(): if isinstance(m, nn.Conv1d): weight_norm(m)` and
            # `self.apply(fn)`: each layer the filter lets through, as SN there.
            for _, layer in args[0].members():
                layer.weight_norm = weight_norm_api(callee.qual)
            return args[0]
        return None

    def wrapper_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        """`nn.DataParallel(netD)`: the wrapped module is what is called."""
        return args[0] if args and resolve.layers(args[0]) else None

    def init_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        """`nn.init.normal_(m.weight, ...)`."""
        if not args:
            return None
        self.init_event(args[0], loc)
        return UNKNOWN

    NAMED_CALLS: dict[str, Callable] = {
        **dict.fromkeys(WN_FUNCTIONS, weight_norm_call),
        # The module itself, its batch norms made SyncBatchNorm (batch statistics still).
        **dict.fromkeys(("torch.nn.SyncBatchNorm.convert_sync_batchnorm",
                         "torch.nn.modules.batchnorm.SyncBatchNorm.convert_sync_batchnorm"), wrapper_call),
    }
    NAMED_FAMILIES: list[tuple[Callable[[str], bool], Callable]] = [
        (resolve.is_wrapper, wrapper_call),
        (lambda qual: INIT_FUNCTION.match(qual) is not None, init_call),
    ]

    def layer_method(self, receiver: Layer, name: str, e, frame, loc) -> Value | None:
        if name not in _LAYER_METHODS:
            # A method of the project's class (`self.adversarial_loss(D(fake), valid)`): the
            # call evaluates its arguments once, when it calls it.
            return None
        if receiver.kind == "object" and receiver.cls is not None \
                and self.find_method(receiver.cls, self.file_of(receiver.cls) or frame.file, name) is not None:
            return None  # a plain object's own `train()` (`trainer.train()`): no module's mode
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
        if name in _MODULE_WALKS:
            return _modules_walk(receiver, name)
        if name in ("parameters", "named_parameters"):
            return ParametersV(receiver, named=name == "named_parameters")
        if name == "apply" and args:
            self.apply(args[0], [ModulesV(receiver)], {}, e, frame, loc, text_of(e.args[0].value))
            return receiver
        if name == "requires_grad_" and args and self.truth(args[0]) is False:
            self.frozen(receiver, frame)
            return receiver
        # `train(False)` is `eval()`; checked before `train` passes the receiver through.
        if name == "eval" or (name == "train" and args and self.truth(args[0]) is False):
            self.kept_in_eval(receiver, frame)
            _set_mode(receiver, frame, training=False)
            return receiver
        if name == "train":
            _set_mode(receiver, frame, training=True)
        if name in _MOVES or name in ("train", "requires_grad_"):
            return receiver
        return None

    def modules_method(self, receiver: ModulesV, name: str, e, frame, loc) -> Value | None:
        if name == "eval" or name == "train":
            args, _ = self.arguments(e, frame)
            if name == "eval" or (args and self.truth(args[0]) is False):
                for _, layer in receiver.members():
                    self.kept_in_eval(layer, frame)
            return ConstV(None)
        if name in _MODULE_WALKS:
            return _modules_walk(receiver.root, name)
        return None

    def one_of_method(self, receiver: OneOfV, name: str, e, frame, loc) -> Value | None:
        if name in _MOVES or name in ("train", "eval"):
            args, _ = self.arguments(e, frame)
            if name != "eval" and not (name == "train" and args and self.truth(args[0]) is False):
                if name == "train":
                    for option in receiver.options:
                        if isinstance(option, Layer):
                            _set_mode(option, frame, training=True)
                return receiver
            # Which one it is, it is in eval mode now.
            for option in receiver.options:
                if isinstance(option, Layer):
                    _set_mode(option, frame, training=False)
            return receiver
        return None

    def weight_method(self, receiver: WeightV, name: str, e, frame, loc) -> Value | None:
        if name in INPLACE_TENSOR_INIT:
            self.arguments(e, frame)
            self.init_event(receiver, loc)
            return UNKNOWN
        return None

    def class_name_method(self, receiver: ClassOfV, name: str, e, frame, loc) -> Value | None:
        """`classname.find("Conv")` in a weights_init: a test `narrowing` reads."""
        if not (receiver.named and name in ("find", "startswith", "endswith")):
            return None
        args, _ = self.arguments(e, frame)
        if name == "find" and args and isinstance(args[0], ConstV) \
                and isinstance(args[0].value, str):
            return NameFindV(receiver.modules, args[0].value)
        return UNKNOWN

    def param_method(self, receiver: ParamV, name: str, e, frame, loc) -> Value | None:
        """`for p in self.features.parameters(): p.requires_grad_(False)`."""
        args, _ = self.arguments(e, frame)
        if name == "requires_grad_" and args and self.truth(args[0]) is False:
            self.frozen(receiver.root, frame)
        return receiver

    def super_method(self, receiver: SuperV, name: str, e, frame, loc) -> Value | None:
        """`super().train(False)` in a `train()` override, `super().eval()`: nn.Module's own
        mode methods, on the instance itself, unless a project base defines the method.
        `super().__init__(*layers)` of an `nn.Sequential` (`ModuleList`, `ModuleDict`)
        subclass: the layers it is given are its children, as when torch's type is called."""
        if name not in ("train", "eval", "requires_grad_", "__init__"):
            return None
        if any(base.method(name) is not None for base, _ in self.project_bases(receiver.cls, receiver.file)):
            return None
        layer = receiver.self_value
        if name == "__init__":
            if not isinstance(layer, Layer) or layer.kind != "container" or layer.base_type is None:
                return None
            args, kwargs = self.arguments(e, frame)
            _hold(layer, layer.base_type, args, kwargs)
            return ConstV(None)
        return self.layer_method(layer, name, e, frame, loc)

    RECEIVERS: dict[type, Callable] = {
        Layer: layer_method, ModulesV: modules_method, OneOfV: one_of_method, WeightV: weight_method,
        ClassOfV: class_name_method, ParamV: param_method, SuperV: super_method,
    }


_MODULE_WALKS = frozenset({"modules", "named_modules", "children", "named_children"})


def _set_mode(layer: Layer, frame: Frame, *, training: bool) -> None:
    """`layer.train()` / `layer.eval()` run by the code being interpreted: the module and
    every module in it are in that mode for the calls that follow in this entry point."""
    root = frame.root
    ids = {id(layer), *(id(m) for _, m in layer.descendants())}
    root.in_eval = root.in_eval - ids if training else root.in_eval | ids


def _modules_walk(root: Layer, method: str) -> ModulesIterV:
    """What `root.modules()` (or `named_modules`, `children`, `named_children`) goes through."""
    return ModulesIterV(root, named=method.startswith("named"),
                        children_only=method.endswith("children"))


# `spectral_norm`'s parameters after the module, in order.
_SN_PARAMETERS = ("name", "n_power_iterations", "eps", "dim")
_SN_METHODS = frozenset({"_update_u_v", "update_u_v", "power_iteration", "_power_iteration",
                         "l2normalize", "_l2normalize", "compute_weight", "W_", "sn_weight",
                         "_make_params", "sv", "_noupdate_u_v"})
_SN_NAMES = frozenset({"spectralnorm", "sn", "spectralnormalization", "spectralnormwrapper"})
_POWER_ITERATION = _SN_METHODS - {"compute_weight", "W_"}


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


_WEIGHTED = frozenset({"conv", "conv_transpose", "linear"})
# What a call that normalizes a tensor is named: `_normalize`, `F.normalize`, `w.norm`.
_NORMALIZES = re.compile(r"^_*(?:normali[sz]e\w*|l2_?norm\w*|norm)$|_normali[sz]e\w*$", re.I)


def _attribute_bag(cls: F.ClassFacts) -> bool:
    """`class Empty(object): pass`: an instance whose attributes are all set after it is
    built (`cfg.MODULES.d_bn = ops.batchnorm_2d`), so they can be followed as written. A
    class with fields or decorators (a dataclass) gets them from its arguments instead."""
    plain_bases = all(isinstance(b, F.Global) and b.qual == "builtins.object" for b in cls.bases)
    return plain_bases and not cls.body and not cls.decorators


def _normalizes_own_weight(cls: F.ClassFacts) -> bool:
    """A conv/linear class of the project that normalizes its own weight
    (`_normalize(self.weight, dim=[1, 2])`, `self.weight / scale`): a normalization chosen
    instead of SN, as weight_norm is."""
    for _, fn in cls.methods:
        selves = {fn.params[0].name} if fn.params else set()
        for x in fact_nodes(fn.body):
            if isinstance(x, F.Call):
                name = (text_of(x.func) or "").rpartition(".")[2]
                if _NORMALIZES.match(name) and (
                        any(_own_weight(a.value, selves) for a in x.args)
                        or isinstance(x.func, F.Attr) and _own_weight(x.func.value, selves)):
                    return True
            elif isinstance(x, F.BinOp) and x.op == "Divide" and _own_weight(x.left, selves):
                return True
    return False


def _own_weight(e: F.Expr, selves: set[str]) -> bool:
    """`self.weight`, or an attribute of it (`self.weight.data`)."""
    while isinstance(e, F.Attr):
        if e.attr == "weight" and isinstance(e.value, F.Local) and e.value.name in selves:
            return True
        e = e.value
    return False


def _reshape_along_dim0(cls: F.ClassFacts, file: F.FileFacts) -> Location | None:
    """Where a hand-written SN flattens the weight to (shape[0], -1): `w.view(height, -1)`
    with `height = w.data.shape[0]` (or `w.size(0)`). Right for conv and linear; for a
    ConvTranspose, whose output axis is 1, it normalizes the wrong matrix (SN105)."""
    for _, fn in cls.methods:
        dim0: set[str] = set()
        for stmt in F.statements(fn.body, functions=False):
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


def _hold(layer: Layer, torch_type: str, args, kwargs) -> None:
    """The children a container of `torch_type` holds when built with these arguments."""
    items: list[tuple[str, Value]] = []
    if torch_type == "ModuleDict" and args and isinstance(args[0], (ListV, TupleV)):
        # `nn.ModuleDict([[name, module], ...])`: key/module pairs; a key not known
        # here stands for any of them.
        for i, pair in enumerate(args[0].items):
            if isinstance(pair, (ListV, TupleV)) and len(pair.items) == 2:
                key, value = pair.items
                known = isinstance(key, ConstV) and isinstance(key.value, str)
                items.append((key.value if known else f"*{i}", value))
    elif torch_type == "ModuleDict" or (args and isinstance(args[0], DictV)):
        source = args[0] if args and isinstance(args[0], DictV) else DictV(dict(kwargs))
        items = [(str(k), v) for k, v in source.items.items()]
    elif torch_type == "ModuleList":
        if args and isinstance(args[0], (ListV, TupleV)):
            items = [(str(i), v) for i, v in enumerate(args[0].items)]
    else:
        items = [(str(i), v) for i, v in enumerate(args)]
    for key, value in items:
        layer.set_attr(key, value)
