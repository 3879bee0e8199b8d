"""One parsed file as the fixes see it: the libcst tree, node positions and parents, each
node by the key the source pass recorded for it (`facts.node_key`), and what the file's
names mean (`snlint.edit.names`)."""

from __future__ import annotations

from functools import cached_property
from operator import eq
from typing import Iterator, NamedTuple, TypeVar

import libcst as cst

from snlint.edit.held_out import HeldOut, NeedsWholeFile
from snlint.edit.names import FileNames
from snlint import facts as F
from snlint.facts import Names
from snlint.lines import may_lose_bytes, put_back
from snlint.positions import arg_range, layout, param_range

N = TypeVar("N", bound=cst.CSTNode)


class Rendered(NamedTuple):
    """A changed tree's code: the parsed text `source` with `source[start:end]` replaced
    by `replacement`, the code of the top-level nodes the change made (`changed`; None
    when not known apart)."""

    source: str
    start: int
    end: int
    replacement: str
    changed: tuple[str, ...] | None

    @property
    def text(self) -> str:
        return self.source[:self.start] + self.replacement + self.source[self.end:]


def _common_prefix(a: list, b: list) -> int:
    """How many first items `a` and `b` share."""
    same = list(map(eq, a, b))
    return same.index(False) if False in same else len(same)


def _common_suffix(a: list, b: list, limit: int) -> int:
    """How many last items (at most `limit`) `a` and `b` share."""
    same = list(map(eq, reversed(a), reversed(b)))[:limit]
    return same.index(False) if False in same else len(same)


def _without_newline(code: str) -> str:
    """A statement's code without its newline (as libcst prints the last one of a module
    without a trailing newline)."""
    return code[:-2] if code.endswith("\r\n") else code[:-1]


def parse_module(text: str) -> cst.Module:
    """`libcst.parse_module` without validating the nodes its parser makes (an eighth of
    a parse); the nodes a fix makes are validated as always."""
    base = cst.CSTNode
    validate = base.__dict__.get("__post_init__")
    if validate is None:
        return cst.parse_module(text)
    base.__post_init__ = _unvalidated  # type: ignore[method-assign]
    try:
        return cst.parse_module(text)
    finally:
        base.__post_init__ = validate  # type: ignore[method-assign]


def _unvalidated(self: cst.CSTNode) -> None:
    pass


