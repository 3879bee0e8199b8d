"""What GAN training code does with modules and tensors: which module a forward call runs
and on what (real data, generated samples, a mix), where each tensor came from
(`provenance`), gradient penalties, `F.batch_norm` calls, reductions over the batch,
in-place copies into buffers, and the optimizer steps that end one update.
"""

from __future__ import annotations

import re
from typing import Callable

from snlint import facts as F
from snlint.findings import Location
from snlint.link import resolve
from snlint.link.events import (
    D_NAME, DATA_SOURCE, DISCRIMINATOR_CLASS, FAKE_NAME, G_NAME, GENERATOR_CLASS, REAL_NAME, Events,
)
from snlint.link.model import BatchFact, ForwardFact, PenaltyFact
from snlint.link.provenance import Channels, Data, Named, Output
from snlint.link.syntax import calls_in, last_attr, names_in, text_of
from snlint.link.values import (
    UNKNOWN, ConstV, Frame, FuncV, Layer, ListV, ModulesIterV, NameV, OneOfV, TensorV, TupleV,
    UnknownV, Value, running_module, tensor_join, tensors,
)


# The word that names real samples (`real`, `real_data`, `x_real`); `x`, `data`, `batch`
# say less, and are read only at the call that scores them.
_REAL_WORD = re.compile(r"real", re.I)


