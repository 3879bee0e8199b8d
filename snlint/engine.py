"""One run: files -> facts -> link -> checks -> findings.

Every file is read and lowered on its own (snlint.per_file: prefiltered, cached, in
worker processes); the link step then sees the whole project at once. A failure on one
file is a diagnostic for that file, never the end of the run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from snlint.checks.emit import Emitter
from snlint.checks.registry import fixers, run_checks
from snlint.catalogue import load_catalogue
from snlint.config import Config
from snlint.facts import FileFacts, Names
from snlint.imported_files import imported_sources
from snlint.files import discover, read_source
from snlint.findings import Edit, Finding, diagnostic
from snlint.fix.diff import unified_diff
from snlint.notebook import Notebook, cell_key, parse_notebook
from snlint.per_file import PerFile, internal
from snlint.fix import attach_fixes
from snlint.link import link
from snlint.link.freeze import freeze
from snlint.link.names import Definitions, resolved
from snlint.graph_pass import graph_enabled, graph_pass
from snlint.graph.diagnostics import GraphRun, Progress
from snlint.graph.runner import GraphSession
from snlint.link.join import join
from snlint.suppress import Suppressions

if TYPE_CHECKING:
    from snlint.graph.facts import TargetFacts


@dataclass
class RunResult:
    findings: list[Finding]
    sources: dict[str, str] = field(default_factory=dict)  # display path -> text
    files: list[str] = field(default_factory=list)
    graph: list[TargetFacts] = field(default_factory=list)  # [] when the graph pass did not run


_internal = internal


def lint_sources(sources: dict[str, str], config: Config,
                 imported: dict[str, str] | None = None,
                 graph_run: GraphRun | None = None,
                 per_file: PerFile | None = None, *, fixes: bool = False,
                 reuse: Reuse | None = None) -> list[Finding]:
    """Lint already-read files (display path -> text) as one project. `imported` files are
    read for their facts (helpers, blocks, the discriminator a script imports) but their
    own findings are not reported. `per_file`: the per-file stage to use (its cache and
    workers); by default `reuse`'s, else one without a cache.

    A fixable finding's `fix` is only marked (its applicability; `snlint.fix.mark_fixes`),
    unless `fixes` asks for the fixes themselves (message, diff, new text), which parse
    and rewrite each file with one.

    `reuse` keeps what the lints of one command read (the rounds of --fix and the report
    after them): a file whose text did not change is not read again (its per-file stage
    remembers each file's facts by its text), and a lint of the very inputs the last one
    had (without the graph pass, which reads the disk) gives the same findings without
    linking again."""
    imported = {p: t for p, t in (imported or {}).items() if p not in sources}
    remembered = reuse.findings(sources, config, imported, fixes) if reuse is not None else None
    if remembered is not None:
        return remembered
    findings: list[Finding] = []
    facts: list[FileFacts] = []
    project = None
    stage = per_file or (reuse.per_file(config) if reuse is not None else PerFile(config))
    try:
        extracted = stage.results({**sources, **imported})
    finally:
        stage.close()  # its workers, not what it knows: they would idle through the rest
    for path, found in extracted.items():
        if found.finding is not None and path in sources:
            findings.append(found.finding)
        if found.facts is not None:
            facts.append(found.facts)
    try:
        project = link(facts, config.discriminators, config.not_discriminators, config.root)
        for path, message in project.errors:
            findings.append(diagnostic("SN999", path, f"internal error: {message}"))
        rules = load_catalogue()
        # link -> graph pass -> join -> freeze -> checks: the rules read what the runtime
        # built for each discriminator next to what the source says, in one frozen model.
        # The graph pass itself reports only its SN91x diagnostics; its facts reach the
        # findings through the rules.
        graph_diagnostics: list[Finding] = []
        if graph_enabled(config) and project.discriminators:
            try:
                graph_diagnostics, built = graph_pass(
                    project, config, only=set(sources), graph_run=graph_run,
                    session=reuse.graph if reuse is not None else None)
                displays = {os.path.abspath(f.path): f.path for f in facts}
                join(project, built, displays.get)
            except Exception as e:  # noqa: BLE001 - the source findings still stand
                graph_diagnostics, project.runtime = [], {}
                findings.append(_internal(project.discriminators[0].file.path, e, "graph"))
        found, failures = run_checks(freeze(project), Emitter(rules))
        findings.extend(found + graph_diagnostics)
        for family, error in failures:
            findings.append(_internal(facts[0].path if facts else "<project>", error, family))
    except Exception as e:  # noqa: BLE001
        findings.append(_internal(facts[0].path if facts else "<project>", e))
    findings = [f for f in findings if f.path in sources or f.path == "<project>"]
    findings = _select(findings, sources, config)
    if project is not None:
        findings = _named(findings, project)
    findings = attach_fixes(findings, sources, config, build=fixes,
                            files=project.files if project is not None else {})
    if reuse is not None:
        reuse.remember(sources, config, imported, fixes, findings)
    return findings


class Reuse:
    """What the lints of one command read, for its next lint (`lint_sources`' `reuse`):
    its per-file stage (each file's facts by its text), the last lint's findings by its inputs, and the graph
    pass's workers with what they built. `close()` ends the workers."""

    def __init__(self) -> None:
        self._stage: PerFile | None = None
        self._last: tuple[tuple, list[Finding]] | None = None
        self.graph = GraphSession()

    def per_file(self, config: Config) -> PerFile:
        """The per-file stage the lints share: each file's facts by its text (the first
        lint's configuration decides its cache)."""
        if self._stage is None:
            self._stage = PerFile.for_run(config)
        return self._stage

    def close(self) -> None:
        if self._stage is not None:
            self._stage.close()
        self.graph.close()

    def findings(self, sources: dict[str, str], config: Config, imported: dict[str, str],
                 fixes: bool) -> list[Finding] | None:
        """The last lint's findings, when this lint has its inputs."""
        if self._last is None or graph_enabled(config):
            return None
        inputs, findings = self._last
        return list(findings) if inputs == (sources, imported, config, fixes) else None

    def remember(self, sources: dict[str, str], config: Config, imported: dict[str, str],
                 fixes: bool, findings: list[Finding]) -> None:
        self._last = ((dict(sources), dict(imported), config, fixes), list(findings))


def _named(findings: list[Finding], project) -> list[Finding]:
    """The findings a fix may exist for, each with its file's names as the link step
    resolves them: a fix names things the way the finding was decided."""
    planners = fixers()
    definitions = Definitions(project.index)
    names: dict[str, Names] = {}
    out = []
    for f in findings:
        file = project.files.get(f.path)
        if f.code in planners and file is not None:
            if f.path not in names:
                names[f.path] = resolved(definitions, file)
            f = f.with_(names=names[f.path])
        out.append(f)
    return out


def _select(findings: list[Finding], sources: dict[str, str], config: Config) -> list[Finding]:
    # Only files with findings need their comments read.
    suppressions = {path: Suppressions.parse(sources[path])
                    for path in {f.path for f in findings} if path in sources}
    kept = []
    for f in findings:
        if not config.is_enabled(f.code, f.path):
            continue
        if not f.is_diagnostic and f.path in suppressions and not suppressions[f.path].allows(f.code, f.line):
            continue
        kept.append(f)
    return sorted(kept, key=Finding.sort_key)


def run(paths: list[str], config: Config, progress: Progress | None = None, *,
        fixes: bool = False, reuse: Reuse | None = None) -> RunResult:
    """Lint the files under `paths`; `fixes`: build each finding's fix, `reuse`: facts an
    earlier lint of the same command read (`lint_sources`)."""
    sources: dict[str, str] = {}
    notebooks: dict[str, Notebook] = {}
    diagnostics: list[Finding] = []
    files = discover(paths, config)
    for display, absolute in files:
        read = read_source(display, absolute, config.max_file_size)
        if isinstance(read, Finding):
            diagnostics.append(read)
        elif absolute.suffix == ".ipynb":
            notebook = parse_notebook(display, read.text)
            if isinstance(notebook, Finding):
                diagnostics.append(notebook)
            else:
                notebooks[display] = notebook
                sources[display] = notebook.python
        else:
            sources[display] = read.text
    graph_run = GraphRun(progress)
    stage = reuse.per_file(config) if reuse is not None else PerFile.for_run(config)
    try:
        imported = imported_sources({p: t for p, t in sources.items() if p not in notebooks},
                                    config, modules=stage.modules)
        findings = in_cells(lint_sources(sources, config, imported, graph_run, stage,
                                         fixes=fixes, reuse=reuse), notebooks)
    finally:
        stage.close()
    findings.extend(d for d in diagnostics if config.is_enabled(d.code, d.path))
    shown = dict(sources)
    for display, notebook in notebooks.items():
        for cell in notebook.cells:
            shown[cell_key(display, cell.number)] = "".join(cell.lines)
    return RunResult(sorted(findings, key=Finding.sort_key), shown, [d for d, _ in files],
                     graph_run.results)


def in_cells(findings: list[Finding], notebooks: dict[str, Notebook]) -> list[Finding]:
    """Findings in notebooks moved to their cell; a fix's edit rewritten as the notebook's
    JSON (every other byte kept), or dropped when it cannot be placed in one cell."""
    out = []
    for f in findings:
        notebook = notebooks.get(f.path)
        if notebook is None:
            out.append(f)
            continue
        mapped = notebook.map_finding(f)
        if f.fix is not None and f.fix.edits:
            new_json = notebook.apply(f.fix.edits[0].new_text)
            fix = None if new_json is None else replace(
                f.fix, diff=unified_diff(f.path, notebook.text, new_json),
                edits=(Edit(f.path, new_json),))
            mapped = mapped.with_(fix=fix)
        out.append(mapped)
    return out


def lint_text(text: str, path: str = "example.py", config: Config | None = None, *,
              fixes: bool = False) -> list[Finding]:
    """Lint one in-memory file (tests, rule pages, editors' stdin)."""
    # Text that is not on disk cannot be imported: the graph pass does not apply.
    return lint_sources({path: text}, config or Config(root=Path.cwd(), graph=False, cache=False),
                        fixes=fixes)
