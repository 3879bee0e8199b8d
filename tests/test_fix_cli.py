"""--fix, --unsafe-fixes, --diff and --show-fixes end to end, and the examples folder
fixed to a fixed point."""

from __future__ import annotations

import json
import py_compile
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from snlint.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

BUGGY = textwrap.dedent("""\
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = spectral_norm(nn.Conv2d(3, 8, 3))
            self.n = nn.BatchNorm2d(8)
            self.act = spectral_norm(nn.LeakyReLU(0.2))

        def forward(self, x):
            return self.n(self.a(x))
""")


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)

    def write(name: str, text: str, newline: str = "\n", encoding: str = "utf-8") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.replace("\n", newline).encode(encoding))
        return path

    return write


def snlint(*args: str):
    return CliRunner().invoke(main, ["--no-graph", *args])


# --diff --------------------------------------------------------------------------------

def test_diff_prints_only_the_diff_and_exits_1(project):
    path = project("models/d.py", BUGGY)
    result = snlint("--diff", ".")
    assert result.exit_code == 1
    assert result.stdout.startswith("--- a/models/d.py\n+++ b/models/d.py\n@@ ")
    assert "+        self.act = nn.LeakyReLU(0.2)\n" in result.stdout
    assert "GroupNorm" not in result.stdout  # unsafe, not enabled
    assert "Would fix 1 finding (1 more with --unsafe-fixes)." in result.stderr
    assert path.read_text() == BUGGY


def test_diff_with_nothing_to_fix_exits_0_and_prints_nothing(project):
    project("d.py", "import torch.nn as nn\nconv = nn.Conv2d(3, 8, 3)\n")
    result = snlint("--diff", "d.py")
    assert (result.exit_code, result.stdout) == (0, "")


def test_diff_exit_zero(project):
    project("d.py", BUGGY)
    assert snlint("--diff", "--exit-zero", "d.py").exit_code == 0