class TrainingSemantics:
    events: Events
    _scorers: dict[str, bool]  # class qualname -> whether its forward calls the discriminator
    _forwards_by_root: dict[int, list[ForwardFact]]  # id() of a root frame -> its forward calls
    _forwards_indexed: int  # how many of events.forwards that index holds
    _players: dict[str, str | None]  # an unknown callee as written -> the player its call runs

    # ------------------------------------------------------------ what the evaluator asks

    def loader_batch(self, iterable: Value, source: F.Expr, line: int, path: str) -> TensorV | None:
        """What a `for` loop over batches of a data loader gets: real data. None when the
        loop is over something else. `source`: what the loop goes through, as written."""
        if isinstance(iterable, TensorV) and iterable.tags:
            return TensorV(iterable.tags, (), iterable.origins)
        if isinstance(iterable, (ListV, TupleV, ModulesIterV)):
            return None
        name = _data_source(source)
        if name is None and not isinstance(iterable, TensorV):
            return None
        return _batch_of(name or "the data loader", path, line)

    def bound(self, target: F.Expr, value: Value) -> Value:
        """The value an assignment binds to `target`, and what the binding tells: a layer
        remembers the names it is bound to (`netD`, `self.D`: which player it is)."""
        if isinstance(value, OneOfV) and value.role == "discriminator" or \
                isinstance(value, Layer) and resolve.KEY_NOT_KNOWN in " ".join(value.via):
            # A registry's discriminators, for a key not known here: only a discriminator's
            # binding (`self.net_d`, or a plain local that passes it on) is one of them.
            name = text_of(target)
            if isinstance(target, F.Attr) and not D_NAME.search(name) or G_NAME.search(name):
                value = UNKNOWN
        for layer in resolve.layers(value):
            name = text_of(target)
            if name and name not in layer.bound_names:
                layer.bound_names.append(name)
        return value

    def unpassed_parameter(self, name: str) -> Value:
        """A parameter nobody passed: training helpers name their tensors for what they hold."""
        if FAKE_NAME.search(name):
            return TensorV(frozenset({"fake"}), (), frozenset({Named("fake", name)}))
        if REAL_NAME.search(name) and not D_NAME.search(name) and not G_NAME.search(name):
            return TensorV(frozenset({"real"}), (), frozenset({Named("real", name)}))
        return UnknownV(f"parameter {name}")

    def named_variable(self, name: str, value: Value, frame: Frame) -> Value:
        """What a variable named for real samples holds when nothing here follows its value
        (`real_data = torch.from_numpy(train_X[i * bs:(i + 1) * bs])`): real samples by its
        name. Only the word itself (`real`, `x_real`), not `x` or `data`, and not inside a
        `forward`."""
        if frame.function == "forward" or not _REAL_WORD.search(name) or FAKE_NAME.search(name) \
                or D_NAME.search(name) or G_NAME.search(name) or DATA_SOURCE.search(name):
            return value  # `real_loader` holds batches, not one
        if isinstance(value, UnknownV) or (isinstance(value, TensorV) and not value.tags and not value.origins):
            return TensorV(frozenset({"real"}), (), frozenset({Named("real", name, parameter=False)}))
        return value

    # ------------------------------------------------------------ forward calls

    def forward_call(self, module: Layer | None, args: list[Value], kwargs: dict[str, Value],
                     e: F.Call | None, frame: Frame, loc: Location, text: str) -> Value:
        """A module called (`module` None: a player the evaluator cannot follow)."""
        sample = _keyword_sample(module, kwargs) if not args and kwargs else None
        if sample is not None:
            # `self.D(**batch, img=img)`: the sample passed by the name of forward's first parameter.
            args = [kwargs[sample]]
        first = args[0] if args else UNKNOWN
        if isinstance(first, (ListV, TupleV)) and tensors(first):
            first = tensor_join(tensors(first))  # a multi-scale input: `[img, img_small]`
        if sample is not None and e is not None:
            first_expr = next((a.value for a in e.args if a.keyword == sample), None)
        else:
            first_expr = e.args[0].value if e is not None and e.args else None
        kind = _input_kind(first, first_expr)
        root = frame.root
        # The update key holds id(root): keep the root alive so no later frame reuses its id.
        self.events.update_roots.append(root)
        # One update: one loop body of one entry point, up to the next optimizer step (a
        # discriminator step and the generator step after it score apart by design).
        update = (id(root), tuple(root.loops), root.optimizer_steps)
        if frame.grad_free:
            # Under `torch.no_grad()` nothing trains (an encoder inverting real and generated
            # images, features for a metric): a call there is an update of its own.
            update = (id(root), "no_grad", len(self.events.forwards))
        call = ForwardFact(module, text, loc, kind, update,
                           frame.function or root.function or root.name, len(self.events.forwards), loc,
                           (loc, *frame.call_sites()),
                           origins=first.origins if isinstance(first, TensorV) else frozenset(),
                           names=tuple(names_in(first_expr)),
                           arguments=_argument_origins(first, args), branches=frame.branches,
                           detached=first_expr is not None and _detached(first_expr),
                           eval_mode=module is not None and id(module) in root.in_eval,
                           fed_by=first.outputs if isinstance(first, TensorV) else ())
        self.events.forwards.append(call)
        is_generator = G_NAME.search(text or "") is not None or _named_generator(module)
        out = tensor_join(args) if args else TensorV()
        is_discriminator = D_NAME.search(text or "") is not None or _discriminator_class(module)
        if module is not None and module.cls is None and not is_generator:
            origins = out.origins  # a torch layer only transforms what it is given
        else:
            origins = frozenset({Output(module, text, loc.span.line, out.origins,
                                        "generator" if is_generator else
                                        "discriminator" if is_discriminator else "", loc.path)})
        if self.scores_with_discriminator(module) or _given_a_module(module, args, kwargs):
            self.run_forward(module, args, frame, loc)  # type: ignore[arg-type]
        # The output names this very call, not its line: a helper run on the real batch, then
        # on the generated one, returns a different output each run, and a gradient penalty
        # on the first run's is that run's (`forward_of`).
        if is_generator:
            return TensorV(frozenset({"fake"}), ((module, call),) if module is not None else (), origins)
        return TensorV(out.tags if not is_discriminator else frozenset(),
                       ((module if module is not None else "?", call),), origins)

    def method_returned(self, module: Layer, result: Value, frame: Frame, loc: Location, text: str) -> Value:
        """What a method of a project module other than `forward` returned to code outside
        that module: a generator's (`G.sample(n)`, `netG.generate(z)`, named so by its
        receiver, class or binding) is generated, as its forward's output is, whatever
        layers it ran on the way."""
        receiver = text.rpartition(".")[0] if text else ""
        if not isinstance(result, TensorV) or any(f.self_value is module for f in frame.lineage()) \
                or not (G_NAME.search(receiver) or _named_generator(module)) or D_NAME.search(receiver):
            return result
        origins = frozenset({Output(module, text, loc.span.line, result.origins, "generator", loc.path)})
        return TensorV(frozenset({"fake"}), result.outputs, origins)

    def scores_with_discriminator(self, module: Layer | None) -> bool:
        """A loss module holding the discriminator (`self.discriminator(inputs)` in its
        forward), or taking a gradient of what it is given (a gradient penalty module): its
        forward runs with what its caller passes."""
        if module is None or module.cls is None:
            return False
        key = module.cls.qualname
        if key not in self._scorers:
            self._scorers[key] = _discriminator_calls(module.cls) > 0 or _takes_gradient(module.cls)
        return self._scorers[key]

    def run_forward(self, module: Layer, args: list[Value], frame: Frame, loc: Location) -> None:
        cls = module.cls
        file = self.file_of(cls) if cls is not None else None
        found = self.find_method(cls, file, "forward") if cls is not None and file is not None else None
        if found is None or frame.runs(found[0].qualname):
            return
        self.invoke(FuncV(found[0], found[1], bound=module, cls=found[2]), list(args), {}, frame, loc)

    def grad_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        """`torch.autograd.grad(..., create_graph=True)`: a gradient penalty."""
        create_graph = kwargs.get("create_graph")
        if create_graph is None or self.truth(create_graph) is False:
            return UNKNOWN
        outputs = kwargs.get("outputs", args[0] if args else UNKNOWN)
        inputs = kwargs.get("inputs", args[1] if len(args) > 1 else UNKNOWN)
        # Differentiated with respect to what a module returned (an equivariance Jacobian of
        # a keypoint detector's output): no gradient flows through that module's input.
        upstream = {_output_key(m, w) for t in tensors(inputs) for m, w in t.outputs}
        for tensor in tensors(outputs):
            for module, where in tensor.outputs:
                if _output_key(module, where) in upstream:
                    continue
                forward = self.forward_of(module, where)
                if forward is not None:
                    self.events.penalties.append(PenaltyFact(forward, loc))
                    for trunk in _trunks(forward, upstream):
                        self.events.penalties.append(PenaltyFact(trunk, loc))
        return UNKNOWN

    def scored_into(self, stmt: F.Assign, scored: F.Call, calls: list) -> None:
        """`A_dis_real, A_feats_real = self.discriminator_A(A)`, `logits_real = D(x)[-1]`:
        where neither the data flow nor its input's name says what the call scores, the
        names its score is given do."""
        names = [n for t in stmt.targets for n in _target_names(t)]
        sides = {"real" if "real" in n.lower() else "fake" for n in names
                 if ("real" in n.lower()) != ("fake" in n.lower())}
        if len(sides) != 1:
            return
        side = sides.pop()
        for call in calls:
            # Not where the module is itself one of several a key may pick: two guesses
            # make no finding.
            if call.node is not None and call.node.span == scored.span and call.kind == "unknown" \
                    and call.function != "forward" and (call.module is None or not call.module.picked_among):
                call.kind = side
                call.scored_into = next(n for n in names if side in n.lower())

    def wrapped_loader(self, e: F.Expr, value: Value, path: str) -> Value:
        """`progress_bar = tqdm(enumerate(train_loader))`: a data loader's batches kept in a
        variable, which a later `for step, batch in progress_bar` goes through: real data."""
        if not isinstance(value, UnknownV) or not _wraps_batches(e):
            return value
        inner = e
        while _wraps_batches(inner):  # the loader itself, not `tqdm(range(len(dataset)))`
            inner = inner.args[0].value  # type: ignore[union-attr]
        source = _data_source(inner) if isinstance(inner, (F.Local, F.Global, F.Attr)) else None
        if source is None:
            return value
        return _batch_of(source, path, e.span.line)

    def forward_of(self, module, where) -> ForwardFact | None:
        """The forward call a tensor's output entry (`TensorV.outputs`) came from: one call
        may score one of several candidates, and each has its forward."""
        if isinstance(where, ForwardFact):
            return where
        return next((f for f in reversed(self.events.forwards)
                     if f.node == where and f.module is module), None)

    def backward(self, loss: TensorV, root: Frame) -> None:
        """`loss.backward()`: the forward calls it differentiates are one update's, whatever
        optimizer step came between them. They are the module calls whose outputs the loss
        holds, through losses and reductions, in the entry point's run (`root`)."""
        outputs: dict[tuple, None] = {}
        stack, seen = list(loss.origins), set()
        while stack:
            origin = stack.pop()
            if id(origin) in seen:
                continue
            seen.add(id(origin))
            if isinstance(origin, (frozenset, tuple)):
                stack.extend(origin)
                continue
            stack.extend(getattr(origin, "inner", ()) or getattr(origin, "parts", ()) or ())
            if isinstance(origin, Output) and isinstance(origin.module, Layer) and origin.module.cls is not None:
                outputs[(id(origin.module), origin.path, origin.line)] = None
        # Each output's own call: the latest of this entry point's run.
        latest: dict[tuple, ForwardFact] = {}
        for f in reversed(self.forwards_of_root(root)):
            key = (id(f.module), f.call.path, f.call.span.line)
            if f.module is not None and key in outputs and key not in latest:
                latest[key] = f
        found = tuple(sorted(latest.values(), key=lambda f: f.order))
        if len(found) > 1:
            self.events.backwards.append(found)

    def forwards_of_root(self, root: Frame) -> list[ForwardFact]:
        """The forward calls made so far in `root`'s run, in order, indexed as they come."""
        forwards, by_root = self.events.forwards, self._forwards_by_root
        for f in forwards[self._forwards_indexed:]:
            by_root.setdefault(f.update[0], []).append(f)
        self._forwards_indexed = len(forwards)
        return by_root.get(id(root), [])

    def batch_reduction(self, what: str, frame: Frame, loc: Location) -> None:
        scope = frame.owner_frame
        owner = scope.self_value if scope is not None else None
        self.events.batch_reductions.append(BatchFact(owner, loc, what))

    def inplace_copy(self, e: F.Call, frame: Frame) -> Value | None:
        """`input.resize_as_(real).copy_(real)`, `x.data.copy_(fake)`: the buffer now holds
        what was copied into it."""
        if not e.args or last_attr(e.func) not in _COPIES_INTO:
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
        while isinstance(target, F.Global) and target.qual.endswith(".data"):
            target = F.Global(target.qual[:-len(".data")])  # a module-level `target.data.copy_`
        if isinstance(target, F.Global):
            local = self.module_local(target, frame)
            running = running_module(frame)
            if local is not None and not local[1] and running is not None:
                running.env[target.qual.rpartition(".")[2]] = source
            return source
        if isinstance(target, (F.Local, F.Attr)):
            self.assign(target, source, frame)
        return source

    # ------------------------------------------------------------ calls training code makes

    def call_unknown(self, callee: UnknownV, args, kwargs, e, frame, loc, text) -> Value:
        """A player the evaluator cannot follow (`netD` a parameter nobody passed), called."""
        if text not in self._players:
            # Read once per spelling: most calls of unknown callees are not of players.
            self._players[text] = _player(text)
        player = self._players[text]
        if player is None:
            return UNKNOWN
        return self.forward_call(None, args, kwargs, e, frame, loc, player)

    CALLEES: dict[type, Callable] = {Layer: forward_call, UnknownV: call_unknown}

    def batch_norm_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        training = kwargs.get("training", args[5] if len(args) > 5 else None)
        per_sample = bool(args) and isinstance(args[0], TensorV) and _PER_SAMPLE in args[0].tags
        if training is not None and not (isinstance(training, ConstV) and not training.value) \
                and not per_sample:
            self.events.batch_norm_calls.append(BatchFact(frame.self_value, loc))
        return tensor_join(args)

    def next_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        if args and isinstance(args[0], TensorV) and args[0].origins:
            return args[0]
        return TensorV(frozenset({"real"}), (), frozenset({Data("next() at {at}", loc.path, loc.span.line)}))

    def fetched(self, text: str, result: Value, loc: Location) -> Value:
        """`dataloader.get_batch()`, `self.train_loader.next_batch()`: a batch of the data
        source, whatever the project's loader class makes of it."""
        if not text.endswith(_BATCH_GETTER_ENDS):  # most calls: no regular expression run
            return result
        match = _BATCH_GETTER.search(text)
        if match is None or isinstance(result, TensorV) and result.origins:
            return result
        return _batch_of(match.group(1), loc.path, loc.span.line)

    def iter_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        source = _data_source(e.args[0].value) if e is not None and e.args else None
        return None if source is None else _batch_of(source, loc.path, loc.span.line)

    def cat_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        return _concatenation(args, kwargs, loc) if args else None

    def reduction_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        """`torch.std(x, 0)`: noted when over the batch; the result is the default's."""
        if args and tensors(args[0]) and _over_batch(args[1] if len(args) > 1 else kwargs.get("dim")):
            self.batch_reduction(f"torch.{callee.qual.rsplit('.', 1)[-1]}(dim=0)", frame, loc)
        return None

    def data_parallel_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        """`nn.parallel.data_parallel(netD, inputs, gpus)` runs `netD(*inputs)` on each
        device: a call of the module on its inputs, as written in the second argument."""
        module = args[0] if args else kwargs.get("module")
        inputs = args[1] if len(args) > 1 else kwargs.get("inputs")
        if module is None or inputs is None or e is None or len(e.positional()) < 2:
            return None
        written = e.positional()[1].value
        items = list(inputs.items) if isinstance(inputs, TupleV) else [inputs]
        written_items = written.items if isinstance(written, F.ListE) and written.kind == "tuple" else (written,)
        shown = F.Call(e.positional()[0].value, tuple(F.Arg(i) for i in written_items), span=e.span)
        return self.apply(module, items, {}, shown, frame, loc, text_of(shown.func))

    def amp_initialize_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        return _handed_back(args)

    NAMED_CALLS: dict[str, Callable] = {
        "torch.nn.parallel.data_parallel": data_parallel_call,
        "torch.nn.parallel.data_parallel.data_parallel": data_parallel_call,
        "torch.autograd.grad": grad_call, "torch.nn.functional.batch_norm": batch_norm_call,
        "builtins.next": next_call, "builtins.iter": iter_call, "torch.cat": cat_call,
        "apex.amp.initialize": amp_initialize_call,
    }
    def fresh_call(self, callee: NameV, args, kwargs, e, frame, loc) -> Value | None:
        """`torch.randn(real.size(0), nz)`, `torch.zeros_like(real)`: new values, of a size
        or type read from a tensor: none of its samples. A constant (`torch.ones_like(x)`) is
        no samples at all, whatever it is named (`F_real`)."""
        return TensorV(frozenset({_CONSTANT_TAG})) if callee.qual.rsplit(".", 1)[-1] in _CONSTANTS else TensorV()

    NAMED_FAMILIES: list[tuple[Callable[[str], bool], Callable]] = [
        (lambda qual: qual.startswith("torch.") and qual.rsplit(".", 1)[-1] in _REDUCTIONS, reduction_call),
        (lambda qual: qual.startswith("torch.") and qual.rsplit(".", 1)[-1] in _FRESH, fresh_call),
    ]

    def tensor_method(self, receiver: TensorV, name: str, e, frame, loc) -> Value | None:
        if name == "step":
            # No tensor has one: an optimizer over a model read as a tensor's source
            # (`Adam(G.parameters())`, G a parameter of the trainer) is still stepped.
            return self.optimizer_method(receiver, name, e, frame, loc)
        args, kwargs = self.arguments(e, frame)
        if name == "backward":
            self.backward(receiver, frame.root)
        if name in _FRESH_METHODS:
            # `real.new_zeros(n)`: a new tensor of the receiver's type, a constant.
            return TensorV(frozenset({_CONSTANT_TAG}))
        if name in _SHAPED_LIKE:
            return receiver  # `z.type_as(real)`: z, with real's type (or shape)
        if name in _SIZES:
            return UNKNOWN  # `real.size(0)`: a number, none of the samples
        if name in _REDUCTIONS and _over_batch(args[0] if args else kwargs.get("dim")):
            self.batch_reduction(f".{name}(dim=0)", frame, loc)
        if name in ("view", "reshape") and args and isinstance(args[0], ConstV) and args[0].value == 1:
            # `x.view(1, b * c, h, w)`: a batch of one whose channels are the samples'
            # channels (AdaIN through `F.batch_norm`): statistics per sample.
            return TensorV(receiver.tags | {_PER_SAMPLE}, receiver.outputs, receiver.origins)
        if name in _RESHAPES:
            return receiver  # `fake.view(real.size(0), -1)`: the arguments are sizes and dims
        return tensor_join([receiver, *args, *kwargs.values()])

    def optimizer_method(self, receiver: Value, name: str, e, frame, loc) -> Value | None:
        if name == "step":
            # `optimizer_d.step()`, `scaler.step(opt)`: the update so far is over.
            root = frame.root
            root.optimizer_steps += 1
            root.stepped.append(_stepped(e) if frame is root else None)
        if name in _SETUP_METHODS:
            return _handed_back(self.arguments(e, frame)[0])
        return None

    RECEIVERS: dict[type, Callable] = {TensorV: tensor_method, UnknownV: optimizer_method, NameV: optimizer_method}


