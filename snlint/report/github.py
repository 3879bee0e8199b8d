"""`--output-format github`: GitHub Actions workflow commands, one annotation per finding
(`::error title=snlint (SN201),file=models/d.py,line=14,...::message`), escaped as the
Actions toolkit escapes them. A notebook finding points at the line of the .ipynb file
that holds its source line (as SARIF does), its message starting with `cell N:line:col`.
"""

from __future__ import annotations

from collections.abc import Iterable

from snlint.findings import Finding

_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding) -> str:
    command = _COMMAND.get(finding.severity, "warning")
    props = [("title", f"snlint ({finding.code})"), ("file", finding.path)]
    message = finding.message + finding.via()
    if finding.cell is None:
        props += [("line", finding.line), ("col", finding.column),
                  ("endLine", finding.end_line), ("endColumn", finding.end_column)]
    else:
        # As SARIF: the line of the .ipynb file's text that holds the source line.
        message = f"cell {finding.cell}:{finding.line}:{finding.column}: {message}"
        span = finding.file_span
        if span is not None:
            props += [("line", span.line), ("col", span.column),
                      ("endLine", span.end_line), ("endColumn", span.end_column)]
    properties = ",".join(f"{key}={escape_property(str(value))}" for key, value in props)
    return f"::{command} {properties}::{escape_data(message)}"


def render_github(findings: Iterable[Finding]) -> str:
    return "\n".join(annotation(f) for f in findings)
