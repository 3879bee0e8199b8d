"""Fixes: libcst rewrites for the findings that have a mechanical correction.

A fix costs a parse of its file, a transform, a compile and a diff, so a plain lint
builds none:
- `mark_fixes(findings, files, config)` marks each fixable finding with an unbuilt `Fix`
  (its applicability, and the payload its rule decided from the source facts, which the
  fix is later built from), without parsing anything: enough for `[*]`, the summary's
  count and `--fix`'s choice of files to parse.
- `attach_fixes(findings, sources, config)` gives each fixable finding its built `Fix`
  (applicability, message, unified diff, the file's new text), each computed alone on
  the text as read: for the outputs that show fixes (`--show-fixes`, JSON, SARIF).
- `fix_paths(paths, config, lint, unsafe=..., write=...)` is `--fix` / `--diff`: fixes
  applied together, round after round until the findings the first lint announced are
  fixed (never one a fix made), then diffs and (with `write`) atomic writes in each
  file's encoding.

Only building imports libcst (the rules' `fix` halves import it inside); marking does
not, so a plain lint, which imports this package, never pays for it.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from pathlib import Path
from dataclasses import field, replace
from typing import TYPE_CHECKING, Iterable, Mapping

from snlint.config import Config
from snlint.facts import FileFacts
from snlint.files import (
    SourceFile, as_written, discard_file, discover, put_in_place, read_source, sweep_temporaries,
    writable_mode, write_atomic, written_beside,
)
from snlint.findings import Edit, Finding, Fix
from snlint.fix.apply import (
    Lint,
    Report,
    compiles,
    fixed_point,
    unchanged_on_disk,
    where,
)
from snlint.fix.diff import unified_diff, unified_diff_in
from snlint.fix.planning import mark, names_of, plan_for
from snlint.lines import lines_before
from snlint.records import dataclass

if TYPE_CHECKING:  # a plain lint reads no notebook for its fixes
    from snlint.notebook import Notebook
    from snlint.standby import Standby

__all__ = ["FixOutcome", "attach_fixes", "fix_paths", "mark_fixes", "unified_diff"]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def mark_fixes(findings: Iterable[Finding], files: Mapping[str, FileFacts], config: Config,
               report: Report | None = None) -> list[Finding]:
    """`findings` with an unbuilt `Fix` (applicability only) on each one a fix exists for,
    as `snlint.fix.planning.mark` decides from the facts of its file (`files`:
    display path -> facts); nothing is parsed."""
    # The rules' modules: imported with the link step, which comes first on a lint; here,
    # not when `--fix` starts (before its first lint imports them beside its workers).
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
                report(f"snlint: internal error in the {f.code} fix for {where(f)}: "
                       f"{type(e).__name__}: {e}")
                marked = None
            if marked is not None:
                f = replace(f, fix=marked)
        out.append(f)
    return out


def attach_fixes(findings: Iterable[Finding], sources: dict[str, str], config: Config,
                 report: Report | None = None, *, build: bool = True,
                 files: Mapping[str, FileFacts] | None = None) -> list[Finding]:
    """`findings` with `fix` built where a fix exists (same order); an unbuilt mark is
    built, or removed when no fix comes of it. A fix whose result does not parse is
    dropped and reported (`report`, default: a line on stderr).

    Without `build`, the fixes are only marked from the files' facts (`mark_fixes`):
    the engine's one fix stage, whichever it does."""
    if not build:
        return mark_fixes(findings, files or {}, config, report)
    import libcst as cst

    from snlint.checks.registry import fixers
    from snlint.edit.parsed import ParsedFile

    report = report or _stderr
    # Marked first, as a plain lint marks them: what the same run's `[*]` would say.
    findings = mark_fixes(findings, files, config, report) if files else list(findings)
    broken = {f.path for f in findings if f.code == "SN901"}
    # A file libcst does not read back as written gets no fix (`FileFacts.rewritable`).
    broken |= {path for path, facts in (files or {}).items() if not facts.rewritable}
    wanted: dict[str, list[int]] = {}
    marked: dict[int, str] = {}  # finding -> the applicability a plain lint marked
    payloads: dict[int, object] = {}  # finding -> its mark's payload (`Fix.payload`)
    by_code = fixers()
    for i, f in enumerate(findings):
        if f.fix is not None and not f.fix.built:
            marked[i] = f.fix.applicability
            payloads[i] = f.fix.payload
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
            try:
                built = _built(parsed, finding, config, by_code, payloads.get(i))
            except Exception as e:  # noqa: BLE001 - a fixer's bug must not end the run
                report(f"snlint: internal error in the {finding.code} fix for {where(finding)}: "
                       f"{type(e).__name__}: {e}")
                marked.pop(i, None)  # said on stderr: no fix
                continue
            if built is None:
                continue
            plan, (start, end, new, changed) = built
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
    for i, applicability in marked.items():
        if findings[i].fix is None:
            # The facts marked a fix (`[*]`, the summary's count, what --fix tries) that
            # could not be built alone on this text, for no reason said on stderr: say so
            # rather than "no fix", which would contradict the same run's text output.
            findings[i] = replace(findings[i], fix=Fix(applicability, UNBUILT))
    return findings


