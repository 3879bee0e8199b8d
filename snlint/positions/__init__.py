"""Where the nodes of a parsed file are: libcst's own `PositionProvider`, run on the
statement a fix asks about rather than on the whole file (docs/architecture.md, "Where a
fix's nodes are"). The tables equal libcst's over the whole module, in its order."""

from __future__ import annotations

from bisect import bisect_right
from functools import cached_property
from typing import Callable, Iterator, Mapping, NamedTuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from snlint.lines import LINE_BREAK

Raw = tuple[int, int, int, int]  # start line, start column, end line, end column


class Position(NamedTuple):
    line: int  # 1-based
    column: int  # 0-based


class Range(NamedTuple):
    """A node's range, read as libcst's `CodeRange` is (`.start.line`, `.end.column`)."""

    start: Position
    end: Position


# Statements whose block is laid out statement by statement (counted back from their end).
_NESTING = (cst.ClassDef, cst.FunctionDef)


def _breaks(code: str) -> int:
    return len(LINE_BREAK.findall(code))


class _Layout:
    """The state the two tables share: the module's top-level nodes, the line each starts
    at, and the ranges and parents of the nodes laid out so far."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.tops: list[cst.CSTNode] = [*module.header, *module.body, *module.footer]
        self.ranges: dict[int, Raw] = {}  # id(node) -> its range (the nodes laid out)
        self.top_of: dict[int, int] = {}  # id(node) -> the index of its top-level node
        self.root_of: dict[int, cst.CSTNode] = {}  # id(node) -> the statement laid out with it
        self.nodes: list[list[cst.CSTNode] | None] = [None] * len(self.tops)
        self._touched: set[int] = set()  # the top-level nodes a statement of which is laid out
        self._inner: dict[int, list[cst.CSTNode]] = {}  # by id: a statement laid out alone
        self._blocks: dict[int, tuple[list[int], list[str], int]] = {}  # by id (`_block`)
        self.parents: dict[int, cst.CSTNode] = {}
        self._walked: set[int] = set()  # the top-level nodes whose every parent is known

    @cached_property
    def codes(self) -> list[str]:
        """libcst's code of each top-level node."""
        return [self.module.code_for_node(top) for top in self.tops]

    @cached_property
    def starts(self) -> list[int]:
        """The line each top-level node starts at (its leading empty lines included)."""
        starts, line = [], 1
        for code in self.codes:
            starts.append(line)
            line += _breaks(code)
        return starts

    @cached_property
    def end(self) -> Raw:
        """The module's own range, which counts the line break libcst leaves out at the
        file's end."""
        module, codes = self.module, self.codes
        text = "".join(codes) if codes else (
            module.default_newline if module.has_trailing_newline else "")
        lines = LINE_BREAK.split(text)
        return (1, 0, len(lines), len(lines[-1]))

    def lay_out(self, i: int) -> list[cst.CSTNode]:
        """The nodes of top-level node `i`, in libcst's order; their ranges recorded."""
        done = self.nodes[i]
        if done is None:
            top = self.tops[i]
            self.parents[id(top)] = self.module
            done = self.nodes[i] = self._record(top, i, "", self.starts[i])
        return done

    def at_line(self, i: int, line: int) -> list[cst.CSTNode]:
        """The nodes of the innermost statement of top-level node `i` that holds `line`
        in its own lines (not in a block of its own), down through classes and functions."""
        node, start, code = self.tops[i], self.starts[i], self.codes[i]
        indent, chain = "", []
        while isinstance(node, _NESTING) and isinstance(node.body, cst.IndentedBlock):
            block = node.body
            firsts, codes, end = self._block(block, start, code)
            if not firsts or not firsts[0] <= line < end:
                break  # in the statement's own lines, or in the block's last comments
            k = bisect_right(firsts, line) - 1
            chain.append((node, block))
            indent += block.indent if block.indent is not None else self.module.default_indent
            node, start, code = block.body[k], firsts[k], codes[k]
        if not chain:
            return self.lay_out(i)
        done = self._inner.get(id(node))
        if done is None:
            parents, parent = self.parents, self.module
            for compound, block in chain:
                parents[id(compound)] = parent
                parents[id(block)] = compound
                parent = block
            parents[id(node)] = parent
            done = self._inner[id(node)] = self._record(node, i, indent, start)
        return done

    def _block(self, block: cst.IndentedBlock, start: int, code: str) -> tuple[list[int], list[str], int]:
        """The first line of each statement of `block` (the last block of the statement of
        code `code` starting at line `start`), their code, and the line after the last."""
        found = self._blocks.get(id(block))
        if found is None:
            # Counted once per block: a lookup in a long class would otherwise count the
            # class's lines again for each node asked for.
            print_node = self.module.code_for_node
            end = start + _breaks(code) - sum(_breaks(print_node(line)) for line in block.footer)
            firsts, codes, first = [], [], end
            for statement in reversed(block.body):
                codes.append(print_node(statement))
                first -= _breaks(codes[-1])
                firsts.append(first)
            found = self._blocks[id(block)] = (firsts[::-1], codes[::-1], end)
        return found

    def _record(self, statement: cst.CSTNode, i: int, indent: str,
                start: int) -> list[cst.CSTNode]:
        """Lay out `statement` (of top-level node `i`, first line `start`) alone, in a
        module of its own, in a block indented by `indent` when it is in one."""
        module = self.module
        top_level = not indent
        if top_level:
            inside: cst.CSTNode = statement
        else:  # `if _:` and the statement in a block indented as in the file
            inside = cst.If(test=cst.Name("_"), body=cst.IndentedBlock(body=[statement], indent=indent))
        empty = isinstance(inside, cst.EmptyLine)
        alone = cst.Module(body=[] if empty else [inside], header=[inside] if empty else [],
                           encoding=module.encoding, default_indent=module.default_indent,
                           default_newline=module.default_newline)
        found = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)
        # Line 1 is the statement's first line; or the `if _:`, with the statement next.
        shift = start - (1 if top_level else 2)
        made = {id(alone)} if top_level else _skeleton(alone, statement)
        ranges, top_of, root_of = self.ranges, self.top_of, self.root_of
        self._touched.add(i)
        nodes = []
        for node, r in found.items():
            if id(node) in made:
                continue
            begin, end = r.start, r.end
            ranges[id(node)] = (begin.line + shift, begin.column, end.line + shift, end.column)
            top_of[id(node)] = i
            root_of.setdefault(id(node), statement)
            nodes.append(node)
        return nodes

    def find(self, node: object) -> Raw | None:
        """The range of `node`, laying out top-level nodes until it is found (first those a
        statement of which is laid out); None when it is not a node of the module."""
        found = self.ranges.get(id(node))
        if found is None and node is self.module:
            return self.end
        if found is None:
            for i in (*sorted(self._touched), *range(len(self.tops))):
                if self.nodes[i] is None:
                    self.lay_out(i)
                    found = self.ranges.get(id(node))
                    if found is not None:
                        break
        return found

    def walk(self, i: int) -> None:
        """Record the parent of every node of top-level node `i`."""
        if i not in self._walked:
            self._walked.add(i)
            parents = self.parents
            parents[id(self.tops[i])] = self.module
            stack = [self.tops[i]]
            while stack:
                current = stack.pop()
                for child in current.children:
                    parents[id(child)] = current
                    stack.append(child)

    def everything(self) -> Iterator[cst.CSTNode]:
        """Every node, in libcst's order (the module last)."""
        for i in range(len(self.tops)):
            yield from self.lay_out(i)
        yield self.module

    def parent(self, node: object) -> cst.CSTNode | None:
        parents = self.parents
        found = parents.get(id(node))
        if found is not None:
            return found
        if self.find(node) is None or node is self.module:
            return None
        root = self.root_of[id(node)]
        if self._descend(root, node) is None:
            self.walk(self.top_of[id(node)])
        return parents.get(id(node))

    def _descend(self, top: cst.CSTNode, node: object) -> cst.CSTNode | None:
        """The parent of `node`, found from `top` down through the children whose range
        holds `node`'s (recording the parents seen); None when the way down leaves a
        range (a node in the whitespace after its parent's range)."""
        sl, sc, el, ec = self.ranges[id(node)]
        ranges, parents, seen = self.ranges, self.parents, set()
        stack = [top]
        while stack:
            current = stack.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            inside = []
            for child in current.children:
                parents[id(child)] = current
                if child is node:
                    return current
                csl, csc, cel, cec = ranges[id(child)]
                if (csl, csc) <= (sl, sc) and (el, ec) <= (cel, cec):
                    inside.append(child)
            stack.extend(reversed(inside))
        return None


