"""Property tests: snlint never crashes and never corrupts.

- Any text or bytes through the engine gives a list of well-formed findings: rule
  findings or SN9xx diagnostics, never SN999 (an internal error is snlint's bug), never
  an exception, spans inside the file.
- Nothing reaches stderr: the engine reports a fixer's crash or a fix whose result does
  not parse there, and either is snlint's bug.
- Small valid modules generated from random layers and random SN wrappers (every import
  form, nested up to twice, as attributes or in a Sequential) give exactly the
  placement and coverage findings an independent oracle predicts, at the columns of
  the nodes the rule contract names.

Hypothesis keeps no example database here (tests stay hermetic) and runs derandomized,
so a failure is reproducible from the test alone. `SNLINT_FUZZ_SCALE=50 pytest
tests/test_properties.py` runs fifty times the examples, randomized, for a longer hunt.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from snlint.catalogue import load_catalogue
from snlint.config import Config
from snlint.engine import lint_text, run
from snlint.findings import Finding

CATALOGUE = load_catalogue()
ALL = Config(root=Path.cwd(), select=["ALL"], graph=False)
SCALE = float(os.environ.get("SNLINT_FUZZ_SCALE", "1"))
SETTINGS = dict(database=None, derandomize=SCALE == 1, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def examples(n: int) -> int:
    return max(1, int(n * SCALE))


def lint_checked(text: str, path: str, config: Config = ALL, *, fixes: bool = True):
    """lint_text, asserting that nothing went to stderr (where the engine reports a
    fixer's internal error or a fix it dropped). With fixes=False the fixes are only
    marked, not built: detection properties run several times as many examples in the
    same time."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        findings = lint_text(text, path, config, fixes=fixes)
    assert err.getvalue() == "", err.getvalue()
    return findings


def assert_well_formed(findings, path: str, text: str) -> None:
    assert isinstance(findings, list)
    lines = text.count("\n") + text.count("\r") + 1  # generous: any newline convention
    for f in findings:
        assert isinstance(f, Finding)
        assert f.code in CATALOGUE, f.code
        assert f.code != "SN999", f.message
        assert f.path == path
        assert f.severity == CATALOGUE[f.code].severity
        assert 1 <= f.line <= lines + 1, (f.line, lines)
        assert f.column >= 1
        assert (f.end_line, f.end_column) >= (f.line, f.column)
        f.to_dict()  # the JSON contract can always be built
        if f.fix is not None:
            assert all(edit.path == path for edit in f.fix.edits)


# ---------------------------------------------------------------- arbitrary input

@settings(max_examples=examples(80), **SETTINGS)
@given(st.text())
@example(text="\U00013460")  # an identifier character newer than Python 3.11's Unicode
def test_arbitrary_text_never_raises(text):
    assert_well_formed(lint_checked(text, "fuzz.py"), "fuzz.py", text)


def test_a_character_libcst_only_rejects_after_parsing_is_a_syntax_error():
    findings = lint_text("x = \U00013460\n", "fuzz.py", ALL)
    assert [(f.code, f.line, f.column) for f in findings] == [("SN901", 1, 5)]


RECURSIVE_MODULE = textwrap.dedent('''\
    import torch.nn as nn


    class Tree(nn.Module):
        def __init__(self, depth):
            super().__init__()
            self.conv = nn.Conv2d(8, 8, 3)
            if depth > 0:
                self.left = Tree(depth - 1)
                self.right = Tree(depth - 1)
''')

def test_a_recursive_module_is_linted_in_bounded_work(interpreter_work):
    # A class that builds itself twice is not followed into itself: without that rule the
    # interpreter explored 2**MAX_DEPTH paths. A few statements suffice; the limit stops a
    # regression at once, before it can take time or memory.
    work = interpreter_work(limit=1000)
    findings = lint_text(RECURSIVE_MODULE, "tree.py", Config(root=Path.cwd(), graph=False))
    assert [f.code for f in findings] == []
    assert work.cut_short == 0


PYTHONISH = st.sampled_from([
    "import torch.nn as nn\n", "from torch.nn.utils import spectral_norm\n",
    "from torch.nn.utils import parametrizations as P\n", "SN = nn.utils.spectral_norm\n",
    "class D(nn.Module):\n", "class Discriminator(", "nn.Module", "):\n", "    def __init__(self", "):\n",
    "        super().__init__()\n", "        self.c = ", "spectral_norm(", "P.spectral_norm(", "SN(",
    "nn.Conv2d(3, 64, 3)", "nn.BatchNorm2d(64)", "nn.Sequential(", "nn.ModuleList([", "])", ")", "(",
    ", ", "dim=1", "name='bias'", "\n", "    ", "for m in self.modules():\n", "self.apply(", "lambda m: ",
    "if isinstance(m, nn.Conv2d):\n", "return ", "*", "**", "def f(*a, **k):\n", "functools.partial(",
    "self", ".weight", "nn.init.normal_(", "setattr(self, 'x', ", "# noqa: SN201", "# snlint: disable=SN1\n",
    "\t", "\\\n", "'''", '"', "\x00", "\ufeff", "é", "global x\n", "yield\n", "async ", "await ",
])


@settings(max_examples=examples(100), **SETTINGS)
@given(st.lists(PYTHONISH, max_size=40).map("".join))
def test_python_like_token_soup_never_raises(text):
    assert_well_formed(lint_checked(text, "soup.py"), "soup.py", text)


VALID_MODULE = textwrap.dedent('''\
    import functools
    import torch.nn as nn
    from torch.nn.utils import spectral_norm
    from torch.nn.utils import parametrizations as P

    SN = nn.utils.spectral_norm

    def snconv(*args, **kwargs):
        return P.spectral_norm(nn.Conv2d(*args, **kwargs))

    conv3 = functools.partial(snconv, kernel_size=3)

    def add_sn(m):
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            spectral_norm(m)

    class Block(nn.Module):
        def __init__(self, ch):
            super().__init__()
            self.c = conv3(ch, ch)
            self.sc = nn.Conv2d(ch, ch, 1)

    class Discriminator(nn.Module):
        def __init__(self, ch=64, n=3):
            super().__init__()
            layers = [SN(nn.Conv2d(3, ch, 4, 2, 1)), nn.LeakyReLU(0.2)]
            for i in range(n):
                layers.append(Block(ch))
            self.main = nn.Sequential(*layers)
            self.fc = nn.Linear(ch, 1)
            self.n = spectral_norm(nn.BatchNorm2d(ch), dim=1)
            nn.init.normal_(self.fc.weight)
            self.apply(add_sn)
            setattr(self, "x", SN(SN(nn.Conv2d(ch, ch, 3))))
''')


@st.composite
def mutilated_modules(draw) -> str:
    """VALID_MODULE with slices cut, duplicated, swapped or dedented: mostly valid-but-odd
    Python that drives the interpreter through states no hand-written test reaches."""
    lines = VALID_MODULE.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        n = len(lines)
        if n == 0:
            break
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "dedent"]))
        i = draw(st.integers(0, n - 1))
        j = draw(st.integers(i, min(n - 1, i + 3)))
        if op == "delete":
            del lines[i:j + 1]
        elif op == "duplicate":
            lines[j + 1:j + 1] = lines[i:j + 1]
        elif op == "swap" and j > i:
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "dedent" and lines[i].strip():
            lines[i] = lines[i].lstrip(" ")
    return "".join(lines)


