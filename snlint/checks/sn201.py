"""SN201 missing-sn: a conv/linear layer of a discriminator that uses SN elsewhere."""

from __future__ import annotations

import ast
from collections import Counter
from typing import Iterator

from snlint import facts as F
from snlint.checks import at_node as at
from snlint.checks.emit import Emitter, describe, lead_sentence
from snlint.checks.fix_data import MissingSN
from snlint.checks.linked import Shown, confirmed, runtime_only
from snlint.checks.shared import discriminator_classes, own_site, per_model
from snlint.checks.verdicts import (
    leaf_missing_sn, measured, needs_sn, normalized_by_measurement,
    runtime_clears_missing_sn, sigma_text, uses_sn,
)
from snlint.config import Config
from snlint.checks.sn_migration import HOOK_SN, param_sn_ref
from snlint.findings import SAFE, Finding, Location, record
from snlint.link.model import LayerFact, Member, exclusive
from snlint.torchapi import KEYS_HOOK, KEYS_PARAM, NEEDS_SN, SN_FUNCTIONS, SN_HOOK, SN_PARAM, weight_norm_api

CODE = "SN201"
# The fix wraps with the SN API the discriminator uses: when the same run migrates that
# API (SN501), it waits for the migration, so that it does not write the legacy one.
PREMISES = ("SN501",)


def check(model, emit: Emitter) -> Iterator[Finding]:
    """SN201 from the source's layers, confirmed or cleared by the runtime leaves built
    at their sites; a leaf only the runtime has is judged by the same `needs_sn`."""
    shown_by_source: set[int] = set()
    outside = _built_outside_discriminators(model)
    # Layers of a project class that normalizes its own weight, where the source built them.
    own = {(layer.call.path, layer.call.span.line) for layer in model.layers if layer.weight_norm == "own"}
    for d in model.discriminators:
        runtime = model.runtime.get(d.cls.qualname)
        for finding, site in _source_sn201(model, d, emit, outside):
            if runtime is not None:
                leaves = runtime.leaves_built_at(site)
                shown_by_source.update(map(id, leaves))
                if runtime_clears_missing_sn(runtime, site):
                    continue
                if leaves:
                    finding = confirmed(finding, runtime)
            yield finding
    yield from runtime_only(emit, (
        _shown(runtime, m)
        for runtime in model.runtime.values()
        for m in runtime.facts.modules if leaf_missing_sn(m) and id(m) not in shown_by_source
        and _premise(runtime, m) and not _judged_apart(model, runtime, m, own)))


def _premise(runtime, m) -> bool:
    """SN elsewhere in the built discriminator (an SN state, or weights measured
    normalized), and this layer not measured normalized; where only the measurement shows
    SN elsewhere, this layer must be measured raw too."""
    use = runtime.facts.weights.get(m.path)
    if measured(use) == "normalized":
        return False
    if uses_sn(runtime.facts):
        return True
    return measured(use) == "raw" and normalized_by_measurement(runtime.facts)


def _shown(runtime, m) -> Shown:
    use = runtime.facts.weights.get(m.path)
    # SN only measured (a hand-written SN the facts do not name): no torch SN to offer.
    data = MissingSN(m.type_name, _runtime_sn_api(runtime.facts) or "custom")
    if measured(use) == "raw":
        seen = f"It computes with its raw weight, {sigma_text(use.sigma)} (measured in a forward)."
    else:
        seen = "Seen in the built model."
    owner = runtime.facts.target.class_name
    return Shown(runtime, CODE, m.site, m.path,
                 f"{m.type_name} {owner}.{m.path} has no spectral norm, but "
                 f"{describe(runtime.ref) or 'the discriminator'} normalizes its other conv/linear "
                 f"layers", data, evidence=seen)


def _judged_apart(model, runtime, module, own: set[tuple[str, int]]) -> bool:
    """A module the source builds where nothing reads it (`LinkedModel.unread`), or from a
    project class that normalizes its own weight (`own`: the runtime sees a plain conv)."""
    if module.site is None:
        return False
    where = runtime.locate(module.site)
    return (where.path, where.span.line) in model.unread or (where.path, where.span.line) in own


def _needs_sn(layer: LayerFact) -> bool:
    return needs_sn(layer.kind, weight_norm=layer.weight_norm, bypassed=layer.bypassed,
                    frozen=layer.frozen)


def _runtime_sn_api(facts) -> str:
    apis = Counter(s.api for m in facts.modules if m.kind in NEEDS_SN for s in m.sn)
    return apis.most_common(1)[0][0] if apis else ""


