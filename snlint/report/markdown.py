"""Rule pages on a terminal: Markdown made readable without a Markdown viewer."""

from __future__ import annotations

import re

import click

_INLINE_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")


def terminal_page(markdown: str, color: bool) -> str:
    """Headings styled, code blocks indented without their fences, inline code marked.
    Without color the page is returned as it is (plain Markdown reads fine in a pipe)."""
    if not color:
        return markdown
    out: list[str] = []
    in_code = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            out.append(click.style("    " + line, fg="green"))
        elif line.startswith("# "):
            out.append(click.style(line[2:], bold=True, underline=True))
        elif line.startswith("## "):
            out.append(click.style(line[3:], bold=True, fg="cyan"))
        else:
            line = _INLINE_CODE.sub(lambda m: click.style(m.group(1), fg="yellow"), line)
            out.append(_BOLD.sub(lambda m: click.style(m.group(1), bold=True), line))
    return "\n".join(out)
