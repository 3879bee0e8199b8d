"""SN301's fix: replace the discriminator's batch norm with a per-sample norm (the
`norm-replacement` setting: GroupNorm, InstanceNorm or Identity)."""

from __future__ import annotations

from typing import Any, Sequence

import libcst as cst

from snlint.checks.sn301 import (BATCH_NORMS, BN_ONLY, _replacement, bn_parameters,
                                  discriminator_class_here)
from snlint.config import Config
from snlint.edit.parsed import ParsedFile
from snlint.edit.plan import UNSAFE, ImportSpec, Plan
from snlint.edit.syntax import code_of, has_star, merge_comma, positional, torch_nn_type
from snlint.findings import Finding


def fix(finding: Finding, parsed: ParsedFile, config: Config) -> Plan | None:
    choice = (config.norm_replacement or "groupnorm").lower()
    if choice not in ("groupnorm", "instancenorm", "identity"):
        return None
    call = parsed.node(finding.node, cst.Call)
    param = parsed.node(finding.node, cst.Param) if call is None else None
    site = call or param
    if site is None or not _in_discriminator_class(finding, parsed, site):
        return None
    if call is not None:
        return _replace_norm_call(finding, parsed, call, choice)
    if param is not None and param.default is not None:
        return _replace_norm_default(finding, parsed, param.default, choice)
    return None


def _nn_ref(parsed: ParsedFile, plan: Plan, name: str, like: cst.CSTNode | None) -> cst.BaseExpression | None:
    """An expression naming torch.nn.<name>: through the alias `like` used (`nn.`),
    else any alias of torch.nn in the file, else an added `from torch.nn import name`."""
    if isinstance(like, cst.Attribute) and parsed.names.qualify(like.value) == "torch.nn":
        return cst.Attribute(value=like.value, attr=cst.Name(name))
    ref = parsed.names.binding_for(f"torch.nn.{name}")
    if ref is not None:
        return cst.parse_expression(ref)
    if parsed.names.is_free(name):
        plan.imports.append(ImportSpec("torch.nn", name))
        return cst.Name(name)
    return None


def _partial_ref(parsed: ParsedFile, plan: Plan) -> cst.BaseExpression | None:
    ref = parsed.names.binding_for("functools.partial")
    if ref is not None:
        return cst.parse_expression(ref)
    if parsed.names.is_free("functools"):
        plan.imports.append(ImportSpec("functools"))
        return cst.parse_expression("functools.partial")
    return None


_NO_SPACE = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                           whitespace_after=cst.SimpleWhitespace(""))


_SPACE_COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _affine_true() -> cst.Arg:
    return cst.Arg(cst.Name("True"), keyword=cst.Name("affine"), equal=_NO_SPACE)


def _lead_comma(whitespace: cst.BaseParenthesizableWhitespace) -> cst.Comma:
    """A comma after an argument inserted first: on its own line when the call puts its
    arguments on lines of their own."""
    if isinstance(whitespace, cst.ParenthesizedWhitespace):
        return cst.Comma(whitespace_after=whitespace)
    return _SPACE_COMMA


def _norm_args(call_args: Sequence[cst.Arg], new: str, in_partial: bool,
               lead: cst.Comma) -> tuple[list[cst.Arg], list[str]] | None:
    """The arguments of the replacement norm from a batch norm's arguments (after the
    class itself, for a partial), and the names of the arguments dropped. `lead` is the
    comma after an inserted leading argument (GroupNorm's `1`)."""
    names = bn_parameters((a.star, a.keyword.value if a.keyword is not None else None)
                          for a in call_args)
    if names is None:
        return None
    named = list(zip(names, call_args))
    if "num_features" not in names and not in_partial:
        return None
    if new == "Identity":
        return [], [n for n in names if n != "num_features"]
    dropped = [n for n in names if n in BN_ONLY]
    last_original = call_args[-1] if call_args else None
    # (argument, the comma it keeps when it is not last, or None for a separator)
    kept: list[tuple[cst.Arg, Any]] = []
    positional_ok = True
    for name, a in named:
        if name in BN_ONLY:
            positional_ok = False  # what followed a dropped positional becomes a keyword
            continue
        own = a.comma if isinstance(a.comma, cst.Comma) and a is not last_original else None
        if a.keyword is None and not positional_ok:
            a = a.with_changes(keyword=cst.Name(name), equal=_NO_SPACE)
        if new == "GroupNorm" and name == "num_features" and a.keyword is not None:
            a = a.with_changes(keyword=cst.Name("num_channels"))
        kept.append((a, own))
    if new == "GroupNorm":
        kept.insert(0, (cst.Arg(cst.Integer("1")), lead))
    if new.startswith("InstanceNorm") and "affine" not in names:
        kept.append((_affine_true(), None))
    separators = [a.comma for a in call_args[:-1] if isinstance(a.comma, cst.Comma)]
    sep = separators[0] if separators else _SPACE_COMMA
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


