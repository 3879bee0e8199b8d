"""One parsed file as the fixes see it: the libcst tree, node positions and parents, each
node by its index, and what the file's names mean.

A fix starts from a finding's node: the index the source pass recorded for it
(`facts.node_indices`), which names the same node here because the tree is parsed from
the same text. What names mean comes from the source pass and the link step
(`parsed.names`, `snlint.edit.names`); nothing here resolves a name, and nothing here
knows about rules.
"""

from __future__ import annotations

from typing import Iterator, TypeVar

import libcst as cst

from snlint.edit.names import FileNames
from snlint.facts import Names, node_indices
from snlint.positions import layout

N = TypeVar("N", bound=cst.CSTNode)


class ParsedFile:
    """A parsed file, with the names the lint of the same text resolved (`names`; without
    them no name is known). Raises libcst.ParserSyntaxError when the text does not parse."""

    def __init__(self, path: str, text: str, names: Names | None = None) -> None:
        self.path = path
        self.text = text
        self.module = cst.parse_module(text)
        # The source pass's own table: the same node indices (snlint.positions).
        self.positions, self.parents = layout(self.module)
        self.nodes = list(self.positions)  # by node index
        self._indices: dict[cst.CSTNode, int] | None = None
        self.names = FileNames(self, names)

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
