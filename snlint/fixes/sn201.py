"""SN201's fix: wrap the layer in the spectral norm the discriminator uses elsewhere."""

from __future__ import annotations

import libcst as cst

from snlint.config import Config
from snlint.edit.held_out import NeedsWholeFile
from snlint.edit.parsed import ParsedFile
from snlint.edit.names import HOOK_SN
from snlint.edit.plan import SAFE, ImportSpec, Plan
from snlint.edit.syntax import code_of
from snlint.findings import Finding
from snlint.fixes.sn_migration import param_sn_ref
from snlint.torchapi import KEYS_HOOK, KEYS_PARAM, SN_HOOK, SN_PARAM, weight_norm_api


def fix(finding: Finding, parsed: ParsedFile, config: Config) -> Plan | None:
    if finding.get("built_by") or finding.get("shared_with"):
        # SN off by a helper's flag (`conv2d(..., spectral_normed=False)`), or a block the
        # generator builds too: wrapping the layer there would change every instance.
        return None
    call = parsed.node(finding.node, cst.Call)
    if call is None or _weight_normalized(parsed, call):
        return None
    plan = Plan(finding.code, SAFE, "")
    chosen = _sn_wrapper(finding, parsed, plan)
    if chosen is None:
        return None
    func, api = chosen
    keys = KEYS_HOOK if api == SN_HOOK else KEYS_PARAM
    layer = finding.get("layer") or "layer"
    plan.message = (f"Wrap the {layer} in `{code_of(func)}`"
                    f"{' (imported)' if plan.imports else ''}; its state_dict keys change "
                    f"(`weight` becomes {keys})")
    return plan.replace(call, cst.Call(func=func, args=[cst.Arg(call)]))


def _sn_wrapper(finding: Finding, parsed: ParsedFile, plan: Plan) -> tuple[cst.BaseExpression, str | None] | None:
    """The SN callable to wrap a layer with, of the API the discriminator uses (`sn_api`:
    two APIs in one model mix two key layouts, and torch raises where they meet on one
    layer): the discriminator's own spelling when this file calls it so, else the one of
    that API this file calls most (an alias, a partial with its settings), else the
    discriminator's if this file can name it, else a name this file binds to that API,
    else the API's function, imported. Where the discriminator's API is not known, any
    API this file uses, else parametrizations.spectral_norm. A helper that builds a layer
    (`snconv2d`) cannot wrap one, so only SN functions and partials of them count."""
    wanted = finding.get("sn_callee") or ""
    api = finding.get("sn_api") or None
    names = parsed.names
    counts = {text: seen for text, seen in names.sn_callees().items() if api in (None, seen[1])}
    if wanted not in counts and names.sn_calls_held_out():
        raise NeedsWholeFile(parsed.path)  # the file's commonest spelling may be held out
    if counts:
        text = wanted if wanted in counts else sorted(
            counts.items(), key=lambda kv: (-kv[1][0], kv[0]))[0][0]
        return cst.parse_expression(text), counts[text][1]
    if wanted:
        try:
            expr = cst.parse_expression(wanted)
        except cst.ParserSyntaxError:
            expr = None
        if isinstance(expr, (cst.Name, cst.Attribute)):
            found = names.sn_api_of(wanted)
            if found is not None and api in (None, found):
                return expr, found
    if api == "custom":
        # The project's own SN wrapper (`SpectralNorm(module)`): mixing it with torch's
        # SN in one model would normalize layers two different ways.
        return (cst.Name(wanted), "custom") if wanted.isidentifier() and names.binds(wanted) else None
    bound = [(name, found) for name, found in names.sn_names() if api in (None, found)]
    if bound:
        return cst.Name(bound[0][0]), bound[0][1]
    if api == SN_HOOK:
        ref = _hook_sn_ref(parsed, plan)
        return (ref, SN_HOOK) if ref is not None else None
    ref = param_sn_ref(parsed, plan)
    return (ref, SN_PARAM) if ref is not None else None


def _hook_sn_ref(parsed: ParsedFile, plan: Plan) -> cst.BaseExpression | None:
    """An expression for torch.nn.utils.spectral_norm in this file, adding an import when
    the file has no way to name it."""
    if parsed.names.is_free("spectral_norm"):
        plan.imports.append(ImportSpec("torch.nn.utils", "spectral_norm"))
        return cst.Name("spectral_norm")
    ref = parsed.names.binding_for(HOOK_SN)  # `nn.utils.spectral_norm`
    return cst.parse_expression(ref) if ref is not None else None


def _weight_normalized(parsed: ParsedFile, call: cst.Call) -> bool:
    """The layer this call builds goes straight into weight_norm (either API), or into a
    callable that may be it (`norm_f = weight_norm if ... else spectral_norm`): it has
    its own weight normalization, and wrapping it in SN would stack two."""
    wrappers = [call]
    parent = parsed.parent(call)
    if isinstance(parent, cst.Arg):
        outer = parsed.parent(parent)
        if isinstance(outer, cst.Call):
            wrappers.append(outer)
    for node in wrappers:
        if weight_norm_api(parsed.names.qualify(node.func) or ""):
            return True
        if "weight_norm" in parsed.code(node.func):
            return True
        if isinstance(node.func, cst.Name) and node is not call:
            scope = next((a for a in parsed.ancestors(node) if isinstance(a, cst.FunctionDef)), parsed.module)
            if _assigned_weight_norm(parsed, scope, node.func.value):
                return True
    return False


def _assigned_weight_norm(parsed: ParsedFile, scope: cst.CSTNode, name: str) -> bool:
    found = False

    class Assignments(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            nonlocal found
            if any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets) \
                    and "weight_norm" in parsed.code(node.value):
                found = True

    scope.visit(Assignments())
    return found