class ParsedFile:
    """A parsed file, with the names the lint of the same text resolved. Raises
    libcst.ParserSyntaxError when the text does not parse. With `held`
    (`snlint.edit.held_out`), `module` is the part parsed and `whole(code)` the file."""

    def __init__(self, path: str, text: str, names: Names | None = None,
                 held: HeldOut | None = None) -> None:
        self.path = path
        self.text = text
        self.held = held
        self.source = text if held is None else held.text  # what libcst parsed
        self.module = parse_module(self.source)
        self.positions, self.parents = layout(self.module)
        # The keys of a statement's nodes, by its first node and how many it has.
        self._by_key: dict[tuple[int, int], dict[int, cst.CSTNode]] = {}
        self._parts: dict[str, str] = {}  # a `whole` text -> the parsed part's code
        self.names = FileNames(self, names)

    # ---------------------------------------------------------------- nodes

    def node(self, key: int | None, kind: type[N]) -> N | None:
        """The node with this key (`facts.node_key`), when it is a `kind`."""
        if key is None:
            return None
        # The node is in the statement of its first line (or, to be sure, its top-level one).
        line = key >> 99
        node = self._keys(self.positions.at_line(line)).get(key)
        if node is None:
            node = self._keys(self.positions.at_line(line, whole=True)).get(key)
        return node if isinstance(node, kind) else None

    def key(self, node: cst.CSTNode) -> int | None:
        """The key of an expression (what `facts.Names.quals` is keyed by)."""
        if node not in self.positions:
            return None
        sl, sc, el, ec = self.positions.raw(node)
        return F.node_key(sl, sc + 1, el, ec + 1, F.EXPR)

    def _keys(self, nodes: list[cst.CSTNode]) -> dict[int, cst.CSTNode]:
        """The key of each of a statement's nodes (`nodes`: `Positions.at_line`)."""
        if not nodes:
            return {}
        keys = self._by_key.get((id(nodes[0]), len(nodes)))
        if keys is None:
            raw = self.positions.raw
            keys = {}
            for node in nodes:
                if isinstance(node, cst.BaseExpression):
                    role, (sl, sc, el, ec) = F.EXPR, raw(node)
                elif isinstance(node, cst.Arg):
                    role, (sl, sc, el, ec) = F.ARG, arg_range(raw, node)
                elif isinstance(node, cst.Param):
                    role, (sl, sc, el, ec) = F.PARAM, param_range(raw, node)
                elif isinstance(node, cst.ImportAlias):
                    role, (sl, sc, el, ec) = F.ALIAS, raw(node)
                else:
                    continue
                # Children come first in the table: the outermost of nodes sharing a
                # span is the one the source pass read (a call, not the argument's value).
                keys[F.node_key(sl, sc + 1, el, ec + 1, role)] = node
            self._by_key[(id(nodes[0]), len(nodes))] = keys
        return keys

    @cached_property
    def calls(self) -> list[cst.Call]:
        """Every call, in the order of libcst's position table (inner calls first)."""
        return [n for n in self.positions if isinstance(n, cst.Call)]

    def range(self, node: cst.CSTNode) -> tuple[tuple[int, int], tuple[int, int]]:
        sl, sc, el, ec = self.positions.raw(node)
        return (sl, sc), (el, ec)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parents.get(node)
        while current is not None:
            yield current
            current = self.parents.get(current)

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    @cached_property
    def body_index(self) -> dict[int, int]:
        """The id of each statement of the module's body -> its index there."""
        return {id(statement): i for i, statement in enumerate(self.module.body)}

    @cached_property
    def _top_level(self) -> tuple[dict[int, str], list[int], list[int] | None]:
        """The module's top-level nodes' code by their ids, their ids in order, and where
        each starts in the parsed text (None when libcst does not print it as read)."""
        module = self.module
        top = [*module.header, *module.body, *module.footer]
        codes = self.positions.top_codes()  # the same nodes' code
        offsets = [0]
        for code in codes:
            offsets.append(offsets[-1] + len(code))
        printed = "".join(codes)
        if not module.has_trailing_newline and codes:
            printed = _without_newline(printed)
        return ({id(node): code for node, code in zip(top, codes)}, list(map(id, top)),
                offsets if printed == self.source and codes else None)

    def rendered(self, tree: cst.Module) -> Rendered:
        """libcst's code of `tree`, a changed copy of `module`, printing only the top-level
        nodes it does not share with the module (a fix costs its statements, not the file)."""
        source = self.source
        codes, old, offsets = self._top_level
        nodes = [*tree.header, *tree.body, *tree.footer]
        if offsets is None or not nodes:
            return Rendered(source, 0, len(source), tree.code, None)
        ids = list(map(id, nodes))
        first = _common_prefix(ids, old)
        last = _common_suffix(ids, old, min(len(ids), len(old)) - first)
        parts = [codes.get(id(node)) or tree.code_for_node(node) for node in nodes[first:len(nodes) - last]]
        if parts and not last and not tree.has_trailing_newline:
            parts[-1] = _without_newline(parts[-1])
        start, end = offsets[first], min(offsets[len(old) - last], len(source))
        return Rendered(source, start, end, "".join(parts), tuple(parts))

    def whole(self, code: str) -> str:
        """The file's text for the (fixed) code of `module`. Raises NeedsWholeFile when a
        held-out statement's marker moved."""
        code = self._kept(code)
        if self.held is None:
            return code
        text = self.held.restore(code)
        if text is None:
            raise NeedsWholeFile(self.path)
        self._parts[text] = code
        return text

    def _kept(self, code: str) -> str:
        """`code` with the bytes libcst leaves out of the parsed text (a form feed in
        indentation, a last bare `\r`) put back (`snlint.lines.put_back`)."""
        if not may_lose_bytes(self.source):
            return code
        kept = put_back(self.source, self._unchanged, code)
        if kept is None:
            raise ValueError("libcst did not read the file line for line; not rewritten")
        return kept

    @cached_property
    def _unchanged(self) -> str:
        return self.module.code

    def to_compile(self, text: str) -> str:
        """What to compile to know whether `text` (a result of `whole`) compiles: the parsed
        part it was made from (the held-out statements are the file's own, unchanged)."""
        return self._parts.get(text, text)

    @cached_property
    def held_words(self) -> frozenset[str]:
        """The words of the held-out statements (none when the file was parsed whole)."""
        return frozenset() if self.held is None else self.held.words()

