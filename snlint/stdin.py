"""Linting standard input (`--stdin-filename PATH`, or `-` as the path) for editors and
scripts: the text is linted as if it were the file `PATH` (the configuration of its
project applies: per-file-ignores, exclude with --force-exclude), source pass only, since
the graph pass imports files from disk. A `.ipynb` name reads the input as a notebook
(findings then carry their cell).

The bytes are decoded exactly as a file's would be (BOM, PEP 263 cookie, else UTF-8; a
NUL byte or bad bytes give SN902, more than max-file-size SN903), by handing them to
`files.read_source` through a private temporary file.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import field
from pathlib import Path
from typing import BinaryIO

from snlint.config import Config
from snlint.files import NOTEBOOK_SUFFIX, SUFFIXES, discover, read_source
from snlint.findings import Finding
from snlint.notebook import parse_notebook
from snlint.records import dataclass

STDIN = "-"


@dataclass
class StdinResult:
    findings: list[Finding]
    sources: dict[str, str] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)  # [] when force-exclude dropped it
    cleared: list[Finding] = field(default_factory=list)  # no graph pass on standard input


def excluded(display: str, config: Config) -> bool:
    """Whether --force-exclude drops the file `display` names."""
    if not config.force_exclude or Path(display).suffix not in SUFFIXES:
        return False
    return not discover([display], config)


def decode(data: bytes, display: str, max_size: int) -> str | Finding:
    """The text of `data` read as the file `display` would be, or an SN902 / SN903."""
    fd, temp = tempfile.mkstemp(prefix="snlint-stdin-", suffix=Path(display).suffix or ".py")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        read = read_source(display, Path(temp), max_size)
    finally:
        os.unlink(temp)
    return read if isinstance(read, Finding) else read.text


def lint_stdin(stream: BinaryIO, display: str, config: Config, *, fixes: bool = False) -> StdinResult:
    """`fixes`: build each finding's fix (`snlint.engine.lint_sources`)."""
    from snlint.engine import in_cells, lint_sources

    display = os.path.normpath(display).replace(os.sep, "/") if display != STDIN else STDIN
    if excluded(display, config):
        return StdinResult([])
    text = decode(stream.read(), display, config.max_file_size)
    if isinstance(text, Finding):
        kept = [text] if config.is_enabled(text.code, display) else []
        return StdinResult(kept, {}, [display])
    if display.endswith(NOTEBOOK_SUFFIX):
        notebook = parse_notebook(display, text)
        if isinstance(notebook, Finding):
            kept = [notebook] if config.is_enabled(notebook.code, display) else []
            return StdinResult(kept, {}, [display])
        findings = in_cells(lint_sources({display: notebook.python}, config, fixes=fixes),
                            {display: notebook})
        findings += [f for f in notebook.broken if config.is_enabled(f.code, display)]
        return StdinResult(sorted(findings, key=Finding.sort_key), {display: notebook.python}, [display])
    return StdinResult(lint_sources({display: text}, config, fixes=fixes), {display: text}, [display])
