"""Machine formats: `json` (one array, the output contract) and `json-lines`."""

from __future__ import annotations

import json
from collections.abc import Iterable

from snlint.findings import Finding


def render_json(findings: Iterable[Finding]) -> str:
    """One JSON array (indent 2) of `Finding.to_dict()`, findings and diagnostics alike."""
    return json.dumps([f.to_dict() for f in findings], indent=2)


def render_json_lines(findings: Iterable[Finding]) -> str:
    """One compact JSON object per finding, one per line (no enclosing array)."""
    return "\n".join(json.dumps(f.to_dict(), separators=(",", ":")) for f in findings)


def render_rows(rows: list[dict], fmt: str) -> str:
    """Plain records (statistics, the rule list) in `json` or `json-lines`."""
    if fmt == "json-lines":
        return "\n".join(json.dumps(row, separators=(",", ":")) for row in rows)
    return json.dumps(rows, indent=2)
