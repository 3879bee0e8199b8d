"""What the names of a parsed file mean, as the fix planners ask: answered from the names
the source pass read and the link step resolved (`facts.Names`), never by reading the
file's imports again, so that a fix and the finding it fixes agree on every name
(`from .sn import spectral_norm` is torch's `spectral_norm` to both).

A node is asked about by its node key (`facts.node_key`); a spelling (`nn.utils.spectral_norm`, a name a
fix wants to write) through the names the file binds at module level one way only.
"""

from __future__ import annotations

import weakref
from collections import Counter
from typing import TYPE_CHECKING

import libcst as cst

from snlint.facts import Names
from snlint.torchapi import SN_FUNCTIONS

if TYPE_CHECKING:
    from snlint.edit.parsed import ParsedFile

PARAM_SN = "torch.nn.utils.parametrizations.spectral_norm"
HOOK_SN = "torch.nn.utils.spectral_norm"


class FileNames:
    def __init__(self, parsed: "ParsedFile", names: Names | None) -> None:
        # Not a reference: the file holds its names, and a cycle through them would keep
        # its whole tree alive until the cyclic collector found it (the --fix rounds'
        # relink paid 40 ms for a collection of the trees this process had fixed).
        self.parsed = weakref.proxy(parsed)
        self.facts = names if names is not None else Names()
        self._sn_callees: dict[str, tuple[int, str]] | None = None

    # ---------------------------------------------------------------- nodes

    def qualify(self, node: cst.CSTNode | None) -> str | None:
        """The qualified name a name or attribute chain of the file refers to
        (`nn.BatchNorm2d` -> `torch.nn.BatchNorm2d`); None for a local variable, or
        anything else."""
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return None
        key = self.parsed.key(node)
        return self.facts.quals.get(key) if key is not None else None

    def sn_api(self, node: cst.CSTNode | None) -> str | None:
        """"hook" / "parametrization" when `node` names one of torch's SN functions."""
        return SN_FUNCTIONS.get(self.qualify(node) or "")

    def sn_partial_api(self, node: cst.CSTNode | None) -> str | None:
        """The SN API of a module-level `SN = functools.partial(spectral_norm, ...)`."""
        return self._partial_api(self.qualify(node))

    def sn_callees(self) -> dict[str, tuple[int, str]]:
        """Each spelling of a torch SN function (or a module-level partial of one) the
        file calls: how often, and its API. Of the parsed part only, when statements are
        held out (`sn_calls_held_out`). Read once per parsed file: each of its findings'
        fixes may ask, and a walk over every call for each would be quadratic."""
        if self._sn_callees is None:
            self._sn_callees = self._count_sn_callees()
        return dict(self._sn_callees)

    def _count_sn_callees(self) -> dict[str, tuple[int, str]]:
        counts: Counter[str] = Counter()
        apis: dict[str, str] = {}
        for call in self.parsed.calls():
            api = self.sn_api(call.func) or self.sn_partial_api(call.func)
            text = dotted(call.func) if api else None
            if text is not None:
                counts[text] += 1
                apis[text] = api  # type: ignore[assignment]
        return {text: (count, apis[text]) for text, count in counts.items()}

    def sn_calls_held_out(self) -> bool:
        """Whether a held-out statement (`snlint.edit.held_out`) may call spectral norm:
        then `sn_callees` may not count every spelling of the file."""
        held = self.parsed.held
        return held is not None and held.sn_elsewhere

    # ---------------------------------------------------------------- spellings

    def spelled(self, text: str) -> str | None:
        """The qualified name a dotted spelling refers to at module level."""
        head, _, rest = text.partition(".")
        qual = self.facts.scope.get(head)
        if qual is None:
            return None
        return f"{qual}.{rest}" if rest else qual

    def sn_api_of(self, text: str) -> str | None:
        """The SN API a spelling names: a torch SN function or a partial of one."""
        qual = self.spelled(text)
        return SN_FUNCTIONS.get(qual or "") or self._partial_api(qual)

    def binds(self, name: str) -> bool:
        """The file binds `name` at module level, one way only."""
        return name in self.facts.scope

    def sn_names(self) -> list[tuple[str, str]]:
        """Module-level names bound (one way only) to a torch SN function, with its API."""
        return [(name, SN_FUNCTIONS[qual]) for name, qual in sorted(self.facts.scope.items())
                if qual in SN_FUNCTIONS]

    def binding_for(self, qualified: str) -> str | None:
        """A local name chain that refers to `qualified` (`Names.binding_for`)."""
        return self.facts.binding_for(qualified)

    def is_free(self, name: str) -> bool:
        """No binding and no read of `name` anywhere in the file: an import may add it."""
        return self.facts.is_free(name)

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

    def _partial_api(self, qual: str | None) -> str | None:
        wrapped = self.facts.partials.get(qual) if qual is not None else None
        return SN_FUNCTIONS.get(wrapped) if wrapped is not None else None


def dotted(node: cst.CSTNode | None) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr.value}" if head is not None else None
    return None