@settings(max_examples=examples(40), **SETTINGS)
@given(mutilated_modules())
def test_mutilated_valid_modules_never_raise(text):
    assert_well_formed(lint_checked(text, "mut.py", fixes=False), "mut.py", text)


@settings(max_examples=examples(5), **SETTINGS)
@given(mutilated_modules())
def test_fixes_of_mutilated_valid_modules_never_raise(text):
    assert_well_formed(lint_checked(text, "mut.py"), "mut.py", text)


@settings(max_examples=examples(15), **SETTINGS)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_in_a_file_never_raise(raw):
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "blob.py").write_bytes(raw)
        findings = run([str(root)], Config(root=root, select=["ALL"], graph=False)).findings
    for f in findings:
        assert isinstance(f, Finding)
        assert f.code in CATALOGUE
        assert f.code != "SN999", f.message
        assert f.line >= 1 and f.column >= 1


@settings(max_examples=examples(40), **SETTINGS)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_decoded_as_latin1_never_raise(raw):
    text = raw.decode("latin-1")
    assert_well_formed(lint_checked(text, "bytes.py"), "bytes.py", text)


# ---------------------------------------------------------------- generated valid modules

HEADER = textwrap.dedent('''\
    import torch
    import torch.nn as nn
    from torch.nn.utils import spectral_norm
    from torch.nn.utils import parametrizations as P
    from torch.nn.utils.parametrizations import spectral_norm as psn

    SN = nn.utils.spectral_norm

''')