def _source_sn201(model, d, emit: Emitter, outside: set[str]) -> Iterator[tuple[Finding, Location]]:
    """Each instance of `d` the program builds (`_judged`) judged on its own, one finding
    a site: a factory may pass the norm that adds SN, which the class's default does not.
    `outside`: the project classes another network builds too."""
    if d.instance is None:
        return
    seen: set[tuple] = set()
    found: list[tuple[Finding, Location]] = []
    asked: set[tuple] = set()  # sites of layers reported where their block is built
    # What the class's own `__init__` or `train()` freezes, as run on the class built
    # alone, is frozen in every instance of it.
    frozen = {(m.site.path, m.site.span) for m in model.members(d.instance) if m.layer.frozen}
    for root in _judged(model, d):
        fixed = frozen if root is not d.instance else set()
        for finding, site in _instance_sn201(model, d, root, emit, outside, fixed, asked):
            if (finding.path, finding.span) not in seen:
                seen.add((finding.path, finding.span))
                found.append((finding, site))
    # A layer one instance reports at its block's call (the block normalizes it in its
    # other instances) is the same mistake where another instance, built with values
    # snlint cannot read, shows it at the layer's own line: one finding, at the block's call.
    for finding, site in found:
        if (site.path, site.span) not in asked:
            yield finding, site


@per_model
def _configured_calls(model) -> dict[int, list]:
    """id() of a class -> the training code's calls of its instances built with their
    arguments known, in order."""
    found: dict[int, list] = {}
    for c in model.forwards:
        module = c.module
        if module is not None and module.configured and not c.assumed and c.function != "forward":
            found.setdefault(id(module.cls), []).append(c)
    return found


def _judged(model, d) -> list[LayerFact]:
    """The instances of `d` the training code calls, built with every argument that
    decides their layers known (what the program trains); else the class built alone and
    every instance the project builds outside an `if` the link could not decide."""
    called = {id(c.module): c.module for c in _configured_calls(model).get(id(d.cls), ())
              if c.module is not d.instance}
    if called:
        return list(called.values())
    return [d.instance, *(i for i in model.instances_of(d.cls.qualname) if i is not d.instance and not i.branches)]


def _instance_sn201(model, d, root, emit: Emitter, outside: set[str],
                    fixed: set[tuple], asked: set[tuple]) -> Iterator[tuple[Finding, Location]]:
    """SN201 on one instance of `d`; `fixed`: sites frozen in the class built alone;
    `asked` gets the site of each layer reported where its block is built."""
    tree = model.members(root)
    if root.opaque or any(m.layer.opaque for m in tree):
        return  # something we cannot follow may add SN; do not guess
    layers = [m for m in tree if _needs_sn(m.layer) and (m.site.path, m.site.span) not in fixed]
    with_sn = [m for m in layers if m.layer.sn]
    if not with_sn:
        return
    callees = Counter(a.callee for m in with_sn for a in m.layer.sn if not a.from_filter)
    apis = {a.callee: a.api for m in with_sn for a in m.layer.sn if not a.from_filter}
    # A layer built only where no normalized one is (the other branch of an `if` on the
    # configuration) is another design.
    missing = [m for m in layers if not m.layer.sn and not m.layer.ambiguous
               and any(not exclusive(m.layer.branches, n.layer.branches) for n in with_sn)]
    by_site: dict[tuple, list[Member]] = {}
    # Where each shows: a layer built in code the generator runs too, at the
    # discriminator's own line that leads there (`snlint.checks.shared`).
    shown: dict[int, tuple] = {}
    for m in missing:
        shown[id(m)] = place = own_site(model, d, m)
        by_site.setdefault((place[0].path, place[0].span, m.site.path, m.site.span), []).append(m)
    normalized_sites = {(m.site.path, m.site.span) for m in with_sn}
    # The attributes a block class of the discriminator holds normalized in some of its
    # instances (`self.conv = SN(conv)` under `if norm == 'sn'`, a plain one under `else`).
    normalized_attrs = {(n.owner.qualname, n.symbol) for n in with_sn if n.owner.qualname != d.cls.qualname}
    all_sites = {(m.site.path, m.site.span) for m in layers}
    owner_sites = {m.layer.id: m.site for m in tree}
    callee = callees.most_common(1)[0][0] if callees else ""
    api = apis.get(callee, "")
    for group in by_site.values():
        m = group[0]
        count = len(group)
        here = (m.site.path, m.site.span)
        if here in normalized_sites or (m.owner.qualname, m.symbol) in normalized_attrs:
            # The helper class that builds it normalizes it in its other instances (behind
            # its own flag: `conv2d(..., spectral_normed=False)`, on this line or another):
            # the one without SN is asked for where the helper is built, not where the
            # layer is.
            others = [n for n in with_sn if (n.site.path, n.site.span) == here] if here in normalized_sites \
                else [n for n in with_sn if (n.owner.qualname, n.symbol) == (m.owner.qualname, m.symbol)]
            # A block built in a loop stands for every pass of it: no count to give.
            normalized = len(others)
            instances = "other instances" if any(n.owner.in_loop for n in others) else \
                f"{normalized} other instance{'s' if normalized != 1 else ''}"
            asked.add(here)
            for g in group:
                site = owner_sites.get(g.owner.id)
                if site is None:
                    continue
                yield emit.finding(
                    CODE, site,
                    f"{g.layer.short_type} {g.symbol} has no spectral norm: {g.owner.short_type} "
                    f"normalizes the {g.layer.short_type} it builds in {instances} of "
                    f"{describe(d.ref)}, not in the one built here",
                    symbol=g.symbol, discriminator=d.ref,
                    data=MissingSN(g.layer.short_type, api, callee, apart=True)), site
            continue
        # Instances behind an `if` we could not decide may not all exist, and a loop whose
        # count is not known here is read once for all its runs: do not count them.
        many = f" ({count} instances built here)" if count > 1 and not any(
            g.layer.conditional or g.layer.read_once for g in group) else ""
        # No fix for a layer of a block another network builds too, nor at a discriminator's
        # call of shared code (`related`): wrapping the shared line would normalize the other
        # network's layer as well, and wrapping the call would put SN on what it returns.
        site, related, lead = shown[id(m)]
        apart = bool(related) or m.owner.qualname != d.cls.qualname and m.owner.qualname in outside
        yield emit.finding(
            CODE, site,
            f"{m.layer.short_type} {m.symbol} has no spectral norm; {describe(d.ref)} "
            f"normalizes {len(normalized_sites)} of its {len(all_sites)} conv/linear sites{many}",
            evidence=lead_sentence(lead), symbol=m.symbol, discriminator=d.ref,
            data=MissingSN(m.layer.short_type, api, callee, apart)
        ).with_(related=related), m.site


