"""The README says what the code does: its rule table is the one the pages make, it stays
a front page (at most 300 lines), and the modules docs/architecture.md names exist. Regenerate the table after adding a rule:

    python -c "from snlint.catalogue import *; print(markdown_table(load_catalogue()))"
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from snlint.catalogue import load_catalogue, markdown_table

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_rule_table_is_the_one_the_pages_make():
    assert markdown_table(load_catalogue()) in README


def test_the_readme_is_a_front_page():
    assert len(README.splitlines()) <= 300


def test_every_module_how_it_works_names_exists():
    """Full paths exist; a bare `name.py` is a file somewhere in the package. SN601 is the
    section's example of a rule one would add."""
    section = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    paths = set(re.findall(r"`(snlint/[\w/]+(?:\.py)?)`", section)) - {"snlint/checks/sn601.py"}
    bare = set(re.findall(r"`(\w+\.py)`", section))
    files = {p.name for p in (ROOT / "snlint").rglob("*.py")}
    assert paths and bare
    assert sorted(p for p in paths if not (ROOT / p).exists()) == []
    assert sorted(bare - files) == []


def console_examples(text: str) -> list[tuple[str, str]]:
    """(command, output) for each `$ snlint ...` line of the ```console blocks: the output
    is the block's lines up to the next `$ ` line or the block's end."""
    examples = []
    for block in re.findall(r"^```console\n(.*?)^```", text, flags=re.S | re.M):
        command, output = None, []
        for line in block.splitlines():
            if line.startswith("$ "):
                if command is not None:
                    examples.append((command, "\n".join(output)))
                command, output = line[2:], []
            else:
                output.append(line)
        if command is not None:
            examples.append((command, "\n".join(output)))
    return [(c, o) for c, o in examples if c.startswith("snlint ")]


def test_the_console_example_parser_splits_commands_and_outputs():
    text = "```console\n$ snlint a.py\nA\nB\n$ ls\nC\n```\n```python\n$ snlint no\n```\n"
    assert console_examples(text) == [("snlint a.py", "A\nB")]


def test_readme_console_examples_are_the_tools_output():
    """Every `$ snlint` example of the README, run from the repository root (no cache, no
    colour), prints exactly what the README shows."""
    examples = console_examples(README)
    assert examples
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    env.pop("FORCE_COLOR", None)
    for command, shown in examples:
        args = shlex.split(command)[1:]
        result = subprocess.run([sys.executable, "-m", "snlint", "--no-cache", *args], cwd=ROOT,
                                env=env, capture_output=True, text=True, timeout=120)
        assert result.stdout.rstrip("\n") == shown, command


def test_the_readme_test_command_is_what_ci_runs():
    """The README's second command (a fresh environment, the test extras, the suite) ends
    with the line `.ci/run` runs once its own environment is active."""
    [command] = [line for line in README.splitlines() if line.startswith("python -m venv .venv")
                 and "python -m pytest" in line]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip("\n").splitlines()[-1]
    assert ci.startswith("python -m pip install ") and " && python -m pytest" in ci
    assert command == "python -m venv .venv && . .venv/bin/activate && " + ci