UNBUILT = ("a fix is marked available, but none could be built on the file as it is: "
           "--diff shows what --fix would do")


def _built(parsed, finding: Finding, config: Config, by_code, payload=None) -> tuple | None:
    """The plan for `finding` and what it changes in the file's text: (start, end, the
    new text of that stretch, the code of the top-level statements it holds or None when
    unknown); None when there is no plan or it changes nothing."""
    from snlint.edit.plan import apply_in_place, apply_plans

    plan = plan_for(finding, parsed, config, by_code, payload)
    if plan is None:
        return None
    text = parsed.text
    done = apply_in_place(parsed, [plan])
    if done is None:
        new = apply_plans(parsed, [plan])
        if new == text:
            return None
        return plan, (0, len(text), new, None)
    if text[done.start:done.end] == done.replacement:
        return None
    return plan, (done.start, done.end, done.replacement, done.changed)


@dataclass
class FileOutcome:
    source: SourceFile
    text: str  # the fixed text
    fixes: int  # fixes applied
    data: bytes  # the fixed text in the file's encoding
    written: bool = False

    @property
    def diff(self) -> bytes:
        """The unified diff, in the file's encoding: made when asked (`--diff`), since a
        `--fix` that writes shows none."""
        source, new = self.source, self.text
        bom = "\ufeff" if self.data.startswith(b"\xef\xbb\xbf") and not new.startswith("\ufeff") else ""
        return unified_diff(source.path, bom + source.text, bom + new).encode(
            _diff_encoding(source.encoding), errors="replace")


@dataclass
class FixOutcome:
    files: list[FileOutcome] = field(default_factory=list)  # files the fixes change
    settled: bool = True
    hidden: int = 0  # findings with an unsafe fix that `unsafe` left out
    announced: int = 0  # findings the first lint marked with a fix that applies
    # The first lint's findings by identity (`snlint.fix.identity`), counted.
    first: Counter = field(default_factory=Counter)
    # By display path, every file read, as written when a fix was: what a report after
    # the fixes reads where the file is still so (`snlint.inputs.read_inputs`).
    read: dict[str, SourceFile] = field(default_factory=dict)

    @property
    def fixes(self) -> int:
        return sum(f.fixes for f in self.files)

    @property
    def written(self) -> list[FileOutcome]:
        return [f for f in self.files if f.written]


class _EarlyWrites:
    """The first round's fixed files written beside their targets by the standby process
    (`snlint.files.written_beside`: flushed to disk) while this one lints them again; each
    renamed over its file at the end when the rounds leave it as the first did, else
    discarded. The disk's flushes wait beside the lint, not after it."""

    def __init__(self, standby: Standby, sources: dict[str, SourceFile],
                 notebooks: Mapping[str, object]) -> None:
        self._standby = standby
        self._sources = sources
        self._notebooks = notebooks
        self._data: dict[str, bytes] = {}  # path -> what was handed over
        self._written: dict[str, str] | None = None  # path -> its temporary file
        self._started = False

    def start(self, changed: dict[str, str]) -> None:
        if self._started:
            return  # a later round's texts are written at the end
        self._started = True
        items = []
        for path, text in changed.items():
            source = self._sources.get(path)
            if source is None or path in self._notebooks:
                continue
            try:
                data = text.encode(source.encoding)
            except UnicodeEncodeError:
                continue
            self._data[path] = data
            items.append((path, os.path.realpath(source.abspath), data))
        if not items or not self._standby.submit(_write_beside, items):
            self._data = {}

    def put_in_place(self, path: str, data: bytes) -> bool:
        """Rename the file written early for `path` over it, when it holds `data`."""
        written = self._collected()
        tmp = written.pop(path, None)
        if tmp is None:
            return False
        if self._data.get(path) != data:
            discard_file(tmp)
            return False
        try:
            target = Path(os.path.realpath(self._sources[path].abspath))
            put_in_place(tmp, target, writable_mode(target))
        except BaseException:
            discard_file(tmp)
            raise
        return True

    def discard(self) -> None:
        """Remove what was written early and not put in place."""
        for tmp in self._collected().values():
            discard_file(tmp)

    def _collected(self) -> dict[str, str]:
        if self._written is None:
            answer = self._standby.collect() if self._data else None
            self._written = {path: tmp for path, tmp in answer or () if tmp is not None}
        return self._written


