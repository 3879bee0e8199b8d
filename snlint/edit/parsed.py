"""One parsed file as the fixes see it: the libcst tree, node positions and parents, each
node by its index, and what the file's names mean.

A fix starts from a finding's node: the index the source pass recorded for it
(`facts.node_indices`), which names the same node here because the tree is parsed from
the same text. What names mean comes from the source pass and the link step
(`parsed.names`, `snlint.edit.names`); nothing here resolves a name, and nothing here
knows about rules.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, TypeVar

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from snlint.edit.names import FileNames
from snlint.facts import Names, node_indices

N = TypeVar("N", bound=cst.CSTNode)


class ParsedFile:
    """A parsed file, with the names the lint of the same text resolved (`names`; without
    them no name is known). Raises libcst.ParserSyntaxError when the text does not parse."""

    def __init__(self, path: str, text: str, names: Names | None = None) -> None:
        self.path = path
        self.text = text
        self.module = cst.parse_module(text)
        self.nodes = node_order(self.module)  # by node index
        self._positions: dict[cst.CSTNode, CodeRange] | None = None
        # What ParentNodeProvider gives, from every node's children: a third of its time.
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {
            child: node for node in self.nodes for child in node.children}
        self._indices: dict[cst.CSTNode, int] | None = None
        self.names = FileNames(self, names)

    @property
    def positions(self) -> dict[cst.CSTNode, CodeRange]:
        """Each node's position (libcst's PositionProvider), computed when first asked:
        most fixes never ask."""
        if self._positions is None:
            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._positions = dict(wrapper.resolve(PositionProvider))
        return self._positions

    # ---------------------------------------------------------------- nodes

    def node(self, index: int | None, kind: type[N]) -> N | None:
        """The node with this index, when it is a `kind`."""
        if index is None or not 0 <= index < len(self.nodes):
            return None
        node = self.nodes[index]
        return node if isinstance(node, kind) else None

    def index(self, node: cst.CSTNode) -> int | None:
        if self._indices is None:
            self._indices = node_indices(self.nodes)
        return self._indices.get(node)

    def calls(self) -> Iterator[cst.Call]:
        return (n for n in self.nodes if isinstance(n, cst.Call))

    def range(self, node: cst.CSTNode) -> tuple[tuple[int, int], tuple[int, int]]:
        rng = self.positions[node]
        return (rng.start.line, rng.start.column), (rng.end.line, rng.end.column)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parents.get(node)
        while current is not None:
            yield current
            current = self.parents.get(current)

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)


@dataclass
class _NodeOrder(CodegenState):
    """Code generation that records only the order in which libcst's PositionProvider
    enters each node in its table (first at the end of the node's syntactic range or
    of its code, whichever comes first), without computing a single position."""

    order: dict[cst.CSTNode, None] = field(default_factory=dict)

    def after_codegen(self, node: cst.CSTNode) -> None:
        self.order.setdefault(node, None)

    @contextmanager
    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None,
                                  end_node: cst.CSTNode | None = None) -> Iterator[None]:
        try:
            yield
        finally:
            self.order.setdefault(node, None)


def node_order(module: cst.Module) -> list[cst.CSTNode]:
    """The nodes of `module` in the order of libcst's position table
    (`list(MetadataWrapper(module).resolve(PositionProvider))`, the node indices of
    `facts.node_indices`), at the cost of printing the module: the positions themselves
    cost several times that."""
    state = _NodeOrder(default_indent=module.default_indent, default_newline=module.default_newline)
    module._codegen(state)
    return list(state.order)
