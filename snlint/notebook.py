"""Jupyter notebooks (`.ipynb`): their code cells as one Python module, positions mapped
back to (cell, line), and fixed text written back into the notebook's JSON.

The code cells, in order, make one module (`Notebook.python`), so names defined in one
cell resolve in the next, as in the kernel. IPython syntax is replaced line for line
(a magic or shell escape becomes `pass` or `x = None`, a non-Python cell magic blank
lines), so every other line keeps its number and columns. Cells are numbered over all
cells, markdown included, as Jupyter and ruff show them. A fix rewrites only the `source`
value of a changed cell, in the layout the file uses. A cell CPython cannot compile is
left out (blank lines), as Jupyter runs the others; the first is the notebook's SN901.
Notebooks with such a cell, a cell indented as a whole, or of nbformat 3 are read, never
fixed. Broken JSON, or JSON that is not a notebook, is an SN902.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
import warnings
from dataclasses import field, replace

from snlint.lines import LexState, split_lines
from snlint.findings import Finding, Span, diagnostic
from snlint.records import dataclass

# Cell magics whose body is Python (IPython runs it as such).
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "python",
                                "python3", "pypy"})

# `%magic`, `!shell`, `?obj`, `obj?`, `obj.attr??` (help) at the start of a statement.
_MAGIC_LINE = re.compile(r"^[ \t]*(?:[%!?]|[\w.*\[\]()]+\?\??[ \t]*$)")  # `torch.*Tensor?`: a search
_ASSIGN_MAGIC = re.compile(
    r"^(?P<head>[ \t]*[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*[ \t]*=[ \t]*)[!%]")
# Line magics IPython runs without their `%` (automagic) and its default shell aliases;
# a magic only when it is not Python (`ls -la` is a subtraction, and harmless).
_AUTOMAGIC = re.compile(r"^[ \t]*(?:cd|pwd|ls|ll|pip|conda|mkdir|rmdir|rm|cp|mv|cat|env|run|load|"
                        r"alias|unalias|bookmark|dhist|pushd|popd|reload_ext|load_ext|matplotlib|"
                        r"time|timeit|who|whos|history|mamba)(?:[ \t]|$)")
_LITERAL = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")
_WS = re.compile(r"[ \t\n\r]*")
_PYTHON = ("python", "python3", "ipython")  # a kernel's or a cell's language


# ---------------------------------------------------------------------------- JSON spans

class _BadJson(ValueError):
    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


@dataclass
class _SourceSpan:
    start: int
    end: int
    items: list[tuple[int, int]] | None  # element spans when the value is a list


def _source_spans(text: str) -> dict[int, _SourceSpan]:
    """Offsets of each `cells[i].source` value (the json module gives no positions)."""
    spans: dict[int, _SourceSpan] = {}

    def skip(i: int) -> int:
        return _WS.match(text, i).end()

    def value(i: int, path: tuple) -> int:
        i = skip(i)
        if i >= len(text):
            raise _BadJson("unexpected end of JSON", i)
        start, ch = i, text[i]
        if ch in "{[":
            close = "}" if ch == "{" else "]"
            items: list[tuple[int, int]] = []
            i = skip(i + 1)
            while not (text.startswith(close, i) and not items):
                key: object = len(items)
                if ch == "{":
                    if not text.startswith('"', i):
                        raise _BadJson("expected a key", i)
                    key, i = json.decoder.scanstring(text, i + 1)
                    i = skip(i)
                    if not text.startswith(":", i):
                        raise _BadJson("expected ':'", i)
                    i = skip(i + 1)
                item_start = i
                i = value(i, (*path, key) if len(path) < 3 else path)
                items.append((item_start, i))
                i = skip(i)
                if text.startswith(close, i):
                    break
                if not text.startswith(",", i):
                    raise _BadJson(f"expected ',' or '{close}'", i)
                i = skip(i + 1)
            if ch == "[" and _is_source(path):
                spans[path[1]] = _SourceSpan(start, i + 1, items)
            return i + 1
        if ch == '"':
            _, end = json.decoder.scanstring(text, i + 1)
            if _is_source(path):
                spans[path[1]] = _SourceSpan(i, end, None)
            return end
        match = _LITERAL.match(text, i)
        if not match:
            raise _BadJson("unexpected character", i)
        return match.end()

    value(0, ())
    return spans


def _is_source(path: tuple) -> bool:
    return len(path) == 3 and path[0] == "cells" and isinstance(path[1], int) \
        and path[2] == "source"


# ---------------------------------------------------------------------------- IPython syntax

def _python_lines(lines: list[str]) -> list[str]:
    """The cell's lines with IPython syntax replaced, line for line."""
    if not lines:
        return []
    first = lines[0].lstrip()
    if first.startswith("%%"):
        name = first[2:].split(None, 1)[0] if first[2:].strip() else ""
        if name not in PYTHON_CELL_MAGICS:
            return [_ending(line) for line in lines]  # not Python: blank lines
        return [_placeholder(lines[0])] + _replace_line_magics(lines[1:])
    return _replace_line_magics(lines)