def _stepped(e) -> str | None:
    """The optimizer a `.step()` call steps, as written: `optD` in `optD.step()` and in
    `scaler.step(optD)`."""
    if not isinstance(e, F.Call):
        return None
    if e.args and not e.args[0].star and e.args[0].keyword is None:
        return text_of(e.args[0].value) or None
    if isinstance(e.func, F.Attr):
        return text_of(e.func.value) or None
    if isinstance(e.func, F.Global) and "." in e.func.qual:
        return e.func.qual.rpartition(".")[0]  # `optD.step` of a module-level optimizer
    return None


def split_steps(events: Events) -> None:
    """Join the updates of consecutive steps of one optimizer into one update: a step on
    the real batch and another on the generated one normalize each batch with its own
    statistics, as two calls before one step do."""
    roots = {id(root): root for root in events.update_roots}
    for call in events.forwards:
        frame, loops, segment = call.update
        root = roots.get(frame)
        if root is None or not isinstance(loops, tuple):
            continue  # under no_grad: an update of its own
        ops = root.stepped
        first = segment
        while 0 < first < len(ops) and ops[first] is not None and ops[first - 1] == ops[first]:
            first -= 1
        if first != segment:
            call.update = (frame, loops, first)


# Methods of a distributed or mixed-precision framework that hand back the models given
# to them (Accelerate, Lightning Fabric, apex.amp).
_SETUP_METHODS = frozenset({"prepare", "prepare_model", "setup", "setup_module", "initialize"})


