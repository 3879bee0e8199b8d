"""SN401 separate-real-fake-batches: real and generated samples scored in separate calls of a
batch-coupled discriminator."""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator

from snlint import facts as F
from snlint.checks import at_node as at
from snlint.checks.couplings import (
    batch_reductions_in, called_couplings, candidates, configured_elsewhere,
    coupled_discriminators, graph_evidence, pairs, reached,
)
from snlint.checks.emit import Emitter
from snlint.config import Config
from snlint.findings import UNSAFE, Finding, place, record


CODE = "SN401"
# Scoring real and fake apart harms only through SN301's batch statistics.
PREMISES = ("SN301",)


def _outermost(model, entries: list[tuple]) -> list[tuple]:
    """The entries of one pair of call sites, less those of a discriminator class another
    of them is built from: the calls score the outer one, its part with it."""
    parts = set().union(*(model.classes_in(e[6].instance) for e in entries))
    return [e for e in entries if e[6].cls.qualname not in parts] or entries


def _run_apart(model, d, calls, direct: set[int]) -> set[int]:
    """Ids of the layers of the children of the discriminator's instances that its own
    class's forward never runs: children the training code calls on their own (a head
    scoring the trunk's features, `netD.get_cond_logits(netD(x), c)`) that no method of
    the class but `__init__` names (`direct`: ids of the modules training code calls). A
    trunk's calls do not reach their batch norms."""
    cls = d.cls
    if "forward" not in {name for name, _ in cls.methods}:
        return set()  # an inherited forward: what it runs is not read here
    instances = [i for i in (d.instance, *model.instances_of(cls.qualname), *(c.module for c in calls))
                 if i is not None]
    apart = {name for i in instances for name, child in i.named_children() if id(child) in direct}
    if not apart:
        return set()
    named: set[str] = set()
    for name, fn in cls.methods:
        if name != "__init__":
            for x in at.walk(*fn.body):
                if isinstance(x, F.Attr):
                    named.add(x.attr)
                elif isinstance(x, F.Const) and isinstance(x.value, str):
                    named.add(x.value)  # `getattr(self, "head")`
    out: set[int] = set()
    for i in instances:
        for name, child in i.named_children():
            if name in apart - named:
                out.add(id(child))
                out.update(id(layer) for _, layer in child.descendants())
    return out