def _ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")):]


def _placeholder(line: str) -> str:
    body = line.rstrip("\r\n")
    assign = _ASSIGN_MAGIC.match(body)
    if assign:
        return assign.group("head") + "None" + _ending(line)
    indent = body[:len(body) - len(body.lstrip(" \t"))]
    return indent + "pass" + _ending(line)


def _is_magic(line: str) -> bool:
    body = line.rstrip("\r\n")
    if not body.strip() or body.lstrip().startswith("#"):
        return False
    return bool(_MAGIC_LINE.match(body) or _ASSIGN_MAGIC.match(body)) \
        or (_AUTOMAGIC.match(body) is not None and not _python_start(body.strip()))


def _python_start(statement: str) -> bool:
    """The line compiles, or starts a statement that later lines complete (`ls = [`)."""
    import codeop

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            codeop.compile_command(statement, "<cell>", "exec")
    except (SyntaxError, ValueError, OverflowError):
        return False
    return True


def _replace_line_magics(lines: list[str]) -> list[str]:
    """Magic lines replaced; a line that starts inside a string, inside brackets or
    after a backslash continues a statement and is left alone (`% b` in `(a\n % b)`)."""
    out = []
    state = LexState()
    escaped = False  # the magic line before ended in a backslash: this one is more of it
    for line in lines:
        if escaped or (state.at_statement_start and _is_magic(line)):
            # Lines a magic's trailing backslash continues go with it; IPython takes the
            # indentation off a cell's first line, so its placeholder has none.
            out.append(_ending(line) if escaped else _placeholder(line.lstrip(" \t") if not out else line))
            escaped = line.rstrip("\r\n").endswith("\\")
            continue
        out.append(line)
        state.scan(line)
    return out


# ---------------------------------------------------------------------------- notebooks

@dataclass
class Cell:
    index: int  # 0-based position in `cells`
    first_line: int  # 1-based line of its first line in Notebook.python
    lines: list[str]  # original source lines (with IPython syntax), with endings
    added_newline: bool  # the last line had no newline; Notebook.python adds one
    indent: str = ""  # what IPython takes off every line (`_leading_indent`)

    def column(self, line: int, column: int) -> int:
        """The column in the cell of a column of `Notebook.python` on cell line `line`."""
        if self.indent and 0 < line <= len(self.lines) and self.lines[line - 1].startswith(self.indent):
            return column + len(self.indent)
        return column

    @property
    def number(self) -> int:
        return self.index + 1

    @property
    def end_line(self) -> int:  # exclusive
        return self.first_line + len(self.lines)


