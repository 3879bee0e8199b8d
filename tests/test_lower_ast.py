"""The source pass reads files with CPython's `ast` alone, but a fix finds a finding's
node in libcst's tree of the same text by the node key the facts recorded
(`facts.node_key`, a function of the span): every key the lowering records for a call,
argument, parameter, import alias or qualified name must name a node of libcst's tree,
or a finding's fix would lose its node."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from libcst.metadata import MetadataWrapper, PositionProvider

from snlint import facts as F
from snlint.catalogue import load_catalogue
from snlint.edit.parsed import ParsedFile
from snlint.positions import arg_range, param_range
from snlint.source import compile_error, extract_file, parse_python

ROOT = Path(__file__).resolve().parent.parent


def missing_keys(text: str, relpath: str = "pkg/mod.py", *, by_statement: bool = True) -> list:
    """The spans and qualified names the lowering recorded whose node key names no node
    of libcst's tree of `text`: looked up as a fix does (`ParsedFile.node`, laying out the
    statement of the key's line), or (`by_statement=False`) in the keys of every node of
    libcst's own whole-module positions, which is faster on a large file."""
    facts, _ = extract_file(text, relpath, relpath)
    if by_statement:
        parsed = ParsedFile(relpath, text)

        def absent(key: int) -> bool:
            return parsed.node(key, cst.CSTNode) is None
    else:
        keys = _every_key(text)

        def absent(key: int) -> bool:
            return key not in keys

    names = facts.names
    missing = [(s.line, s.column, s.end_line, s.end_column) for s, key in names.sites.items() if absent(key)]
    missing += [qual for key, qual in names.quals.items() if absent(key)]
    missing += [local for local, key in names.imports.items() if absent(key)]
    return missing


def _every_key(text: str) -> set[int]:
    table = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True).resolve(PositionProvider)

    def raw(node):
        r = table[node]
        return r.start.line, r.start.column, r.end.line, r.end.column

    keys = set()
    for node in table:
        if isinstance(node, (cst.BaseExpression, cst.ImportAlias)):
            (sl, sc, el, ec), role = raw(node), F.ALIAS if isinstance(node, cst.ImportAlias) else F.EXPR
        elif isinstance(node, cst.Arg):
            (sl, sc, el, ec), role = arg_range(raw, node), F.ARG
        elif isinstance(node, cst.Param):
            (sl, sc, el, ec), role = param_range(raw, node), F.PARAM
        else:
            continue
        keys.add(F.node_key(sl, sc + 1, el, ec + 1, role))
    return keys


def assert_same_facts(text: str, relpath: str = "pkg/mod.py", *, by_statement: bool = True) -> None:
    assert missing_keys(text, relpath, by_statement=by_statement) == []


def _python_files():
    # The package, its examples and benchmarks: 150 files of every construct the project
    # writes. tests/ adds mostly the same code inside string literals (its own constructs
    # are covered by the generated and curated texts below) at twice the cost.
    for folder in ("examples", "snlint", "benchmarks"):
        yield from sorted((ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", list(_python_files()), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_key_names_a_libcst_node_in_every_file_of_the_project(path):
    assert_same_facts(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)), by_statement=False)


def test_every_key_names_a_libcst_node_in_the_rule_pages_examples():
    checked = 0
    for rule in load_catalogue().values():
        for title in ("Example", "Use instead"):
            code = rule.code_block(title)
            if code:
                assert_same_facts(code, f"{rule.code}.py")
                checked += 1
    assert checked >= 13


