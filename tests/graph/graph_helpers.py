"""Helpers for the graph-pass tests (imported by the test modules of this folder)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from snlint.findings import Location, Span


def write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def span_of(source: str, text: str, nth: int = 0) -> tuple[int, int, int, int]:
    """(line, column, end_line, end_column) of the nth occurrence of one-line `text` in
    the dedented `source`: 1-based, end exclusive, as findings count."""
    lines = textwrap.dedent(source).splitlines()
    seen = 0
    for number, line in enumerate(lines, 1):
        start = line.find(text)
        while start >= 0:
            if seen == nth:
                return (number, start + 1, number, start + 1 + len(text))
            seen += 1
            start = line.find(text, start + 1)
    raise AssertionError(f"{text!r} not in source")


def class_location(path: Path, display: str, class_name: str) -> Location:
    """Where findings without a project site go: the `class Name` line."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        column = line.find(f"class {class_name}")
        if column >= 0:
            return Location(display, Span(number, column + 1, number, len(line.rstrip()) + 1))
    return Location(display, Span(1, 1, 1, 1))


def display_for(root: Path):
    def display(abs_path: str) -> str | None:
        rel = os.path.relpath(abs_path, root)
        return None if rel.startswith(os.pardir) else rel.replace(os.sep, "/")
    return display


def at(findings) -> list[tuple]:
    """Findings as (code, line, column, end_line, end_column), the way tests compare them."""
    return [(f.code, f.line, f.column, f.end_line, f.end_column) for f in findings]