def check(model, emit: Emitter) -> Iterator[Finding]:
    coupled = coupled_discriminators(model)
    # A gradient penalty's call scores interpolates, neither side: SN303's, not a batch
    # of real or generated samples to pair. Nor is a call paired again on a less known
    # instance than the one its script builds (`configured_elsewhere`).
    penalized = {id(p.forward) for p in model.penalties}
    # A penalty whose call is written outside `autograd.grad(...)` may score too (below).
    bound = {id(p.forward) for p in model.penalties if not _inside(p.forward.call, p.grad)}
    elsewhere = configured_elsewhere(model)

    def judged(call) -> bool:
        # A module the training code left in eval mode normalizes with running
        # statistics (an evaluation script): its batches share them whatever they hold.
        return _of(call, coupled) and id(call) not in penalized and id(call) not in elsewhere \
            and not call.eval_mode

    groups: dict[tuple, list] = {}
    for call in model.forwards:
        # A penalty taken on the real batch's own score (`d_real = D(x)`, also the real
        # loss) is that batch's call, unless another call of the update scores real
        # samples. Interpolates are no side; nor is a call written inside the
        # `autograd.grad(...)` that differentiates it.
        if judged(call) or (id(call) in bound and _of(call, coupled) and id(call) not in elsewhere
                            and call.kind == "real" and not call.eval_mode):
            groups.setdefault((call.update, call.module.cls.qualname), []).append(call)
    for key, calls in groups.items():
        scored = {c.kind for c in calls if id(c) not in penalized}
        if scored & {"real", "mixed"}:
            groups[key] = [c for c in calls if id(c) not in penalized]
    # One call may reach one of several candidate classes: one finding names each.
    at_site: dict[tuple, list] = {}
    update_pairs = [(qual, pair) for (_, qual), calls in groups.items()
                    for pair in pairs(sorted(calls, key=lambda c: c.order))]
    paired = {id(c) for _, pair in update_pairs for c in pair}
    # A loss that differentiates calls of several updates (a generated batch scored once,
    # before the generator's step, and reused beside the real batch's score after it) is
    # one update of the discriminator: its calls pair too, where no update paired them.
    loss_pairs = []
    for calls in model.backwards:
        by_class: dict[str, list] = {}
        for call in calls:
            if judged(call) and id(call) not in paired:
                by_class.setdefault(call.module.cls.qualname, []).append(call)
        loss_pairs += [(qual, (a, b)) for qual, group in by_class.items()
                       for a, b in pairs(sorted(group, key=lambda c: c.order)) if a.update != b.update]
    # The modules training code calls itself, not a forward of theirs: `_run_apart`'s heads.
    direct = {id(f.module) for f in model.forwards if f.module is not None and f.function != "forward"}
    for qual, (a, b) in update_pairs + loss_pairs:
        d, pooled = coupled[qual]
        found = called_couplings(model, d, a, pooled) or called_couplings(model, d, b, pooled)
        apart = _run_apart(model, d, (a, b), direct)
        if apart:
            found = [c for c in found if not c.owners or not all(id(o) in apart for o in c.owners)]
        if not found:
            continue
        first, second = a.site_apart_from(b), b.site_apart_from(a)
        # Either way round: a helper run twice in one update pairs its two calls across
        # the runs too, one mistake at one pair of call sites.
        sites = frozenset({(first.path, first.span), (second.path, second.span)})
        at_site.setdefault(sites, []).append((a, b, first, second, reached(d, [a, b]), found, d))
    for entries in sorted(at_site.values(), key=lambda e: e[0][0].order):
        entries = _outermost(model, entries)
        a, b, first, second, ref, _, _ = entries[0]
        subject, listed, stats = candidates([(e[4], e[5]) for e in entries])
        assumed = a.assumed or b.assumed
        note = f" ({assumed})" if assumed else ""
        its = "its batch statistics" if len({e[4].cls for e in entries}) == 1 else "the batch statistics of each"
        if first == second:
            # One call run once per batch (`for x in (real, fake): D(x)`): no second call
            # to merge with, so no fix either.
            message = (f"{_kind(a)} and {_kind(b)} go through {subject} here as separate "
                       f"batches, one per run of this call")
            how = (f"{_side(a, first.path)} and {_side(b, first.path)} go through {subject} "
                   f"here, one batch per run of this call")
            data = None
        else:
            there = place(second.path, second.span.line, first.path)
            message = (f"{_kind(a)} here and {_kind(b)} at {there} go through {subject} as "
                       f"separate batches")
            how = (f"{_side(a, first.path)} go through {subject} here and {_side(b, first.path)} "
                   f"in a separate call at {there}")
            # What the fix reads: where the other batch's call is. None where a forward of
            # the discriminator reduces over the batch (WGAN's `output.mean(0)`: one call's
            # output cannot be split back into the two batches' scores), or returns several
            # values (a score per scale, a score and features: no `.split` to take apart), or,
            # built, returned a flat patch map (more rows than samples: the split raises).
            data = None if _reduces_batch(model, entries) or _returns_several(a.module.cls) \
                or _flattens_samples(model, entries) else second
        finding = emit.finding(
            CODE, first, message, symbol=a.function, discriminator=ref, data=data,
            evidence=f"{how}; {its} ({stats}) then differ between the two batches and give real "
            f"from fake away{note}.{' ' + listed if listed else ''}")
        # Only the graph pass's evidence makes it: `--no-graph` lacks it.
        by_graph = all(graph_evidence(e[5]) for e in entries)
        yield replace(finding, pass_="graph") if by_graph else finding


def _reduces_batch(model, entries: list[tuple]) -> bool:
    """Whether a forward of a discriminator the calls reach reduces over the batch
    dimension (SN302's reductions)."""
    return any(batch_reductions_in(model, d) for d in {id(e[6]): e[6] for e in entries}.values())


