"""Fixes: libcst rewrites for the findings that have a mechanical correction.

A plain lint only marks fixes (`mark_fixes`: an unbuilt `Fix`, decided from the facts
without parsing, and without libcst); the outputs that show fixes build each one alone on
the text as read (`attach_fixes`); `--fix` / `--diff` fix in rounds (`snlint.fix.apply`)
and write each changed file atomically in its encoding (`write_fixed`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from dataclasses import replace
from typing import TYPE_CHECKING, Iterable, Mapping

from snlint.config import Config
from snlint.facts import FileFacts
from snlint.files import (
    SourceFile, read_source, write_atomic,
)
from snlint.findings import Edit, Finding, Fix
from snlint.fix.apply import FixedPoint, Report, compiles, unchanged_on_disk, where
from snlint.fix.diff import unified_diff, unified_diff_in
from snlint.fix.planning import mark, names_of, plan_for
from snlint.lines import lines_before
from snlint.records import dataclass

if TYPE_CHECKING:  # a plain lint reads no notebook for its fixes
    from snlint.notebook import Notebook

__all__ = ["attach_fixes", "mark_fixes", "read_fixable", "unified_diff", "write_fixed"]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def mark_fixes(findings: Iterable[Finding], files: Mapping[str, FileFacts], config: Config,
               report: Report | None = None) -> list[Finding]:
    """`findings` with an unbuilt `Fix` on each one a fix exists for, as
    `snlint.fix.planning.mark` decides from the facts of its file (`files`: display path
    -> facts)."""
    from snlint.checks.registry import fixers

    report = report or _stderr
    findings = list(findings)
    rules = fixers()
    broken = {f.path for f in findings if f.code == "SN901"}
    out = []
    for f in findings:
        facts = files.get(f.path)
        if f.fix is None and f.code in rules and facts is not None and facts.rewritable \
                and f.path not in broken:
            try:
                marked = mark(f, facts, config, rules)
            except Exception as e:  # noqa: BLE001 - a fixer's bug must not end the run
                _fixer_failed(report, f, e)
                marked = None
            if marked is not None:
                f = replace(f, fix=marked)
        out.append(f)
    return out


def _fixer_failed(report: Report, finding: Finding, e: Exception) -> None:
    report(f"snlint: internal error in the {finding.code} fix for {where(finding)}: "
           f"{type(e).__name__}: {e}")


def attach_fixes(findings: Iterable[Finding], sources: dict[str, str], config: Config,
                 report: Report | None = None, *, build: bool = True,
                 files: Mapping[str, FileFacts] | None = None) -> list[Finding]:
    """`findings` with `fix` built where a fix exists (same order); a fix whose result does
    not parse is dropped and reported (`report`, default: stderr). Without `build`, the
    fixes are only marked (`mark_fixes`)."""
    if not build:
        return mark_fixes(findings, files or {}, config, report)
    import libcst as cst

    from snlint.checks.registry import fixers
    from snlint.edit.parsed import ParsedFile

    report = report or _stderr
    findings = mark_fixes(findings, files, config, report) if files else list(findings)
    broken = {f.path for f in findings if f.code == "SN901"}
    # A file libcst does not read back as written gets no fix (`FileFacts.rewritable`).
    broken |= {path for path, facts in (files or {}).items() if not facts.rewritable}
    wanted: dict[str, list[int]] = {}
    marked: dict[int, Fix] = {}  # finding -> the unbuilt fix a plain lint marks
    by_code = fixers()
    for i, f in enumerate(findings):
        if f.fix is not None and not f.fix.built:
            marked[i] = f.fix
            findings[i] = f = replace(f, fix=None)
        if f.code in by_code and f.fix is None and f.cell is None and f.path in sources \
                and f.path not in broken:
            wanted.setdefault(f.path, []).append(i)
    for path, indexes in wanted.items():
        text = sources[path]
        try:
            parsed = ParsedFile(path, text, names_of(findings[i] for i in indexes))
        except (cst.ParserSyntaxError, RecursionError):
            continue
        strict: bool | None = None
        for i in indexes:
            finding = findings[i]
            payload = marked[i].payload if i in marked else None
            try:
                built = _built(parsed, finding, config, by_code, payload)
            except Exception as e:  # noqa: BLE001 - a fixer's bug must not end the run
                _fixer_failed(report, finding, e)
                marked.pop(i, None)  # said on stderr: no fix
                continue
            if built is None:
                continue
            plan, (_, start, end, new, changed) = built
            if strict is None:
                strict = compiles(text, path) is None
            if not strict:
                break  # CPython does not compile the file as it is: no fix is offered
            # What changed compiles alone (top-level statements), unless a `from __future__`
            # import may change how it compiles: then the whole new text.
            if changed is None or "__future__" in text:
                error = compiles(text[:start] + new + text[end:], path)
            else:
                error = compiles("".join(changed), path, lines_before(text, start) + 1)
            if error is not None:
                report(f"snlint: dropped the {finding.code} fix for {where(finding)}: "
                       f"its result does not parse ({error})")
                marked.pop(i, None)
                continue
            findings[i] = replace(finding, fix=Fix(plan.applicability, plan.message,
                                                   unified_diff_in(path, text, start, end, new),
                                                   (Edit(path, new, start, end, text),)))
    for i, unbuilt in marked.items():
        if findings[i].fix is None:
            # Marked, but not buildable alone on this text for no reason said on stderr:
            # "no fix" would contradict the same run's `[*]`.
            findings[i] = replace(findings[i], fix=Fix(unbuilt.applicability, UNBUILT))
    return findings


UNBUILT = ("a fix is marked available, but none could be built on the file as it is: "
           "--diff shows what --fix would do")


def _built(parsed, finding: Finding, config: Config, by_code, payload=None) -> tuple | None:
    """The plan for `finding` and where it changes the file's text (`Rendered`); None when
    it changes nothing."""
    from snlint.edit.plan import apply_in_place

    plan = plan_for(finding, parsed, config, by_code, payload)
    if plan is None:
        return None
    done = apply_in_place(parsed, [plan])
    if done.source[done.start:done.end] == done.replacement:
        return None
    return plan, done


@dataclass
class FileOutcome:
    source: SourceFile
    text: str  # the fixed text
    fixes: int  # fixes applied
    data: bytes  # the fixed text in the file's encoding
    written: bool = False

    @property
    def diff(self) -> bytes:
        """The unified diff, in the file's encoding (made only when `--diff` asks)."""
        source, new = self.source, self.text
        bom = "\ufeff" if self.data.startswith(b"\xef\xbb\xbf") and not new.startswith("\ufeff") else ""
        sig = source.encoding.lower().replace("_", "-") == "utf-8-sig"
        return unified_diff(source.path, bom + source.text, bom + new).encode(
            "utf-8" if sig else source.encoding, errors="replace")


