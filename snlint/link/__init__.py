"""The link step: join per-file facts into one project and interpret them.

`link(files, config)` resolves names across files, runs every module body, helper and
module class through the interpreter, and decides which classes are discriminators. The
`LinkedProject` it returns holds the records the interpreter emitted (`snlint.link.model`)
beside its own values; the graph pass reads it (which classes to build, with which
arguments) and `snlint.link.join` adds what it built. Then `snlint.link.seal` numbers the
layers, works out the trees the rules walk and makes the records read-only: the model the
checks read. They never see a syntax tree, nor the interpreter's values.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import field
from pathlib import Path
from types import MappingProxyType
from typing import Callable, Iterator, Mapping

from snlint import facts as F
from snlint.facts import ClassFacts, FileFacts
from snlint.findings import DiscriminatorRef, Location, Span
from snlint.link.events import G_NAME, GENERATOR_CLASS
from snlint.link.index import ProjectIndex
from snlint.link.named_classes import first_places, given_names, named_near, named_one
from snlint.link import provenance
from snlint.link.training_semantics import scores_real_and_generated, split_steps
from snlint.link.interpret import D_NAME, FAKE_NAME, REAL_NAME, BudgetExceeded, Events, Interpreter
from snlint.link.syntax import calls_in, mentions, walk
from snlint.link.model import DiscriminatorFact, ForwardFact, Layer
from snlint.records import dataclass
from snlint.torchapi import NEEDS_SN

_NAME = re.compile(r"(discriminator|critic)", re.I)
_EXACT = re.compile(r"^(NetD|netD|_netD|D_\w+|D\d*)$")
_BOUND = D_NAME
# What a name bound to a module says it is for, not what it is: `self.D_lossfn` holds the
# discriminator's loss (a GANLoss), `self.D_criterion` its criterion.
_FOR_D = re.compile(r"loss|criterion", re.I)
# Names of the pieces a discriminator is assembled from.
_PART = re.compile(r"block|layer|top|head|stage|stem|epilogue|prologue|unit|cell|branch", re.I)
# Networks that training code also calls on real and generated images, for a loss, and
# that are not discriminators: perceptual/feature networks and classifiers.
_FEATURES = re.compile(r"vgg|perceptual|lpips|inception|feature|encoder|resnet|classifier|"
                       r"extractor|loss|"
                       # A generator is called on real and on generated samples too: a
                       # cycle-consistency loss (CycleGAN, DiscoGAN, UNIT), a path-length
                       # penalty (StyleGAN2).
                       r"generator", re.I)


@dataclass
class LinkedProject:
    index: ProjectIndex
    events: Events
    roots: dict[str, Layer] = field(default_factory=dict)  # class qualname -> built alone
    discriminators: list[DiscriminatorFact] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, message)
    # The entry points cut short by the analysis budget: (path, what was read, where its
    # definition starts, the budget it had).
    over_budget: list[tuple[str, str, Span, int]] = field(default_factory=list)
    kept_in_eval: set = field(default_factory=set)  # construction sites a train() override keeps in eval
    files: dict[str, FileFacts] = field(default_factory=dict)
    # Class qualname -> what the graph pass built for it (`snlint.link.join.Runtime`);
    # empty without the graph pass.
    runtime: dict = field(default_factory=dict)
    # What "the project's only discriminator class" would be decided from, when the
    # link was told to leave that to its caller (`link(assume_sole=False)`): the
    # candidate classes, and whether a call through a bare name was left without one.
    candidates: frozenset[str] = frozenset()
    bare_calls: bool = False
    steps: int = 0  # statements the link interpreted: its work, bounded by the budgets

    def instances_of(self, qualname: str) -> list[Layer]:
        return [i for i in self.events.instances if i.cls is not None and i.cls.qualname == qualname]

    def buildable(self, only: set[str] | None = None) -> list[DiscriminatorFact]:
        """The discriminators the graph pass builds: those of the files in `only` (the
        linted ones; the files they import are read for their facts only) that are on
        disk, as Python files, and may be nn.Modules."""
        out = []
        for d in self.discriminators:
            if only is not None and d.file.path not in only:
                continue
            absolute = os.path.abspath(d.file.path)
            if not os.path.isfile(absolute) or absolute.endswith(".ipynb"):
                continue  # in-memory text (stdin, tests) or notebook cells: nothing to import
            if _plain_class(d.cls):
                continue  # `class Discriminator(object)` in a NumPy GAN: no module to build
            out.append(d)
        return out


def _plain_class(cls: ClassFacts) -> bool:
    """A class that derives from nothing but `object`: it cannot be an nn.Module."""
    return all(isinstance(b, F.Global) and b.qual == "builtins.object" for b in cls.bases)


def _norm_passed_elsewhere(project: LinkedProject, qual: str) -> bool:
    """Whether the project's code calls class `qual` passing a parameter whose default
    made one of its layers (`norm_layer=nn.BatchNorm2d`): the class built with its
    defaults, which an assumption would judge, is then not what the project trains
    (Shift-Net's `define_D` passes the norm its options name). Read from the calls as
    written, by the class's name: the factory may be one the link never reaches."""
    root = project.roots.get(qual)
    passing = _default_passing(root)
    return passing is not None and any(map(passing, _calls_of_class(project, root.cls.name)))


def _unused_defaults(project: LinkedProject, qual: str, by_qual: dict) -> frozenset:
    """The parameters (path, span) whose defaults built layers of class `qual`, its own or
    those of a class built around its instances (pix2pixHD's MultiscaleDiscriminator
    handing its `norm_layer=nn.BatchNorm2d` down), that no call in the project leaves to
    the default: each class is called somewhere, and every call passes them."""
    root = project.roots.get(qual)
    if root is None:
        return frozenset()
    owners: dict[tuple, Layer] = {}  # default's site -> the class built alone that declares it
    for inst in [root, *project.instances_of(qual)]:
        for _, layer in [("", inst), *inst.descendants()]:
            origin = layer.origin
            if origin is None or (origin.path, origin.span) in owners:
                continue
            owner = next((project.roots[q] for q, (cls, file) in by_qual.items()
                          if file.path == origin.path and q in project.roots and _declares(cls, origin)), None)
            if owner is not None:
                owners[(origin.path, origin.span)] = owner
    unused = set()
    for site, owner in owners.items():
        passing = _default_passing(owner)
        calls = list(_calls_of_class(project, owner.cls.name)) if passing is not None else []
        if calls and all(map(passing, calls)):
            unused.add(site)
    return frozenset(unused)


def _declares(cls: ClassFacts, origin: Location) -> bool:
    init = cls.method("__init__")
    return init is not None and any(p.span == origin.span for p in init.params)


def _default_passing(root: Layer | None):
    """A test of a call of `root`'s class: whether it passes a parameter whose default made
    one of the layers the class built alone has; None when no default made one."""
    init = root.cls.method("__init__") if root is not None and root.cls is not None else None
    if init is None:
        return None
    defaults = {layer.origin.span for _, layer in root.descendants() if layer.origin is not None}
    names = {p.name for p in init.params if p.span in defaults}
    if not names:
        return None
    positional = [p.name for p in init.params if p.kind in ("pos", "posonly")][1:]  # after self
    # A positional argument passes the parameter when it reaches its place.
    least = min((positional.index(n) for n in names if n in positional), default=None)

    def passes(call: F.Call) -> bool:
        given = sum(1 for a in call.args if a.keyword is None and not a.star)
        return any(a.keyword in names for a in call.args) or (least is not None and given > least)

    return passes


def _calls_of_class(project: LinkedProject, name: str) -> Iterator[F.Call]:
    for file in project.index.files:
        yield from _calls_of(file, name)


def _calls_of(file: FileFacts, name: str):
    """The calls in a file whose callee is written `name` or `something.name`."""
    bodies = [file.body, *(fn.body for _, fn in file.functions),
              *(fn.body for _, cls in file.classes for _, fn in cls.methods)]
    for body in bodies:
        for stmt in walk(body):
            for call in calls_in(stmt):
                func = call.func
                if (isinstance(func, F.Local) and func.name == name) or (isinstance(func, F.Attr) and func.attr == name) \
                        or (isinstance(func, F.Global) and func.qual.rsplit(".", 1)[-1] == name):
                    yield call


def _config_matches(entry: str, file: FileFacts, cls: ClassFacts, root: Path | None) -> bool:
    path, _, name = entry.rpartition(":")
    if name != cls.name:
        return False
    candidates = {file.path}
    if root is not None:
        try:
            candidates.add(Path(file.path).resolve().relative_to(root.resolve()).as_posix())
        except ValueError:
            pass
    return path in candidates or any(c.endswith("/" + path) for c in candidates)


def link(files: list[FileFacts], discriminators: list[str] = (), not_discriminators: list[str] = (),
         root: Path | None = None, assume_sole: bool = True,
         options: Callable[[], dict] | None = None,
         part_of: Mapping[str, int] | None = None) -> LinkedProject:
    """The linked project. When `files` are a part of it (`link.groups`): `options` are
    the command-line options the whole project declares (`options.DeclaredOptions`),
    and `assume_sole` is False: a call through a bare name that reaches no class (`netD(x)`,
    `netD` a parameter) is taken for the discriminator class only when the project holds
    one, which the caller decides from every part's `candidates` and `bare_calls`.
    `part_of` (path -> part) is the partition `link.groups` makes of a project linked whole
    all the same (the graph pass builds every part's discriminators together): what one
    part decides alone is decided within it, so both links find the same."""
    index = ProjectIndex(files)
    interp = Interpreter(index, options)
    project = LinkedProject(index, interp.events)

    def guarded(path: str, work, what: str, span: Span) -> None:
        interp.start_entry()
        start = len(interp.events.instances)
        try:
            work()
        except RecursionError:
            project.errors.append((path, "nested too deeply to interpret"))
        except BudgetExceeded:
            project.over_budget.append((path, what, span, interp.budget))
            # What was built so far stands; a class cut short may lack the SN that would
            # have come later, so nothing built by it is trusted for SN201 (nothing an
            # earlier unit built: that one finished).
            for layer in interp.events.instances[max(start, len(interp.events.instances) - 50):]:
                layer.opaque = True

    for file in files:
        for _, cls in file.classes:
            if interp.class_kind(cls, file) in ("module", None):
                def build(cls=cls, file=file) -> None:
                    built = interp.instantiate_root(cls, file)
                    if isinstance(built, Layer):
                        project.roots[cls.qualname] = built
                        interp.run_methods(built, file)
                guarded(file.path, build, f"class {cls.name}", cls.span)
    for file in files:
        guarded(file.path, lambda: interp.run_module(file), "the module's own statements", Span(1, 1, 1, 1))
        for _, fn in file.functions:
            guarded(file.path, lambda: interp.run_function(fn, file), f"{fn.name}()", fn.span)
    interp.start_entry()
    project.steps = interp.total_steps
    split_steps(interp.events)
    project.kept_in_eval = interp.events.kept_sites
    project.files = {f.path: f for f in files}

    find_discriminators(project, list(discriminators), list(not_discriminators), root, assume_sole,
                        part_of)
    decide_sides(project)
    return project


def decide_sides(project: LinkedProject) -> None:
    """What each call of a discriminator scores, from where its input came from: the data
    (real), another model's output (generated), or, where the data flow says nothing, the
    names it is written with. Training code was read before the discriminators were known;
    only now does "the output of a model that is not this discriminator" mean something."""
    classes = {d.cls.qualname for d in project.discriminators}
    alike = _alike(project.events.forwards)
    for call in project.events.forwards:
        module = call.module
        if module is None or module.cls is None or module.cls.qualname not in classes:
            continue
        found = provenance.sides(_scored(call, _peers(alike, call)), module.cls.qualname)
        if found:
            call.kind, call.evidence = provenance.kind_of(found), MappingProxyType(found)
        elif call.kind in ("real", "fake"):
            name = next((n for n in call.names if (FAKE_NAME if call.kind == "fake" else REAL_NAME).search(n)),
                        None)
            said = f"named `{name}`" if name else f"scored into `{call.scored_into}`" if call.scored_into else ""
            call.evidence = MappingProxyType(
                {call.kind: provenance.Evidence(provenance.escaped(said) if said else "by name")})


def _output_key(call: ForwardFact) -> tuple:
    return id(call.module), call.call.path, call.call.span.line


def _feeding(forwards: list[ForwardFact]) -> set[tuple]:
    """The calls whose output another model of the same update then scores: GANSketching's
    frozen sketch network turns real and generated images into sketches, and the
    discriminator scores `tf_fake(fake)` and `tf_real(real)`. What a call returns is no
    sample a discriminator sees: the model it feeds is the one called on real and
    generated samples. Only an instance that sees one side in its update (a transform made
    for real or for generated images): one instance run on both is the discriminator's
    trunk (an InfoGAN's `FrontEnd`, whose features its `D` head scores). Only a model with layers of its own (torch's convolutions and linear
    layers, or the project's modules: StyleGAN2's EqualConv2d) feeds on another's output
    so: a loss module (`criterionGAN(pred_fake, False)`, holding an `nn.MSELoss` at most)
    is fed by the discriminator. Not a model fed by itself or by a model it is part of."""
    fed: set[tuple] = set()
    for call in forwards:
        module = call.module
        if module is None or module.cls is None or module.kind != "module" or _not_scoring(module.cls.name) \
                or not any(layer.kind in NEEDS_SN or layer.kind == "module" for _, layer in module.descendants()):
            continue
        for origin in call.origins:
            if isinstance(origin, provenance.Output) and isinstance(origin.module, Layer) \
                    and origin.module.cls is not None and origin.module.cls is not module.cls \
                    and not _part_of(module, origin.module) and not _part_of(origin.module, module):
                fed.add((id(origin.module), origin.path, origin.line))
    sides: dict[tuple, set[str]] = {}
    for call in forwards:
        if call.module is not None:
            sides.setdefault((call.update, id(call.module)), set()).add(call.kind)
    return {_output_key(call) for call in forwards if _output_key(call) in fed
            and not {"real", "fake"} <= sides[(call.update, id(call.module))]}


def _part_of(part: Layer, whole: Layer) -> bool:
    """Whether `part` is one of `whole`'s modules (Obj-GAN scores its discriminator's
    features with `netObjD.COND_DNET(real_features, c)`: one model, called in two steps)."""
    return any(layer is part for _, layer in whole.descendants())


def _alike(forwards: list[ForwardFact]) -> dict[tuple, list[ForwardFact]]:
    """The calls of one instance in one update with as many tensor arguments, for `_scored`."""
    alike: dict[tuple, list[ForwardFact]] = {}
    for call in forwards:
        if len(call.arguments) > 1 and call.module is not None:
            alike.setdefault((id(call.module), call.update, len(call.arguments)), []).append(call)
    return alike


def _peers(alike: dict[tuple, list[ForwardFact]], call: ForwardFact) -> list[ForwardFact]:
    return [p for p in alike.get((id(call.module), call.update, len(call.arguments)), ()) if p is not call]


def _scored(call: ForwardFact, peers: list[ForwardFact]) -> frozenset:
    """The origins of what `call` scores. A conditional discriminator takes its condition
    beside the sample (pix2pix's `D(x, y)` then `D(x, G(x))`, StackGAN's `D(real, c)` then
    `D(fake, c)`): an argument every call of that instance in the update (`peers`, with as
    many tensor arguments) passes alike is the condition, and the others, taken together
    as channels are, are what it scores. Without calls to compare with, the first argument is."""
    n = len(call.arguments)
    if n < 2 or not peers:
        return call.origins
    varying = [i for i in range(n) if any(p.arguments[i] != call.arguments[i] for p in peers)]
    if not varying or len(varying) == n:
        return call.origins
    return frozenset({provenance.Channels(tuple(call.arguments[i] for i in varying),
                                          call.call.span.line, call.call.path, how="")})


def _unused_alternatives(files: list[FileFacts], evidence: dict[str, tuple[str, str]],
                         by_name: dict[str, tuple[ClassFacts, FileFacts]], homes: dict[str, str],
                         part_of: Mapping[str, int] | None = None) -> set[str]:
    """Classes named as discriminators that no code of the project uses (not built,
    subclassed, registered or named in a string; imported alone is not used), beside a
    discriminator the training code shows in use: alternatives left in the code
    (instagan's `PixelDiscriminator`, a `PatchDiscriminator` no config builds), not what
    trains. Only with such a discriminator: a model file linted alone (with a class the
    configuration names, or none), or one whose discriminator is built out of sight,
    keeps its classes named so. "Beside" is within one part of the project (`part_of`,
    `homes`: each evidenced class's file): a file no name joins to the training code
    (`other.py` defining a `PatchDiscriminator` nothing imports) is a model file alone."""
    part = (lambda path: part_of.get(path, -1)) if part_of else (lambda path: 0)
    in_use = {part(homes[q]) for q, (kind, _) in evidence.items() if kind == "training code" and q in homes}
    if not by_name or not in_use:
        return set()
    counted: dict[int, Counter] = {}

    def everywhere(p: int) -> Counter:
        if p not in counted:
            counted[p] = mentions([f.body for f in files if part(f.path) == p], Counter())
        return counted[p]

    out = set()
    for q, (cls, file) in by_name.items():
        if not (_NAME.search(cls.name) or _EXACT.match(cls.name)) or cls.decorators:
            continue  # bound to a discriminator's name: built; decorated: registered
        p = part(file.path)
        if p not in in_use:
            continue
        # `super(PixelDiscriminator, self).__init__()` is the class naming itself.
        own = mentions([cls.methods, cls.body], Counter())
        if everywhere(p)[q] <= own[q] and everywhere(p)[cls.name] <= own[cls.name]:
            out.add(q)
    return out


def _classes(files: list[FileFacts]):
    for file in files:
        for _, cls in file.classes:
            yield cls, file


def _containers_called_as_discriminators(project: LinkedProject) -> dict[str, tuple[ClassFacts, FileFacts]]:
    """An `nn.Sequential` the code calls by a discriminator's name (`D = nn.Sequential(...)`
    in a tutorial, a GAN class's `self.discriminator = nn.Sequential(...)` called as
    `model.discriminator(img)`) is judged as a discriminator class is: it is given a class
    of its own, named after its binding (`D`, `GAN.discriminator`) and placed at its
    construction, with no base (so the graph pass, which imports classes, leaves it to the
    source pass)."""
    made: dict[str, tuple[ClassFacts, FileFacts]] = {}
    for call in project.events.forwards:
        layer = call.module
        if layer is None or layer.cls is not None or layer.kind != "container" or not D_NAME.search(call.callee) \
                or call.function == "forward":
            continue  # (in a forward it is a part of the module that runs it: `self.disc(x)`)
        file = project.files.get(layer.call.path)
        if file is None:
            continue
        name = call.callee.rsplit(".", 1)[-1]
        owner = layer.frame.self_value  # the module whose __init__ built it, if any
        if owner is not None and owner.cls is not None:
            name = f"{owner.cls.name}.{name}"
        span = layer.call.span
        cls = ClassFacts(name, f"{file.module}.{name}@{span.line}:{span.column}", (), (), span)
        layer.cls, layer.kind = cls, "module"
        project.roots[cls.qualname] = layer
        made[cls.qualname] = (cls, file)
    return made


def _built_inside(candidates: set[str], by_qual: dict) -> set[str]:
    """The candidates another one builds in its own code and keeps only a piece of, so
    that they are no child of its instance: pix2pixHD's MultiscaleDiscriminator makes an
    NLayerDiscriminator per scale and keeps its `.model` (fsgan, SPADE, vid2vid)."""
    out: set[str] = set()
    if len(candidates) < 2:
        return out
    for q in candidates:
        said = mentions([m.body for _, m in by_qual[q][0].methods], Counter())
        out |= {other for other in candidates if other != q and said[other]}
    return out


def _sole_in_file(outer: set[str], by_qual: Mapping, project: LinkedProject) -> dict[str, str]:
    """File path -> the one candidate class defined in it, for files that define exactly
    one (and whose norm no other code passes: `_norm_passed_elsewhere`)."""
    homes: dict[str, list[str]] = {}
    for q in sorted(outer):
        homes.setdefault(by_qual[q][1].path, []).append(q)
    return {path: qs[0] for path, qs in homes.items()
            if len(qs) == 1 and not _norm_passed_elsewhere(project, qs[0])}


def find_discriminators(project: LinkedProject, discriminators: list[str],
                        not_discriminators: list[str], root: Path | None, assume_sole: bool = True,
                        part_of: Mapping[str, int] | None = None) -> None:
    """Decide which classes are discriminators, strongest evidence first: configuration,
    then the training code (called on real and generated samples in one update, or a
    gradient penalty through it), then names (of the class, or of what it is bound to)."""
    files = project.index.files
    by_qual = {cls.qualname: (cls, file) for cls, file in _classes(files)}
    by_qual.update(_containers_called_as_discriminators(project))
    excluded = {q for q, (c, f) in by_qual.items()
                if any(_config_matches(e, f, c, root) for e in not_discriminators)}
    evidence: dict[str, tuple[str, str]] = {}
    for q, (c, f) in by_qual.items():
        if q not in excluded and any(_config_matches(e, f, c, root) for e in discriminators):
            evidence[q] = ("configuration", "")

    # Forward calls through a bare name (`netD` passed in as a parameter) belong to the
    # project's discriminator when there is exactly one candidate.
    # A class named as one whose forward scores real and generated samples with the
    # discriminator it holds (first-order-model's DiscriminatorFullModel) is a loss wrapper.
    named = {q for q, (c, f) in by_qual.items() if q not in excluded and q in project.roots
             and (_NAME.search(c.name) or _EXACT.match(c.name)) and not scores_real_and_generated(c)}
    # A class whose instances are bound to a generator's name too (vid2vid's `myModel`,
    # wrapping `modelG`, `modelD` and the flow network alike) is a wrapper: the names
    # say nothing of what it is.
    both = {inst.cls.qualname for inst in project.events.instances
            if inst.cls is not None and any(G_NAME.search(n) for n in inst.bound_names)}
    for inst in project.events.instances:
        # Only a module: a meter or a config object bound to a D-like name scores nothing.
        if inst.kind == "module" and inst.cls is not None and inst.cls.qualname in by_qual \
                and inst.cls.qualname not in excluded and inst.cls.qualname not in both \
                and any(map(_bound_as_discriminator, inst.bound_names)):
            named.add(inst.cls.qualname)
    candidates = set(evidence) | named
    # A candidate another one is built from (Projected GAN's MultiScaleD inside its
    # ProjectedDiscriminator) is part of that one, not a second discriminator.
    parts = {child.cls.qualname for q in candidates if q in project.roots
             for _, child in project.roots[q].descendants() if child.cls is not None}
    parts |= _built_inside(candidates, by_qual)
    outer = candidates - parts
    sole = next(iter(outer)) if len(outer) == 1 and assume_sole else None
    why = "the project's only discriminator class"
    given: list = []
    if len(outer) > 1 and assume_sole:
        # Of several, the one the configuration builds by name (`class_name='...'`).
        given = given_names(files)
        configured = named_one(outer, first_places(given))
        if configured is not None:
            sole, name, (path, line) = configured
            why = f"the discriminator class the project builds by name (`{name}` at {path}:{line})"
    if sole is not None and _norm_passed_elsewhere(project, sole):
        sole = None
    # A call the program also runs with the instance it reaches (a method run for an
    # object the script built, after the same method ran for the class built alone) is
    # judged on that instance, not on an assumed one.
    resolved = {(c.call.path, c.call.span) for c in project.events.forwards if c.module is not None}
    project.candidates = frozenset(outer)
    homes = {q: by_qual[q][1].path for q in outer} if given else {}
    beside: dict[str, str] | None = None  # found at the first call through a bare name
    for call in project.events.forwards:
        if call.module is not None or not _BOUND.search(call.callee) or (call.call.path, call.call.span) in resolved:
            continue
        if beside is None:
            beside = _sole_in_file(outer, by_qual, project) if sole is None else {}
        # Left to the caller when not decided here (`assume_sole`); the class defined
        # beside the call is decided here.
        project.bare_calls = project.bare_calls or call.call.path not in beside
        assumed, because = sole, why
        if sole is None and given:
            near = named_near(homes, given, call.call.path)
            if near is not None:
                assumed, name, (path, line) = near
                because = f"the discriminator class its project builds by name (`{name}` at {path}:{line})"
        if assumed is None and call.call.path in beside:
            # A training helper that takes the discriminator as a parameter and that no
            # code calls (`def critic_step(critic, netG, real, z, opt)`), in a file
            # that defines one discriminator class: the class defined beside it, whatever
            # the rest of the project holds.
            assumed = beside[call.call.path]
            because = f"the only discriminator class defined in {call.call.path}"
        if assumed is not None:
            call.module = project.roots.get(assumed)
            call.assumed = (f"{call.callee} is not built where it is used; assumed to be "
                            f"{by_qual[assumed][0].name}, {because}")

    updates: dict[tuple, dict[str, list]] = {}
    alike = _alike(project.events.forwards)
    feeding = _feeding(project.events.forwards)
    for call in project.events.forwards:
        # A plain object called like a function (an image pool's __call__) scores nothing.
        if call.module is None or call.module.cls is None or call.module.kind != "module":
            continue
        if _output_key(call) in feeding:
            continue  # it transforms what another model scores
        q = call.module.cls.qualname
        kind = call.kind
        if len(call.arguments) > 1 and call.function != "forward":
            # `D(cond, real)` then `D(cond, G(cond))`: the condition is the same real
            # batch in both; what differs is what the call scores (`_scored`), when the
            # data and a generator say so (a U-Net block's `up(x, skip)` is no such call).
            found = provenance.plain_sides(_scored(call, _peers(alike, call)))
            if len(found) == 1:
                kind = next(iter(found))
        if kind == "unknown" and call.function != "forward":
            # Neither names nor tags say; the data flow may: `self.scorer(self(z))` in a
            # Lightning module's training_step scores another model's output,
            # `self.scorer(imgs)` the data. Not in a forward, where each layer's output
            # feeds the next (a block's norm is no discriminator).
            kind = provenance.kind_of(provenance.sides(call.origins, q))
        updates.setdefault((call.update, q), {}).setdefault(kind, []).append(call)
    # An update that scores real and generated samples apart is the stronger evidence: it
    # is looked for first, so a generator step's `D(cat((real_a, fake_b), 1))` (named both,
    # one generated batch by the data flow) does not speak for the class.
    for want_apart in (True, False):
        for (update, q), kinds in updates.items():
            if q not in by_qual or q in excluded or q in evidence or _not_scoring(by_qual[q][0].name):
                continue  # not in by_qual: a class defined inside a function or a `__main__` block
            if all(G_NAME.search(c.callee) for calls in kinds.values() for c in calls):
                # Called as a generator wherever it is (`netG(noise, real_features)`, then on
                # features of its own output): an image-manipulation generator's inputs.
                continue
            if want_apart and "real" in kinds and "fake" in kinds:
                fn = _where(kinds["real"][0].function)
                evidence[q] = ("training code", f"called on real and generated samples {fn}"
                                                f"{_as_candidate(kinds['real'][0])}")
            elif not want_apart and "mixed" in kinds:
                # Named both, the data flow may still say what each call scores.
                sides = {provenance.kind_of(found) for calls in kinds.values() for c in calls
                         if (found := provenance.sides(c.origins, q))}
                if sides and not sides & {"mixed"} and not {"real", "fake"} <= sides:
                    continue  # one side only: generated samples named after their condition
                together = "" if {"real", "fake"} <= sides else " together"
                fn = _where(kinds["mixed"][0].function)
                evidence[q] = ("training code", f"called on real and generated samples{together} {fn}"
                                                f"{_as_candidate(kinds['mixed'][0])}")
    # A loss that differentiates calls of several updates (a generated batch's score kept
    # from the generator's step, beside the real batch's after it) is one update too.
    for calls in project.events.backwards:
        scored: dict[str, dict[str, list]] = {}
        for call in calls:
            if call.module is not None and call.module.cls is not None and call.module.kind == "module":
                scored.setdefault(call.module.cls.qualname, {}).setdefault(call.kind, []).append(call)
        for q, kinds in scored.items():
            if q in by_qual and q not in excluded and q not in evidence and not _not_scoring(by_qual[q][0].name) \
                    and "real" in kinds and "fake" in kinds:
                evidence[q] = ("training code", f"called on real and generated samples "
                                                f"{_where(kinds['real'][0].function)}{_as_candidate(kinds['real'][0])}")
    for penalty in project.events.penalties:
        module = penalty.forward.module
        if module is not None and module.cls is not None and module.kind == "module":
            q = module.cls.qualname
            if q not in excluded and q not in evidence and not _not_scoring(module.cls.name):
                evidence[q] = ("training code", f"a gradient penalty is taken through it "
                                                f"{_where(penalty.forward.function)}")
    unused = _unused_alternatives(files, evidence, {q: by_qual[q] for q in named if q not in evidence},
                                  {q: by_qual[q][1].path for q in evidence if q in by_qual}, part_of)
    for q in sorted(named):
        if q not in evidence and q not in unused:
            c = by_qual[q][0]
            if _NAME.search(c.name) or _EXACT.match(c.name):
                evidence[q] = ("name", "")
            else:
                bound = next(n for i in project.instances_of(q) for n in i.bound_names
                             if _bound_as_discriminator(n))
                evidence[q] = ("name", f"bound to {bound}")
    # A class found only by its name, named as a part (`DiscriminatorBlock`), that another
    # discriminator is built from is a part of it: its layers are judged as the whole
    # discriminator's. (A `LossWithDiscriminator` holding a `Discriminator` holds a whole.)
    blocks = {child.cls.qualname for q in evidence if q in project.roots
              for _, child in project.roots[q].descendants()
              if child.cls is not None and _PART.search(child.cls.name)}
    # A class known only by the name its instance is bound to, built inside another
    # discriminator (MSG-GAN's `self.batch_discriminator = MinibatchStdDev()` in its final
    # block), is a part of that one: its own name says nothing.
    bound_parts = {q for q, (kind, detail) in evidence.items()
                   if kind == "name" and detail.startswith("bound to") and q in parts}
    for q, (kind, detail) in evidence.items():
        if q not in project.roots or (kind == "name" and (q in blocks or q in bound_parts)):
            continue
        cls, file = by_qual[q]
        ref = DiscriminatorRef(f"{file.path}:{cls.name}", kind, detail)
        unused = _unused_defaults(project, q, by_qual) if kind == "name" else frozenset()
        project.discriminators.append(DiscriminatorFact(cls, file, ref, project.roots[q], unused))
    project.discriminators.sort(key=lambda d: (d.file.path, d.cls.span))


def _bound_as_discriminator(name: str) -> bool:
    """Whether a module bound to `name` is named as a discriminator (`netD`, `self.D`,
    `self.D_A`), the weakest evidence there is: not a loss bound to `self.D_lossfn`, and
    not a lower-case `self.d` alone (data, depth, a decoder: USRNet's DataNet)."""
    last = name.rpartition(".")[2]
    return bool(_BOUND.search(name)) and last != "d" and not _FOR_D.search(last)


def _not_scoring(name: str) -> bool:
    """A class named for what is no discriminator, though training code calls it on real
    and generated samples: a feature network, a classifier, a generator (`G12` in a cycle)."""
    return _FEATURES.search(name) is not None or GENERATOR_CLASS.search(name) is not None


def _as_candidate(call) -> str:
    """When the call reaches this class as one of several a factory may build, say so: the
    training code calls whichever the configuration picks."""
    step = call.module.picked_among
    return f", as {step.split(' at ')[0]}" if step else ""


def _where(function: str) -> str:
    return "at module level" if function.startswith("<") else f"in {function}()"
