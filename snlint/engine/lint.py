"""One run: files -> facts -> link -> checks -> findings. A failure on one file is a
diagnostic for that file, never the end of the run."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable

from snlint.config import Config
from snlint.engine.imported_files import imported_sources
from snlint.engine.per_file import Extracted, PerFile
from snlint.engine.run_cache import RunCache, walked_files
from snlint.engine.run_result import RunResult, finish, in_cells, unsuppressed
from snlint.facts import FileFacts
from snlint.findings import Finding
from snlint.graph.diagnostics import GraphRun, Progress
from snlint.inputs import Inputs, read_inputs

__all__ = ["RunResult", "Reuse", "in_cells", "lint_sources", "lint_text", "run"]


def lint_sources(sources: dict[str, str], config: Config,
                 imported: dict[str, str] | None = None,
                 graph_run: GraphRun | None = None,
                 per_file: PerFile | None = None, *, fixes: bool = False,
                 reuse: Reuse | None = None, run_cache: RunCache | None = None,
                 steps: Callable[[str], None] | None = None) -> list[Finding]:
    """Lint already-read files (display path -> text) as one project. `imported` files are
    read for their facts (helpers, the discriminator a script imports), their own findings
    not reported. `per_file`: the per-file stage (by default `reuse`'s, else one without a
    cache). `fixes`: build each fixable finding's fix (else only marked).

    `reuse`: what the lints of one command share (a file's facts by its text, a part's
    findings by its facts). `run_cache`: the last run's findings, used when it read the same
    texts or texts of the same facts, and this lint's kept for the next. `steps(text)`: told
    as each step of the source pass starts (the progress line), "" when they are done."""
    step = steps or (lambda text: None)
    imported = {p: t for p, t in (imported or {}).items() if p not in sources}
    texts = {**sources, **imported}
    stage = per_file or (reuse.per_file(config) if reuse is not None else PerFile(config))
    if run_cache is not None:
        kept = run_cache.unchanged(sources, imported)
        if kept is None:
            kept = _same_facts(run_cache, stage, texts)
            if kept is not None:
                run_cache.renew(sources, imported)  # the next run compares with these texts
        if kept is not None:
            if graph_run is not None:
                graph_run.discriminators |= run_cache.entry().discriminators
            return unsuppressed(kept, sources)
    findings: list[Finding] = []
    facts: list[FileFacts] = []
    # The link step's modules are imported while the per-file stage's workers lower files.
    step(f"source pass: reading {len(texts)} file{'s' if len(texts) != 1 else ''}...")
    extracted = stage.results(texts, meanwhile=_import_link_step)
    from snlint.fix import attach_fixes
    from snlint.engine.linking import link_parts, named
    from snlint.link.configvalues import READ

    for path, found in extracted.items():
        if found.finding is not None and path in sources:
            findings.append(found.finding)
        if found.facts is not None:
            facts.append(found.facts)
    # What the link step finds is noted in a run of its own when the caller has none.
    linked = graph_run if graph_run is not None else GraphRun()
    step(f"source pass: linking {len(facts)} file{'s' if len(facts) != 1 else ''}...")
    read: set[str] = set()
    reading = READ.set(read)
    try:
        findings.extend(link_parts(facts, extracted, sources, config, linked, reuse))
    finally:
        READ.reset(reading)
    step("")
    findings = [f for f in findings if (f.path in sources or f.path == "<project>")
                and config.is_enabled(f.code, f.path)]
    # Findings the graph pass cleared (`snlint.checks.cleared`) are no findings of the lint:
    # no fix, no count, no exit code. The run keeps them for JSON and SARIF.
    cleared = [f for f in findings if f.cleared_by is not None]
    if cleared:
        findings = [f for f in findings if f.cleared_by is None]
        if graph_run is not None:
            graph_run.cleared.extend(unsuppressed(cleared, sources))
    if run_cache is None:
        findings = unsuppressed(findings, sources)  # before the fixes: none built in vain
    findings = named(findings, facts)
    findings = attach_fixes(findings, sources, config, build=fixes, files={f.path: f for f in facts})
    if run_cache is not None:
        # A failure of snlint itself is not a finding of these files: found again next run.
        if not any(f.code == "SN999" for f in findings):
            run_cache.store(sources, imported, frozenset(p for p, e in extracted.items() if e.lowered),
                            frozenset(p for p, t in texts.items() if stage.matters(p, t)), findings,
                            frozenset(linked.discriminators), read)
        findings = unsuppressed(findings, sources)
    return findings


class Reuse:
    """What the lints of one command share: the per-file stage, each linked part's
    findings, and the graph pass's workers (`close()` ends them)."""

    def __init__(self) -> None:
        self._stage: PerFile | None = None
        self._parts: tuple[Config, dict] | None = None
        self._graph = None  # the graph pass's workers, started when it first runs

    def per_file(self, config: Config) -> PerFile:
        """The per-file stage (the first lint's configuration decides its cache)."""
        if self._stage is None:
            self._stage = PerFile.for_run(config)
        return self._stage

    def parts(self, config: Config) -> dict[tuple, tuple]:
        """The findings of each part the lints linked, by its files' facts, for this
        configuration (another starts afresh). The facts are kept with them: a key of
        object ids holds only while its objects live."""
        if self._parts is None or self._parts[0] != config:
            self._parts = (config, {})
        return self._parts[1]

    def close(self) -> None:
        if self._graph is not None:
            self._graph.close()

    @property
    def graph(self):
        """The graph pass's session (`snlint.graph.runner.GraphSession`) the lints share."""
        if self._graph is None:
            from snlint.graph.runner import GraphSession

            self._graph = GraphSession()
        return self._graph