# layer expression -> kind (the oracle's own table, written from the rule contract)
LAYERS = {
    "nn.Conv2d(8, 8, 3)": "weight",
    "nn.Conv1d(8, 8, 3)": "weight",
    "nn.Linear(8, 8)": "weight",
    "nn.ConvTranspose2d(8, 8, 4)": "weight",
    "nn.BatchNorm2d(8)": "norm",
    "nn.GroupNorm(2, 8)": "norm",
    "nn.LayerNorm(8)": "norm",
    "nn.InstanceNorm2d(8, affine=True)": "norm",
    "nn.LeakyReLU(0.2)": "weightless",
    "nn.PReLU()": "weightless",
    "nn.Dropout(0.1)": "weightless",
    "nn.Identity()": "weightless",
    "nn.AvgPool2d(2)": "weightless",
    "nn.Embedding(10, 8)": "other",
}
SN_CALLABLES = ["spectral_norm", "torch.nn.utils.spectral_norm", "SN", "P.spectral_norm",
                "psn", "nn.utils.parametrizations.spectral_norm"]
CLASSES = {"Discriminator": True, "PatchCritic": True, "Generator": False, "Encoder": False}


@dataclass
class Item:
    layer: str
    wrappers: list[str]  # outermost first

    @property
    def expr(self) -> str:
        text = self.layer
        for w in reversed(self.wrappers):
            text = f"{w}({text})"
        return text


items = st.builds(Item, st.sampled_from(sorted(LAYERS)),
                  st.lists(st.sampled_from(SN_CALLABLES), max_size=2))


def build(cls: str, attrs: list[Item], seq: list[Item]) -> tuple[str, list[tuple[Item, int, int]]]:
    """The module's text, and every item with its line and the column of its expression."""
    lines = HEADER.splitlines()
    lines += [f"class {cls}(nn.Module):", "    def __init__(self):", "        super().__init__()"]
    placed = []
    for i, item in enumerate(attrs):
        prefix = f"        self.l{i} = "
        lines.append(prefix + item.expr)
        placed.append((item, len(lines), len(prefix) + 1))
    if seq:
        lines.append("        self.main = nn.Sequential(")
        for item in seq:
            prefix = "            "
            lines.append(prefix + item.expr + ",")
            placed.append((item, len(lines), len(prefix) + 1))
        lines.append("        )")
    return "\n".join(lines) + "\n", placed


def oracle(cls: str, placed: list[tuple[Item, int, int]]) -> list[tuple[str, int, int]]:
    expected = []
    for item, line, col in placed:
        kind = LAYERS[item.layer]
        # The SN calls from the outside in: their columns, and their order of application.
        cols, c = [], col
        for w in item.wrappers:
            cols.append(c)
            c += len(w) + 1
        for order, call_col in enumerate(reversed(cols)):  # innermost is applied first
            if kind == "norm":
                expected.append(("SN101", line, call_col))
            if kind == "weightless":
                expected.append(("SN102", line, call_col))
            if order >= 1:
                expected.append(("SN103", line, call_col))
    weighted = [(item, line, col) for item, line, col in placed if LAYERS[item.layer] == "weight"]
    if CLASSES[cls] and any(item.wrappers for item, _, _ in weighted):
        for item, line, col in weighted:
            if not item.wrappers:
                expected.append(("SN201", line, col))
    return sorted(expected)


@settings(max_examples=examples(40), **SETTINGS)
@given(st.sampled_from(sorted(CLASSES)), st.lists(items, max_size=5), st.lists(items, max_size=4))
def test_generated_modules_give_exactly_the_oracles_findings(cls, attrs, seq):
    text, placed = build(cls, attrs, seq)
    findings = lint_checked(text, "gen.py", Config(root=Path.cwd(), select=["SN1", "SN2"], graph=False),
                            fixes=False)
    assert_well_formed(findings, "gen.py", text)
    got = sorted((f.code, f.line, f.column) for f in findings)
    assert got == oracle(cls, placed), text


@settings(max_examples=examples(3), **SETTINGS)
@given(st.sampled_from(sorted(CLASSES)), st.lists(items, min_size=1, max_size=4),
       st.lists(items, max_size=3))
def test_linting_with_fixes_is_deterministic(cls, attrs, seq):
    text, _ = build(cls, attrs, seq)
    first = [f.to_dict() for f in lint_checked(text, "gen.py")]
    second = [f.to_dict() for f in lint_checked(text, "gen.py")]
    assert first == second
