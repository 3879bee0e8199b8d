"""The libcst source pass: one read of one file, producing facts (never findings)."""

from __future__ import annotations

import libcst as cst

from snlint.facts import FileFacts
from snlint.findings import Finding, Span, diagnostic
from snlint.source.lower import lower_file


def module_name(relpath: str) -> tuple[str, bool]:
    """`models/d.py` -> (`models.d`, False); `models/__init__.py` -> (`models`, True)."""
    stem = relpath[:-3] if relpath.endswith(".py") else relpath
    parts = [p for p in stem.replace("\\", "/").split("/") if p and p != "."]
    is_package = bool(parts) and parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(p.replace("-", "_") for p in parts), is_package


def extract(text: str, path: str, relpath: str) -> FileFacts | Finding:
    """Facts of one file, or an SN901 diagnostic when it does not parse."""
    try:
        tree = cst.parse_module(text)
    except cst.ParserSyntaxError as e:
        return _syntax_error(text, path, e)
    except (cst.CSTValidationError, RecursionError) as e:
        # Text libcst's parser accepts but cannot build a tree for (an identifier made of
        # characters newer than this Python's Unicode tables): CPython says why.
        return _syntax_error(text, path, None, str(e))
    module, is_package = module_name(relpath)
    return lower_file(tree, path, module, is_package)


def _syntax_error(text: str, path: str, e: cst.ParserSyntaxError | None,
                  reason: str = "") -> Finding:
    # CPython's parser names the offending token precisely and in words users know;
    # libcst's native parser can point a line late. Prefer CPython's where it agrees
    # that the file is broken.
    try:
        compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as py:
        line = py.lineno or 1
        column = py.offset or 1
        return diagnostic("SN901", path, f"syntax error: {py.msg}",
                          Span(line, column, line, column + 1))
    except (ValueError, RecursionError, MemoryError):
        pass
    if e is None:
        return diagnostic("SN901", path, f"cannot parse: {reason.splitlines()[0] if reason else 'libcst failed'}")
    line, column = e.raw_line, e.raw_column + 1
    return diagnostic("SN901", path, f"syntax error: {e.message}", Span(line, column, line, column + 1))