def _import_link_step() -> None:
    for module in ("snlint.fix", "snlint.engine.linking"):
        importlib.import_module(module)


def run(paths: list[str], config: Config, progress: Progress | None = None, *,
        fixes: bool = False, reuse: Reuse | None = None, inputs: Inputs | None = None,
        run_cache: RunCache | None = None, steps: Callable[[str], None] | None = None) -> RunResult:
    """Lint the files under `paths` (`lint_sources`). `inputs`, `run_cache`: what the CLI
    already read of `paths`, and the run cache it asked."""
    if inputs is None:
        inputs = read_inputs(paths, config)
    graph_run = GraphRun(progress)
    if run_cache is None and reuse is None:
        run_cache = RunCache.for_run(config, inputs, graph=config.graph, fixes=fixes)
    stage = reuse.per_file(config) if reuse is not None else PerFile.for_run(config)
    imported = imported_sources(inputs.scripts, config, modules=stage.modules,
                                files=walked_files(inputs.paths, inputs.files, config))
    findings = lint_sources(inputs.sources, config, imported, graph_run, stage,
                            fixes=fixes, reuse=reuse, run_cache=run_cache, steps=steps)
    return finish(findings, inputs, config, graph_run.results, graph_run.discriminators,
                  graph_run.cleared)


def _same_facts(run_cache: RunCache, stage: PerFile, texts: dict[str, str]) -> list[Finding] | None:
    """The last run's findings when every file whose text changed since still gives what
    it gave then (a comment added): the same facts, imports and prefilter word. Only the
    changed files are read."""
    entry = run_cache.entry()
    changed = run_cache.changed(texts)
    if entry is None or changed is None or stage.cache is None or run_cache.fixes:
        return None
    before = {}
    for path, then in changed.items():
        # Read before this run's lowering replaces it in the cache.
        found = stage.cache.get(path, stage.config.relative_path(path), then)
        if not isinstance(found, Extracted) or (path in entry.kept and not found.lowered):
            return None
        before[path] = found
    now = stage.alone({p: texts[p] for p in changed}, {p for p in changed if p in entry.kept})
    for path, then in before.items():
        found = now[path]
        if stage.matters(path, texts[path]) != (path in entry.mattering) \
                or then.modules != found.modules or then.finding != found.finding \
                or (path in entry.kept and then.facts != found.facts):
            return None
    return list(entry.findings)


def lint_text(text: str, path: str = "example.py", config: Config | None = None, *,
              fixes: bool = False) -> list[Finding]:
    """Lint one in-memory file (tests, rule pages, editors' stdin)."""
    # Text that is not on disk cannot be imported: the graph pass does not apply.
    return lint_sources({path: text}, config or Config(root=Path.cwd(), graph=False, cache=False),
                        fixes=fixes)