def _handed_back(args: list[Value]) -> Value:
    """`netD, optD, loader = accelerator.prepare(netD, optD, loader)`, Fabric's `setup`,
    apex's `amp.initialize([netD, netG], [optD, optG])`: what goes in comes back, wrapped
    for devices and precision, in the same order."""
    if not any(resolve.layers(a) or isinstance(a, (ListV, TupleV)) and any(map(resolve.layers, a.items))
               for a in args):
        return UNKNOWN
    return args[0] if len(args) == 1 else TupleV(tuple(args))


# A method that hands out the next batch of a data source (`dataloader.get_batch()`).
_BATCH_GETTER = re.compile(r"(?:^|\.)(\w*(?:loader|dataset|data_iter|dataiter|batches)\w*)\."
                           r"(?:get_batch|next_batch|get_next_batch|sample_batch|get_next)$", re.I)

_BATCH_GETTER_ENDS = ("batch", "get_next")
# Calls that hand a data loader's batches on, one by one: `tqdm(enumerate(loader))`.
_LOADER_WRAPPERS = frozenset({"tqdm", "enumerate", "iter", "zip", "track"})


def _data_source(e: F.Expr | None) -> str | None:
    """The first name `e` mentions that names a data source (`train_loader`)."""
    return next((n for n in names_in(e) if DATA_SOURCE.search(n)), None)


