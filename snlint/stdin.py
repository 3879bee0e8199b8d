"""Linting standard input (`--stdin-filename PATH`, or `-`) as if it were the file `PATH`
(its project's configuration applies), source pass only: the graph pass imports files
from disk. The bytes are decoded exactly as a file's, by `files.read_source` through a
private temporary file. `fix_stdin` fixes them as `--fix` fixes a file.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import field
from pathlib import Path

from snlint.config import Config
from snlint.files import NOTEBOOK_SUFFIX, SUFFIXES, SourceFile, discover, display_path, read_source
from snlint.findings import Finding
from snlint.fix.apply import FixedPoint
from snlint.notebook import parse_notebook
from snlint.records import dataclass

STDIN = "-"


@dataclass
class StdinResult:
    findings: list[Finding]
    sources: dict[str, str] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)  # [] when force-exclude dropped it
    cleared: list[Finding] = field(default_factory=list)  # no graph pass on standard input


@contextmanager
def _as_file(data: bytes, display: str,
             config: Config) -> Iterator[tuple[str, list[tuple[str, Path]]]]:
    """The display path, and [(it, a private temporary file holding `data`)] to read as the
    file `display` would be; [] when --force-exclude drops that file."""
    display = display_path(display) if display != STDIN else STDIN
    if config.force_exclude and Path(display).suffix in SUFFIXES \
            and not discover([display], config):
        yield display, []
        return
    fd, temp = tempfile.mkstemp(prefix="snlint-stdin-", suffix=Path(display).suffix or ".py")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        yield display, [(display, Path(temp))]
    finally:
        os.unlink(temp)


def fix_stdin(data: bytes, display: str, config: Config, *, unsafe: bool,
              report: Callable[[str], None]) -> tuple[bytes, FixedPoint]:
    """Fix `data`, linted as the file `display`, as `--fix` fixes a file (`write_fixed`,
    writing nothing): the fixed bytes (`data` itself when unchanged) and the rounds' result."""
    from snlint.engine.fixing import fixed_point
    from snlint.fix import read_fixable, write_fixed

    with _as_file(data, display, config) as (display, files):
        sources, notebooks, texts = read_fixable(files, config)
    if not sources:
        return data, FixedPoint({})
    result = fixed_point(texts, config, unsafe=unsafe, report=report)
    write_fixed(sources, notebooks, texts, result, False, report)
    return (result.files[0].data if result.files else data), result


def lint_stdin(data: bytes, display: str, config: Config, *, fixes: bool = False) -> StdinResult:
    """`fixes`: build each finding's fix (`snlint.engine.lint_sources`)."""
    from snlint.engine import in_cells, lint_sources

    with _as_file(data, display, config) as (display, files):
        if not files:
            return StdinResult([])
        read = read_source(display, files[0][1], config.max_file_size)
    notebook = None
    if isinstance(read, SourceFile) and display.endswith(NOTEBOOK_SUFFIX):
        notebook = parse_notebook(display, read.text)
    broken = notebook if isinstance(notebook, Finding) else read
    if isinstance(broken, Finding):
        return StdinResult([broken] if config.is_enabled(broken.code, display) else [], {}, [display])
    if notebook is not None:
        findings = in_cells(lint_sources({display: notebook.python}, config, fixes=fixes),
                            {display: notebook})
        findings += [f for f in notebook.broken if config.is_enabled(f.code, display)]
        return StdinResult(sorted(findings, key=Finding.sort_key), {display: notebook.python}, [display])
    sources = {display: read.text}
    return StdinResult(lint_sources(sources, config, fixes=fixes), sources, [display])
