"""SN301 batch-norm-in-discriminator: batch statistics in a discriminator, however spelled."""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator

from snlint import facts as F
from snlint.checks import at_node as at
from snlint.checks.couplings import definition_of, trained_couplings
from snlint.checks.emit import Emitter, describe, evidence as joined, lead_sentence
from snlint.checks.fix_data import Owners
from snlint.checks.linked import Shown, confirmed_by, runtime_only
from snlint.checks.shared import discriminator_classes, outside_sites
from snlint.checks.verdicts import (
    leaf_has_batch_statistics, measured_batch_normalization, probed_sources,
)
from snlint.config import Config
from snlint.link.model import DISCRIMINATOR_CLASS
from snlint.findings import UNSAFE, Finding, Location, record
from snlint.graph.facts import Site


CODE = "SN301"


def check(model, emit: Emitter) -> Iterator[Finding]:
    """SN301 from the source's batch norms, confirmed by the runtime leaves and
    `F.batch_norm` calls at their sites; those only the runtime has, and the modules its
    probe measured standardizing with batch statistics, are the graph's."""
    shown_by_source: set[int] = set()
    by_source: list[Location] = []
    inside = frozenset(discriminator_classes(model))
    outside = outside_sites(model)
    for d in model.discriminators:
        runtime = model.runtime.get(d.cls.qualname)
        found = trained_couplings(model, d)
        for c in found:
            by_source.append(c.site)
            where = "its norm_layer default builds " if c.via_default else ""
            finding = emit.finding(
                CODE, c.site,
                f"{where}{c.what} in {describe(d.ref)} normalizes with the statistics of the "
                f"current batch" + (f" ({c.count} instances built here)" if c.count > 1 else ""),
                symbol=c.symbol, discriminator=d.ref,
                data=Owners(inside) if not c.related and (c.site.path, c.site.span) not in outside
                else None,
                evidence=joined(lead_sentence(c.lead), _MECHANISM)).with_(related=c.related)
            if runtime is not None:
                builts = [c.built or c.site, *c.also_built]
                shown = [m for built in builts for m in runtime.leaves_built_at(built)
                         if leaf_has_batch_statistics(m)]
                shown += [s for s in runtime.facts.batch_norm_calls
                          if s is not None and runtime.locate(s) in builts]
                finding = confirmed_by(finding, runtime, shown, shown_by_source)
            yield finding
    shown: list[Shown] = []
    unused = {d.cls.qualname: d.unused_defaults for d in model.discriminators}
    for qualname, runtime in model.runtime.items():
        probed = {s.get("path"): s for s in probed_sources(runtime.facts)}
        for m in runtime.facts.modules:
            if leaf_has_batch_statistics(m) and id(m) not in shown_by_source and not (
                    _unused_default(runtime, m, unused.get(qualname, frozenset()))):
                why = "in training mode" if m.training else "(track_running_stats=False)"
                evidence = _measured(m.path) if m.path in probed else "Seen in the built model"
                shown.append(Shown(
                    runtime, CODE, m.param_site or m.site, m.path,
                    f"{m.type_name} `{m.path}` in {describe(runtime.ref) or 'the discriminator'} "
                    f"normalizes with the statistics of the current batch {why}",
                    evidence=f"{evidence}. {_MECHANISM}"))
        shown += [Shown(runtime, CODE, site, "",
                        f"`F.batch_norm` in {describe(runtime.ref) or 'the discriminator'} "
                        "normalizes with the statistics of the current batch in training",
                        layers=False, evidence=_MECHANISM)
                  for site in runtime.facts.batch_norm_calls if id(site) not in shown_by_source]
        shown += _standardizing(runtime, probed.values(), by_source)
    yield from runtime_only(emit, shown)


_MECHANISM = ("When real and generated samples arrive in separate batches, those statistics "
              "alone tell them apart.")


def _unused_default(runtime, m, unused: frozenset) -> bool:
    """Built by a parameter's default (`norm_layer=nn.BatchNorm2d`) every call replaces."""
    if m.param_site is None or not unused:
        return False
    at = runtime.locate(m.param_site)
    return (at.path, at.span) in unused