def _batch_of(source: str, path: str, line: int) -> TensorV:
    """Real samples: a batch of the data source named `source`, taken at `path`:`line`."""
    return TensorV(frozenset({"real"}), (), frozenset({Data(f"a batch of `{source}` ({{at}})", path, line)}))


def _wraps_batches(e: F.Expr) -> bool:
    """`tqdm(x)`, `enumerate(x)`, ...: a call that hands on what its first argument yields."""
    return isinstance(e, F.Call) and bool(e.args) and e.args[0].keyword is None \
        and (last_attr(e.func) or text_of(e.func)) in _LOADER_WRAPPERS

# A tensor reshaped to a batch of one (`x.view(1, b * c, h, w)`).
_PER_SAMPLE = "per-sample"

# In-place tensor methods that make the receiver hold their argument's data, and the ones
# that only reshape it first (`input.resize_as_(real).copy_(real)`).
_COPIES_INTO = frozenset({"copy_", "set_"})
_RESHAPES_IN_PLACE = frozenset({"resize_as_", "resize_"})

# Functions and methods that make new values (noise, constants): a tensor among their
# arguments gives only a size, a type or a device.
_FRESH = frozenset({"randn", "rand", "randint", "randperm", "normal", "randn_like", "rand_like",
                    "randint_like", "zeros", "ones", "empty", "full", "zeros_like", "ones_like",
                    "empty_like", "full_like", "arange", "linspace", "eye"})