@dataclass
class Notebook:
    path: str
    text: str  # the JSON as read
    python: str  # the code cells as one module
    cells: list[Cell] = field(default_factory=list)  # code cells with at least one line
    spans: dict[int, _SourceSpan] = field(default_factory=dict, repr=False)
    broken: list[Finding] = field(default_factory=list)  # the SN901 of cells left out of `python`
    legacy: bool = False  # nbformat 3: read, never written

    @property
    def writable(self) -> bool:
        """Whether fixes may be written into it (a fixed line of a cell indented as a whole
        would need its indentation back)."""
        return not self.legacy and not self.broken and not any(c.indent for c in self.cells)

    def locate(self, line: int) -> tuple[int, int]:
        """(cell number, line in the cell) of a line of `python`."""
        for cell in self.cells:
            if cell.first_line <= line < cell.end_line:
                return cell.number, line - cell.first_line + 1
        if self.cells:
            last = self.cells[-1]
            return last.number, max(1, line - last.first_line + 1)
        return 1, line

    def json_span(self, cell: int, line: int) -> Span | None:
        """Where line `line` of cell `cell` is in the JSON text: its string in a `source`
        list of lines, else the `source` string itself."""
        span = self.spans.get(cell - 1)
        if span is None:
            return None
        if span.items and 0 < line <= len(span.items):
            start, end = span.items[line - 1]
        elif span.items is None:
            start, end = span.start, span.end
        else:
            return None
        first, column = _line_column(self.text, start)
        last, end_column = _line_column(self.text, end)
        return Span(first, column, last, end_column)

    def line_of(self, cell: int, line: int) -> int | None:
        """The line of `python` that is line `line` of cell number `cell`."""
        for c in self.cells:
            if c.number == cell and 0 < line <= len(c.lines):
                return c.first_line + line - 1
        return None

    def map_finding(self, finding: Finding) -> Finding:
        """The finding with its position in a cell (`cell` set, lines within the cell)."""
        if finding.cell is not None:
            return finding
        cell, line = self.locate(finding.line)
        end_cell, end_line = self.locate(finding.end_line)
        span = finding.span
        held = next((c for c in self.cells if c.number == cell), None)
        column = held.column(line, span.column) if held is not None else span.column
        if end_cell != cell:  # a span over cells ends at the end of the first one
            end_line, end_column = line, column + 1
        else:
            end_column = held.column(end_line, span.end_column) if held is not None else span.end_column
        ref = finding.discriminator
        if ref is not None:
            ref = replace(ref, detail=self._cell_places(ref.detail, finding.path),
                          via=self._cell_places(ref.via, finding.path))
        return finding.with_(cell=cell, span=Span(line, column, end_line, end_column),
                             file_span=self.json_span(cell, line),
                             message=self._cell_places(finding.message, finding.path),
                             evidence=self._cell_places(finding.evidence, finding.path),
                             discriminator=ref)

    def _cell_places(self, message: str, path: str) -> str:
        """A message's places in this notebook (`line 189`, `nb.ipynb:189`: lines of the
        joined module, which the reader never sees) as cell and line."""
        def bare(match: re.Match) -> str:
            cell, line = self.locate(int(match.group(1)))
            return f"cell {cell}, line {line}"

        return re.sub(r"\bline (\d+)\b", bare, self.cited(message, path))

    def cited(self, message: str, path: str) -> str:
        """`message` with each `path:189` in this notebook as cell and line."""
        def with_path(match: re.Match) -> str:
            cell, line = self.locate(int(match.group(1)))
            return f"{path}:cell {cell}:{line}"

        return re.sub(rf"{re.escape(path)}:(\d+)\b", with_path, message)

    # -- writing back

    def apply(self, new_python: str) -> str | None:
        """The notebook JSON with `new_python` written into its cells; None when a change
        cannot be placed in one cell."""
        if new_python == self.python:
            return self.text
        old_lines = split_lines(self.python)
        new_lines = split_lines(new_python)
        owner = [None] * len(old_lines)  # virtual line -> (cell, index in cell)
        for cell in self.cells:
            for k in range(len(cell.lines)):
                owner[cell.first_line - 1 + k] = (cell, k)
        rebuilt: dict[int, list[str]] = {c.index: [] for c in self.cells}
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                for i in range(i1, i2):
                    if owner[i] is not None:
                        cell, k = owner[i]
                        rebuilt[cell.index].append(cell.lines[k])
                continue
            cells = {owner[i][0].index for i in range(i1, i2) if owner[i] is not None}
            if len(cells) > 1:
                return None
            if cells:
                target = cells.pop()
            else:  # a pure insertion: into the cell before it, else the one after
                before = owner[i1 - 1] if 0 < i1 <= len(owner) else None
                after = owner[i1] if i1 < len(owner) else None
                chosen = before or after
                if chosen is None:
                    return None
                target = chosen[0].index
            rebuilt[target].extend(new_lines[j1:j2])
        text = self.text
        for cell in sorted(self.cells, key=lambda c: c.index, reverse=True):
            lines = rebuilt[cell.index]
            if cell.added_newline and lines and lines[-1].endswith("\n"):
                lines = lines[:-1] + [lines[-1][:-1]]
            if lines == cell.lines:
                continue
            span = self.spans.get(cell.index)
            if span is None:
                return None
            text = text[:span.start] + self._source_json(cell, span, lines) + text[span.end:]
        return text

    def _source_json(self, cell: Cell, span: _SourceSpan, lines: list[str]) -> str:
        ascii_only = _ascii_escaped(self.text)
        if span.items is None:
            return json.dumps("".join(lines), ensure_ascii=ascii_only)
        if not lines:
            return "[]"
        old_raw = [self.text[a:b] for a, b in span.items]
        old_values = [json.loads(raw) for raw in old_raw]
        reuse = dict(zip(old_values, old_raw)) if old_values == cell.lines else {}
        items = [reuse.get(line) or json.dumps(line, ensure_ascii=ascii_only) for line in lines]
        opening, separator, closing = self._list_layout(span)
        return "[" + opening + separator.join(items) + closing + "]"

    def _list_layout(self, span: _SourceSpan) -> tuple[str, str, str]:
        text = self.text
        if span.items:
            opening = text[span.start + 1:span.items[0][0]]
            closing = text[span.items[-1][1]:span.end - 1]
            if len(span.items) > 1:
                separator = text[span.items[0][1]:span.items[1][0]]
            else:
                separator = "," + opening
            return opening, separator, closing
        # `[]` before: nbformat's layout, one space deeper than the "source" key.
        line_start = text.rfind("\n", 0, span.start) + 1
        key_indent = re.match(r"[ \t]*", text[line_start:]).group()
        return "\n" + key_indent + " ", ",\n" + key_indent + " ", "\n" + key_indent