def _skeleton(tree: cst.CSTNode, statement: cst.CSTNode) -> set[int]:
    """The ids of the nodes of `tree` outside `statement` (what was made around it)."""
    made, stack = set(), [tree]
    while stack:
        node = stack.pop()
        made.add(id(node))
        stack.extend(child for child in node.children if child is not statement)
    return made


class Positions(Mapping[cst.CSTNode, Range]):
    """node -> Range; iterating lays out the whole module, in libcst's order."""

    __slots__ = ("_layout",)

    def __init__(self, layout: _Layout) -> None:
        self._layout = layout

    def __getitem__(self, node: cst.CSTNode) -> Range:
        sl, sc, el, ec = self.raw(node)
        return Range(Position(sl, sc), Position(el, ec))

    def raw(self, node: cst.CSTNode) -> Raw:
        """(start line, start column, end line, end column), without making a Range."""
        found = self._layout.find(node)
        if found is None:
            raise KeyError(node)
        return found

    def at_line(self, line: int, whole: bool = False) -> list[cst.CSTNode]:
        """The nodes of the statement the file's line `line` is in, in libcst's order:
        the innermost of a class or function that holds it in its own lines, or
        (`whole`) the top-level one; none before the module's first line."""
        layout = self._layout
        i = bisect_right(layout.starts, line) - 1
        if i < 0:
            return []
        return layout.lay_out(i) if whole else layout.at_line(i, line)

    def top_codes(self) -> list[str]:
        """libcst's code of each of the module's top-level nodes (header, body, footer)."""
        return self._layout.codes

    def __contains__(self, node: object) -> bool:
        return self._layout.find(node) is not None

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return self._layout.everything()

    def __len__(self) -> int:
        return sum(1 for _ in self._layout.everything())