_FRESH_METHODS = frozenset({"new_zeros", "new_ones", "new_empty", "new_full"})
# Of them, the constants: labels and targets, never samples of either side.
_CONSTANTS = frozenset({"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like",
                        "full_like", "arange", "linspace", "eye"})
_CONSTANT_TAG = "constant"
_SHAPED_LIKE = frozenset({"type_as", "expand_as", "view_as", "reshape_as"})
# What a tensor's size says: numbers, not samples.
_SIZES = frozenset({"size", "dim", "ndimension", "numel", "nelement", "element_size", "stride"})
# Methods whose arguments are sizes, dims or indices: what they return holds the receiver's
# samples and nothing of the tensors the sizes were read from.
_RESHAPES = frozenset({"view", "reshape", "expand", "repeat", "permute", "transpose", "flatten",
                       "unflatten", "unsqueeze", "squeeze", "narrow", "movedim", "flip", "roll"})
_REDUCTIONS = frozenset({"std", "var", "mean", "sum", "max", "min", "amax", "amin", "logsumexp",
                         "prod", "norm", "std_mean", "var_mean", "median"})


def _over_batch(dim: Value | None) -> bool:
    """A reduction's `dim` that includes the batch axis (0)."""
    if isinstance(dim, ConstV):
        return dim.value == 0 or (isinstance(dim.value, tuple) and 0 in dim.value)
    if isinstance(dim, (ListV, TupleV)):
        return any(isinstance(i, ConstV) and i.value == 0 for i in dim.items)
    return False


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
                       frozenset({Channels(tuple(p.origins for p in parts), loc.span.line, loc.path)}))
    return joined


