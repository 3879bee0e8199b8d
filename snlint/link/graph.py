"""Join the graph pass to the source pass: build each discriminator the link step found,
and merge what the runtime saw with what the source said (one finding per mistake)."""

from __future__ import annotations

import importlib.util
import os
from dataclasses import replace

from snlint.checks.catalogue import Rule
from snlint.config import Config
from snlint.facts import FileFacts, For, While
from snlint.findings import Finding, Location, Span, diagnostic

# Source findings the runtime can clear: where the graph built the discriminator and saw
# the site, a mistake it does not confirm is not there (BN kept in eval, SN added by apply).
CLEARABLE = frozenset({"SN101", "SN102", "SN103", "SN105", "SN107", "SN201", "SN301"})


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
    """Findings of the graph pass, and per discriminator class whether it has batch
    statistics at runtime (None where it could not be built)."""
    from snlint.checks.graph_rules import graph_findings, has_batch_statistics
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
    verdicts: dict = {}
    for d, facts in zip(ds, results):
        fallback = Location(d.file.path, d.cls.span)
        findings.extend(graph_findings(facts, rules, display_for=displays.get, fallback=fallback,
                                       evidence=d.ref.evidence))
        if facts.status == "ok":
            verdicts[d.cls.qualname] = (has_batch_statistics(facts), facts, d)
    return list(dict.fromkeys(skipped + findings)), verdicts


def merge(source: list[Finding], graph: list[Finding], verdicts: dict, displays) -> list[Finding]:
    from snlint.checks.graph_rules import built_locations, built_note

    by_key = {(f.code, f.path, f.span): f for f in graph if not f.is_diagnostic}
    # A layer a helper builds inside the container it returns: the graph sees it at each
    # helper call, the source pass at the construction inside the helper. One finding.
    by_origin: dict[tuple, list[tuple]] = {}
    for g in graph:
        if not g.is_diagnostic and g.get("origin"):
            by_origin.setdefault((g.code, *g.get("origin")), []).append((g.code, g.path, g.span))
    built: dict[str, set] = {}
    uncoupled: set[str] = set()
    for coupled, facts, d in verdicts.values():
        built[d.ref.cls] = built_locations(facts, displays.get)
        if not coupled:
            uncoupled.add(d.ref.cls)
    out: list[Finding] = []
    for f in source:
        key = (f.code, f.path, f.span)
        same = [k for k in dict.fromkeys([key, *by_origin.get(key, [])]) if k in by_key]
        if same:
            note = built_note(by_key[same[0]].get("built_with") or "")
            out.append(replace(f, pass_="source+graph", message=f.message + note))
            for k in same:
                del by_key[k]
            continue
        ref = f.discriminator.cls if f.discriminator else None
        if f.code in CLEARABLE and ref in built and (f.path, f.span) in built[ref]:
            continue  # built and seen, and the runtime does not confirm it
        if f.code in ("SN303", "SN401") and ref in uncoupled:
            continue  # the built discriminator has no batch statistics after all
        out.append(f)
    out.extend(by_key.values())
    out.extend(f for f in graph if f.is_diagnostic)
    return out


def _top_level_loop(file: FileFacts) -> Span | None:
    """A `for`/`while` at module level (outside any `if`, as `__main__` guards are): the
    file is a training script that runs when imported."""
    for stmt in file.body:
        if isinstance(stmt, (For, While)):
            return stmt.span
    return None