class Parents(Mapping[cst.CSTNode, cst.CSTNode]):
    """Every node but the module -> its parent (libcst's ParentNodeProvider)."""

    __slots__ = ("_layout",)

    def __init__(self, layout: _Layout) -> None:
        self._layout = layout

    def get(self, node, default=None):  # type: ignore[override]
        parent = self._layout.parent(node)
        return default if parent is None else parent

    def __getitem__(self, node: cst.CSTNode) -> cst.CSTNode:
        parent = self._layout.parent(node)
        if parent is None:
            raise KeyError(node)
        return parent

    def __iter__(self) -> Iterator[cst.CSTNode]:
        module = self._layout.module
        return (node for node in self._layout.everything() if node is not module)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def layout(module: cst.Module) -> tuple[Positions, Parents]:
    """The position and parent tables of `module`'s nodes."""
    state = _Layout(module)
    return Positions(state), Parents(state)


def arg_range(raw: Callable[[cst.CSTNode], Raw], node: cst.Arg) -> Raw:
    """Where an argument is, as the facts say (`raw`: `Positions.raw`): `dim=0`, `*xs`,
    without the comma after it."""
    first: cst.CSTNode = node.keyword if node.keyword is not None else node.value
    sl, sc = raw(first)[:2]
    _, _, el, ec = raw(node.value)
    return sl, sc - len(node.star), el, ec


def param_range(raw: Callable[[cst.CSTNode], Raw], node: cst.Param) -> Raw:
    """Where a parameter is, as the facts say: its name to the end of its default, or of
    its annotation when it has no default."""
    sl, sc = raw(node.name)[:2]
    last: cst.CSTNode = node.name
    if node.default is not None:
        last = node.default
    elif node.annotation is not None:
        last = node.annotation
    _, _, el, ec = raw(last)
    return sl, sc, el, ec