def _argument_origins(first: Value, args: list[Value]) -> tuple[frozenset, ...]:
    """Where each positional argument came from, when more than one is a tensor."""
    if not isinstance(first, TensorV) or not any(isinstance(a, TensorV) for a in args[1:]):
        return ()
    return (first.origins, *(a.origins if isinstance(a, TensorV) else frozenset() for a in args[1:]))


def _player(text: str) -> str | None:
    """The player a call of an unknown callee spelled `text` runs, as written: the callee
    itself (`netD`), or the generator whose sub-network it is; None for anything else."""
    if text and text.endswith(".forward"):
        # `netD.forward(x)` runs what `netD(x)` runs, hooks aside: old code writes it so.
        text = text[: -len(".forward")]
    if text and (D_NAME.search(text) or G_NAME.search(text)):
        return text
    receiver = text.rpartition(".")[0] if text else ""
    if receiver and G_NAME.search(receiver) and not D_NAME.search(receiver):
        # `self.G.synthesis(ws)`, `G.mapping(z)`: a generator's sub-network, run by its
        # owner's training code; what it returns is generated.
        return receiver
    return None


def _target_names(target: F.Expr) -> list[str]:
    if isinstance(target, F.ListE):
        return [n for item in target.items for n in _target_names(item)]
    name = text_of(target)
    return [name.rpartition(".")[2]] if name else []


def _detached(expr: F.Expr) -> bool:
    """Whether the expression detaches what it passes on: `fake.detach()`,
    `[x.detach() for x in pyramid]`, `G(z).detach()`."""
    stack: list = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, F.Call) and last_attr(e.func) == "detach":
            return True
        if isinstance(e, F.Call):
            stack.extend(a.value for a in e.args)
            stack.append(e.func)
        elif isinstance(e, (F.Attr, F.Starred, F.Not, F.Subscript)):
            stack.append(e.value)
        elif isinstance(e, F.ListE):
            stack.extend(e.items)
        elif isinstance(e, F.Comprehension):
            stack.append(e.elt)
    return False