def _measured(path: str) -> str:
    return f"Measured: perturbing sample 0 changes the other samples' output of `{path}`"


def _standardizing(runtime, sources, by_source: list[Location]) -> list[Shown]:
    """SN301 for the modules the probe measured standardizing with batch statistics that
    are no batch norm (a hand-rolled whitening layer), at the line that builds each, where
    no batch norm (at that line, or inside the module's class) explains it."""
    found = []
    for source in sources:
        if source.get("kind") == "batch_norm" or not measured_batch_normalization(source):
            continue
        site = Site.from_dict(source.get("site"))
        if runtime.locate(site) in by_source:
            continue
        defined = definition_of(runtime, source)
        if defined is not None and any(map(defined.holds, [*by_source, *runtime.facts.batch_norm_calls])):
            continue
        path = source.get("path", "")
        found.append(Shown(
            runtime, CODE, site, path,
            f"{source.get('type', 'a module')} `{path}` in "
            f"{describe(runtime.ref) or 'the discriminator'} standardizes with the statistics "
            "of the current batch",
            evidence=f"{_measured(path)}, which stays the same "
            "when every sample's input to it is scaled and shifted alike, as a batch norm's "
            f"does. {_MECHANISM}"))
    return found


BATCH_NORMS = {"BatchNorm1d": 1, "BatchNorm2d": 2, "BatchNorm3d": 3, "SyncBatchNorm": 0}
BN_POSITIONS = ("num_features", "eps", "momentum", "affine", "track_running_stats")
BN_ONLY = frozenset({"momentum", "track_running_stats", "process_group"})


def _replacement(bn: str, choice: str) -> tuple[str, str]:
    """(torch.nn class, note) replacing batch norm `bn` under `norm-replacement`."""
    if choice == "identity":
        return "Identity", ""
    if choice == "instancenorm":
        dims = BATCH_NORMS[bn]
        if dims in (2, 3):
            return f"InstanceNorm{dims}d", ""
        return "GroupNorm", (f" (norm-replacement is instancenorm, but {bn} may normalize "
                             f"(N, C) features, where InstanceNorm does not apply: GroupNorm(1, C) instead)")
    return "GroupNorm", ""


# ---------------------------------------------------------------- the fix


@record
class PerSampleNorm:
    """SN301's fix: the batch norm `bn` at `site` (its call, a `functools.partial` of it,
    or the parameter whose default is one of these: `param`) becomes the per-sample norm
    `new`. `ref` names torch.nn.<new> ("": through the batch norm's own alias); `partial`
    names functools.partial for a parameter's default class."""

    site: int
    param: bool  # `site` is a class expression to make a partial of: a parameter's default,
    # or (`binding`) the value of the local name the call is made through
    in_partial: bool  # the batch norm is the class a partial is made of
    bn: str
    new: str
    note: str
    ref: str
    imports: bool = False
    partial: str = ""
    partial_imports: bool = False
    binding: str = ""  # the local name the batch norm class is bound to (`norm_layer`)
    applicability = UNSAFE


def fix_input(finding: Finding, facts: F.FileFacts, config: Config) -> PerSampleNorm | None:
    """A batch norm built in the discriminator's own class (a factory or helper elsewhere
    is shared: replacing it there would change it for every caller, the generator
    included), whose arguments map onto the replacement's."""
    choice = (config.norm_replacement or "groupnorm").lower()
    if choice not in ("groupnorm", "instancenorm", "identity"):
        return None
    index, names, site = at.fact_at(finding, facts)
    if not isinstance(site, (F.Call, F.Param)) or not _in_discriminator(finding, index, site):
        return None
    param = isinstance(site, F.Param)
    e = site.default if param else site
    # `norm_layer(C)` through a local bound to the class (`norm_layer = nn.BatchNorm2d` in
    # one branch, VQGAN's NLayerDiscriminator): the binding is the default to replace.
    bound = _bound_class(index, names, site) if not param else None
    if bound is not None:
        found = _of_class(finding, names, bound, choice)
        return replace(found, binding=site.func.name) if found is not None else None
    return _fix_input_at(finding.node, names, param, e, choice)