def _apply_checks(tmp_path: Path, patch: bytes) -> None:
    (tmp_path / "fix.patch").write_bytes(patch)
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", "."], cwd=tmp_path, check=True)
        done = subprocess.run(["git", "apply", "--check", "fix.patch"], cwd=tmp_path,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    if shutil.which("patch"):
        done = subprocess.run(["patch", "--dry-run", "-p1", "-i", "fix.patch"], cwd=tmp_path,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    if not shutil.which("git") and not shutil.which("patch"):
        pytest.skip("neither git nor patch installed")


@pytest.mark.parametrize("newline, encoding, prefix", [
    ("\n", "utf-8", ""),
    ("\r\n", "utf-8", ""),
    ("\n", "latin-1", "# -*- coding: latin-1 -*-\n"),
])
def test_diff_applies_with_git_apply_and_patch(project, tmp_path, newline, encoding, prefix):
    text = prefix + BUGGY.replace("        self.n =", "        # für die Statistik (é)\n        self.n =")
    project("pkg/d.py", text, newline=newline, encoding=encoding)
    project("pkg/e.py", BUGGY.rstrip("\n"), newline=newline, encoding=encoding)  # no final newline
    result = CliRunner().invoke(main, ["--no-graph", "--diff", "--unsafe-fixes", "pkg"])
    assert result.exit_code == 1
    patch = result.stdout_bytes
    assert patch.count(b"--- a/pkg/") == 2
    assert "für".encode(encoding) in patch
    assert b"\\ No newline at end of file\n" in patch
    _apply_checks(tmp_path, patch)


def test_diff_of_a_bom_file_applies(project, tmp_path):
    path = project("d.py", BUGGY.replace("import torch.nn as nn\n", "import torch.nn as nn\nimport functools\n"))
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    result = CliRunner().invoke(main, ["--no-graph", "--diff", "--select", "SN102", "d.py"])
    assert result.exit_code == 1
    _apply_checks(tmp_path, result.stdout_bytes)


# --fix ---------------------------------------------------------------------------------

def test_fix_writes_safe_fixes_and_reports_what_remains(project):
    path = project("d.py", BUGGY)
    result = snlint("--fix", "--output-format", "concise", "d.py")
    assert path.read_text() == BUGGY.replace("spectral_norm(nn.LeakyReLU(0.2))", "nn.LeakyReLU(0.2)")
    assert result.exit_code == 1
    assert "Fixed 1 finding in 1 file." in result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("d.py:9:18: SN301 ")  # no [*]: unsafe, not enabled
    assert lines[-1] == "No fixes available (1 with --unsafe-fixes)."


def test_fix_with_unsafe_fixes_writes_them_too(project):
    path = project("d.py", BUGGY)
    result = snlint("--fix", "--unsafe-fixes", "d.py")
    assert result.exit_code == 0
    assert "        self.n = nn.GroupNorm(1, 8)\n" in path.read_text()
    assert result.stdout.strip() == "Found 2 findings (2 fixed, 0 remaining)."
    again = snlint("--fix", "--unsafe-fixes", "d.py")
    assert again.exit_code == 0 and "Fixed" not in again.stderr


def test_fix_leaves_a_file_with_a_syntax_error_alone(project):
    bad = project("bad.py", BUGGY + "def oops(:\n")
    result = snlint("--fix", "--unsafe-fixes", "--output-format", "concise", ".")
    assert bad.read_text() == BUGGY + "def oops(:\n"
    assert "bad.py:14:10: SN901" in result.stdout


# marks and fix display --------------------------------------------------------------------

def test_unsafe_fixes_mark_findings_fixable(project):
    project("d.py", BUGGY)
    plain = snlint("--output-format", "concise", "d.py").stdout
    unsafe = snlint("--unsafe-fixes", "--output-format", "concise", "d.py").stdout
    assert "SN301 [*]" not in plain and "SN301 [*]" in unsafe
    assert "SN102 [*]" in plain
    assert "[*] 2 fixable with --fix" in unsafe


def test_show_fixes_prints_each_fix_under_its_finding(project):
    project("d.py", BUGGY)
    out = snlint("--show-fixes", "--output-format", "concise", "d.py").stdout
    assert "  = fix (safe): Remove spectral norm from LeakyReLU" in out
    assert "      +        self.act = nn.LeakyReLU(0.2)" in out


def test_json_fix_object(project):
    project("d.py", BUGGY)
    rows = json.loads(snlint("--output-format", "json", "d.py").stdout)
    fix = next(r["fix"] for r in rows if r["code"] == "SN102")
    assert set(fix) == {"applicability", "message", "diff"}
    assert fix["applicability"] == "safe"
    assert fix["diff"].startswith("--- a/d.py\n+++ b/d.py\n")
    sn301 = next(r["fix"] for r in rows if r["code"] == "SN301")
    assert sn301["applicability"] == "unsafe" and "GroupNorm(1, 8)" in sn301["diff"]


def test_norm_replacement_from_pyproject(project, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.snlint]\nnorm-replacement = 'instancenorm'\n")
    path = project("d.py", BUGGY)
    snlint("--fix", "--unsafe-fixes", "d.py")
    assert "        self.n = nn.InstanceNorm2d(8, affine=True)\n" in path.read_text()


# the examples ---------------------------------------------------------------------------------

# Findings of the examples that have no mechanical fix, by code.
NO_MECHANICAL_FIX = {"SN302", "SN303"}


def test_fixing_the_examples_leaves_only_findings_without_a_mechanical_fix(tmp_path, monkeypatch):
    copy = tmp_path / "examples"
    shutil.copytree(EXAMPLES, copy)
    monkeypatch.chdir(tmp_path)
    first = snlint("--fix", "--unsafe-fixes", "--output-format", "json", "examples")
    left = json.loads(first.stdout)
    assert all(row["fix"] is None for row in left), left
    assert {row["code"] for row in left} <= NO_MECHANICAL_FIX | {"SN401"}
    for path in sorted(copy.rglob("*.py")):
        py_compile.compile(str(path), doraise=True)
    changed = [p.relative_to(copy).as_posix() for p in sorted(copy.rglob("*.py"))
               if p.read_bytes() != (EXAMPLES / p.relative_to(copy)).read_bytes()]
    assert {"dcgan/buggy.py", "sngan/buggy.py", "helpers_project/blocks.py",
            "helpers_project/discriminator.py"} <= set(changed)
    assert not any("fixed" in name for name in changed)  # the fixed versions stay as they are
    before = {p: p.read_bytes() for p in copy.rglob("*.py")}
    second = snlint("--fix", "--unsafe-fixes", "--output-format", "json", "examples")
    assert {p: p.read_bytes() for p in copy.rglob("*.py")} == before
    assert "Fixed" not in second.stderr
    assert snlint("--diff", "--unsafe-fixes", "examples").stdout == ""


def test_two_fixes_wanting_one_name_plain_and_aliased_are_both_written(project):
    # SN107 writes `spectral_norm(...)`; SN501 re-points the alias `SN` to the same
    # function. Both need an import from one module: that was an internal error.
    path = project("d.py", textwrap.dedent("""\
        import torch.nn as nn
        from torch.nn.utils import spectral_norm as SN, weight_norm


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.attn = nn.MultiheadAttention(64, 4)
                self.attn.out_proj = SN(self.attn.out_proj)
                self.conv = SN(nn.Conv2d(3, 64, 3))
                self.head = weight_norm(nn.Linear(64, 1))

            def forward(self, x):
                return self.head(self.conv(x))
        """))
    result = snlint("--select", "ALL", "--unsafe-fixes", "--fix", "--no-cache", "d.py")
    assert "internal error" not in result.output
    text = path.read_text()
    assert text.splitlines()[1:3] == [
        "from torch.nn.utils import weight_norm",
        "from torch.nn.utils.parametrizations import spectral_norm, spectral_norm as SN"]
    assert "        self.attn.out_proj = spectral_norm(self.attn.out_proj)\n" in text
    compile(text, "d.py", "exec")
