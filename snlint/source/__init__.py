"""The source pass: one read of one file, producing facts (never findings).

CPython's `ast` reads every file it can parse (`snlint.source.lower_ast`); libcst only
the files it cannot (`snlint.source.lower`: libcst's parser accepts some that CPython
rejects). Both give the same facts for the same text, so nothing downstream knows which
read a file; libcst is imported only when one is needed, and by the fixes.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import warnings
from typing import Iterable

from snlint.facts import FileFacts
from snlint.findings import Finding, Span, diagnostic
from snlint.source.lower_ast import lower_ast
from snlint.source.relative import resolve_relative

# Lines libcst may misread in a file CPython reads: an indentation with a tab (libcst
# rejects some mixes of tabs and spaces, `snlint.source.indentation`), and a line that is
# only a backslash continuation between statements (libcst drops it, so its positions
# after it are a line short and its code loses the line). Such a file, or one ending in
# spaces after an empty line (whose code loses the empty line), is rewritten only when
# libcst reads it back byte for byte.
_SUSPECT_LINE = re.compile(r"^[ \f]*\t|^[ \t\f]*\\\r?$", re.MULTILINE)


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
    return extract_file(text, path, relpath)[0]


def extract_file(text: str, path: str, relpath: str) -> tuple[FileFacts | Finding, set[str] | None]:
    """Facts of one file (or its SN901 diagnostic), and the modules it imports
    (`Scopes.modules`; None when it does not parse)."""
    module, is_package = module_name(relpath)
    tree = parse_python(text, path)
    if _null_bytes(tree):
        # No Python runs the file: libcst's parser would read it, but it is no program.
        return _syntax_error(path, None, tree, str(tree)), None
    if isinstance(tree, ast.Module):
        try:
            return lower_ast(tree, text, path, module, is_package, _rewritable(text))
        except RecursionError:
            tree = None  # nested deeper than this walk can go: libcst's reading decides
    return _extract_with_libcst(text, path, module, is_package, tree)


def extract_python2(text: str, path: str, relpath: str) -> tuple[FileFacts, set[str]] | None:
    """Facts of a file CPython 3 does not parse, read as Python 2 (`snlint.source.python2`:
    a rendering line for line), when that rendering parses; its fixes are off."""
    from snlint.source.python2 import as_python3

    rendered = as_python3(text, lambda t: isinstance(parse_python(t, path), ast.Module))
    if rendered is None:
        return None
    module, is_package = module_name(relpath)
    tree = parse_python(rendered, path)
    try:
        return lower_ast(tree, rendered, path, module, is_package, False)
    except RecursionError:
        return None


def parse_python(text: str, path: str) -> ast.Module | BaseException:
    """CPython's tree of `text`, or what it raised parsing it. Quietly: the warnings
    compiling a file gives (an invalid escape in a string) are its author's business."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        return error


def _null_bytes(error: ast.Module | BaseException) -> bool:
    """Whether CPython refused the text for a null byte in it (a ValueError before 3.11.4,
    a SyntaxError since)."""
    return isinstance(error, (SyntaxError, ValueError)) and "null bytes" in str(error)


def _rewritable(text: str) -> bool:
    """Whether libcst reads `text`, which CPython parses, as it is written: a fix finds its
    node by position in libcst's tree and writes libcst's code of it."""
    if _SUSPECT_LINE.search(text) is None and not text.endswith((" ", "\t", "\f")):
        return True
    tree = _parsed(text)
    return tree is not None and tree.code == text


def _extract_with_libcst(text: str, path: str, module: str, is_package: bool,
                         python: BaseException | None) -> tuple[FileFacts | Finding, set[str] | None]:
    """A file CPython does not parse (`python`: what it raised), or could not be lowered
    from its tree (None): libcst's parser accepts some such files."""
    import libcst as cst

    from snlint.source.indentation import expand_tabs
    from snlint.source.lower import lower_file
    expanded = None
    try:
        tree = cst.parse_module(text)
    except cst.ParserSyntaxError as e:
        expanded = expand_tabs(text) if python is None else None
        tree = _parsed(expanded.text) if expanded is not None else None
        if tree is None:
            return _syntax_error(path, e, python), None
    except (cst.CSTValidationError, RecursionError) as e:
        # Text libcst's parser accepts but cannot build a tree for (an identifier made of
        # characters newer than this Python's Unicode tables): CPython says why.
        return _syntax_error(path, None, python, str(e)), None
    facts, modules = lower_file(tree, path, module, is_package, expanded)
    if expanded is None and tree.code != text:  # libcst dropped a line: no fix may trust it
        facts = dataclasses.replace(facts, rewritable=False)
    return facts, modules


def _parsed(text: str):
    import libcst as cst
    try:
        return cst.parse_module(text)
    except (cst.ParserSyntaxError, cst.CSTValidationError, RecursionError):
        return None


def project_modules(names: Iterable[str]) -> set[str]:
    """The imported modules worth looking for in the project: not torch's, numpy's and
    the standard library's that GAN code imports most."""
    return {m for m in names if m and not m.startswith(("torch", "numpy", "functools", "typing"))}


def ast_modules(text: str, module: str, is_package: bool) -> set[str] | None:
    """`Scopes.modules` read with Python's `ast` (C speed), for a file that is not lowered;
    None when CPython cannot parse it."""
    tree = parse_python(text, "<file>")
    if not isinstance(tree, ast.Module):
        return None
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = resolve_relative(module, is_package, node.level, base)
            out.add(base)
            out.update(f"{base}.{alias.name}" if base else alias.name for alias in node.names)
    return out


def _syntax_error(path: str, e, python: BaseException | None, reason: str = "") -> Finding:
    # CPython's parser names the offending token precisely and in words users know;
    # libcst's native parser can point a line late. Prefer CPython's (`python`, what it
    # raised compiling the text) where it agrees that the file is broken.
    if isinstance(python, SyntaxError):
        line = python.lineno or 1
        column = python.offset or 1
        return diagnostic("SN901", path, f"syntax error: {python.msg}",
                          Span(line, column, line, column + 1))
    if e is None:
        return diagnostic("SN901", path, f"cannot parse: {reason.splitlines()[0] if reason else 'libcst failed'}")
    line, column = e.raw_line, e.raw_column + 1
    return diagnostic("SN901", path, f"syntax error: {e.message}", Span(line, column, line, column + 1))
