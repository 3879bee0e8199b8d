"""Hostile inputs for snlint, and the property every one of them must keep (issue 31).

Four kinds of input, each a file's bytes:
- `programs`: random valid Python from hypothesmith's grammar-based strategies;
- `mutants`: the GAN files of examples/ with lines and tokens deleted, duplicated or
  swapped, deep nesting inserted, odd bytes, BOMs, CR / CRLF / mixed line endings, tabs;
- `deep`: valid code nested or chained as deep as CPython still compiles;
- `huge`: many lines, one enormous line, a GAN file repeated.

`check_batch` writes a batch into one folder and runs the `snlint` command over it twice,
in a process of its own (a crash of the parser must not take the test run with it):
a lint with every rule and JSON output (which builds every fix), then `--fix
--unsafe-fixes`. The property: neither exits with anything but 0 or 1, prints a
traceback or an internal error, or gives SN999 on a file CPython compiles; the fixes
never turn a compiling file into one that does not compile, never change a file with
SN901, and leave no temporary file. The first file of a batch has a name that is not
UTF-8.
"""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").rglob("*.py"))


@dataclass
class Input:
    name: str  # what made it, e.g. "mutant-17:swap-lines,crlf"
    data: bytes


@dataclass
class Outcome:
    """What a batch broke (empty lists: nothing)."""

    failures: list[str] = field(default_factory=list)
    crashes: int = 0  # runs that ended with a signal, a traceback or exit 2
    sn999: int = 0
    broken_by_fix: int = 0
    compiled: int = 0  # inputs CPython compiles


def compiles(data: bytes) -> bool:
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like: still compiles
            compile(data, "<fuzz>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True


# ---------------------------------------------------------------------------- generators

def examples() -> list[str]:
    return [path.read_text(encoding="utf-8") for path in EXAMPLES]


_ODD = ["\x00", "\x0c", "\x1a", "\x0b", "\u2028", "\u00a0", "\ufeff", "\\", "\t", "\r",
        "é", "𝔡", "\ud800"]


def mutant(rng: random.Random, sources: list[str], index: int) -> Input:
    """A GAN file with 1-4 random edits, then maybe its bytes made odd."""
    text = rng.choice(sources)
    done = []
    for _ in range(rng.randint(1, 4)):
        edit = rng.choice(_EDITS)
        text = edit(rng, text)
        done.append(edit.__name__.strip("_"))
    data, how = _as_bytes(rng, text)
    return Input(f"mutant-{index}:{','.join(done + how)}", data)


def _delete_line(rng, text):
    lines = text.splitlines(True)
    if lines:
        del lines[rng.randrange(len(lines))]
    return "".join(lines)


def _duplicate_line(rng, text):
    lines = text.splitlines(True)
    if lines:
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(lines))
    return "".join(lines)


def _swap_lines(rng, text):
    lines = text.splitlines(True)
    if len(lines) > 1:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines)


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    try:
        return [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type not in (tokenize.ENDMARKER, tokenize.DEDENT, tokenize.INDENT) and t.string]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []


def _offset(text: str, position: tuple[int, int]) -> int:
    line, column = position
    lines = text.splitlines(True)
    return sum(len(line_) for line_ in lines[:line - 1]) + column


def _token_edit(rng, text, how):
    tokens = _tokens(text)
    if not tokens:
        return text
    token = rng.choice(tokens)
    start, end = _offset(text, token.start), _offset(text, token.end)
    if how == "delete":
        return text[:start] + text[end:]
    if how == "duplicate":
        return text[:end] + " " + token.string + text[end:]
    other = rng.choice(tokens)  # swap: put another token's text in its place
    return text[:start] + other.string + text[end:]


def _delete_token(rng, text):
    return _token_edit(rng, text, "delete")


def _duplicate_token(rng, text):
    return _token_edit(rng, text, "duplicate")


def _swap_token(rng, text):
    return _token_edit(rng, text, "swap")


def _nest(rng, text):
    """Wrap an expression line's value in deep parentheses, brackets or calls."""
    lines = text.splitlines(True)
    candidates = [i for i, line in enumerate(lines) if " = " in line and not line.rstrip().endswith((",", "(", "\\"))]
    if not candidates:
        return text
    i = rng.choice(candidates)
    head, _, value = lines[i].rstrip("\r\n").partition(" = ")
    depth = rng.choice([5, 30, 90, 150])
    opener, closer = rng.choice([("(", ")"), ("[", "]"), ("f(", ")"), ("{1: ", "}")])
    lines[i] = f"{head} = {opener * depth}{value}{closer * depth}\n"
    return "".join(lines)


