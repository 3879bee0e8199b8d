"""Where the nodes of a parsed file are: libcst's own `PositionProvider`, run on one
top-level statement at a time, when a fix first asks about a node of it.

libcst's provider over a whole module costs about twice the module's parse (it builds a
`CodeRange` for every node, then visits the tree once more), and a fix reads a few
statements of its file: the one its finding is in, the imports. So each top-level node
(a statement, or a comment line before or after them) is laid out alone, in a module of
its own with the file's indent and line break: its nodes' lines and columns there are
those in the file, less the lines before it (counted in the code libcst prints for the
top-level nodes before it, as its provider counts them). The tables are libcst's, in its
order (children before their parent), and each node's parent is what its `children`
say.

A node asked about that is in no statement laid out yet (a node of another tree, say)
lays out the rest in order until it is found: the worst case is the whole file, once.
The fixes (`snlint.edit.parsed`) read positions here, and `arg_range`/`param_range` say
where an argument and a parameter are as the facts' node keys (`snlint.facts.node_key`)
have them.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Callable, Iterator, Mapping, NamedTuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

# The line breaks libcst's position provider counts.
_BREAK = re.compile(r"\r\n?|\n")

Raw = tuple[int, int, int, int]  # start line, start column, end line, end column


class Position(NamedTuple):
    line: int  # 1-based
    column: int  # 0-based


class Range(NamedTuple):
    """A node's range, read as libcst's `CodeRange` is (`.start.line`, `.end.column`)."""

    start: Position
    end: Position


class _Layout:
    """The state the two tables share: the module's top-level nodes, the line each starts
    at, and the ranges and parents of the nodes of those laid out so far."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.tops: list[cst.CSTNode] = [*module.header, *module.body, *module.footer]
        self._codes: list[str] | None = None
        self._starts: list[int] | None = None
        self._end: Raw | None = None  # the module's own range
        self.ranges: dict[int, Raw] = {}  # id(node) -> its range (the nodes laid out)
        self.top_of: dict[int, int] = {}  # id(node) -> the index of its top-level node
        self.nodes: list[list[cst.CSTNode] | None] = [None] * len(self.tops)
        self.parents: dict[int, cst.CSTNode] = {}
        self._parented: set[int] = set()  # the top-level nodes whose parents are known
        self._searched = 0  # the top-level nodes before this one are laid out

    def codes(self) -> list[str]:
        """libcst's code of each top-level node."""
        if self._codes is None:
            self._codes = [self.module.code_for_node(top) for top in self.tops]
        return self._codes

    def starts(self) -> list[int]:
        """The line each top-level node starts at (its leading empty lines included)."""
        if self._starts is None:
            codes = self.codes()
            starts, line = [], 1
            for code in codes:
                starts.append(line)
                line += len(_BREAK.findall(code))
            # The module's own range ends after its last token: the line break it leaves
            # out when the file ends without one counts (libcst's provider records it so).
            module = self.module
            text = "".join(codes) if codes else (
                module.default_newline if module.has_trailing_newline else "")
            lines = _BREAK.split(text)
            self._end = (1, 0, len(lines), len(lines[-1]))
            self._starts = starts
        return self._starts

    def lay_out(self, i: int) -> list[cst.CSTNode]:
        """The nodes of top-level node `i`, in libcst's order; their ranges recorded."""
        done = self.nodes[i]
        if done is not None:
            return done
        top, module = self.tops[i], self.module
        alone = cst.Module(body=[top] if not isinstance(top, cst.EmptyLine) else [],
                           header=[top] if isinstance(top, cst.EmptyLine) else [],
                           encoding=module.encoding, default_indent=module.default_indent,
                           default_newline=module.default_newline)
        found = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)
        shift = self.starts()[i] - 1
        ranges, top_of = self.ranges, self.top_of
        nodes = []
        for node, r in found.items():
            if node is alone:
                continue
            start, end = r.start, r.end
            ranges[id(node)] = (start.line + shift, start.column, end.line + shift, end.column)
            top_of[id(node)] = i
            nodes.append(node)
        self.nodes[i] = nodes
        return nodes

    def find(self, node: object) -> Raw | None:
        """The range of `node`, laying out the top-level nodes not laid out yet in order
        until it is found; None when it is not a node of the module."""
        found = self.ranges.get(id(node))
        if found is None and node is self.module:
            self.starts()
            return self._end
        while found is None and self._searched < len(self.tops):
            self.lay_out(self._searched)
            self._searched += 1
            found = self.ranges.get(id(node))
        return found

    def everything(self) -> Iterator[cst.CSTNode]:
        """Every node, in libcst's order (the module last)."""
        for i in range(len(self.tops)):
            yield from self.lay_out(i)
        yield self.module

    def parent(self, node: object) -> cst.CSTNode | None:
        if self.find(node) is None or node is self.module:
            return None
        i = self.top_of[id(node)]
        if i not in self._parented:
            self._parented.add(i)
            top = self.tops[i]
            parents = self.parents
            parents[id(top)] = self.module
            stack = [top]
            while stack:
                current = stack.pop()
                for child in current.children:
                    parents[id(child)] = current
                    stack.append(child)
        return self.parents.get(id(node))


class Positions(Mapping[cst.CSTNode, Range]):
    """The table: node -> Range. Iterating it lays out the whole module, in libcst's
    order (children before their parent, the module last)."""

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

    def at_line(self, line: int) -> list[cst.CSTNode]:
        """The nodes of the top-level statement (or comment line) the file's line `line`
        is in, in libcst's order; none past the module's last line."""
        layout = self._layout
        i = bisect_right(layout.starts(), line) - 1
        return layout.lay_out(i) if i >= 0 else []

    def top_codes(self) -> list[str]:
        """libcst's code of each of the module's top-level nodes (header, body, footer):
        what the lines were counted in (`ParsedFile.rendered` prints them too)."""
        return self._layout.codes()

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
    """The position and parent tables of `module`'s nodes, each top-level node laid out
    when first asked about."""
    state = _Layout(module)
    return Positions(state), Parents(state)


def arg_range(raw: Callable[[cst.CSTNode], Raw], node: cst.Arg) -> Raw:
    """Where an argument is, as the facts say (`raw`: `Positions.raw`): `dim=0`, `*xs`,
    without the comma after it. 0-based columns."""
    first: cst.CSTNode = node.keyword if node.keyword is not None else node.value
    sl, sc = raw(first)[:2]
    _, _, el, ec = raw(node.value)
    return sl, sc - len(node.star), el, ec


def param_range(raw: Callable[[cst.CSTNode], Raw], node: cst.Param) -> Raw:
    """Where a parameter is, as the facts say: its name to the end of its default, or of
    its annotation when it has no default. 0-based columns."""
    sl, sc = raw(node.name)[:2]
    last: cst.CSTNode = node.name
    if node.default is not None:
        last = node.default
    elif node.annotation is not None:
        last = node.annotation
    _, _, el, ec = raw(last)
    return sl, sc, el, ec
