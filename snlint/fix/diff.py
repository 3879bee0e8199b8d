"""Unified diffs that `git apply` and `patch -p1` accept."""

from __future__ import annotations

import os
import re

from snlint.lines import lines_before

# A patch's lines end at "\n" only (`patch` and `git apply` keep a "\r" as part of the
# line), unlike Python's lines (snlint.lines).
_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")
NO_NEWLINE = "\\ No newline at end of file\n"


def _lines(text: str) -> list[str]:
    return _LINES.findall(text)


def patch_path(path: str) -> str:
    """The path in `--- a/...` headers: relative to the working directory when under it,
    with forward slashes."""
    if os.path.isabs(path):
        try:
            rel = os.path.relpath(path)
        except ValueError:
            rel = path
        if not rel.startswith(".."):
            path = rel
    return path.replace(os.sep, "/").lstrip("/")


def unified_diff(path: str, old: str, new: str, context: int = 3) -> str:
    """The diff from `old` to `new` for the file `path` ("" when they are equal)."""
    if old == new:
        return ""
    import difflib  # a plain lint imports this module, and shows no diff

    name = patch_path(path)
    out = []
    for line in difflib.unified_diff(_lines(old), _lines(new), f"a/{name}", f"b/{name}",
                                     n=context, lineterm="\n"):
        if line.startswith(("---", "+++")) and not line.endswith("\n"):
            line += "\n"
        out.append(line)
        if not line.endswith("\n"):
            out.append("\n" + NO_NEWLINE)
    return "".join(out)


_HUNK = re.compile(r"^@@ -(\d+)((?:,\d+)?) \+(\d+)((?:,\d+)?) @@", re.MULTILINE)


def unified_diff_in(path: str, old: str, start: int, end: int, text: str, context: int = 3) -> str:
    """`unified_diff` of `old` and `old` with `old[start:end]` replaced by `text`, made from
    the lines around the change alone (a file's many fixes, each diffed whole, would
    cost the file's size squared)."""
    if old[start:end] == text:
        return ""
    # The lines that hold the change, and `context` lines of the file on each side of it
    # (one more after a change that ends with a line).
    low = old.rfind("\n", 0, start) + 1
    for _ in range(context):
        low = old.rfind("\n", 0, max(low - 1, 0)) + 1
    high = end
    for _ in range(context + 1 + (end > start and old[end - 1] == "\n")):
        found = old.find("\n", high)
        high = len(old) if found < 0 else found + 1
    before = lines_before(old, low, patch=True)
    diff = unified_diff(path, old[low:high], old[low:start] + text + old[end:high], context)
    if not before:
        return diff

    def shifted(match: re.Match) -> str:
        return (f"@@ -{int(match.group(1)) + before}{match.group(2)} "
                f"+{int(match.group(3)) + before}{match.group(4)} @@")

    head, _, hunks = diff.partition("@@")
    return head + _HUNK.sub(shifted, "@@" + hunks)