def _in_discriminator_class(finding: Finding, parsed: ParsedFile, node: cst.CSTNode) -> bool:
    """Whether `node` is inside the class of the finding's discriminator (in its body or
    its methods). A batch norm built elsewhere (a `get_norm_layer("batch")` factory, a
    helper function, another class) is shared: replacing it there would change it for
    every caller, the generator included."""
    name = discriminator_class_here(finding)
    if name is None:
        return False
    for anc in parsed.ancestors(node):
        if isinstance(anc, cst.ClassDef):
            return anc.name.value == name
    return False


def _state_note(new: str) -> str:
    if new == "Identity":
        return ("the layer's state_dict entries (`weight`, `bias`, `running_mean`, `running_var`, "
                "`num_batches_tracked`) are gone")
    return ("the layer's `running_mean`, `running_var` and `num_batches_tracked` buffers leave "
            "the state_dict (`weight` and `bias` stay)")


def _replace_norm_call(finding: Finding, parsed: ParsedFile, call: cst.Call, choice: str) -> Plan | None:
    bn = torch_nn_type(parsed, call.func)
    if bn in BATCH_NORMS:
        plan = Plan(finding.code, UNSAFE, "")
        new, note = _replacement(bn, choice)
        ref = _nn_ref(parsed, plan, new, call.func)
        built = _norm_args(call.args, new, False, _lead_comma(call.whitespace_before_args))
        if ref is None or built is None:
            return None
        args, dropped = built
        if not args and new == "Identity":
            new_call = call.with_changes(func=ref, args=[], whitespace_before_args=cst.SimpleWhitespace(""))
        else:
            new_call = call.with_changes(func=ref, args=args)
        plan.message = (f"Replace {bn} with {code_of(new_call)}, a per-sample norm{note}"
                        + (f"; batch-norm-only {', '.join(dropped)} dropped" if dropped else "")
                        + f"; {_state_note(new)}")
        return plan.replace(call, new_call)
    if parsed.names.qualify(call.func) == "functools.partial":
        return _replace_norm_partial(finding, parsed, call, choice)
    return None


def _replace_norm_partial(finding: Finding, parsed: ParsedFile, call: cst.Call, choice: str) -> Plan | None:
    pos = positional(call)
    if not pos or has_star(call):
        return None
    bn = torch_nn_type(parsed, pos[0].value)
    if bn not in BATCH_NORMS:
        return None
    plan = Plan(finding.code, UNSAFE, "")
    new, note = _replacement(bn, choice)
    ref = _nn_ref(parsed, plan, new, pos[0].value)
    if ref is None:
        return None
    rest = [a for a in call.args if a is not pos[0]]
    if new == "Identity":
        replacement: cst.BaseExpression = ref
        dropped = [a.keyword.value if a.keyword else "argument" for a in rest]
    else:
        first_comma = pos[0].comma if isinstance(pos[0].comma, cst.Comma) else _SPACE_COMMA
        if rest:
            built = _norm_args(rest, new, True, first_comma)
            if built is None:
                return None
            args, dropped = built
        else:
            args = [cst.Arg(cst.Integer("1")) if new == "GroupNorm" else _affine_true()]
            dropped = []
        first = pos[0].with_changes(value=ref, comma=first_comma if args else pos[0].comma)
        replacement = call.with_changes(args=[first, *args])
    plan.message = (f"Replace {bn} with {code_of(replacement)}, a per-sample norm, so that "
                    f"calling it with the channel count still works{note}"
                    + (f"; batch-norm-only {', '.join(dropped)} dropped" if dropped else "")
                    + f"; {_state_note(new)}")
    return plan.replace(call, replacement)


def _replace_norm_default(finding: Finding, parsed: ParsedFile, default: cst.BaseExpression,
                          choice: str) -> Plan | None:
    if isinstance(default, cst.Call):
        return _replace_norm_partial(finding, parsed, default, choice) if (
            parsed.names.qualify(default.func) == "functools.partial") else None
    bn = torch_nn_type(parsed, default)
    if bn not in BATCH_NORMS:
        return None
    plan = Plan(finding.code, UNSAFE, "")
    new, note = _replacement(bn, choice)
    ref = _nn_ref(parsed, plan, new, default)
    if ref is None:
        return None
    if new == "Identity":
        replacement: cst.BaseExpression = ref
    else:
        partial = _partial_ref(parsed, plan)
        if partial is None:
            return None
        extra = cst.Arg(cst.Integer("1")) if new == "GroupNorm" else _affine_true()
        replacement = cst.Call(func=partial, args=[cst.Arg(ref, comma=_SPACE_COMMA), extra])
    replacement = replacement.with_changes(lpar=default.lpar, rpar=default.rpar)
    plan.message = (f"Make the norm_layer default {code_of(replacement)}, a per-sample norm that "
                    f"`norm_layer(C)` still builds{note}; {_state_note(new)}")
    return plan.replace(default, replacement)
