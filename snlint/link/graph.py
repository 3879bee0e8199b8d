"""The graph pass from the parent's side: build each discriminator the link step found
(in a child process) and read its findings and facts; `snlint.link.join` joins them to
the linked project."""

from __future__ import annotations

import importlib.util
import os
from snlint.checks.catalogue import Rule
from snlint.config import Config
from snlint.facts import FileFacts, For, While
from snlint.findings import Finding, Location, Span, diagnostic

def graph_enabled(config: Config) -> bool:
    if config.graph is not None:
        return config.graph
    return importlib.util.find_spec("torch") is not None


def _model_kwargs(config: Config, relpath: str, cls: str) -> dict | None:
    for key, value in config.models.items():
        path, _, name = key.rpartition(":")
        if name == cls and (path == relpath or relpath.endswith("/" + path)):
            return dict(value)
    return None


def graph_pass(project, config: Config, rules: dict[str, Rule],
               only: set[str] | None = None) -> tuple[list[Finding], dict]:
    """Findings of the graph pass, and the facts of each discriminator class it built
    (by qualname)."""
    from snlint.checks.graph_rules import graph_findings
    from snlint.graph import GraphTarget, run_graph

    displays = {os.path.abspath(f.path): f.path for f in project.index.files}
    targets, ds = [], []
    skipped: list[Finding] = []
    for d in project.discriminators:
        if only is not None and d.file.path not in only:
            continue  # a file read only for context: not linted, not imported
        absolute = os.path.abspath(d.file.path)
        if not os.path.isfile(absolute) or absolute.endswith(".ipynb"):
            continue  # in-memory text (stdin, tests) or notebook cells: nothing to import
        loop = _top_level_loop(d.file)
        if loop is not None:
            # Importing it would train (and write files, download data) at import time.
            skipped.append(diagnostic(
                "SN910", d.file.path,
                f"graph pass: not imported: {d.file.path} runs a loop at import time (line "
                f"{loop.line}); move the training code under `if __name__ == \"__main__\":` "
                f"to let the graph pass build {d.cls.name}", Span(loop.line, loop.column,
                                                                  loop.line, loop.column + 1)))
            continue
        rel = config.relative_path(d.file.path)
        targets.append(GraphTarget(absolute, d.file.path, d.cls.name,
                                   _model_kwargs(config, rel, d.cls.name), str(config.root)))
        ds.append(d)
    if not targets:
        return list(dict.fromkeys(skipped)), {}
    results = run_graph(targets, config.graph_timeout)
    findings: list[Finding] = []
    built: dict = {}
    for d, facts in zip(ds, results):
        fallback = Location(d.file.path, d.cls.span)
        findings.extend(graph_findings(facts, rules, display_for=displays.get, fallback=fallback,
                                       evidence=d.ref.evidence))
        if facts.status == "ok":
            built[d.cls.qualname] = facts
    return list(dict.fromkeys(skipped + findings)), built


def _top_level_loop(file: FileFacts) -> Span | None:
    """A `for`/`while` at module level (outside any `if`, as `__main__` guards are): the
    file is a training script that runs when imported."""
    for stmt in file.body:
        if isinstance(stmt, (For, While)):
            return stmt.span
    return None