def _of_class(finding: Finding, names: F.Names, e, choice: str) -> PerSampleNorm | None:
    """The fix that replaces class expression `e` (`nn.BatchNorm2d`) with a partial of the
    per-sample norm, `e` bound to a local name the discriminator calls."""
    if e.span.node is None:
        return None
    return _fix_input_at(e.span.node, names, True, e, choice)


def _fix_input_at(node: int, names: F.Names, param: bool, e, choice: str) -> PerSampleNorm | None:
    in_partial = isinstance(e, F.Call) and at.qualified(names, e.func) == "functools.partial"
    if in_partial:
        pos = e.positional()
        if not pos or at.has_star(e):
            return None
        like, args = pos[0].value, [a for a in e.args if a is not pos[0]]
    elif e is None or param and isinstance(e, F.Call):
        return None
    else:
        like, args = (e, ()) if param else (e.func, e.args)
    bn = at.torch_nn_type(names, like)
    if bn not in BATCH_NORMS:
        return None
    new, note = _replacement(bn, choice)
    ref = _nn_ref(names, new, like)
    if ref is None:
        return None
    found = PerSampleNorm(node, param, in_partial, bn, new, note, *ref)
    if in_partial:
        return found if new == "Identity" or not args or _norm_args_fit(args, True) else None
    if not param:
        return found if _norm_args_fit(args, False) else None
    if new == "Identity":
        return found
    partial = names.binding_for("functools.partial")
    if partial is not None:
        return replace(found, partial=partial)
    if names.is_free("functools"):
        return replace(found, partial="functools.partial", partial_imports=True)
    return None


def _bound_class(index: at.FactsAt, names: F.Names, call) -> F.Expr | None:
    """The class expression a call `name(...)` reaches through the one assignment of `name`,
    a local of the enclosing function (not a parameter), that binds a batch norm class."""
    if not isinstance(call, F.Call) or not isinstance(call.func, F.Local):
        return None
    name = call.func.name
    fn = next((a for a in index.ancestors(call) if isinstance(a, F.FunctionFacts)), None)
    if fn is None or any(p.name == name for p in fn.params):
        return None
    facts = list(at.walk(*fn.body))
    # A loop over classes (`for norm_layer in (...)`) binds it too: not one binding to edit.
    if any(isinstance(f, F.For) and name in at.names_in(f.target) for f in facts):
        return None
    values = [stmt.value for stmt in facts if isinstance(stmt, F.Assign)
              and any(isinstance(t, F.Local) and t.name == name for t in stmt.targets)]
    bn = [v for v in values if at.torch_nn_type(names, v) in BATCH_NORMS]
    return bn[0] if len(bn) == 1 else None


def _nn_ref(names: F.Names, new: str, like) -> tuple[str, bool] | None:
    """How the fix names torch.nn.<new>: through the batch norm's alias (""), any alias of
    it in the file, or an added `from torch.nn import <new>` (True: imported)."""
    if isinstance(like, (F.Attr, F.Global)) and at.prefix_quals(names, like)[:1] == ["torch.nn"]:
        return "", False
    ref = names.binding_for(f"torch.nn.{new}")
    if ref is not None:
        return ref, False
    if names.is_free(new):
        return new, True
    return None


def _in_discriminator(finding: Finding, index: at.FactsAt, site) -> bool:
    """The nearest class around the site is the finding's discriminator, in its own file,
    or a discriminator class only discriminators are made of."""
    ref = finding.discriminator
    if ref is None:
        return False
    path, _, name = ref.cls.rpartition(":")
    cls = next((a for a in index.ancestors(site) if isinstance(a, F.ClassFacts)), None)
    if cls is None:
        return False
    if isinstance(finding.data, Owners) and cls.qualname in finding.data.classes \
            and DISCRIMINATOR_CLASS.search(cls.name):
        return True
    return path == finding.path and cls.name == name.rpartition(".")[2]