def _insert_odd(rng, text):
    at = rng.randrange(len(text) + 1)
    return text[:at] + rng.choice(_ODD) + text[at:]


def _indent_block(rng, text):
    """Indent a run of lines inside a new `if True:` (or break the indentation)."""
    lines = text.splitlines(True)
    if not lines:
        return text
    i = rng.randrange(len(lines))
    j = min(len(lines), i + rng.randint(1, 10))
    indent = rng.choice(["    ", "\t", " "])
    body = [indent + line if line.strip() else line for line in lines[i:j]]
    lead = len(lines[i]) - len(lines[i].lstrip(" \t"))
    return "".join(lines[:i] + [lines[i][:lead] + "if True:\n"] + body + lines[j:])


_EDITS = [_delete_line, _duplicate_line, _swap_lines, _delete_token, _duplicate_token,
          _swap_token, _nest, _insert_odd, _indent_block]


def _as_bytes(rng: random.Random, text: str) -> tuple[bytes, list[str]]:
    how = []
    roll = rng.random()
    if roll < 0.15:
        text, how = text.replace("\n", "\r\n"), ["crlf"]
    elif roll < 0.25:
        text, how = text.replace("\n", "\r"), ["cr"]
    elif roll < 0.3:
        text = "".join(line + rng.choice(["\n", "\r\n", "\r"]) for line in text.split("\n"))
        how = ["mixed-endings"]
    if rng.random() < 0.1:
        text, how = text.rstrip("\r\n"), how + ["no-final-newline"]
    if rng.random() < 0.1:
        text, how = text.replace("    ", "\t"), how + ["tabs"]
    data = text.encode("utf-8", "surrogatepass")
    roll = rng.random()
    if roll < 0.1:
        data, how = b"\xef\xbb\xbf" + data, how + ["bom"]
    elif roll < 0.15:
        data, how = b"# -*- coding: latin-1 -*-\n" + text.encode("latin-1", "replace"), how + ["latin-1"]
    elif roll < 0.18:
        at = rng.randrange(len(data) + 1)
        data, how = data[:at] + bytes([rng.choice([0x80, 0xff, 0xc3, 0xed])]) + data[at:], how + ["bad-utf8"]
    return data, how


def deep(rng: random.Random, index: int) -> Input:
    """Valid code nested or chained deep, within what CPython compiles."""
    kind = rng.choice(["parens", "lists", "calls", "attributes", "blocks", "operators",
                       "classes", "lambdas", "comprehension", "strings"])
    n = rng.randint(1, 6)
    if kind == "parens":
        text = f"x = {'(' * (30 * n)}1{')' * (30 * n)}\n"
    elif kind == "lists":
        text = f"x = {'[' * (30 * n)}{']' * (30 * n)}\n"
    elif kind == "calls":
        text = "import torch.nn as nn\nx = " + "nn.Sequential(" * (15 * n) + "nn.Conv2d(3, 3, 1)" + ")" * (15 * n) + "\n"
    elif kind == "attributes":
        text = "import torch\nx = torch" + ".nn" * (50 * n) + "\n"
    elif kind == "blocks":
        depth = 15 * n
        text = "".join(" " * i + "if x:\n" for i in range(depth)) + " " * depth + "pass\n"
    elif kind == "operators":
        text = "x = " + " + ".join(["1"] * (500 * n)) + "\n"
    elif kind == "classes":
        text = "import torch.nn as nn\n" + "".join(
            " " * (4 * i) + f"class D{i}(nn.Module):\n" for i in range(8 * n)) + " " * (32 * n) + "pass\n"
    elif kind == "lambdas":
        text = "f = " + "lambda: " * (40 * n) + "1\n"
    elif kind == "comprehension":
        text = "x = [" + " ".join(f"for a{i} in range(2)" for i in range(10 * n)).join(["a0 ", ""]) + "]\n"
    else:
        text = "x = (" + " ".join(['"s"'] * (1000 * n)) + ")\n"
    return Input(f"deep-{index}:{kind}x{n}", text.encode())


def huge(kind: str, scale: float = 1.0) -> Input:
    """A file large in one way: `lines` (20,000 layer lines), `one-line` (a 1 MB line),
    `repeated` (a GAN file 40 times: classes defined again and again); `scale` sizes it."""
    if kind == "lines":
        text = "import torch.nn as nn\n" + "".join(
            f"v{i} = nn.Conv2d({i}, {i}, 3)\n" for i in range(int(20_000 * scale)))
    elif kind == "one-line":
        text = "x = [" + ", ".join(str(i) for i in range(int(150_000 * scale))) + "]\n"
    else:
        text = examples()[0] * max(1, int(40 * scale))
    return Input(f"huge:{kind}x{scale}", text.encode())


