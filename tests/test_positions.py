"""snlint/positions: the table, laid out one top-level statement at a time, equals libcst's
PositionProvider over the whole module (ranges and order) and the parents its
ParentNodeProvider; a statement is laid out when a node of it is asked about."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from snlint.positions import layout

SOURCES = {
    "empty": "",
    "newline only": "\n",
    "comment only, no newline": "# c",
    "no trailing newline": "x = 1",
    "decorators": "@d\n@e(1, k=2)\n\n# between\ndef f(a, b: int = 2, *args, c, d=3, **kw) -> 'r':\n    return (a)  # c\n",
    "parentheses": "x = ((a) + (b)) * (c,)\ny = (f)(1)(2)\nz = ((a).b).c\n(w) = ((1),)\n",
    "comments and blank lines": "# head\n\nimport a  # c\n\n\n# before\nclass C(B, metaclass=M):  # c\n    # inside\n    x = 1\n\n    def m(self): pass\n# tail\n",
    "f-strings and strings": "f'{x!r:>{w}} é {y}'\nz = 'a' 'b'\ns = '''x\ny'''\nb = rb'\\x00'\n",
    "line continuations": "x = 1 + \\\n    2\nif a and \\\n        b:\n    pass\n",
    "crlf": "import a\r\nx = f(1,\r\n      2)\r\nif x:\r\n    y = 2\r\nelse:\r\n    y = 3\r\n",
    "lone cr": "x = 1\ry = (2,\r 3)\r",
    "tabs": "def f():\n\tif x:\n\t\treturn 1\n\telif y:\n\t\treturn 2\n\telse:\n\t\treturn\n",
    "unicode": "λ = 'é' + \"日本\"  # ü\nnom_é = λ\n",
    "for else, while, with, try": (
        "for i, (a, b) in enumerate(x):\n    continue\nelse:\n    pass\n"
        "while x:\n    break\n"
        "with open(p) as f, g:\n    pass\n"
        "try:\n    pass\nexcept (A, B) as e:\n    raise\nfinally:\n    del e\n"),
    "semicolons and one-line suites": "a = 1; b = 2;\nif x: y = 1; z = 2\nclass C: pass\n",
    "calls and arguments": "f(*a, **k)\ng(x=1, y = 2,)\nh(\n    1,  # one\n    2,\n)\nnet = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2, True))\n",
    "operators": "x = -a ** 2 // b % c @ d | e & f ^ g << 1 >> 2\ny = not a or b and c\nz = a < b <= c != d in e not in f is g is not h\nx += 1\n",
    "collections and comprehensions": "x = [1, 2, *y]\nd = {'a': 1, **e}\ns = {1}\nt = ()\nl = [i for i in y if i]\ng = (i for i in y)\nk = {a: b for a, b in c}\n",
    "subscripts and lambdas": "x = a[1:2, ::3][b]\nf = lambda a, *b, c=1, **d: (a, b)\ny = a if b else c\n",
    "async and walrus": "async def f():\n    async with a as b:\n        await c\n    async for x in y:\n        pass\n    if (n := 10) > 5:\n        pass\n",
    "positional-only and star": "def f(a, /, b, *, c): pass\ndef g(*, k): pass\ndef h(a, /): pass\n",
    "globals and imports": "from . import a\nfrom ..b import c as d, e\nfrom f import *\nimport g.h as i, j\nglobal x\n",
    "match": "match x:\n    case [a, *r] if a:\n        pass\n    case {'k': v, **kw}:\n        pass\n    case P(x=1) as p:\n        pass\n",
    "with, assert, dicts": (
        "with (\n    open(a) as f,\n    open(b) as g,\n):\n    pass\n"
        "with a, \\\n        b as c:\n    pass\n"
        "assert x, 'message'\nassert (y)\n"
        "d = {'a': 1,  # one\n     **rest, 'b': {}}\n"),
    "star parameters": "def f(a, *args, b=1, c: int, **kw): pass\ndef g(*args): pass\ndef h(**kw): pass\n",
    "nested definitions": "class A:\n    class B:\n        def c(self):\n            def d():\n                return [e for e in f]\n            return d\n",
}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_table_is_libcsts(name):
    module = cst.parse_module(SOURCES[name])
    positions, parents = layout(module)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    expected = wrapper.resolve(PositionProvider)
    assert list(positions) == list(expected)  # the node indices
    assert [positions.raw(n) for n in expected] == [
        (r.start.line, r.start.column, r.end.line, r.end.column) for r in expected.values()]
    assert dict(parents.items()) == dict(wrapper.resolve(ParentNodeProvider))


def test_ranges_leave_out_parentheses_and_trailing_newlines():
    module = cst.parse_module("x = ((a) + b)  # c\r\nif y:\r\n\tz = 1\r\n")
    positions, parents = layout(module)
    assign = module.body[0].body[0]
    binary = assign.value
    assert positions[assign] == ((1, 0), (1, 13))
    assert positions[binary] == ((1, 5), (1, 12))
    assert positions[binary.left] == ((1, 6), (1, 7))
    assert positions[module.body[0]] == ((1, 0), (1, 13))  # the line, without its comment
    branch = module.body[1]
    assert positions[branch] == ((2, 0), (3, 6))  # to the end of its last statement
    assert positions[branch.body.body[0]] == ((3, 1), (3, 6))
    assert parents[binary.left] is binary and parents[assign] is module.body[0]
    assert parents.get(module) is None
    assert list(positions)[-1] is module and len(positions) == len(list(positions))


def test_a_node_of_another_tree_is_not_in_the_table():
    module = cst.parse_module("x = 1\n")
    other = cst.parse_module("x = 1\n")
    positions, parents = layout(module)
    assert other.body[0] not in positions
    assert parents.get(other.body[0]) is None
    with pytest.raises(KeyError):
        parents[module]


def test_a_layout_keeps_nothing_alive_once_dropped():
    # The per-file stage runs with the cyclic collector off: a reference cycle through
    # the codegen state would keep every file's tree alive until the stage ends.
    import gc

    def trees() -> int:
        return sum(1 for o in gc.get_objects() if type(o) is cst.Module)

    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        before = trees()
        module = cst.parse_module("import torch\n\nclass D(torch.nn.Module):\n"
                                  "    def f(self, x):\n        return (x + 1) * 2\n")
        positions, parents = layout(module)
        assert positions[module.body[0]].start.line == 1
        assert trees() == before + 1
        del module, positions, parents
        assert trees() == before
    finally:
        if enabled:
            gc.enable()


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_each_statement_alone_is_where_the_whole_module_has_it(name):
    # Asked node by node from the last statement up, each statement is laid out alone.
    module = cst.parse_module(SOURCES[name])
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions, parents = layout(module)
    for node in reversed(list(expected)):
        r = expected[node]
        assert positions.raw(node) == (r.start.line, r.start.column, r.end.line, r.end.column)
    assert list(positions) == list(expected)


def test_asking_about_a_line_lays_out_only_its_statement():
    module = cst.parse_module("import a\n\nx = f(1)\n\n\ndef g():\n    return h(2)\n")
    positions, parents = layout(module)
    call = module.body[1].body[0].value
    assert call in positions.at_line(3)
    assert positions[call] == ((3, 4), (3, 8))
    assert parents[call] is module.body[1].body[0]
    assert parents[module.body[1]] is module
    laid_out = positions._layout.nodes
    assert [nodes is not None for nodes in laid_out] == [False, True, False]


def test_the_nodes_at_a_line_are_its_statements():
    module = cst.parse_module("# head\nimport a\n\n# about x\nx = (1,\n     2)\ny = 3\n")
    positions, _ = layout(module)
    assert module.header[0] in positions.at_line(1)
    assert module.body[0] in positions.at_line(2)
    assert module.body[1] in positions.at_line(3)  # its leading empty line and comment
    assert module.body[1] in positions.at_line(6)
    assert module.body[2] in positions.at_line(7)
    assert positions.at_line(8) == positions.at_line(7)


NESTED = (
    "import torch\n\n\n"
    "class D(torch.nn.Module):  # c\n"
    "    '''doc'''\n\n"
    "    # about init\n"
    "    def __init__(self, c=3):\n"
    "        super().__init__()\n"
    "        self.net = torch.nn.Sequential(\n"
    "            torch.nn.Conv2d(c, 64, 4),\n"
    "    torch.nn.BatchNorm2d(64),  # under-indented continuation\n"
    "        )\n"
    "        if c:\n"
    "            pass\n"
    "# a comment at column 0 in the block\n"
    "        x = [i\n"
    "             for i in range(c)]\n\n"
    "    @staticmethod\n"
    "    def f(x): return x\n"
    "    # the class's last comment\n\n"
    "def g():\n"
    "  class E:\n"
    "      y = 1\n"
    "  return E\n"
    "def h():\n"
    "\tif x:\n"
    "\t\treturn (1,\n"
    "  2)\n"
)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_a_statement_in_a_class_or_function_alone_is_where_the_module_has_it(newline):
    source = NESTED.replace("\n", newline)
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    wanted = dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(ParentNodeProvider))
    for line in range(1, NESTED.count("\n") + 2):
        positions, parents = layout(module)
        nodes = positions.at_line(line)
        assert nodes, line
        for node in nodes:
            r = expected[node]
            assert positions.raw(node) == (r.start.line, r.start.column, r.end.line, r.end.column)
            assert parents.get(node) is wanted[node]
        # The innermost statement: every node a key can name that starts at the line
        # is in it (a block starts at its first statement, and is not one).
        keyed = (cst.BaseExpression, cst.Arg, cst.Param, cst.ImportAlias)
        starting = {id(n) for n, r in expected.items()
                    if r.start.line == line and isinstance(n, keyed)}
        whole = {id(n) for n in positions.at_line(line, whole=True)}
        assert starting & whole <= {id(n) for n in nodes} | {id(module)}, line


def test_a_line_in_a_method_lays_out_that_statement_only():
    module = cst.parse_module(NESTED)
    positions, parents = layout(module)
    init = module.body[1].body.body[1]
    assign = init.body.body[1]
    nodes = positions.at_line(10)
    assert assign in nodes and init not in nodes and module.body[1] not in nodes
    assert positions._layout.nodes == [None] * len(positions._layout.nodes)
    assert [p is init.body for p in [parents[assign]]] == [True]
    assert list(parents_of(parents, assign)) == [init.body, init, module.body[1].body,
                                                 module.body[1], module]
    assert positions.at_line(8)[-1] is init  # the method's own line: the method


def parents_of(parents, node):
    current = parents.get(node)
    while current is not None:
        yield current
        current = parents.get(current)


def test_a_node_asked_about_lays_out_the_statements_read_first():
    module = cst.parse_module("import a\n\nx = f(1)\n\n\ndef g():\n    y = k(1)\n    return h(2)\n")
    positions, parents = layout(module)
    positions.at_line(7)  # `y = k(1)` alone
    call = module.body[2].body.body[1].body[0].value
    assert positions[call] == ((8, 11), (8, 15))
    assert [nodes is not None for nodes in positions._layout.nodes] == [False, False, True]
    assert parents[call] is module.body[2].body.body[1].body[0]
