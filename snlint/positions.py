"""Where every node of a parsed file is: libcst's position table, computed in one pass.

`MetadataWrapper.resolve(PositionProvider)` runs the position codegen and then an empty
batched visit of the whole tree (its resolver always runs the batchable providers' visit,
even when there are none), and builds frozen `CodeRange`/`CodePosition` dataclasses whose
constructors cost more than the codegen itself. Here the same codegen runs once, with a
state that keeps libcst's bookkeeping exactly (which node is recorded when, the syntactic
start and end nodes hoisted from children) but stores plain tuples, keyed by `id(node)`
(a libcst node hashes by identity through a Python-level `__hash__`, which a table of
every node would call a million times). The same codegen records each node's parent.

The table's order is the *node index* (`snlint.facts.node_indices`): the source pass and
the fixes (`snlint.edit.parsed`) both build it here, so they agree on every index.
"""

from __future__ import annotations

from typing import Iterator, Mapping, NamedTuple

import libcst as cst
from libcst._nodes.internal import CodegenState


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

    __slots__ = ("_raw",)

    def __init__(self, raw: dict[int, tuple[cst.CSTNode, cst.CSTNode]]) -> None:
        self._raw = raw  # id(node) -> (node, parent)

    def __getitem__(self, node: cst.CSTNode) -> cst.CSTNode:
        found = self._raw[id(node)]
        if found[0] is not node:
            raise KeyError(node)
        return found[1]

    def get(self, node, default=None):  # type: ignore[override]
        found = self._raw.get(id(node))
        return found[1] if found is not None and found[0] is node else default

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return (node for node, _ in self._raw.values())

    def __len__(self) -> int:
        return len(self._raw)


class _Syntactic:
    """`record_syntactic_position` as a plain context manager (libcst's is a generator
    one, which costs more than the recording)."""

    __slots__ = ("state", "node", "start_node", "end_node", "line", "column")

    def __init__(self, state: "_State", node: cst.CSTNode, start_node, end_node) -> None:
        self.state = state
        self.node = node
        self.start_node = start_node
        self.end_node = end_node

    def __enter__(self) -> None:
        self.line = self.state.line
        self.column = self.state.column

    def __exit__(self, *exc: object) -> None:
        state = self.state
        raw = state.raw
        # libcst hoists the start and end of the given child nodes over its own.
        if self.start_node is not None:
            sl, sc = raw[id(self.start_node)][:2]
        else:
            sl, sc = self.line, self.column
        if self.end_node is not None:
            el, ec = raw[id(self.end_node)][2:4]
        else:
            el, ec = state.line, state.column
        state.record(self.node, sl, sc, el, ec)


class _State(CodegenState):
    """libcst's PositionProvidingCodegenState, minus its dataclass machinery: the same
    line and column arithmetic, the same order of recording."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent,
                         default_newline=module.default_newline)
        self.nodes: list[cst.CSTNode] = []
        self.raw: dict[int, tuple[int, int, int, int, int]] = {}
        self.parents: dict[int, tuple[cst.CSTNode, cst.CSTNode]] = {}
        self.line = 1
        self.column = 0
        # (line, column, node) where each node being generated started, innermost last
        self.stack: list[tuple[int, int, cst.CSTNode]] = []

    def record(self, node: cst.CSTNode, sl: int, sc: int, el: int, ec: int) -> None:
        # Recording a node again updates its range and keeps its place, as a dict does.
        key = id(node)
        old = self.raw.get(key)
        if old is None:
            self.raw[key] = (sl, sc, el, ec, len(self.nodes))
            self.nodes.append(node)
        else:
            self.raw[key] = (sl, sc, el, ec, old[4])

    def _update(self, value: str) -> None:
        if "\n" in value or "\r" in value:
            # libcst splits on \r\n, \r and \n; the column restarts after the last one.
            last = max(value.rfind("\n"), value.rfind("\r"))
            self.line += value.count("\n") + value.count("\r") - value.count("\r\n")
            self.column = len(value) - last - 1
        else:
            self.column += len(value)

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        for token in self.indent_tokens:
            self._update(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self._update(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        stack = self.stack
        if stack:
            # A node is generated by its parent's codegen: the parent is the one being
            # generated (libcst's ParentNodeProvider, without its visit).
            self.parents[id(node)] = (node, stack[-1][2])
        stack.append((self.line, self.column, node))

    def after_codegen(self, node: cst.CSTNode) -> None:
        line, column, _ = self.stack.pop()
        # A syntactic position recorded while the node was generated stands.
        key = id(node)
        if key not in self.raw:
            self.raw[key] = (line, column, self.line, self.column, len(self.nodes))
            self.nodes.append(node)

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node=None,  # type: ignore[override]
                                  end_node=None) -> _Syntactic:
        return _Syntactic(self, node, start_node, end_node)


def layout(module: cst.Module) -> tuple[Positions, Parents]:
    """Every node of `module` -> its range, in the order of libcst's PositionProvider
    table (children before their parent: the node index is the place in this table), and
    every node but the module -> its parent; one codegen of the tree."""
    state = _State(module)
    module._codegen(state)
    return Positions(state.nodes, state.raw), Parents(state.parents)


def positions(module: cst.Module) -> Positions:
    return layout(module)[0]