def _built_outside_discriminators(model) -> set[str]:
    """Project classes another network builds too (a block the generator builds)."""
    inside = discriminator_classes(model)
    return {q for qual, root in model.roots.items() if qual not in inside for q in model.classes_in(root)}


# ---------------------------------------------------------------- the fix


@record
class Wrap:
    """SN201's fix: the call that builds the layer (`call`) is wrapped in `func`, an SN
    callable of the API `api` (imported from `module` when given)."""

    call: int
    func: str
    api: str | None
    module: str | None = None
    applicability = SAFE


def fix_input(finding: Finding, facts: F.FileFacts, config: Config) -> Wrap | None:
    """A call not under weight norm, wrapped in an SN function (or partial of one) of the
    API the discriminator uses (two APIs in one model raise where they meet): the
    discriminator's own spelling when this file calls it so, else the one of that API this
    file calls most, else the discriminator's if this file can name it, else a name bound
    to that API, else the API's function, imported; any API where it is not known."""
    if finding.data.apart:
        return None  # a helper's flag turns SN off here, or the block is the generator's too
    index, names, call = at.call_at(finding, facts)
    if call is None or call.span.node is None or _weight_normalized(index, names, facts, call):
        return None
    wanted = finding.data.sn_callee
    api = finding.data.sn_api or None
    counts = {text: seen for text, seen in _sn_callees(facts, names).items() if api in (None, seen[1])}
    if counts:
        text = wanted if wanted in counts else sorted(
            counts.items(), key=lambda kv: (-kv[1][0], kv[0]))[0][0]
        return Wrap(call.span.node, text, counts[text][1])
    if wanted and _is_chain(wanted):
        found = _sn_api_of(names, wanted)
        if found is not None and api in (None, found):
            return Wrap(call.span.node, wanted, found)
    if api == "custom":
        # The project's own SN wrapper (`SpectralNorm(module)`): mixing it with torch's
        # SN in one model would normalize layers two different ways.
        return Wrap(call.span.node, wanted, "custom") if wanted.isidentifier() and wanted in names.scope else None
    bound = [(name, SN_FUNCTIONS[qual]) for name, qual in sorted(names.scope.items())
             if qual in SN_FUNCTIONS and api in (None, SN_FUNCTIONS[qual])]
    if bound:
        return Wrap(call.span.node, bound[0][0], bound[0][1])
    if api == SN_HOOK:
        if names.is_free("spectral_norm"):
            return Wrap(call.span.node, "spectral_norm", SN_HOOK, "torch.nn.utils")
        ref = names.binding_for(HOOK_SN)  # `nn.utils.spectral_norm`
        return Wrap(call.span.node, ref, SN_HOOK) if ref is not None else None
    ref, module = param_sn_ref(names)
    return Wrap(call.span.node, ref, SN_PARAM, module) if ref is not None else None


