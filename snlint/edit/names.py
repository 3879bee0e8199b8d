"""What the names of a parsed file mean, as the rules' fixes ask: answered from the names
the source pass read and the link step resolved (`facts.Names`), never by reading the
file's imports again, so that a fix and the finding it fixes agree on every name
(`from .sn import spectral_norm` is torch's `spectral_norm` to both).

A node is asked about by its node key (`facts.node_key`); a spelling (`nn.utils.spectral_norm`, a name a
fix wants to write) through the names the file binds at module level one way only.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import libcst as cst

from snlint.facts import Names

if TYPE_CHECKING:
    from snlint.edit.parsed import ParsedFile


class FileNames:
    def __init__(self, parsed: "ParsedFile", names: Names | None) -> None:
        # Not a reference: the file holds its names, and a cycle through them would keep
        # its whole tree alive until the cyclic collector found it (the --fix rounds'
        # relink paid 40 ms for a collection of the trees this process had fixed).
        self.parsed = weakref.proxy(parsed)
        self.facts = names if names is not None else Names()

    # ---------------------------------------------------------------- nodes

    def qualify(self, node: cst.CSTNode | None) -> str | None:
        """The qualified name a name or attribute chain of the file refers to
        (`nn.BatchNorm2d` -> `torch.nn.BatchNorm2d`); None for a local variable, or
        anything else."""
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return None
        key = self.parsed.key(node)
        return self.facts.quals.get(key) if key is not None else None

    def reads(self, name: str) -> int:
        return self.facts.reads.get(name, 0)

    # ---------------------------------------------------------------- bindings as nodes

    def import_of(self, name: str) -> cst.ImportAlias | None:
        """The one import alias that binds `name`, when nothing else binds it."""
        return self.parsed.node(self.facts.imports.get(name), cst.ImportAlias)

    def alias_value(self, name: str) -> cst.BaseExpression | None:
        """The value of the one module-level assignment that binds `name`
        (`SN = nn.utils.spectral_norm`), when nothing else binds it."""
        return self.parsed.node(self.facts.aliases.get(name), cst.BaseExpression)


def dotted(node: cst.CSTNode | None) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr.value}" if head is not None else None
    return None