def bn_parameters(args) -> list[str] | None:
    """The batch-norm parameter each (star, keyword) argument passes, or None when one
    cannot be named: `fix_input` and `fix` both read arguments through it."""
    named: list[str] = []
    index = 0
    for star, keyword in args:
        if star:
            return None
        if keyword is None:
            if index >= len(BN_POSITIONS):
                return None
            named.append(BN_POSITIONS[index])
            index += 1
        else:
            named.append(keyword)
    return named


def _norm_args_fit(args, in_partial: bool) -> bool:
    """`_norm_args` maps the batch norm's arguments."""
    named = bn_parameters((a.star, a.keyword) for a in args)
    return named is not None and ("num_features" in named or in_partial)


# ---------------------------------------------------------------- the libcst half


def fix(finding: Finding, payload: PerSampleNorm, parsed):
    import libcst as cst

    from snlint.edit.plan import ImportSpec, Plan

    if payload.binding:
        node = parsed.node(payload.site, cst.BaseExpression)
    elif payload.param:
        param = parsed.node(payload.site, cst.Param)
        node = param.default if param is not None else None
    else:
        node = parsed.node(payload.site, cst.Call)
    if node is None:
        return None
    plan = Plan(finding.code, payload.applicability, "")
    if payload.ref and payload.imports:
        plan.imports.append(ImportSpec("torch.nn", payload.new))
    if payload.in_partial:
        return _replace_norm_partial(plan, payload, node)
    if payload.param:
        return _replace_norm_default(plan, payload, node)
    return _replace_norm_call(plan, payload, node)


def _ref(payload: PerSampleNorm, like):
    """The expression naming torch.nn.<new> (`PerSampleNorm.ref`)."""
    import libcst as cst

    if payload.ref:
        return cst.parse_expression(payload.ref)
    return cst.Attribute(value=like.value, attr=cst.Name(payload.new)) if isinstance(like, cst.Attribute) else None


def _no_space():
    import libcst as cst

    return cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                           whitespace_after=cst.SimpleWhitespace(""))


def _space_comma():
    import libcst as cst

    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _affine_true():
    import libcst as cst

    return cst.Arg(cst.Name("True"), keyword=cst.Name("affine"), equal=_no_space())


def _lead_comma(whitespace):
    """A comma after an argument inserted first: on its own line when the call puts its
    arguments on lines of their own."""
    import libcst as cst

    if isinstance(whitespace, cst.ParenthesizedWhitespace):
        return cst.Comma(whitespace_after=whitespace)
    return _space_comma()


def _norm_args(call_args, new: str, lead) -> tuple[list, list[str]]:
    """The replacement's arguments from a batch norm's (after the class, for a partial),
    which `fix_input` found it can name, and the names dropped; `lead`: the comma after
    GroupNorm's inserted `1`."""
    import libcst as cst

    from snlint.edit.syntax import merge_comma

    names = bn_parameters((a.star, a.keyword.value if a.keyword is not None else None)
                          for a in call_args)
    named = list(zip(names, call_args))
    if new == "Identity":
        return [], [n for n in names if n != "num_features"]
    dropped = [n for n in names if n in BN_ONLY]
    last_original = call_args[-1] if call_args else None
    # (argument, the comma it keeps when it is not last, or None for a separator)
    kept: list[tuple] = []
    positional_ok = True
    for name, a in named:
        if name in BN_ONLY:
            positional_ok = False  # what followed a dropped positional becomes a keyword
            continue
        own = a.comma if isinstance(a.comma, cst.Comma) and a is not last_original else None
        if a.keyword is None and not positional_ok:
            a = a.with_changes(keyword=cst.Name(name), equal=_no_space())
        if new == "GroupNorm" and name == "num_features" and a.keyword is not None:
            a = a.with_changes(keyword=cst.Name("num_channels"))
        kept.append((a, own))
    if new == "GroupNorm":
        kept.insert(0, (cst.Arg(cst.Integer("1")), lead))
    if new.startswith("InstanceNorm") and "affine" not in names:
        kept.append((_affine_true(), None))
    separators = [a.comma for a in call_args[:-1] if isinstance(a.comma, cst.Comma)]
    sep = separators[0] if separators else _space_comma()
    # The last argument takes the original last one's comma (a trailing comma and the
    # line break before `)` stay).
    last_comma = last_original.comma if last_original is not None else cst.MaybeSentinel.DEFAULT
    last_ws = (last_original.whitespace_after_arg if last_original is not None
               else cst.SimpleWhitespace(""))
    out = []
    for i, (a, own) in enumerate(kept):
        if i == len(kept) - 1:
            # A comment after the dropped last argument was about it; one after this
            # argument stays.
            comma = last_comma if own is None else merge_comma(own, last_comma)
            out.append(a.with_changes(comma=comma, whitespace_after_arg=last_ws))
        else:
            out.append(a.with_changes(comma=own or sep, whitespace_after_arg=cst.SimpleWhitespace("")))
    return out, dropped