def read_fixable(files: list[tuple[str, Path]], config: Config
                 ) -> tuple[dict[str, SourceFile], dict[str, Notebook], dict[str, str]]:
    """The files `--fix` may fix, by display path, the notebooks among them whose cells it
    can write back into their JSON, and the Python text of each (a notebook's cells)."""
    from snlint.notebook import parse_notebook

    sources: dict[str, SourceFile] = {}
    notebooks: dict[str, Notebook] = {}
    for display, absolute in files:
        read = read_source(display, absolute, config.max_file_size)
        if not isinstance(read, SourceFile):
            continue
        if absolute.suffix == ".ipynb":
            notebook = parse_notebook(display, read.text)
            if isinstance(notebook, Finding) or not notebook.writable:
                continue
            notebooks[display] = notebook
        sources[display] = read
    texts = {p: notebooks[p].python if p in notebooks else s.text for p, s in sources.items()}
    return sources, notebooks, texts


def written_targets(files: Iterable[tuple[str, Path]]) -> list[Path]:
    """The files `--fix` may write for `files` (display, path), symlinks resolved."""
    return [Path(os.path.realpath(absolute)) for _, absolute in files]


def write_fixed(sources: dict[str, SourceFile], notebooks: dict[str, Notebook], texts: dict[str, str],
                result: FixedPoint, write: bool, report: Report) -> FixedPoint:
    """`result` (the rounds on `texts`) with each changed file's outcome, written (with
    `write`) unless it changed on disk since it was read."""
    for path, source in sorted(sources.items()):
        new = result.texts[path]
        if new == texts[path] or path in result.blocked:
            continue
        if path in notebooks:
            new = notebooks[path].apply(new)
            if new is None:
                report(f"snlint: not fixing {path}: a fix spans more than one cell")
                continue
        try:
            data = new.encode(source.encoding)
        except UnicodeEncodeError as e:
            report(f"snlint: not fixing {path}: the fixed text cannot be encoded as "
                   f"{source.encoding} ({e.reason})")
            continue
        item = FileOutcome(source, new, result.fixed[path], data)
        result.files.append(item)
        if write:
            if not unchanged_on_disk(source.abspath, source.raw):
                report(f"snlint: not writing {path}: it changed on disk since it was read")
                continue
            try:
                write_atomic(source.abspath, data)
            except OSError as e:
                report(f"snlint: cannot write {path}: {e.strerror or e}")
                continue
            item.written = True
    return result
