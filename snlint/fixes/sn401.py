"""SN401's fix: score the real and the generated batch in one call of the discriminator."""

from __future__ import annotations

import libcst as cst

from snlint.config import Config
from snlint.edit.names import dotted
from snlint.edit.parsed import ParsedFile
from snlint.edit.plan import UNSAFE, ImportSpec, Plan
from snlint.edit.syntax import code_of, names_in
from snlint.findings import Finding


def fix(finding: Finding, parsed: ParsedFile, config: Config) -> Plan | None:
    first = parsed.node(finding.node, cst.Call)
    second_at = finding.get("second")
    if first is None or not second_at or second_at[0] != finding.path:
        return None
    one = _forward_assign(parsed, first)
    if one is None:
        return None
    assign1, line1 = one
    block = parsed.parent(line1)
    body = getattr(block, "body", None)
    if not isinstance(body, (list, tuple)) or line1 not in body:
        return None
    index = list(body).index(line1)
    if index + 1 >= len(body):
        return None
    line2 = body[index + 1]
    if not isinstance(line2, cst.SimpleStatementLine) or len(line2.body) != 1:
        return None
    assign2 = line2.body[0]
    if not isinstance(assign2, cst.Assign) or not isinstance(assign2.value, cst.Call):
        return None
    second = assign2.value
    start = parsed.positions[second].start
    if (start.line, start.column + 1) != tuple(second_at[1:3]):
        return None
    if _forward_assign(parsed, second) is None:
        return None
    if parsed.code(first.func).strip() != parsed.code(second.func).strip():
        return None
    x1, x2 = _one_input(first), _one_input(second)
    if x1 is None or x2 is None:
        return None
    s1, s2 = _pure(parsed, x1), _pure(parsed, x2)
    if s1 is None or s2 is None:
        return None
    t1, t2 = assign1.targets[0].target, assign2.targets[0].target
    head1 = dotted(t1).split(".")[0]  # type: ignore[union-attr]
    if dotted(t1) == dotted(t2) or head1 in names_in(second) or head1 in names_in(x1):
        return None
    plan = Plan(finding.code, UNSAFE, "")
    torch_cat = parsed.names.binding_for("torch.cat")
    if torch_cat is None:
        if not parsed.names.is_free("torch"):
            return None
        plan.imports.append(ImportSpec("torch"))
        torch_cat = "torch.cat"
    from libcst.helpers import parse_template_expression

    value = parse_template_expression(
        "{d}({cat}([{a}, {b}])).split([{sa}.size(0), {sb}.size(0)])",
        d=first.func, cat=cst.parse_expression(torch_cat), a=x1, b=x2, sa=s1, sb=s2)
    targets = cst.Tuple(elements=[
        cst.Element(t1, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
        cst.Element(t2)], lpar=[], rpar=[])
    plan.replace(assign1, assign1.with_changes(
        targets=[assign1.targets[0].with_changes(target=targets)], value=value))
    plan.replace(line2, cst.RemoveFromParent())
    plan.message = (f"Score both batches in one call, `{parsed.code(t1)}, {parsed.code(t2)} = "
                    f"{code_of(value)}`, so the batch statistics cover real and generated samples "
                    f"alike (the two calls become one)")
    return plan


def _pure(parsed: ParsedFile, node: cst.BaseExpression) -> cst.BaseExpression | None:
    """`node` when evaluating it twice is harmless (a name, an attribute chain, or
    `.detach()` of one); returns the expression whose size equals it."""
    if isinstance(node, cst.Name) or (isinstance(node, cst.Attribute) and dotted(node) is not None):
        return node
    if (isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "detach"):
        inner = _pure(parsed, node.func.value)
        return inner
    return None


def _forward_assign(parsed: ParsedFile, call: cst.Call) -> tuple[cst.Assign, cst.SimpleStatementLine] | None:
    assign = parsed.parent(call)
    if not isinstance(assign, cst.Assign) or assign.value is not call or len(assign.targets) != 1:
        return None
    line = parsed.parent(assign)
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    target = assign.targets[0].target
    if not isinstance(target, (cst.Name, cst.Attribute)) or dotted(target) is None:
        return None
    return assign, line


def _one_input(call: cst.Call) -> cst.BaseExpression | None:
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    return call.args[0].value
