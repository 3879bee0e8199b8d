"""A plain lint never imports libcst: its rules and their `fixable` predicates read the
source facts, and libcst (the rules' `fix` halves import it inside) only to build a fix."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# An SN105 (safe fix) and an SN201: a plain lint marks both fixable with `[*]`.
GAN = textwrap.dedent("""\
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = spectral_norm(nn.Conv2d(3, 8, 3))
            self.up = spectral_norm(nn.ConvTranspose2d(8, 8, 4), dim=0)
            self.head = nn.Linear(8, 1)

        def forward(self, x):
            return self.head(self.up(self.a(x)))
""")


BATCH_NORM = textwrap.dedent("""\
    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(3, 8, 3)
            self.bn = nn.BatchNorm2d(8)

        def forward(self, x):
            return self.bn(self.c(x))
""")


def snlint(tmp_path, *options: str, text: str = GAN) -> tuple[subprocess.CompletedProcess, set[str]]:
    """A run of `python -X importtime -m snlint models`, and the modules it imported."""
    (tmp_path / "models").mkdir(exist_ok=True)
    (tmp_path / "models" / "d.py").write_text(text)
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "snlint", "models",
                           "--no-graph", "--no-cache", *options],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    return done, imported


def test_a_plain_lint_never_imports_libcst(tmp_path):
    done, imported = snlint(tmp_path, "--unsafe-fixes")  # SN105's fix is unsafe: shown marked
    assert done.returncode == 1, done.stderr
    assert "SN105 [*]" in done.stdout and "snlint.engine.lint" in imported
    assert not [line for line in done.stderr.splitlines() if "libcst" in line]
    assert not {name for name in imported if name.startswith("snlint.edit")}


def test_showing_fixes_imports_libcst_and_builds_them(tmp_path):
    done, imported = snlint(tmp_path, "--show-fixes")
    assert done.returncode == 1, done.stderr
    assert "-        self.up = spectral_norm(nn.ConvTranspose2d(8, 8, 4), dim=0)" in done.stdout
    assert {"libcst", "snlint.edit.plan"} <= imported


def test_fix_with_nothing_it_may_fix_imports_no_libcst(tmp_path):
    # Batch norm in a discriminator: SN301, whose fix is unsafe, so plain --fix has
    # nothing to apply, as on most commits a `snlint-fix` hook sees.
    done, imported = snlint(tmp_path, "--fix", text=BATCH_NORM)
    assert done.returncode == 1, done.stderr
    assert "No fixes available (1 with --unsafe-fixes)." in done.stdout
    assert "snlint.fix.apply" in imported
    assert "libcst" not in imported


def test_a_plain_lint_imports_only_what_its_files_need(tmp_path):
    # No pyproject.toml (no TOML parser), no notebook, no diff, no suppressed config
    # "did you mean", no cache (no OpenSSL hashing, no cache folder pruning).
    done, imported = snlint(tmp_path)
    assert done.returncode == 1, done.stderr
    assert not imported & {"tomllib", "difflib", "snlint.notebook", "_hashlib", "hashlib", "shutil", "traceback"}
