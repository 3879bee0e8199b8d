"""The source pass reads files with CPython's `ast` and, where only libcst can parse a
file, with libcst: both must give the same facts for the same text, spans and node keys
included, or a finding would move (or a fix lose its node) with the parser."""

from __future__ import annotations

import ast
import dataclasses
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from snlint.catalogue import load_catalogue
from snlint.findings import Span
from snlint.source import extract_file, module_name, parse_python
from snlint.source.lower import lower_file
from snlint.source.lower_ast import lower_ast

ROOT = Path(__file__).resolve().parent.parent


def _spans(obj, out: list, path: str = "") -> list:
    if isinstance(obj, Span):
        out.append((path, obj.line, obj.column, obj.end_line, obj.end_column, obj.node))
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            if f.name != "names":
                _spans(getattr(obj, f.name), out, f"{path}.{f.name}")
    elif isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            _spans(item, out, f"{path}[{i}]")
    return out


def _names(facts) -> dict:
    out = {}
    for f in dataclasses.fields(facts.names):
        value = getattr(facts.names, f.name)
        if f.name == "sites":  # Span equality leaves the node key out: compare it too
            value = {(s.line, s.column, s.end_line, s.end_column, key) for s, key in value.items()}
        out[f.name] = value
    return out


def both(text: str, relpath: str = "pkg/mod.py"):
    """The facts `ast` and libcst give `text`, and the modules each says it imports."""
    module, is_package = module_name(relpath)
    by_ast = lower_ast(parse_python(text, relpath), text, relpath, module, is_package)
    by_cst = lower_file(cst.parse_module(text), relpath, module, is_package)
    return by_ast, by_cst


def assert_same_facts(text: str, relpath: str = "pkg/mod.py") -> None:
    (a, a_modules), (c, c_modules) = both(text, relpath)
    assert a_modules == c_modules
    assert a == c
    assert _spans(a, []) == _spans(c, [])
    assert _names(a) == _names(c)


def _python_files():
    for folder in ("examples", "snlint", "tests", "benchmarks"):
        yield from sorted((ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", list(_python_files()), ids=lambda p: str(p.relative_to(ROOT)))
def test_ast_and_libcst_give_the_same_facts_for_every_file_of_the_project(path):
    assert_same_facts(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))


def test_ast_and_libcst_give_the_same_facts_for_every_rule_pages_examples():
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
def test_ast_and_libcst_give_the_same_facts_where_their_trees_differ(text):
    assert_same_facts(textwrap.dedent(text))


def test_a_file_only_libcst_parses_is_lowered_by_libcst():
    # PEP 695 is 3.12 syntax: this Python's parser rejects it, libcst's accepts it, and
    # the file's discriminator is still read.
    text = textwrap.dedent("""\
        import torch.nn as nn
        type Size = int
        class D(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 4, 3)
    """)
    facts, _ = extract_file(text, "d.py", "d.py")
    assert [name for name, _ in facts.classes] == ["D"]


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
def test_ast_and_libcst_agree_on_whatever_both_parse(text):
    if not isinstance(parse_python(text, "soup.py"), ast.Module):  # quietly, as the source pass does
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


def test_a_null_byte_is_a_syntax_error_though_libcst_reads_the_file():
    # CPython runs no file with a null byte in it; libcst's parser reads one inside a
    # string, whose literal CPython then refuses to evaluate (an SN999 before).
    text = "'''\x00'''\nimport torch.nn as nn\n"
    finding, modules = extract_file(text, "n.py", "n.py")
    assert (finding.code, finding.line, finding.message) == (
        "SN901", 1, "syntax error: source code string cannot contain null bytes")
    assert modules is None


def test_libcst_lowers_a_string_cpython_cannot_evaluate_as_having_no_value():
    facts, _ = lower_file(cst.parse_module("s = '''\x00'''\n"), "s.py", "s", False)
    assert facts.body[0].value.value is None