def _flattens_samples(model, entries: list[tuple]) -> bool:
    """Whether the built discriminator gave several values per sample in one flat row (a
    patch map's `.view(-1)`): the concatenated call's output holds more rows than samples,
    and `.split([real.size(0), fake.size(0)])` raises."""
    for d in {id(e[6]): e[6] for e in entries}.values():
        runtime = model.runtime.get(d.cls.qualname)
        if runtime is not None and (runtime.facts.probe or {}).get("flattened_output"):
            return True
    return False


def _inside(where, outer) -> bool:
    """Whether location `where` lies within location `outer` (same file)."""
    a, b = where.span, outer.span
    return where.path == outer.path and (a.line, a.column) >= (b.line, b.column) \
        and (a.end_line, a.end_column) <= (b.end_line, b.end_column)


def _of(call, coupled) -> bool:
    """Whether the call reaches one of the batch-coupled discriminator classes."""
    module = call.module
    return module is not None and module.cls is not None and module.cls.qualname in coupled


_SEVERAL = ("builtins.list", "builtins.tuple", "builtins.dict")


def _returns_several(cls: F.ClassFacts) -> bool:
    """Whether the class's own forward returns a list, tuple or dict (written so, or a
    local name bound to nothing else) rather than one tensor."""
    forward = cls.method("forward")
    if forward is None:
        return False  # inherited: not read here, taken as one tensor
    bound: dict[str, list[F.Expr]] = {}
    returned: list[F.Expr] = []
    for stmt in F.statements(forward.body, functions=False):
        if isinstance(stmt, F.Assign):
            for target in stmt.targets:
                if isinstance(target, F.Local):
                    bound.setdefault(target.name, []).append(stmt.value)
        elif isinstance(stmt, F.Return) and stmt.value is not None:
            returned.append(stmt.value)

    def several(e: F.Expr) -> bool:
        if isinstance(e, (F.ListE, F.DictE, F.Comprehension)):
            return True
        if isinstance(e, F.Call):
            return isinstance(e.func, F.Global) and e.func.qual in _SEVERAL
        return False

    # A name rebound to something else (`outs = torch.cat(outs)`) may be one tensor again.
    return any(several(e) or isinstance(e, F.Local) and bool(bound.get(e.name))
               and all(several(v) for v in bound[e.name]) for e in returned)


def _kind(call) -> str:
    return "real samples" if call.kind == "real" else "generated samples"


def _side(call, here: str) -> str:
    """`real samples (a batch of `loader` (line 30))`: the kind and what decided it, its
    places named as seen from the file `here`."""
    why = call.evidence.get(call.kind)
    return f"{_kind(call)} ({why.render(here)})" if why else _kind(call)


# ---------------------------------------------------------------- the fix


@record
class OneCall:
    """SN401's fix: `a = D(x)` and the next statement `b = D(y)` become
    `a, b = D(<cat>([x, y])).split([x.size(0), y.size(0)])`, `cat` naming torch.cat."""

    first: int
    second: int
    cat: str
    imports: bool = False
    applicability = UNSAFE


def fix_input(finding: Finding, facts: F.FileFacts, config: Config) -> OneCall | None:
    """Two statements in a row, `a = D(x)` then `b = D(y)`, with inputs safe to evaluate
    twice."""
    index, names, first = at.call_at(finding, facts)
    second_at = finding.data  # a Location
    if first is None or second_at is None or second_at.path != finding.path:
        return None
    one = _assign_of(index, first)
    if one is None:
        return None
    body = index.body_of(one)
    position = next((i for i, s in enumerate(body or ()) if s is one), None)
    if body is None or position is None or position + 1 >= len(body):
        return None
    two = body[position + 1]
    if not isinstance(two, F.Assign) or len(two.targets) != 1 or not isinstance(two.value, F.Call) \
            or two.span.line == one.span.end_line:  # two statements on one line: not planned
        return None
    second = two.value
    if (second.span.line, second.span.column) != (second_at.span.line, second_at.span.column):
        return None
    if _assign_of(index, second) is None or first.func != second.func:
        return None
    x1, x2 = _one_input_fact(first), _one_input_fact(second)
    if x1 is None or x2 is None or not _pure_fact(x1) or not _pure_fact(x2):
        return None
    t1, t2 = one.targets[0], two.targets[0]
    head1 = (at.dotted(t1) or "").split(".")[0]
    if at.dotted(t1) == at.dotted(t2) or head1 in at.names_in(second) or head1 in at.names_in(x1):
        return None
    if first.span.node is None or second.span.node is None:
        return None
    cat = names.binding_for("torch.cat")
    if cat is not None:
        return OneCall(first.span.node, second.span.node, cat)
    if names.is_free("torch"):
        return OneCall(first.span.node, second.span.node, "torch.cat", imports=True)
    return None


