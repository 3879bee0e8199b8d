"""The source pass: one read of one file, producing facts (never findings).

CPython's `ast` is the one reader (`lower_ast`). A file CPython rejects gets SN901 with
CPython's own message, line and column, and is never given to libcst (which accepts some
such files, and crashes on some deeply nested ones); `python2` may still read it. libcst
is imported here only to tell whether it reads a file back byte for byte (`_rewritable`).
"""

from __future__ import annotations

import ast
import re
import warnings
from typing import Iterable

from snlint.facts import FileFacts
from snlint.findings import Finding, Span, diagnostic
from snlint.lines import may_lose_bytes, put_back
from snlint.source.lower_ast import AstLowerer
from snlint.source.imports import import_names

# Lines libcst may misread in a file CPython reads: an indentation with a tab, and a line
# that is only a backslash continuation between statements. Such a file, or one ending in
# spaces, is rewritten only when libcst reads it back byte for byte.
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
    """Facts of one file (or its SN901), and the modules it imports (None: no parse)."""
    facts, modules, _ = extract_with_notes(text, path, relpath)
    return facts, modules


def extract_with_notes(text: str, path: str, relpath: str
                       ) -> tuple[FileFacts | Finding, set[str] | None, list[Finding]]:
    """`extract_file`, and an SN904 note when some of it is nested deeper than the
    lowering follows (read as unknown values instead)."""
    module, is_package = module_name(relpath)
    tree = parse_python(text, path)
    if not isinstance(tree, ast.Module):
        return _syntax_error(path, tree), None, []
    lowerer = AstLowerer(tree, text, module, is_package)  # its scan cuts what is too deep
    scopes = lowerer.scopes_info
    # Compiling costs a third of parsing: only a tree the scan found suspect is compiled
    # (a fix compiles what it rewrites anyway).
    if scopes.suspect:
        error = compile_error(text if scopes.cuts else tree, path)
        if error is not None:
            return _syntax_error(path, error), None, []
    # libcst's code of a deep expression recurses past Python's limit: no fix reads it.
    facts = lowerer.file(path, not scopes.cuts and _rewritable(text))
    notes = [_too_deep(path, scopes.cuts)] if scopes.cuts else []
    return facts, scopes.modules, notes


def extract_python2(text: str, path: str, relpath: str) -> tuple[FileFacts, set[str]] | None:
    """Facts of a file CPython 3 does not parse, read as Python 2 (`python2`), when that
    rendering parses; its fixes are off."""
    from snlint.source.python2 import as_python3

    rendered = as_python3(text, lambda t: isinstance(parse_python(t, path), ast.Module))
    if rendered is None:
        return None
    lowerer = AstLowerer(parse_python(rendered, path), rendered, *module_name(relpath))
    return lowerer.file(path, False), lowerer.scopes_info.modules


def parse_python(text: str, path: str) -> ast.Module | BaseException:
    """CPython's tree of `text`, or what it raised parsing it (quietly: an invalid escape
    in a string is its author's business)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        return error


def compile_error(source: ast.Module | str, path: str) -> SyntaxError | None:
    """The SyntaxError CPython's compiler raises for a tree its parser made (`return`
    outside a function), or None. Its own limits on a deep tree are not the file's."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as error:
        return error
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


def _rewritable(text: str) -> bool:
    """Whether libcst reads `text`, which CPython parses, as it is written (a fix finds its
    node by position in libcst's tree and writes libcst's code of it)."""
    suspect = _SUSPECT_LINE.search(text) is not None or text.endswith((" ", "\t", "\f"))
    if not suspect and not may_lose_bytes(text):
        return True
    tree = _parsed(text)
    try:
        code = tree.code if tree is not None else None
    except RecursionError:
        return False
    if code == text:
        return True
    # A form feed in indentation, a last bare `\r`: a fix puts them back where it keeps
    # the line (`snlint.lines.put_back`), when libcst read the file line for line.
    return code is not None and not suspect and put_back(text, code, code) == text


def _parsed(text: str):
    import libcst as cst
    try:
        return cst.parse_module(text)
    except (cst.ParserSyntaxError, cst.CSTValidationError, RecursionError):
        return None


def project_modules(names: Iterable[str]) -> set[str]:
    """The imported modules worth looking for in the project (not torch's, numpy's...)."""
    return {m for m in names if m and not m.startswith(("torch", "numpy", "functools", "typing"))}


def ast_modules(text: str, module: str, is_package: bool) -> set[str] | None:
    """`Scopes.modules` of a file that is not lowered; None when CPython cannot parse it."""
    tree = parse_python(text, "<file>")
    if not isinstance(tree, ast.Module):
        return None
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update(import_names(node, module, is_package)[0])
    return out


def _syntax_error(path: str, error: BaseException) -> Finding:
    """SN901 with what CPython said: its message, line and column for a SyntaxError."""
    if isinstance(error, SyntaxError):
        line = error.lineno or 1
        column = error.offset or 1
        return diagnostic("SN901", path, f"syntax error: {error.msg}", Span(line, column, line, column + 1))
    if isinstance(error, RecursionError):
        return diagnostic("SN901", path, f"cannot parse: nested too deeply for CPython ({error})")
    if isinstance(error, MemoryError):
        return diagnostic("SN901", path, "cannot parse: CPython ran out of memory parsing it")
    return diagnostic("SN901", path, f"syntax error: {error}")


def _too_deep(path: str, cuts: list[tuple[int, int, int, int]]) -> Finding:
    """SN904 at the first expression cut, counting the other lines with one."""
    line, column, end_line, end_column = min(cuts)
    others = len({cut[0] for cut in cuts}) - 1
    where = "this expression is read as an unknown value" if not others else (
        f"this expression and deep ones on {others} more line{'s' if others > 1 else ''} "
        "are read as unknown values")
    return diagnostic("SN904", path, f"nested too deeply to follow: {where} "
                      "(findings in them may be missed; no fixes for this file)",
                      Span(line, column, end_line, end_column))
