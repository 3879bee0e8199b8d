"""The distributions: `python -m build` makes an sdist and a wheel (the wheel built from
the sdist, so the sdist is complete), `twine check` accepts both, and the wheel installed
into a fresh virtual environment runs: --version, --explain (the rule pages ship inside
it) and a lint of a buggy file. build, twine and hatchling are in the dev extra.

The build runs without isolation (hatchling from the dev extra) so the test needs no
network for the build itself; installing the wheel resolves its small dependencies
(libcst, click, pathspec) with pip, never torch.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import snlint

REPO = Path(__file__).resolve().parents[1]
VERSION = snlint.__version__


def run(*args, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def outside_env() -> dict:
    """The environment of a user's shell: no PYTHONPATH pointing at this checkout, so the
    installed wheel is what runs."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, Path]:
    for module in ("build", "twine", "hatchling"):
        pytest.importorskip(module, reason="in the dev extra: pip install -e .[dev]")
    out = tmp_path_factory.mktemp("dist")
    # No --sdist/--wheel: build makes the sdist, then the wheel from the unpacked sdist.
    built = run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, REPO)
    assert built.returncode == 0, built.stdout + built.stderr
    found = {p.name.split(".")[-1]: p for p in out.iterdir()}
    assert sorted(found) == ["gz", "whl"], sorted(out.iterdir())
    return {"sdist": found["gz"], "wheel": found["whl"]}


@pytest.fixture(scope="module")
def installed(dists, tmp_path_factory) -> Path:
    """A fresh virtual environment holding the wheel and its dependencies; its bin/."""
    venv = tmp_path_factory.mktemp("venv") / "venv"
    made = run(sys.executable, "-m", "venv", venv)
    assert made.returncode == 0, made.stderr
    pip = run(venv / "bin" / "python", "-m", "pip", "install", "-q", dists["wheel"],
              env=outside_env())
    assert pip.returncode == 0, pip.stdout + pip.stderr
    return venv / "bin"


# the version comes from one place

def test_version_prints_the_package_version():
    proc = run(sys.executable, "-m", "snlint", "--version")
    assert (proc.returncode, proc.stdout) == (0, f"snlint {VERSION}\n")


def test_pyproject_reads_the_version_from_the_package():
    import tomllib

    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"]
    assert pyproject["project"]["dynamic"] == ["version"]
    assert pyproject["tool"]["hatch"]["version"]["path"] == "snlint/__init__.py"


# the distributions

def test_distributions_carry_the_package_version(dists):
    assert dists["wheel"].name == f"snlint-{VERSION}-py3-none-any.whl"
    assert dists["sdist"].name == f"snlint-{VERSION}.tar.gz"
    with zipfile.ZipFile(dists["wheel"]) as wheel:
        metadata = wheel.read(f"snlint-{VERSION}.dist-info/METADATA").decode()
    assert f"\nVersion: {VERSION}\n" in metadata
    assert "Requires-Dist: torch" in metadata and "extra == 'graph'" in metadata


def test_wheel_carries_the_rule_pages_and_no_bytecode(dists):
    with zipfile.ZipFile(dists["wheel"]) as wheel:
        names = wheel.namelist()
    pages = {Path(n).name for n in names if n.startswith("snlint/rules/")}
    assert pages == {p.name for p in (REPO / "rules").iterdir() if p.is_file()}
    assert [n for n in names if n.endswith(".pyc") or "__pycache__" in n] == []


def test_sdist_carries_the_sources_rules_and_tests(dists):
    with tarfile.open(dists["sdist"]) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    assert {"pyproject.toml", "README.md", "snlint/__init__.py", "rules/SN301.md",
            "tests/conftest.py", "examples/EXPECTED.md"} <= names


def test_twine_accepts_both(dists):
    checked = run(sys.executable, "-m", "twine", "check", "--strict", dists["sdist"], dists["wheel"])
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2


# the installed wheel

def test_installed_wheel_prints_its_version(installed, tmp_path):
    proc = run(installed / "snlint", "--version", cwd=tmp_path, env=outside_env())
    assert (proc.returncode, proc.stdout) == (0, f"snlint {VERSION}\n"), proc.stderr


def test_installed_wheel_explains_from_its_own_rule_pages(installed, tmp_path):
    proc = run(installed / "snlint", "--explain", "SN301", cwd=tmp_path, env=outside_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# SN301 batch-norm-in-discriminator\n")


def test_installed_wheel_lints_without_torch(installed, tmp_path, missing_sn):
    (tmp_path / "d.py").write_text(missing_sn)
    assert run(installed / "python", "-c", "import torch").returncode == 1
    proc = run(installed / "snlint", "--no-graph", "--output-format", "concise", "d.py",
               cwd=tmp_path, env=outside_env())
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.startswith("d.py:10:21: SN201 "), proc.stdout
