"""Where every node of a parsed file is: libcst's position table, computed in one pass.

`MetadataWrapper.resolve(PositionProvider)` runs the position codegen and then an empty
batched visit of the whole tree (its resolver always runs the batchable providers' visit,
even when there are none), and builds frozen `CodeRange`/`CodePosition` dataclasses whose
constructors cost more than the codegen itself. Here one codegen of the tree
(`snlint.positions.codegen`) gives the same table, as plain tuples keyed by `id(node)` (a
libcst node hashes by identity through a Python-level `__hash__`, which a table of every
node would call a million times), and each node's parent.

The table is in libcst's order (children before their parent). The fixes
(`snlint.edit.parsed`) read positions here, and
`arg_range`/`param_range` say where an argument and a parameter are as the facts' node
keys (`snlint.facts.node_key`) have them.
"""

from __future__ import annotations

from typing import Iterator, Mapping, NamedTuple

import libcst as cst

from snlint.positions.codegen import generate


class Position(NamedTuple):
    line: int  # 1-based
    column: int  # 0-based


class Range(NamedTuple):
    """A node's range, read as libcst's `CodeRange` is (`.start.line`, `.end.column`)."""

    start: Position
    end: Position


class Positions(Mapping[cst.CSTNode, Range]):
    """The table: node -> Range, in libcst's order. `nodes[i]` is the node with index i."""

    __slots__ = ("nodes", "_raw")

    def __init__(self, nodes: list[cst.CSTNode],
                 raw: dict[int, tuple[int, int, int, int, int]]) -> None:
        self.nodes = nodes
        self._raw = raw  # id(node) -> (start line, start column, end line, end column, index)

    def __getitem__(self, node: cst.CSTNode) -> Range:
        sl, sc, el, ec, _ = self._raw[id(node)]
        return Range(Position(sl, sc), Position(el, ec))

    def raw(self, node: cst.CSTNode) -> tuple[int, int, int, int, int]:
        """(start line, start column, end line, end column, node index): what the source
        pass reads for every node it keeps, without making a Range."""
        return self._raw[id(node)]

    def index(self, node: cst.CSTNode) -> int:
        return self._raw[id(node)][4]

    def __contains__(self, node: object) -> bool:
        return id(node) in self._raw and self.nodes[self._raw[id(node)][4]] is node

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)


class Parents(Mapping[cst.CSTNode, cst.CSTNode]):
    """Every node but the module -> its parent (libcst's ParentNodeProvider)."""

    __slots__ = ("_positions", "_parents")

    def __init__(self, positions: Positions, parents: list) -> None:
        self._positions = positions
        self._parents = parents  # by node index: each node's parent (None: the module)

    def get(self, node, default=None):  # type: ignore[override]
        found = self._positions._raw.get(id(node))
        if found is None or self._positions.nodes[found[4]] is not node:
            return default
        parent = self._parents[found[4]]
        return default if parent is None else parent

    def __getitem__(self, node: cst.CSTNode) -> cst.CSTNode:
        parent = self.get(node)
        if parent is None:
            raise KeyError(node)
        return parent

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return (node for node, parent in zip(self._positions.nodes, self._parents)
                if parent is not None)

    def __len__(self) -> int:
        return len(self._parents) - self._parents.count(None)


def layout(module: cst.Module) -> tuple[Positions, Parents]:
    """Every node of `module` -> its range, in the order of libcst's PositionProvider
    table (children before their parent: the node index is the place in this table), and
    every node but the module -> its parent; one codegen of the tree."""
    nodes, raw, parents = generate(module)
    positions = Positions(nodes, raw)
    return positions, Parents(positions, parents)


def arg_range(raw, node: cst.Arg) -> tuple[int, int, int, int]:
    """Where an argument is, as the facts say (`raw`: `Positions.raw`): `dim=0`, `*xs`,
    without the comma after it. 0-based columns."""
    first: cst.CSTNode = node.keyword if node.keyword is not None else node.value
    sl, sc = raw(first)[:2]
    _, _, el, ec, _ = raw(node.value)
    return sl, sc - len(node.star), el, ec


def param_range(raw, node: cst.Param) -> tuple[int, int, int, int]:
    """Where a parameter is, as the facts say: its name to the end of its default, or of
    its annotation when it has no default. 0-based columns."""
    sl, sc = raw(node.name)[:2]
    last: cst.CSTNode = node.name
    if node.default is not None:
        last = node.default
    elif node.annotation is not None:
        last = node.annotation
    _, _, el, ec, _ = raw(last)
    return sl, sc, el, ec


def positions(module: cst.Module) -> Positions:
    return layout(module)[0]