def fix(finding: Finding, payload: Wrap, parsed):
    import libcst as cst

    from snlint.edit.plan import ImportSpec, Plan

    call = parsed.node(payload.call, cst.Call)
    if call is None:
        return None
    keys = KEYS_HOOK if payload.api == SN_HOOK else KEYS_PARAM
    layer = finding.data.layer or "layer"
    plan = Plan(finding.code, payload.applicability,
                f"Wrap the {layer} in `{payload.func}`{' (imported)' if payload.module else ''}; "
                f"its state_dict keys change (`weight` becomes {keys})")
    if payload.module is not None:
        plan.imports.append(ImportSpec(payload.module, payload.func.partition(".")[0]))
    return plan.replace(call, cst.Call(func=cst.parse_expression(payload.func), args=[cst.Arg(call)]))


# The last file's spellings: its findings are marked one after another.
_COUNTED: list[tuple[F.FileFacts, F.Names, dict[str, tuple[int, str]]]] = []


def _sn_callees(facts: F.FileFacts, names: F.Names) -> dict[str, tuple[int, str]]:
    """Each spelling of a torch SN function (or partial of one) the file calls: how
    often, and its API."""
    if _COUNTED and _COUNTED[0][0] is facts and _COUNTED[0][1] is names:
        return _COUNTED[0][2]
    counts: Counter[str] = Counter()
    apis: dict[str, str] = {}
    for call in at.walk(*facts.body):
        if not isinstance(call, F.Call):
            continue
        api = _api_of(names, at.qualified(names, call.func) or "")
        text = at.dotted(call.func) if api else None
        if text is not None:
            counts[text] += 1
            apis[text] = api  # type: ignore[assignment]
    found = {text: (count, apis[text]) for text, count in counts.items()}
    _COUNTED[:] = [(facts, names, found)]
    return found


def _is_chain(text: str) -> bool:
    """`text` is a name or attribute chain."""
    try:
        e = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    while isinstance(e, ast.Attribute):
        e = e.value
    return isinstance(e, ast.Name)


def _sn_api_of(names: F.Names, text: str) -> str | None:
    """The SN API a module-level spelling names."""
    head, _, rest = text.partition(".")
    qual = names.scope.get(head)
    if qual is None:
        return None
    return _api_of(names, f"{qual}.{rest}" if rest else qual)


def _api_of(names: F.Names, qual: str) -> str | None:
    """The API of a torch SN function, or of a module-level partial of one."""
    wrapped = names.partials.get(qual)
    return SN_FUNCTIONS.get(qual) or (SN_FUNCTIONS.get(wrapped) if wrapped is not None else None)


def _weight_normalized(index: at.FactsAt, names: F.Names, facts: F.FileFacts, call: F.Call) -> bool:
    """The layer this call builds goes straight into weight_norm, or into a callable that
    may be it (`norm_f = weight_norm if ... else spectral_norm`): SN would stack a second."""
    wrappers = [call]
    parent = index.parent.get(id(call))
    if isinstance(parent, F.Arg):
        outer = index.parent.get(id(parent))
        if isinstance(outer, F.Call):
            wrappers.append(outer)
    for node in wrappers:
        if weight_norm_api(at.qualified(names, node.func) or ""):
            return True
        if any("weight_norm" in name for name in at.names_in(node.func)):
            return True
        name = node.func.name if isinstance(node.func, F.Local) else (
            node.func.text if isinstance(node.func, (F.Global, F.Unknown)) else "")
        if node is not call and name and name.isidentifier():
            scope = next((a for a in index.ancestors(node) if isinstance(a, F.FunctionFacts)), None)
            body = scope.body if scope is not None else facts.body
            if _assigns_weight_norm(body, name):
                return True
    return False


def _assigns_weight_norm(body: tuple[F.Stmt, ...], name: str) -> bool:
    """`name = <something naming weight_norm>` anywhere in the scope, nested ones included."""
    for stmt in body:
        if isinstance(stmt, F.Assign) and any(at.dotted(t) == name for t in stmt.targets) \
                and any("weight_norm" in n for n in at.names_in(stmt.value)):
            return True
        nested = [getattr(stmt, attr, ()) or () for attr in ("body", "orelse")]
        if isinstance(stmt, F.DefStmt):
            nested.append(stmt.function.body)
        if isinstance(stmt, F.ClassStmt):
            nested.append(stmt.cls.body)
            nested.extend(fn.body for _, fn in stmt.cls.methods)
        if any(_assigns_weight_norm(tuple(b), name) for b in nested):
            return True
    return False