HUGE = ("lines", "one-line", "repeated")


def programs(n: int) -> list[Input]:
    """`n` programs from hypothesmith's grammar strategy (valid Python, odd layout), the
    same on every call: generated only, never shrunk (nothing fails inside)."""
    import warnings

    import hypothesmith
    from hypothesis import HealthCheck, Phase, given, settings

    out: list[str] = []

    @settings(max_examples=n, database=None, deadline=None, derandomize=True,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(hypothesmith.from_grammar())
    def collect(program: str) -> None:
        out.append(program)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        collect()
    return [Input(f"program-{i}", p.encode("utf-8", "surrogatepass")) for i, p in enumerate(out)]


def generated(n: int, seed: int = 0) -> list[Input]:
    """`n` mutants and deep inputs (about 5 to 1), the same for a seed."""
    rng = random.Random(seed)
    sources = examples()
    return [mutant(rng, sources, i) if rng.random() < 0.83 else deep(rng, i) for i in range(n)]


# ---------------------------------------------------------------------------- the property

def _snlint(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "snlint", ".", "--no-graph", "--no-cache",
                           "--select", "ALL", *args], cwd=folder, env=env,
                          capture_output=True, timeout=1800)


def _ended_badly(run: subprocess.CompletedProcess) -> str | None:
    err = run.stderr.decode("utf-8", "replace")
    if run.returncode not in (0, 1):
        return f"exit {run.returncode}: {err.strip()[-500:]}"
    if "Traceback (most recent call last)" in err or "internal error" in err:
        return f"stderr: {err.strip()[-500:]}"
    return None


def _rows(stdout: bytes, fmt: str) -> list[dict]:
    if fmt == "json":
        return json.loads(stdout)
    rows = []
    for line in stdout.decode("utf-8").splitlines():  # path:line:col: CODE message
        head, sep, rest = line.partition(": ")
        if sep and rest[:2] == "SN":
            # The text shows the first file's odd byte as U+FFFD: back to its name.
            path = head.rsplit(":", 2)[0].replace("\ufffd", os.fsdecode(b"\xff"))
            rows.append({"path": path, "code": rest.split()[0], "message": rest})
    return rows


def check_batch(folder: Path, inputs: list[Input], fmt: str = "json") -> Outcome:
    """Write `inputs` into `folder` (empty) and check the property over them at once.
    `fmt`: the lint's output format, json (which builds every fix) or concise."""
    outcome = Outcome()
    names = {}
    for i, item in enumerate(inputs):
        # The first file's name is not UTF-8: every output must carry it (issue 31 point 9).
        path = folder / (os.fsdecode(b"f0000\xff.py") if i == 0 else f"f{i:04}.py")
        path.write_bytes(item.data)
        names[path.name] = item
    (folder / "pyproject.toml").write_text("[project]\nname = 'fuzz'\n")
    before = {name: (folder / name).read_bytes() for name in names}
    compiling = {name for name, data in before.items() if compiles(data)}
    outcome.compiled = len(compiling)

    lint = _snlint(folder, "--output-format", fmt)
    bad = _ended_badly(lint)
    rows = []
    if bad is None:
        try:
            rows = _rows(lint.stdout, fmt)
        except ValueError as e:
            bad = f"output is not {fmt}: {e}"
    if bad is not None:
        outcome.crashes += 1
        outcome.failures.append(f"lint: {bad}")
        return outcome
    syntax_errors = set()
    for row in rows:
        name = os.path.basename(row["path"])
        if row["code"] == "SN901":
            syntax_errors.add(name)
        if row["code"] == "SN999" and name in compiling:
            outcome.sn999 += 1
            outcome.failures.append(f"SN999 on {names[name].name} ({name}): {row['message']}")

    fix = _snlint(folder, "--fix", "--unsafe-fixes", "--exit-zero")
    bad = _ended_badly(fix)
    if bad is not None:
        outcome.crashes += 1
        outcome.failures.append(f"--fix: {bad}")
    for name, data in before.items():
        after = (folder / name).read_bytes()
        if name in syntax_errors and after != data:
            outcome.broken_by_fix += 1
            outcome.failures.append(f"--fix changed {names[name].name} ({name}), which has SN901")
        elif name in compiling and after != data and not compiles(after):
            outcome.broken_by_fix += 1
            outcome.failures.append(f"--fix broke {names[name].name} ({name}): it no longer compiles")
    left = [n for n in os.listdir(folder) if n.endswith(".snlint")]
    if left:
        outcome.failures.append(f"--fix left temporary files: {left}")
    return outcome
