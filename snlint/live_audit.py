"""`snlint.audit`: the graph pass on a live module, in this process (a test, a notebook).

Imported lazily: `import snlint` stays torch-free, and this module imports torch (through
`snlint.graph.live`) only when `audit` is called.

    >>> findings = snlint.audit(lambda: Discriminator(ndf=64))
    >>> [f.code for f in findings]

A factory lets snlint record where each layer is built and where SN is applied, so the
findings carry source positions; a module built before the call has none, and its
findings sit at the class definition.
"""

from __future__ import annotations

from typing import Any

from snlint.catalogue import load_catalogue
from snlint.findings import Finding
from snlint.graph_pass import built_findings


def audit(target: Any, example_input: Any = None) -> list[Finding]:
    """Graph-pass findings for an `nn.Module`, or for a zero-argument factory that builds
    one.

    `example_input` (a tensor, or a tuple of forward arguments) replaces the probe's guess
    of an input. The module is inspected in training mode; a passed module is run, and its
    state (parameters, buffers, modes, attributes) and the random generators are restored
    afterwards.
    """
    from snlint.graph.live import collect_live, display_for  # torch: only when called

    facts, fallback = collect_live(target, example_input)
    return built_findings(facts, load_catalogue(), display_for=display_for, fallback=fallback,
                          evidence="configuration")
