"""The graph pass from the parent's side: build each discriminator the link step found (in
a child process) and read its findings and facts."""

from __future__ import annotations

import ast
import os

from snlint.catalogue import Rule
from snlint.checks.emit import Emitter
from snlint.checks.registry import run_checks
from snlint.config import Config
from snlint.findings import DiscriminatorRef, Finding, Location
from snlint.graph import GraphTarget, run_graph
from snlint.graph.diagnostics import (
    import_diagnostics, installed, refused_diagnostics, target_diagnostics,
)
from snlint.link import link
from snlint.link.seal import seal
from snlint.link.arguments import candidates_for
from snlint.link.join import runtime_of
from snlint.link.options import option_defaults
from snlint.link.roots import import_roots, locate_module


def _model_kwargs(config: Config, relpath: str, cls: str) -> dict | None:
    for key, value in config.models.items():
        path, _, name = key.rpartition(":")
        if name == cls and (path == relpath or relpath.endswith("/" + path)):
            return dict(value)
    return None


def _trained_instances(project, d) -> list:
    """The instances of `d` to build it as: where the project always passes the defaults
    that decide its layers (`unused_defaults`), not one a factory builds in a branch of a
    key it was not given (SN301 judges the class without them too)."""
    instances = project.instances_of(d.cls.qualname)
    if not d.unused_defaults:
        return instances
    return [i for i in instances if not i.branches]


def graph_pass(project, config: Config, only: set[str] | None = None,
               graph_run=None, session=None) -> tuple[list[Finding], dict]:
    """The graph pass's diagnostics (SN91x), and the facts of each class it built (by
    qualname). `graph_run` gets progress and the facts; `session` (a GraphSession) keeps the
    workers for the command's next graph pass."""
    displays = {os.path.abspath(f.path): f.path for f in project.index.files}
    targets, ds = [], []
    options = option_defaults(project.index.files)
    for d in project.buildable(only):
        absolute = os.path.abspath(d.file.path)
        rel = config.relative_path(d.file.path)
        targets.append(GraphTarget(absolute, d.file.path, d.cls.name,
                                   _model_kwargs(config, rel, d.cls.name), str(config.root),
                                   paths=import_roots(absolute, config.root, config.graph_paths),
                                   line=d.cls.span.line,
                                   candidates=candidates_for(_trained_instances(project, d)),
                                   options=options))
        ds.append(d)
    if not targets:
        return [], {}
    results = run_graph(targets, config.graph_timeout,
                        progress=graph_run.progress if graph_run is not None else None,
                        session=session)
    if graph_run is not None:
        graph_run.results.extend(results)
    findings: list[Finding] = []
    built: dict = {}
    # One SN910 per missing package or shared failing module, not one per file.
    findings += import_diagnostics([r for r in results if r.status == "import_error"
                                    and not _rejected_by_cpython(r.target.file)],
                                   displays.get, lambda path: config.is_enabled("SN910", path),
                                   lambda name: locate_module(name, config.root), installed)
    for d, facts in zip(ds, results):
        if facts.status == "import_error":
            findings.extend(refused_diagnostics(facts, Location(d.file.path, d.cls.span)))
            continue
        findings.extend(target_diagnostics(facts, displays.get, Location(d.file.path, d.cls.span)))
        if facts.status == "ok":
            built[d.cls.qualname] = facts
    return list(dict.fromkeys(findings)), built


def _rejected_by_cpython(path: str) -> bool:
    """A file CPython cannot compile (a Python 2 script): the source pass's SN901 says so;
    an SN910 for its import would say it twice."""
    try:
        with open(path, "rb") as f:
            compile(f.read(), path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError:
        return True
    except (OSError, ValueError):
        return False
    return False


def built_findings(facts, rules: dict[str, Rule], *, display_for, fallback: Location,
                   evidence: str = "name") -> list[Finding]:
    """Findings and SN91x diagnostics for one built discriminator with no source side
    (`snlint.audit`): the lint rules over a project whose only facts are the runtime's.
    `display_for(path)` gives a display path, or None outside the project (its findings go to
    `fallback`)."""
    diagnostics = target_diagnostics(facts, display_for, fallback)
    if facts.status != "ok":
        return diagnostics
    target = facts.target
    project = link([])
    ref = DiscriminatorRef(f"{target.display}:{target.class_name}", evidence)
    project.runtime = {target.class_name: runtime_of(facts, display_for, ref, fallback)}
    found, failures = run_checks(seal(project), Emitter(rules))
    if failures:
        raise failures[0][1]  # snlint's bug: audit() has no other way to say so
    return sorted(found + diagnostics, key=Finding.sort_key)