def _line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of character `offset` of `text` (JSON escapes a \r)."""
    start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - start + 1


def _ascii_escaped(text: str) -> bool:
    """Whether the file escapes non-ASCII characters (`\\u00e9`) rather than writing them."""
    if any(ord(ch) > 127 for ch in text):
        return False
    return bool(re.search(r"\\u00[89a-fA-F][0-9a-fA-F]|\\u0[1-9a-fA-F][0-9a-fA-F]{2}|"
                          r"\\u[1-9a-fA-F][0-9a-fA-F]{3}", text))


def _is_python(data: dict) -> bool:
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    info = meta.get("language_info") if isinstance(meta.get("language_info"), dict) else {}
    kernel = meta.get("kernelspec") if isinstance(meta.get("kernelspec"), dict) else {}
    language = info.get("name") or kernel.get("language")
    return language is None or str(language).lower() in _PYTHON


def cell_key(path: str, cell: int) -> str:
    """The key under which a cell's own text is shown (`full` output)."""
    return f"{path}:cell {cell}"


def parse_notebook(path: str, text: str) -> Notebook | Finding:
    """The notebook at display path `path` (its JSON text), or an SN902 diagnostic."""
    try:
        data = json.loads(text)
        spans = _source_spans(text)
    except _BadJson as e:
        return diagnostic("SN902", path, f"notebook is not valid JSON: {e}",
                          Span.point(*_line_column(text, e.pos)))
    except json.JSONDecodeError as e:
        return diagnostic("SN902", path, f"notebook is not valid JSON: {e.msg}",
                          Span.point(e.lineno, e.colno))
    except RecursionError:
        return diagnostic("SN902", path, "notebook JSON is nested too deeply")
    cells, legacy = _cells(data)
    if cells is None:
        return diagnostic("SN902", path, "not a Jupyter notebook: no \"cells\" list")
    notebook = Notebook(path, text, "", spans=spans, legacy=legacy)
    if not _is_python(data):
        return notebook
    pythons: list[tuple[Cell, list[str]]] = []
    line = 1
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code" \
                or str(cell.get("language", "python")).lower() not in _PYTHON:
            continue
        source = cell.get("input" if legacy else "source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source_text = "".join(source)
        elif isinstance(source, str):
            source_text = source
        else:
            return diagnostic("SN902", path, f"cell {index + 1}: \"source\" is not text")
        lines = split_lines(source_text)
        if not lines:
            continue
        added = not lines[-1].endswith(("\n", "\r"))
        indent = _leading_indent(lines)
        python = _python_lines([part[len(indent):] if indent and part.startswith(indent) else part
                                for part in (lines[:-1] + [lines[-1] + "\n"] if added else lines)])
        notebook.cells.append(Cell(index, line, lines, added, indent))
        pythons.append((notebook.cells[-1], python))
        line += len(lines)
    notebook.python = "".join(line for _, python in pythons for line in python)
    if "__future__" in notebook.python:
        pythons = _future_imports_as_placeholders(pythons)
        notebook.python = "".join(line for _, python in pythons for line in python)
    if _compile_error(notebook.python) is not None:
        _leave_out_broken_cells(notebook, pythons)
    return notebook


def _future_imports_as_placeholders(pythons: list[tuple[Cell, list[str]]]) -> list[tuple[Cell, list[str]]]:
    """`from __future__ import ...` opening a later cell (an exported script's imports
    after a `%matplotlib inline` cell) is legal in the kernel, which compiles cell by
    cell, but not in the one module the cells make, which CPython then refuses to compile
    (so no fix is written): such an import becomes a placeholder, line for line, as a
    magic does. One after other statements of its own cell is an error in the kernel too,
    and stays."""
    seen = False  # any statement in the module so far
    started = False  # a statement other than the module's docstring or a future import
    out: list[tuple[Cell, list[str]]] = []
    for cell, python in pythons:
        try:
            tree = ast.parse("".join(python))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            out.append((cell, python))
            seen = started = started or any(line.strip() and not line.lstrip().startswith("#")
                                            for line in python)
            continue
        python = list(python)
        before_cell = started
        in_cell = False  # a statement of this cell other than a future import
        for statement in tree.body:
            if isinstance(statement, ast.ImportFrom) and statement.module == "__future__":
                if before_cell and not in_cell:
                    first, last = statement.lineno - 1, (statement.end_lineno or statement.lineno) - 1
                    python[first] = _placeholder(python[first])
                    python[first + 1:last + 1] = [_ending(line) for line in python[first + 1:last + 1]]
                seen = True
                continue
            docstring = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
                and isinstance(statement.value.value, str)
            in_cell = in_cell or not docstring
            started = started or not (docstring and not seen)
            seen = True
        out.append((cell, python))
    return out


def _leading_indent(lines: list[str]) -> str:
    """The whitespace IPython takes off a cell's lines: its first non-blank line's."""
    first = next((part for part in lines if part.strip()), "")
    return first[:len(first) - len(first.lstrip(" \t"))]


def _cells(data) -> tuple[list | None, bool]:
    """The notebook's cells (None: no notebook), and whether it is nbformat 3 (cells in
    `worksheets`)."""
    if not isinstance(data, dict):
        return None, False
    if isinstance(data.get("cells"), list):
        return data["cells"], False
    sheets = data.get("worksheets")
    if data.get("nbformat") == 3 and isinstance(sheets, list) \
            and all(isinstance(s, dict) and isinstance(s.get("cells"), list) for s in sheets):
        return [cell for sheet in sheets for cell in sheet["cells"]], True
    return None, False


def _leave_out_broken_cells(notebook: Notebook, pythons: list[tuple[Cell, list[str]]]) -> None:
    """Each cell CPython cannot compile on its own becomes blank lines; the first one's
    error is the SN901, naming the others. (When every cell compiles alone, the module
    is left whole to fail as one.)"""
    parts: list[str] = []
    errors: list[tuple[Cell, list[str], BaseException]] = []
    for cell, python in pythons:
        # At its own lines, so the error is placed in the notebook as any finding is.
        error = _compile_error("\n" * (cell.first_line - 1) + "".join(python))
        if error is None:
            parts.extend(python)
        else:
            parts.extend("\n" for _ in python)
            errors.append((cell, python, error))
    notebook.python = "".join(parts)
    if not errors:
        return
    cell, python, error = errors[0]
    lineno = getattr(error, "lineno", None) or cell.first_line
    at = min(max(lineno, cell.first_line), cell.first_line + len(python) - 1)
    column = getattr(error, "offset", None) or 1
    message = f"syntax error: {getattr(error, 'msg', None) or error}"
    others = [c.number for c, _, _ in errors[1:]]
    if others:
        shown = ", ".join(map(str, others[:5])) + (", ..." if len(others) > 5 else "")
        message += (f"; {len(others)} more cell{'s' if len(others) > 1 else ''} "
                    f"(cell{'s' if len(others) > 1 else ''} {shown}) "
                    f"do{'' if len(others) > 1 else 'es'} not compile either")
    notebook.broken.append(notebook.map_finding(diagnostic(
        "SN901", notebook.path, message, Span(at, column, at, column + 1))))


def _compile_error(text: str) -> BaseException | None:
    """What CPython raises compiling `text` to a tree (its warnings silenced), or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<cell>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        return error
    return None

