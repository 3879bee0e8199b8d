"""Join the graph pass to the source pass: build each discriminator the link step found,
and merge what the runtime saw with what the source said (one finding per mistake)."""

from __future__ import annotations

import importlib.util
import os
from dataclasses import replace

from snlint.checks.catalogue import Rule
from snlint.config import Config
from snlint.findings import Finding, Location
from snlint.link.graph_diagnostics import import_diagnostics
from snlint.link.roots import import_roots, locate_module
from snlint.link.arguments import candidates_for

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
               only: set[str] | None = None, graph_run=None) -> tuple[list[Finding], dict]:
    """Findings of the graph pass, and per discriminator class whether it has batch
    statistics at runtime (None where it could not be built). `graph_run` (a GraphRun)
    reports progress while the targets are built and receives their facts."""
    from snlint.checks.graph_rules import graph_findings, has_batch_statistics
    from snlint.graph import GraphTarget, run_graph

    displays = {os.path.abspath(f.path): f.path for f in project.index.files}
    targets, ds = [], []
    for d in project.discriminators:
        if only is not None and d.file.path not in only:
            continue  # a file read only for context: not linted, not imported
        absolute = os.path.abspath(d.file.path)
        if not os.path.isfile(absolute) or absolute.endswith(".ipynb"):
            continue  # in-memory text (stdin, tests) or notebook cells: nothing to import
        rel = config.relative_path(d.file.path)
        targets.append(GraphTarget(absolute, d.file.path, d.cls.name,
                                   _model_kwargs(config, rel, d.cls.name), str(config.root),
                                   paths=import_roots(absolute, config.root, config.graph_paths),
                                   line=d.cls.span.line,
                                   candidates=candidates_for(project.instances_of(d.cls.qualname))))
        ds.append(d)
    if not targets:
        return [], {}
    results = run_graph(targets, config.graph_timeout,
                        progress=graph_run.progress if graph_run is not None else None)
    if graph_run is not None:
        graph_run.results.extend(results)
    findings: list[Finding] = []
    verdicts: dict = {}
    # One SN910 per missing package or shared failing module, not one per file.
    findings += import_diagnostics([r for r in results if r.status == "import_error"],
                                   displays.get, lambda path: config.is_enabled("SN910", path),
                                   lambda name: locate_module(name, config.root))
    for d, facts in zip(ds, results):
        if facts.status == "import_error":
            continue
        fallback = Location(d.file.path, d.cls.span)
        findings.extend(graph_findings(facts, rules, display_for=displays.get, fallback=fallback,
                                       evidence=d.ref.evidence))
        if facts.status == "ok":
            verdicts[d.cls.qualname] = (has_batch_statistics(facts), facts, d)
    return list(dict.fromkeys(findings)), verdicts


def merge(source: list[Finding], graph: list[Finding], verdicts: dict, displays) -> list[Finding]:
    from snlint.checks.graph_rules import built_locations

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
            out.append(replace(f, pass_="source+graph"))
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
