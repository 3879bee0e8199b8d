"""Linting standard input (`--stdin-filename PATH`, or `-`) as if it were the file `PATH`
(its project's configuration applies), source pass only: the graph pass imports files
from disk. The bytes are decoded exactly as a file's, by `files.read_source` through a
private temporary file. `fix_stdin` fixes them as `--fix` fixes a file.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import field
from pathlib import Path

from snlint.config import Config
from snlint.files import NOTEBOOK_SUFFIX, SUFFIXES, SourceFile, discover, display_path, read_source
from snlint.findings import Finding
from snlint.fix.apply import FixedPoint
from snlint.notebook import Notebook, parse_notebook
from snlint.records import dataclass

STDIN = "-"


@dataclass
class StdinResult:
    findings: list[Finding]
    sources: dict[str, str] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)  # [] when force-exclude dropped it
    cleared: list[Finding] = field(default_factory=list)  # no graph pass on standard input


def _read_input(data: bytes, display: str,
                config: Config) -> tuple[str, SourceFile | Finding | None, Notebook | None]:
    """(display path, `data` read as that file would be or its SN902 / SN903, the notebook
    parsed); None read when --force-exclude drops the file."""
    display = display_path(display) if display != STDIN else STDIN
    if config.force_exclude and Path(display).suffix in SUFFIXES \
            and not discover([display], config):
        return display, None, None
    fd, temp = tempfile.mkstemp(prefix="snlint-stdin-", suffix=Path(display).suffix or ".py")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        read = read_source(display, Path(temp), config.max_file_size)
    finally:
        os.unlink(temp)
    if isinstance(read, Finding) or not display.endswith(NOTEBOOK_SUFFIX):
        return display, read, None
    notebook = parse_notebook(display, read.text)
    return (display, notebook, None) if isinstance(notebook, Finding) else (display, read, notebook)


def fix_stdin(data: bytes, display: str, config: Config, *, unsafe: bool,
              report: Callable[[str], None]) -> tuple[bytes, FixedPoint]:
    """Fix `data`, linted as the file `display`, as `--fix` fixes a file (`write_fixed`,
    writing nothing): the fixed bytes (`data` itself when unchanged) and the rounds' result."""
    from snlint.engine.fixing import fixed_point
    from snlint.fix import write_fixed

    display, read, notebook = _read_input(data, display, config)
    if not isinstance(read, SourceFile) or (notebook is not None and not notebook.writable):
        return data, FixedPoint({})
    notebooks = {display: notebook} if notebook is not None else {}
    texts = {display: read.text if notebook is None else notebook.python}
    result = fixed_point(texts, config, unsafe=unsafe, report=report)
    write_fixed({display: read}, notebooks, texts, result, False, report)
    return (result.files[0].data if result.files else data), result


def lint_stdin(data: bytes, display: str, config: Config, *, fixes: bool = False) -> StdinResult:
    """`fixes`: build each finding's fix (`snlint.engine.lint_sources`)."""
    from snlint.engine import in_cells, lint_sources

    display, read, notebook = _read_input(data, display, config)
    if read is None:
        return StdinResult([])
    if isinstance(read, Finding):
        return StdinResult([read] if config.is_enabled(read.code, display) else [], {}, [display])
    if notebook is not None:
        findings = in_cells(lint_sources({display: notebook.python}, config, fixes=fixes),
                            {display: notebook})
        findings += [f for f in notebook.broken if config.is_enabled(f.code, display)]
        return StdinResult(sorted(findings, key=Finding.sort_key), {display: notebook.python}, [display])
    sources = {display: read.text}
    return StdinResult(lint_sources(sources, config, fixes=fixes), sources, [display])