def fix(finding: Finding, payload: OneCall, parsed):
    import libcst as cst
    from libcst.helpers import parse_template_expression

    from snlint.edit.plan import ImportSpec, Plan
    from snlint.edit.syntax import code_of

    # `fix_input` found each call the value of a one-target assignment alone on its line.
    first, second = parsed.node(payload.first, cst.Call), parsed.node(payload.second, cst.Call)
    if first is None or second is None:
        return None
    assign1, assign2 = parsed.parent(first), parsed.parent(second)
    x1, x2 = first.args[0].value, second.args[0].value
    plan = Plan(finding.code, payload.applicability, "")
    if payload.imports:
        plan.imports.append(ImportSpec("torch"))
    value = parse_template_expression(
        "{d}({cat}([{a}, {b}])).split([{sa}.size(0), {sb}.size(0)])",
        d=first.func, cat=cst.parse_expression(payload.cat), a=x1, b=x2, sa=_undetached(x1),
        sb=_undetached(x2))
    t1, t2 = assign1.targets[0].target, assign2.targets[0].target
    targets = cst.Tuple(elements=[
        cst.Element(t1, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
        cst.Element(t2)], lpar=[], rpar=[])
    plan.replace(assign1, assign1.with_changes(
        targets=[assign1.targets[0].with_changes(target=targets)], value=value))
    plan.replace(parsed.parent(assign2), cst.RemoveFromParent())
    plan.message = (f"Score both batches in one call, `{parsed.code(t1)}, {parsed.code(t2)} = "
                    f"{code_of(value)}`, so the batch statistics cover real and generated samples "
                    f"alike (the two calls become one)")
    return plan


def _undetached(node):
    """The expression whose size equals `node`'s: `x` of `x.detach()`, of
    `x.contiguous().detach()`."""
    import libcst as cst

    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value in _SAME_VALUES and not node.args:
        node = node.func.value
    return node


def _assign_of(index: at.FactsAt, call: F.Call) -> F.Assign | None:
    """The one-target assignment whose value is `call`, alone on its line."""
    stmt = index.parent.get(id(call))
    if not isinstance(stmt, F.Assign) or stmt.value is not call or len(stmt.targets) != 1:
        return None
    target = stmt.targets[0]
    if not isinstance(target, (F.Local, F.Global, F.Attr)) or at.dotted(target) is None:
        return None
    body = index.body_of(stmt) or ()
    if any(s is not stmt and s.span.line <= stmt.span.line <= s.span.end_line for s in body):
        return None  # another statement on its line
    return stmt


def _one_input_fact(call: F.Call):
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    return call.args[0].value


# No-argument tensor methods that return the same values, evaluated twice at no harm:
# `inputs.contiguous().detach()` (VQGAN's loss) names the same batch as `inputs`.
_SAME_VALUES = ("detach", "contiguous")


def _pure_fact(e) -> bool:
    """Evaluating `e` twice is harmless: a name, an attribute chain, or `.detach()` /
    `.contiguous()` of one."""
    if at.dotted(e) is not None:
        return True
    read = at.attribute(e.func) if isinstance(e, F.Call) and not e.args else None
    if read is None or read[0] not in _SAME_VALUES:
        return False
    # A module-level chain (`fake.detach`) is kept whole: what it reads is a chain too.
    return isinstance(read[1], str) or _pure_fact(read[1])
