"""Machine formats: `json` (one array, the output contract) and `json-lines`."""

from __future__ import annotations

import json


def render_rows(rows: list[dict], fmt: str) -> str:
    """Records (`Finding.to_dict()`, statistics, the rule list) as one JSON array (indent
    2), or with `json-lines` one compact object per line."""
    if fmt == "json-lines":
        return "\n".join(json.dumps(row, separators=(",", ":")) for row in rows)
    return json.dumps(rows, indent=2)