# Each place where the two trees say things differently, written out once.
CASES = {
    "a tuple's own parentheses, over lines, with a trailing comma": """\
        EXCLUDE = (
            ".git", ".hg",  # comment
            "build",
        )
        pair = (1, 2)
        odd = (a), (b)
        spaced = ( 1, 2 )
    """,
    "a sole generator argument and a parenthesized one": """\
        x = sum(i for i in range(3))
        y = f((i for i in range(3)), 1)
        z = f(
            i for i in range(3)
        )
    """,
    "an and/or chain with parenthesized operands": """\
        ok = (a or b) and (c) and d
        other = a or (b and c) or (d)
    """,
    "a compound statement whose last line ends with a semicolon": """\
        for i in range(3):
            x = i;
        def f():
            return 1 ;
    """,
    "columns after non-ASCII text": """\
        s = "é" + nn.Conv2d(3, 4, 3); t = "日本"; u = f(a="ü", b=g(1))
        class Dé(nn.Module):
            def __init__(self, ç=nn.BatchNorm2d):
                self.n = ç(4)
    """,
    "a class name after a continuation, decorators, keyword bases": """\
        @decorate(1)
        class \\
              D(nn.Module, metaclass=M):
            x = 1; y = 2
            if flag:
                z = 3
            class Inner:
                pass
            async def forward(self, x):
                return await x
    """,
    "strings: f-strings alone and joined, bytes, numbers, ellipsis": """\
        a = f"{x}"
        b = "a" f"{x}"
        c = f"a" f"{x}"
        d = ("a"
             "b")
        e = b"x"
        g = -1j, -1, -2.5, +3, ~4, ..., 1_000, 0x10
    """,
    "call arguments in source order": """\
        f(a, key=1, *rest, **kw)
        g(*xs, y, z=2)
        h(** kw, x=1)
    """,
    "subscripts, slices, comprehensions and lambdas": """\
        a[(1, 2)], a[1, 2], a[1:2], a[::2, 0], a[b]
        [m for block in blocks for m in block if m]
        {k: v for k, v in d.items()}
        {x for x in s}
        lambda a, b=1, *c, d, **e: a + d
        x if y else z
        (w := 3)
        a < b < c, a not in b, a is not b
    """,
    "statements": """\
        import a.b as c, d
        from . import e
        from .f import (g, h as i)
        from j import *
        with open(p) as fh, lock:
            pass
        try:
            k = 1
        except (A, B) as err:
            k = 2
        except C:
            pass
        else:
            k = 3
        finally:
            k = 4
        while k:
            k -= 1
            break
        else:
            pass
        x: int = 1
        y: int
        z += 1
        del z
        global q
        assert x, "m"
        raise ValueError
        if a:
            pass
        elif b:
            pass
        else:
            if c:
                pass
    """,
    "function scopes: globals, rebound imports, defaults": """\
        import torch.nn as nn
        def make(kind, norm=nn.BatchNorm2d, *, act: type = nn.ReLU, **kw) -> nn.Module:
            global layer
            if kind == "a":
                from m import A as net
            else:
                from m import B as net
            layer = net(norm)
            return layer
        def gen():
            yield 1
            yield from g()
    """,
    "slices": """
        a = layers[:-1]
        b = layers[1:]
        c = layers[0x1:-2:1]
        d = layers[1_0:]
        e = layers[i:]
        f = x[:, 0]
        g = x[..., :3]
        h = layers[-0:]
    """,
}


@pytest.mark.parametrize("text", CASES.values(), ids=list(CASES))
def test_every_key_names_a_libcst_node_where_the_trees_differ(text):
    assert_same_facts(textwrap.dedent(text))


def test_a_file_only_libcst_parses_is_a_syntax_error_with_cpythons_message():
    # PEP 695 is 3.12 syntax: this Python's parser rejects it. libcst's accepts it, but
    # the file does not run here: SN901, and libcst never reads it.
    text = textwrap.dedent("""\
        import torch.nn as nn
        type Size = int
    """)
    finding, modules = extract_file(text, "d.py", "d.py")
    assert (finding.code, finding.line, finding.column, finding.message) == (
        "SN901", 2, 6, "syntax error: invalid syntax")
    assert modules is None


def test_warnings_compiling_a_file_are_not_printed(capfd):
    extract_file('pattern = "\\d"\nassert (pattern, 1)\n', "w.py", "w.py")
    assert capfd.readouterr().err == ""


FRAGMENTS = st.sampled_from([
    "import torch.nn as nn\n", "from .sn import spectral_norm as SN\n", "x = ", "y = ", "(", ")",
    "[", "]", ", ", "\n", "    ", "nn.Conv2d(3, 4, 3)", "SN(", "a", "b", " and ", " or ", "not ",
    "lambda q: q", " for i in r", " if c", "f'{a}'", "'s' ", "b'x'", "é", "1", "-", "*", "**",
    "k=", ";", "def f(p=1, *a, k: int = 2, **w):\n", "class C(nn.Module):\n", "return ",
    "with w as v:\n", "for i in r:\n", "if a:\n", "else:\n", "try:\n", "except E as e:\n",
    "global g\n", "[0]", "[1:2]", ".attr", "\\\n", "# c\n", "\t",
])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(FRAGMENTS, max_size=30).map("".join))
def test_keys_name_libcst_nodes_in_whatever_both_parse(text):
    if not isinstance(parse_python(text, "soup.py"), ast.Module):  # quietly, as the source pass does
        return
    if compile_error(text, "soup.py") is not None:  # `return` outside a function: SN901
        return
    try:
        tree = cst.parse_module(text)
    except (cst.ParserSyntaxError, cst.CSTValidationError, RecursionError):
        return
    if tree.code != text:  # libcst misread it (tests/test_backslash_lines.py): no fix may use it
        facts, _ = extract_file(text, "soup.py", "soup.py")
        assert not facts.rewritable
        return
    assert_same_facts(text)


def test_a_null_byte_is_a_syntax_error():
    # CPython runs no file with a null byte in it; libcst's parser reads one inside a
    # string, whose literal CPython then refuses to evaluate (an SN999 before).
    text = "'''\x00'''\nimport torch.nn as nn\n"
    finding, modules = extract_file(text, "n.py", "n.py")
    assert (finding.code, finding.line, finding.message) == (
        "SN901", 1, "syntax error: source code string cannot contain null bytes")
    assert modules is None