def _write_beside(items: list[tuple[str, str, bytes]]) -> list[tuple[str, str | None]]:
    """(path, the temporary file holding its data, None when it could not be written), in
    the standby process."""
    out: list[tuple[str, str | None]] = []
    for path, target, data in items:
        try:
            out.append((path, written_beside(Path(target), data)))
        except OSError:
            out.append((path, None))
    return out


def _diff_encoding(encoding: str) -> str:
    return "utf-8" if encoding.lower().replace("_", "-") == "utf-8-sig" else encoding


def fix_paths(paths: list[str], config: Config, lint: Lint, *, unsafe: bool = False,
              write: bool = False, report: Report | None = None,
              lint_later: Lint | None = None, standby: Standby | None = None,
              files: list[tuple[str, Path]] | None = None) -> FixOutcome:
    """Fix what the first lint of the files under `paths` announces (safe fixes; unsafe
    ones too with `unsafe`), in rounds (`snlint.fix.apply.fixed_point`). With `write`,
    each changed file is written atomically, unless it changed on disk since it was
    read. `lint` lints the project from {path: text}; `lint_later` lints the rounds
    after the first (without the graph pass, which reads the disk);
    `standby`: a process that does the rounds' fixes (`snlint.fix.apply.fix_each`);
    `files`: `discover(paths, config)`, when the caller has walked them."""
    from snlint.notebook import parse_notebook

    report = report or _stderr
    started = time.time_ns()
    sources: dict[str, SourceFile] = {}
    notebooks: dict[str, Notebook] = {}
    files = discover(paths, config) if files is None else files
    if write:
        # What a run killed during its writes left beside the files (SIGKILL runs no
        # clean-up): its temporary files, whose owner is gone.
        sweep_temporaries(written_targets(files), before_ns=started)
    for display, absolute in files:
        read = read_source(display, absolute, config.max_file_size)
        if not isinstance(read, SourceFile):
            continue
        if absolute.suffix == ".ipynb":
            # Fix the cells as one module, then write the changed cells back into the
            # notebook's JSON, leaving outputs, metadata and formatting as they were.
            notebook = parse_notebook(display, read.text)
            if isinstance(notebook, Finding) or not notebook.writable:
                continue  # not JSON we can rewrite, an old format, or a cell that does not compile
            notebooks[display] = notebook
        sources[display] = read
    texts = {p: notebooks[p].python if p in notebooks else s.text for p, s in sources.items()}
    early = _EarlyWrites(standby, sources, notebooks) if write and standby is not None else None
    try:
        result = fixed_point(texts, lint, config, unsafe=unsafe, report=report, lint_later=lint_later,
                             standby=standby, fixed=early.start if early is not None else None)
        return _finish(sources, notebooks, texts, result, write, report, early)
    except BaseException:
        if write:  # interrupted (Ctrl-C, SIGTERM) or failed: leave no temporary file
            sweep_temporaries(written_targets(files), own=True)
        raise
    finally:
        if early is not None:
            early.discard()


def written_targets(files: Iterable[tuple[str, Path]]) -> list[Path]:
    """The files `--fix` may write for `files` (display, path): each through its symlink,
    where its temporary file goes."""
    return [Path(os.path.realpath(absolute)) for _, absolute in files]


def _finish(sources: dict[str, SourceFile], notebooks: dict[str, Notebook], texts: dict[str, str],
            result, write: bool, report: Report, early: _EarlyWrites | None) -> FixOutcome:
    """Each changed file's outcome, written (with `write`) unless it changed on disk."""
    outcome = FixOutcome(settled=result.settled, hidden=result.hidden, announced=result.announced,
                         first=result.first, read=dict(sources))
    for path, source in sorted(sources.items()):
        new = result.texts[path]
        if new == texts[path] or path in result.blocked:
            continue
        if path in notebooks:
            new_json = notebooks[path].apply(new)
            if new_json is None:
                report(f"snlint: not fixing {path}: a fix spans more than one cell")
                continue
            new = new_json
        try:
            data = new.encode(source.encoding)
        except UnicodeEncodeError as e:
            report(f"snlint: not fixing {path}: the fixed text cannot be encoded as "
                   f"{source.encoding} ({e.reason})")
            continue
        item = FileOutcome(source, new, result.fixed[path], data)
        outcome.files.append(item)
        if write:
            if not unchanged_on_disk(source.abspath, source.raw):
                report(f"snlint: not writing {path}: it changed on disk since it was read")
                continue
            try:
                if early is None or not early.put_in_place(path, data):
                    write_atomic(source.abspath, data)
            except OSError as e:
                report(f"snlint: cannot write {path}: {e.strerror or e}")
                outcome.read.pop(path, None)
                continue
            item.written = True
            outcome.read[path] = as_written(source, new, data)
    return outcome
