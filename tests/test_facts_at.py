"""`FactsAt` reads a file's facts one top-level statement at a time, as keys on its lines
are asked for, and answers as an index of the whole file does."""

from __future__ import annotations

import textwrap

from snlint import facts as F
from snlint.checks.at_node import FactsAt
from snlint.source import extract_file

SOURCE = textwrap.dedent('''\
    import torch.nn as nn

    class A(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3)

    a = D(x)
    b = D(y)
    ''')


def _facts() -> F.FileFacts:
    facts, _ = extract_file(SOURCE, "m.py", "m.py")
    return facts


def _calls(facts: F.FileFacts) -> list[F.Call]:
    out = []
    stack = list(facts.body)
    while stack:
        x = stack.pop()
        if isinstance(x, F.Call):
            out.append(x)
        if isinstance(x, tuple):
            stack.extend(x)
        elif hasattr(type(x), "__dataclass_fields__") and not isinstance(x, F.Span):
            stack.extend(getattr(x, f) for f in type(x).__dataclass_fields__ if f != "span")
    return out


def test_a_key_reads_only_its_statement():
    facts = _facts()
    conv = next(c for c in _calls(facts) if c.span.line == 6 and isinstance(c.func, F.Global))
    index = FactsAt(facts)
    assert index.at(conv.span.node) is conv
    assert [s.span.line for s in index._pending] == [8, 9]  # the two assignments, not read
    assert any(isinstance(a, F.FunctionFacts) for a in index.ancestors(conv))


def test_a_fact_of_a_statement_not_read_finds_its_parent():
    facts = _facts()
    first = next(c for c in _calls(facts) if c.span.line == 8)
    second = next(c for c in _calls(facts) if c.span.line == 9)
    index = FactsAt(facts)
    assert isinstance(index.at(first.span.node), F.Call)
    assert isinstance(index.parent.get(id(second)), F.Assign)
    assert index.parent.get(id(index.parent.get(id(first)))) is None  # a top-level statement
