"""The graph pass: build discriminators with torch in a child process, read their facts.
Only the child-process modules import torch."""

__all__ = ["GraphTarget", "LeafFacts", "SNState", "Site", "TargetFacts", "run_graph"]

_FACTS = frozenset({"GraphTarget", "LeafFacts", "SNState", "Site", "TargetFacts"})


def __getattr__(name: str):
    # On first use: every run imports this package (its diagnostics module), and a run
    # without the graph pass needs neither the facts nor the runner (a tenth of start-up).
    if name in _FACTS:
        from snlint.graph import facts

        return getattr(facts, name)
    if name == "run_graph":
        from snlint.graph.runner import run_graph

        return run_graph
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