def _input_kind(value: Value, expr: F.Expr | None) -> str:
    tags: frozenset[str] = value.tags if isinstance(value, TensorV) else frozenset()
    if tags == {_CONSTANT_TAG}:
        return "constant"  # neither side, whatever its name says
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


# What a model's input is called when its forward is not known (a player nobody built here).
_SAMPLE_KEYWORDS = ("img", "imgs", "image", "images", "x", "input", "inputs", "sample", "samples")


def _keyword_sample(module: Layer | None, kwargs: dict[str, Value]) -> str | None:
    """The keyword a call passes its sample by, when it passes none by position: the
    name of the first parameter of the module's forward, else a name inputs go by."""
    forward = module.cls.method("forward") if module is not None and module.cls is not None else None
    if forward is not None:
        params = [p for p in forward.params[1:] if p.kind in ("pos", "posonly", "kwonly")]
        return params[0].name if params and params[0].name in kwargs else None
    return next((k for k in _SAMPLE_KEYWORDS if k in kwargs), None)


def _named_generator(module: Layer | None) -> bool:
    """Whether a module's class or a name it was bound to says it is a generator."""
    return module is not None and (GENERATOR_CLASS.search(module.short_type) is not None
                                   or any(G_NAME.search(n) for n in module.bound_names))


def _discriminator_class(module: Layer | None) -> bool:
    """Whether a module's class says it is a discriminator, whatever it is bound to: a
    `Discriminator` trunk kept as `trunk`, whose features a head scores (InfoGAN's split)."""
    return module is not None and module.cls is not None \
        and DISCRIMINATOR_CLASS.search(module.short_type) is not None \
        and GENERATOR_CLASS.search(module.short_type) is None


def _trunks(head: ForwardFact, upstream: set) -> list[ForwardFact]:
    """The discriminator calls whose features `head` scores (DF-GAN's `netC(netD(imgs), s)`,
    StackGAN's `netD.get_cond_logits(netD(x), c)`), up to the penalty's inputs: a gradient
    of the head's score with respect to the images goes through them too. Only calls
    written as a discriminator's (`netD`): a condition's encoder is no part of it."""
    found: list[ForwardFact] = []
    stack = list(head.fed_by)
    while stack and len(found) < 8:
        module, where = stack.pop()
        if not isinstance(where, ForwardFact) or _output_key(module, where) in upstream \
                or where in found or not D_NAME.search(where.callee or ""):
            continue
        found.append(where)
        stack.extend(where.fed_by)
    return found


def _output_key(module, where) -> tuple:
    """A hashable key for one entry of `TensorV.outputs`: the module (or "?") and the call
    that returned the tensor (a Location, or the unresolved ForwardFact itself)."""
    return id(module), where if isinstance(where, Location) else id(where)


def _given_a_module(module: Layer | None, args: list[Value], kwargs: dict[str, Value]) -> bool:
    """A project module called with another project module among its arguments (a loss
    module given the discriminator, `criterion(netD, real, fake)`): its forward runs that
    module on what it is given, as a function given it would."""
    if module is None or module.cls is None or module.kind != "module":
        return False
    return any(layer.kind == "module" for value in (*args, *kwargs.values())
               for layer in resolve.layers(value))


def _forward_calls(cls: F.ClassFacts) -> list[F.Call]:
    fn = cls.method("forward")
    return [] if fn is None else [c for stmt in F.statements(fn.body, functions=False) for c in calls_in(stmt)]


def _discriminator_calls(cls: F.ClassFacts) -> int:
    """How many times the class's forward calls a discriminator it holds (`self.D(x)`)."""
    return sum(1 for c in _forward_calls(cls)
               if D_NAME.search(text_of(c.func)) and text_of(c.func).startswith("self."))


def _takes_gradient(cls: F.ClassFacts) -> bool:
    """Whether the class's forward calls `torch.autograd.grad`."""
    return any(isinstance(c.func, F.Global) and c.func.qual == "torch.autograd.grad"
               for c in _forward_calls(cls))


def scores_real_and_generated(cls: F.ClassFacts) -> bool:
    """Whether the class's forward runs the discriminator it holds more than once: a loss
    wrapper scoring real and generated samples, not a discriminator built around a head
    (which calls its `self.discriminator` once, on its own features)."""
    return _discriminator_calls(cls) > 1
