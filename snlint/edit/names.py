"""What the names of a parsed file mean, answered from the names the source pass read and
the link step resolved (`facts.Names`), so that a fix and its finding agree on every name."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import libcst as cst

from snlint.facts import Names

if TYPE_CHECKING:
    from snlint.edit.parsed import ParsedFile


class FileNames:
    def __init__(self, parsed: "ParsedFile", names: Names | None) -> None:
        # Not a reference: a cycle would keep the file's tree alive until a collection.
        self.parsed = weakref.proxy(parsed)
        self.facts = names if names is not None else Names()

    def qualify(self, node: cst.CSTNode | None) -> str | None:
        """The qualified name a name or attribute chain of the file refers to
        (`nn.BatchNorm2d` -> `torch.nn.BatchNorm2d`); None for a local variable."""
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return None
        key = self.parsed.key(node)
        return self.facts.quals.get(key) if key is not None else None

    def reads(self, name: str) -> int:
        return self.facts.reads.get(name, 0)

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
