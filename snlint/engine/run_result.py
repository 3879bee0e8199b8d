"""A run's result, and the last steps every run takes to it: suppression comments applied,
findings in notebooks moved to their cells, the files' own diagnostics added. Light (no
libcst): a run the cache answers ends here too."""

from __future__ import annotations

from dataclasses import field, replace
from typing import TYPE_CHECKING

from snlint.config import Config
from snlint.findings import Edit, Finding
from snlint.inputs import Inputs
from snlint.records import dataclass
from snlint.suppress import Suppressions

if TYPE_CHECKING:
    from snlint.graph.facts import TargetFacts
    from snlint.notebook import Notebook


@dataclass
class RunResult:
    findings: list[Finding]
    sources: dict[str, str] = field(default_factory=dict)  # display path -> text
    files: list[str] = field(default_factory=list)
    graph: list[TargetFacts] = field(default_factory=list)  # [] when the graph pass did not run
    # "path:Class" of the discriminators the graph pass built, or would build if asked.
    discriminators: frozenset[str] = frozenset()
    # Source findings the graph pass cleared, each with its `cleared_by`: listed by JSON
    # and SARIF (suppressed), nowhere else; they change no exit code.
    cleared: list[Finding] = field(default_factory=list)


def unsuppressed(findings: list[Finding], sources: dict[str, str]) -> list[Finding]:
    """The findings no `# noqa` / `# snlint: disable` comment of their file silences,
    sorted. Only files with findings need their comments read."""
    suppressions = {path: Suppressions.parse(sources[path])
                    for path in {f.path for f in findings} if path in sources}
    kept = [f for f in findings
            if f.is_diagnostic or f.path not in suppressions
            or suppressions[f.path].allows(f.code, f.line)]
    return sorted(kept, key=Finding.sort_key)


def in_cells(findings: list[Finding], notebooks: dict[str, Notebook]) -> list[Finding]:
    """Findings in notebooks moved to their cell; a fix's edit rewritten as the notebook's
    JSON (every other byte kept), or dropped when it cannot be placed in one cell."""
    out = []
    for f in findings:
        f = _cited(f, notebooks)
        notebook = notebooks.get(f.path)
        if notebook is None:
            out.append(f)
            continue
        mapped = notebook.map_finding(f)
        if f.fix is not None and not notebook.writable:
            mapped = mapped.with_(fix=None)  # --fix leaves such a notebook as it is
        elif f.fix is not None and f.fix.edits:
            from snlint.fix.diff import unified_diff

            new_json = notebook.apply(f.fix.edits[0].new_text)
            fix = None if new_json is None else replace(
                f.fix, diff=unified_diff(f.path, notebook.text, new_json),
                edits=(Edit(f.path, new_json),))
            mapped = mapped.with_(fix=fix)
        out.append(mapped)
    return out


def _cited(finding: Finding, notebooks: dict[str, Notebook]) -> Finding:
    """The finding with the places its message names in another file's notebook as cell
    and line (a helper module's SN401 naming the notebook line that calls it)."""
    message, evidence = finding.message, finding.evidence
    for path, notebook in notebooks.items():
        if path != finding.path and f"{path}:" in message:
            message = notebook.cited(message, path)
        if path != finding.path and f"{path}:" in evidence:
            evidence = notebook.cited(evidence, path)
    return finding if (message, evidence) == (finding.message, finding.evidence) \
        else finding.with_(message=message, evidence=evidence)


def finish(findings: list[Finding], inputs: Inputs, config: Config,
           graph: list | None = None, discriminators: frozenset[str] | set[str] = frozenset(),
           cleared: list[Finding] | None = None) -> RunResult:
    """The run's result from the project's findings (suppressions already applied)."""
    out = in_cells(findings, inputs.notebooks)
    out.extend(d for d in inputs.diagnostics if config.is_enabled(d.code, d.path))
    return RunResult(sorted(out, key=Finding.sort_key), inputs.shown(),
                     [d for d, _ in inputs.files], graph or [], frozenset(discriminators),
                     sorted(cleared or [], key=Finding.sort_key))