def _state_note(new: str) -> str:
    if new == "Identity":
        return ("the layer's state_dict entries (`weight`, `bias`, `running_mean`, `running_var`, "
                "`num_batches_tracked`) are gone")
    return ("the layer's `running_mean`, `running_var` and `num_batches_tracked` buffers leave "
            "the state_dict (`weight` and `bias` stay)")


def _replaced(plan, payload: PerSampleNorm, old, new, dropped: list[str], how: str = ""):
    from snlint.edit.syntax import code_of

    plan.message = (f"Replace {payload.bn} with {code_of(new)}, a per-sample norm"
                    f"{how}{payload.note}"
                    + (f"; batch-norm-only {', '.join(dropped)} dropped" if dropped else "")
                    + f"; {_state_note(payload.new)}")
    return plan.replace(old, new)


def _replace_norm_call(plan, payload: PerSampleNorm, call):
    import libcst as cst

    new = payload.new
    ref = _ref(payload, call.func)
    if ref is None:
        return None
    args, dropped = _norm_args(call.args, new, _lead_comma(call.whitespace_before_args))
    if not args and new == "Identity":
        new_call = call.with_changes(func=ref, args=[], whitespace_before_args=cst.SimpleWhitespace(""))
    else:
        new_call = call.with_changes(func=ref, args=args)
    return _replaced(plan, payload, call, new_call, dropped)


def _replace_norm_partial(plan, payload: PerSampleNorm, call):
    import libcst as cst

    from snlint.edit.syntax import positional

    cls = positional(call)[0]
    new = payload.new
    ref = _ref(payload, cls.value)
    if ref is None:
        return None
    rest = [a for a in call.args if a is not cls]
    if new == "Identity":
        replacement = ref
        dropped = [a.keyword.value if a.keyword else "argument" for a in rest]
    else:
        first_comma = cls.comma if isinstance(cls.comma, cst.Comma) else _space_comma()
        if rest:
            args, dropped = _norm_args(rest, new, first_comma)
        else:
            args = [cst.Arg(cst.Integer("1")) if new == "GroupNorm" else _affine_true()]
            dropped = []
        first = cls.with_changes(value=ref, comma=first_comma if args else cls.comma)
        replacement = call.with_changes(args=[first, *args])
    return _replaced(plan, payload, call, replacement, dropped,
                     ", so that calling it with the channel count still works")


def _replace_norm_default(plan, payload: PerSampleNorm, default):
    import libcst as cst

    from snlint.edit.plan import ImportSpec
    from snlint.edit.syntax import code_of

    new = payload.new
    ref = _ref(payload, default)
    if ref is None:
        return None
    if new == "Identity":
        replacement = ref
    else:
        if payload.partial_imports:
            plan.imports.append(ImportSpec("functools"))
        extra = cst.Arg(cst.Integer("1")) if new == "GroupNorm" else _affine_true()
        replacement = cst.Call(func=cst.parse_expression(payload.partial),
                               args=[cst.Arg(ref, comma=_space_comma()), extra])
    replacement = replacement.with_changes(lpar=default.lpar, rpar=default.rpar)
    name = payload.binding or "norm_layer"
    what = f"Bind `{name}` to" if payload.binding else "Make the norm_layer default"
    plan.message = (f"{what} {code_of(replacement)}, a per-sample norm that "
                    f"`{name}(C)` still builds{payload.note}; {_state_note(new)}")
    return plan.replace(default, replacement)
