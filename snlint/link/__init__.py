"""The link step: join per-file facts into one project and interpret them.

`link` runs every module body, helper and module class through the interpreter and decides
which classes are discriminators. The graph pass reads the `LinkedProject` (which classes to
build, with which arguments), `snlint.link.join` adds what it built, and `snlint.link.seal`
makes it the read-only model the checks read.
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
from snlint.link.events import (
    D_NAME, DISCRIMINATOR_CLASS, FAKE_NAME, G_NAME, GENERATOR_CLASS, REAL_NAME, Events,
)
from snlint.link.index import ProjectIndex
from snlint.link.named_classes import first_places, given_names, named_near, named_one
from snlint.link import provenance
from snlint.link.training_semantics import scores_real_and_generated, split_steps
from snlint.link.interpret import BudgetExceeded, Interpreter
from snlint.link.syntax import calls_in, mentions
from snlint.link.model import DiscriminatorFact, ForwardFact, Layer
from snlint.records import dataclass
from snlint.torchapi import NEEDS_SN

_EXACT = re.compile(r"^(NetD|netD|_netD|D_\w+|D\d*)$")
# The abbreviations as a CamelCase word of a class name (`SNProjectionDisResNet`,
# `MsImageDis`, `SingleDisc`); not the start of a longer word (`Distiller`, `Discrete`,
# `DisentangledEncoder`), and only as written: `Actor_dis` is a discrete-action head.
_ABBREVIATED = re.compile(r"Disc?(?![a-z])")
# What an abbreviated name is when it says more: `DisLoss` is the discriminator's loss.
_ABBREVIATED_NOT = re.compile(r"loss|criterion|objective|penalty|metric", re.I)
# What a name bound to a module says it is for, not what it is: `self.D_lossfn` holds the
# discriminator's loss (a GANLoss), `self.D_criterion` its criterion.
_FOR_D = re.compile(r"loss|criterion", re.I)
# A name that says actor is reinforcement learning's (`ActorCriticMLP`, `SoftActorCriticAgent`):
# its critic estimates a value of states, it never scores real against generated samples.
_ACTOR = re.compile(r"actor", re.I)
_CRITIC = re.compile(r"critic", re.I)
# Names of the pieces a discriminator is assembled from.
_PART = re.compile(r"block|layer|top|head|stage|stem|epilogue|prologue|unit|cell|branch", re.I)
# Networks that training code also calls on real and generated images and that are not
# discriminators: feature networks, classifiers, losses, and generators (a cycle loss).
_FEATURES = re.compile(r"vgg|perceptual|lpips|inception|feature|encoder|resnet|classifier|"
                       r"extractor|loss|generator", re.I)


@dataclass
class LinkedProject:
    index: ProjectIndex
    events: Events
    roots: dict[str, Layer] = field(default_factory=dict)  # class qualname -> built alone
    discriminators: list[DiscriminatorFact] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, message)
    # Entry points cut short by the budget: (path, what was read, its span, the budget).
    over_budget: list[tuple[str, str, Span, int]] = field(default_factory=list)
    files: dict[str, FileFacts] = field(default_factory=dict)
    runtime: dict = field(default_factory=dict)  # class qualname -> `snlint.link.join.Runtime`
    # For `link(assume_sole=False)`: the candidate classes, and whether a call through a
    # bare name was left without one (the caller decides "the only discriminator class").
    candidates: frozenset[str] = frozenset()
    bare_calls: bool = False

    def instances_of(self, qualname: str) -> list[Layer]:
        return [i for i in self.events.instances if i.cls is not None and i.cls.qualname == qualname]

    def buildable(self, only: set[str] | None = None) -> list[DiscriminatorFact]:
        """The discriminators the graph pass builds: those of the files in `only` (the
        linted ones) that are Python files on disk and may be nn.Modules."""
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
    return all(isinstance(b, F.Global) and b.qual == "builtins.object" for b in cls.bases)


def _norm_passed_elsewhere(project: LinkedProject, qual: str) -> bool:
    """Whether a call of class `qual` (read as written, by the class's name) passes a
    parameter whose default made one of its layers (`norm_layer=nn.BatchNorm2d`): the
    class built with its defaults is then not what the project trains."""
    root = project.roots.get(qual)
    passing = _default_passing(root)
    return passing is not None and any(map(passing, _calls_of_class(project, root.cls.name)))


def _unused_defaults(project: LinkedProject, qual: str, by_qual: dict) -> frozenset:
    """The parameters (path, span) whose defaults built layers of class `qual` (its own, or
    those of a class built around its instances) that every call in the project passes."""
    root = project.roots.get(qual)
    if root is None:
        return frozenset()
    owners: dict[tuple, Layer] = {}  # default's site -> the class built alone that declares it
    for inst in [root, *project.instances_of(qual)]:
        for layer in [inst, *(layer for _, layer in inst.descendants())]:
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
    one of its layers; None when no default made one."""
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
    """The calls in the project whose callee is written `name` or `something.name`."""
    bodies = [body for file in project.index.files
              for body in [file.body, *(fn.body for _, fn in file.functions),
                           *(fn.body for _, cls in file.classes for _, fn in cls.methods)]]
    for body in bodies:
        for stmt in F.statements(body, functions=False):
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
    """The linked project. When `files` are a part of it (`link.groups`), `options` are the
    options the whole project declares (`options.DeclaredOptions`) and `assume_sole` is
    False: the caller decides "the only discriminator class" from every part's
    `candidates` and `bare_calls`. `part_of` (path -> part) is that partition, for a
    project linked whole all the same: what a part decides alone is decided within it."""
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
            # A class cut short may lack the SN that would have come later: nothing it
            # built is trusted for SN201.
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
    split_steps(interp.events)
    project.files = {f.path: f for f in files}

    find_discriminators(project, list(discriminators), list(not_discriminators), root, assume_sole,
                        part_of)
    decide_sides(project)
    return project


def decide_sides(project: LinkedProject) -> None:
    """What each call of a discriminator scores, from where its input came from: the data
    (real), another model's output (generated), or else the names it is written with.
    Only once the discriminators are known does "another model's output" mean something."""
    classes = {d.cls.qualname for d in project.discriminators}
    alike = _alike(project.events.forwards)
    for call in project.events.forwards:
        module = call.module
        if module is None or module.cls is None or module.cls.qualname not in classes:
            continue
        found = provenance.sides(_scored(call, alike), module.cls.qualname)
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
    """The calls whose output another model of the same update then scores (a frozen
    network turning real and generated images into sketches, `D(tf_fake(fake))`): their
    outputs are no samples, the model they feed is the one called on real and generated
    samples. Only an instance that sees one side in its update (one run on both is the
    discriminator's trunk), with layers of its own (a loss module is fed by the
    discriminator), and not fed by itself or by a model it is part of."""
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
    """Whether `part` is one of `whole`'s modules (a discriminator called in two steps)."""
    return any(layer is part for _, layer in whole.descendants())


def _alike(forwards: list[ForwardFact]) -> dict[tuple, list[ForwardFact]]:
    """The calls of one instance in one update with as many tensor arguments, for `_scored`."""
    alike: dict[tuple, list[ForwardFact]] = {}
    for call in forwards:
        if len(call.arguments) > 1 and call.module is not None:
            alike.setdefault((id(call.module), call.update, len(call.arguments)), []).append(call)
    return alike


def _scored(call: ForwardFact, alike: dict[tuple, list[ForwardFact]]) -> frozenset:
    """The origins of what `call` scores. A conditional discriminator takes its condition
    beside the sample (`D(x, y)` then `D(x, G(x))`): an argument every call of that
    instance in the update (`_alike`) passes alike is the condition, and the others, taken
    together as channels, are what it scores."""
    n = len(call.arguments)
    peers = [p for p in alike.get((id(call.module), call.update, n), ()) if p is not call]
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
    """Classes named as discriminators that no code uses (not built, subclassed,
    registered or named in a string), beside a discriminator the training code shows in
    use in the same part of the project (`part_of`, `homes`): alternatives left in the
    code, not what trains. Without such a discriminator, the classes named so are kept."""
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
        if not _named_discriminator(cls.name) or cls.decorators:
            continue  # bound to a discriminator's name: built; decorated: registered
        p = part(file.path)
        if p not in in_use:
            continue
        # `super(PixelDiscriminator, self).__init__()` is the class naming itself.
        own = mentions([cls.methods, cls.body], Counter())
        if everywhere(p)[q] <= own[q] and everywhere(p)[cls.name] <= own[cls.name]:
            out.add(q)
    return out


def _containers_called_as_discriminators(project: LinkedProject) -> dict[str, tuple[ClassFacts, FileFacts]]:
    """An `nn.Sequential` the code calls by a discriminator's name (`D = nn.Sequential(...)`)
    is judged as a discriminator class is: it gets a class of its own, named after its
    binding (`D`, `GAN.discriminator`), placed at its construction, with no base (the
    graph pass, which imports classes, leaves it to the source pass)."""
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
    that they are no child of its instance (one built per scale, keeping its `.model`)."""
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
    by_qual = {cls.qualname: (cls, file) for file in files for _, cls in file.classes}
    by_qual.update(_containers_called_as_discriminators(project))
    excluded = {q for q, (c, f) in by_qual.items()
                if any(_config_matches(e, f, c, root) for e in not_discriminators)}
    evidence: dict[str, tuple[str, str]] = {}
    for q, (c, f) in by_qual.items():
        if q not in excluded and any(_config_matches(e, f, c, root) for e in discriminators):
            evidence[q] = ("configuration", "")

    # A class named as one whose forward scores real and generated samples with the
    # discriminator it holds is a loss wrapper.
    named = {q for q, (c, f) in by_qual.items() if q not in excluded and q in project.roots
             and _named_discriminator(c.name) and not scores_real_and_generated(c)}
    # A class an instance of which is bound to an actor's name is a reinforcement learner's
    # network (PPO's `self.critic = MLP(...)` beside `actor_mlp = MLP(...)`; SAC's
    # `self.q1 = MLP(...)` scoring states with buffer and policy actions): not one.
    actors = {inst.cls.qualname for inst in project.events.instances
              if inst.cls is not None and any(_ACTOR.search(n) for n in inst.bound_names)}
    # So is a critic defined beside an actor class (DDPG's `Actor` and `Critic` in one file).
    beside_actor = {f.path for f in files for _, c in f.classes if _ACTOR.search(c.name)}
    actors |= {q for q, (c, f) in by_qual.items()
               if f.path in beside_actor and _CRITIC.search(c.name)}
    named -= actors
    # A class whose instances are bound to a generator's name too is a wrapper of both.
    both = actors | {inst.cls.qualname for inst in project.events.instances
                     if inst.cls is not None and any(G_NAME.search(n) for n in inst.bound_names)}
    for inst in project.events.instances:
        # Only a module: a meter or a config object bound to a D-like name scores nothing.
        if inst.kind == "module" and inst.cls is not None and inst.cls.qualname in by_qual \
                and inst.cls.qualname not in excluded and inst.cls.qualname not in both \
                and any(map(_bound_as_discriminator, inst.bound_names)):
            named.add(inst.cls.qualname)
    candidates = set(evidence) | named
    # A candidate another one is built from is part of that one, not a second discriminator.
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
    # A call the program also runs with the instance it reaches is judged on that instance.
    resolved = {(c.call.path, c.call.span) for c in project.events.forwards if c.module is not None}
    project.candidates = frozenset(outer)
    homes = {q: by_qual[q][1].path for q in outer} if given else {}
    beside: dict[str, str] | None = None  # found at the first call through a bare name
    for call in project.events.forwards:
        if call.module is not None or not D_NAME.search(call.callee) \
                or (call.call.path, call.call.span) in resolved:
            continue
        if beside is None:
            beside = _sole_in_file(outer, by_qual, project) if sole is None else {}
        # Left to the caller (`assume_sole`) unless a class is defined beside the call.
        project.bare_calls = project.bare_calls or call.call.path not in beside
        assumed, because = sole, why
        if sole is None and given:
            near = named_near(homes, given, call.call.path)
            if near is not None:
                assumed, name, (path, line) = near
                because = f"the discriminator class its project builds by name (`{name}` at {path}:{line})"
        if assumed is None and call.call.path in beside:
            # A training helper no code calls, taking the discriminator as a parameter, in
            # a file that defines one discriminator class: that class.
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
            # `D(cond, real)` then `D(cond, G(cond))`: what differs is what the call
            # scores (`_scored`), when the data and a generator say so.
            found = provenance.plain_sides(_scored(call, alike))
            if len(found) == 1:
                kind = next(iter(found))
        if kind in ("unknown", "real") and call.function != "forward":
            # Neither names nor tags say; the data flow may (not in a forward, where each
            # layer's output feeds the next). Tags pass through a module no name calls a
            # generator (`gen_a.decode(gen_b.encode(x_b))` keeps x_b's): where the data
            # flow says a module made the batch, it is generated.
            flow = provenance.kind_of(provenance.sides(call.origins, q))
            kind = flow if kind == "unknown" or flow == "fake" else kind
        updates.setdefault((call.update, q), {}).setdefault(kind, []).append(call)

    def undecided(q: str) -> bool:
        """Whether training code may still decide class `q` (a class defined inside a
        function or a `__main__` block is not in `by_qual`)."""
        return q in by_qual and q not in excluded and q not in evidence and q not in actors \
            and not _not_scoring(by_qual[q][0].name)

    # An update that scores real and generated samples apart is the stronger evidence: it
    # is looked for first, so a generator step's `D(cat((real_a, fake_b), 1))` does not
    # speak for the class.
    for want_apart in (True, False):
        for (update, q), kinds in updates.items():
            if not undecided(q):
                continue
            if all(G_NAME.search(c.callee) for calls in kinds.values() for c in calls):
                continue  # called as a generator wherever it is: a manipulation generator
            if want_apart and "real" in kinds and "fake" in kinds:
                evidence[q] = _scores_both(kinds["real"][0])
            elif not want_apart and "mixed" in kinds:
                # Named both, the data flow may still say what each call scores.
                sides = {provenance.kind_of(found) for calls in kinds.values() for c in calls
                         if (found := provenance.sides(c.origins, q))}
                if sides and not sides & {"mixed"} and not {"real", "fake"} <= sides:
                    continue  # one side only: generated samples named after their condition
                together = "" if {"real", "fake"} <= sides else " together"
                evidence[q] = _scores_both(kinds["mixed"][0], together)
    # A loss that differentiates calls of several updates is one update too.
    for calls in project.events.backwards:
        scored: dict[str, dict[str, list]] = {}
        for call in calls:
            if call.module is not None and call.module.cls is not None and call.module.kind == "module":
                scored.setdefault(call.module.cls.qualname, {}).setdefault(call.kind, []).append(call)
        for q, kinds in scored.items():
            if undecided(q) and "real" in kinds and "fake" in kinds:
                evidence[q] = _scores_both(kinds["real"][0])
    for penalty in project.events.penalties:
        module = penalty.forward.module
        if module is not None and module.cls is not None and module.kind == "module" \
                and undecided(module.cls.qualname):
            why = f"a gradient penalty is taken through it {_where(penalty.forward.function)}"
            evidence[module.cls.qualname] = ("training code", why)
    unused = _unused_alternatives(files, evidence, {q: by_qual[q] for q in named if q not in evidence},
                                  {q: by_qual[q][1].path for q in evidence if q in by_qual}, part_of)
    for q in sorted(named):
        if q not in evidence and q not in unused:
            if _named_discriminator(by_qual[q][0].name):
                evidence[q] = ("name", "")
            else:
                bound = next(n for i in project.instances_of(q) for n in i.bound_names
                             if _bound_as_discriminator(n))
                evidence[q] = ("name", f"bound to {bound}")
    # A class found only by its name, named as a part (`DiscriminatorBlock`), that another
    # discriminator is built from is a part of it, judged with the whole.
    blocks = {child.cls.qualname for q in evidence if q in project.roots
              for _, child in project.roots[q].descendants()
              if child.cls is not None and _PART.search(child.cls.name)}
    # And one it builds only in a branch its defaults do not take (`ConditionalFinalBlock`
    # when `num_classes` is given): no child of the instance built here, still a part.
    blocks |= {q for q in _built_inside(set(evidence), by_qual)
               if evidence[q][0] == "name" and _PART.search(by_qual[q][0].name)}
    # So is a class known only by the name its instance is bound to, built inside another.
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


def _named_discriminator(name: str) -> bool:
    if _ACTOR.search(name):
        return False
    return bool(DISCRIMINATOR_CLASS.search(name) or _EXACT.match(name)
                or (_ABBREVIATED.search(name) and not GENERATOR_CLASS.search(name)
                    and not _ABBREVIATED_NOT.search(name)))


def _scores_both(call: ForwardFact, together: str = "") -> tuple[str, str]:
    where = f"{_where(call.function)}{_as_candidate(call)}"
    return "training code", f"called on real and generated samples{together} {where}"


def _bound_as_discriminator(name: str) -> bool:
    """Whether a module bound to `name` is named as a discriminator (`netD`, `self.D_A`):
    not a loss (`self.D_lossfn`), nor a lower-case `self.d` alone (data, depth)."""
    last = name.rpartition(".")[2]
    return bool(D_NAME.search(name)) and last != "d" and not _FOR_D.search(last)


def _not_scoring(name: str) -> bool:
    """A class named for what is no discriminator, though training code calls it on real
    and generated samples: a feature network, a classifier, a generator."""
    return _FEATURES.search(name) is not None or GENERATOR_CLASS.search(name) is not None


def _as_candidate(call) -> str:
    """When the call reaches this class as one of several a factory may build, say so."""
    step = call.module.picked_among
    return f", as {step.split(' at ')[0]}" if step else ""


def _where(function: str) -> str:
    return "at module level" if function.startswith("<") else f"in {function}()"
