"""The pre-commit hooks in `.pre-commit-hooks.yaml`, driven by the real `pre-commit`.

`pre-commit run HOOK --all-files`, in a temporary git repository holding a GAN file with a
planted mistake and a `.pre-commit-config.yaml` naming a snapshot of this working tree,
builds the hook's environment (pip installs snlint and its dependencies; never torch) and
runs the hook. The oldest pre-commit the manifest accepts runs them by `try-repo`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from snlint.cli import main

REPO = Path(__file__).resolve().parents[1]
MANIFEST = REPO / ".pre-commit-hooks.yaml"
MINIMUM = "2.9.0"



def hooks() -> dict[str, dict]:
    yaml = pytest.importorskip("yaml")  # pre-commit depends on PyYAML
    return {hook["id"]: hook for hook in yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))}


# the manifest

def test_manifest_declares_the_three_hooks():
    found = hooks()
    assert sorted(found) == ["snlint", "snlint-fix", "snlint-graph"]
    assert found["snlint"]["entry"] == "snlint --no-graph --force-exclude"
    assert found["snlint-fix"]["entry"] == "snlint --no-graph --force-exclude --fix"
    assert found["snlint-graph"]["entry"] == "snlint --force-exclude --graph"
    assert [found[h]["language"] for h in sorted(found)] == ["python", "python", "system"]
    assert found["snlint"]["types_or"] == found["snlint-fix"]["types_or"] == ["python", "jupyter"]
    assert found["snlint-graph"]["require_serial"] is True


def test_every_hook_asks_for_the_version_that_reads_types_or():
    """pre-commit validates the whole manifest whichever hooks a config names, so the
    hooks share one minimum: 2.9.0 introduced `types_or`; `system` (which 4.4 renamed
    `unsupported`, still reading the old name) is older still."""
    assert {hook["minimum_pre_commit_version"] for hook in hooks().values()} == {MINIMUM}


def test_hook_environment_does_not_install_torch():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not [d for d in project["dependencies"] if d.lower().startswith("torch")]
    assert not any(hook.get("additional_dependencies") for hook in hooks().values())


def test_no_file_left_after_exclusion_exits_0_silently(tmp_path, monkeypatch, missing_sn):
    (tmp_path / "pyproject.toml").write_text('[tool.snlint]\nexclude = ["gen/"]\n')
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "d.py").write_text(missing_sn)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["--no-graph", "--force-exclude", "gen/d.py"])
    assert (result.exit_code, result.output) == (0, "")


# the real pre-commit

def pre_commit_available() -> None:
    pytest.importorskip("pre_commit", reason="pre-commit is in the dev extra: pip install -e .[dev]")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    if not (REPO / ".git").exists():
        pytest.skip(f"{REPO} is not a git checkout; the snapshot needs one")


@pytest.fixture
def gan_repo(tmp_path, missing_sn):
    """A git repository with a buggy discriminator, tracked (pre-commit runs tracked files)."""
    repo = tmp_path / "gan"
    (repo / "models").mkdir(parents=True)
    (repo / "models" / "d.py").write_text(missing_sn)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    return repo


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def snapshot(tmp_path: Path) -> Path:
    """This checkout's working tree as a one-commit git repository: what the rest of the
    suite tests. (Naming the checkout itself would take its HEAD, or with try-repo HEAD plus
    tracked changes only, so a new untracked module that a tracked file already imports
    would break the hook for reasons that are not the hook's.)"""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, check=True, capture_output=True).stdout.decode()
    copy = tmp_path / "snlint-checkout"
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    git(copy, "init", "-q")
    git(copy, "add", "-A")
    git(copy, "-c", "user.name=snlint tests", "-c", "user.email=tests@snlint.invalid",
        "commit", "-q", "-m", "snapshot")
    return copy


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """One snapshot of this checkout for the module's hook runs."""
    pre_commit_available()
    return snapshot(tmp_path_factory.mktemp("checkout"))


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    """The store of this module's runs of the current pre-commit: the hook environment
    (snlint and its dependencies, pip installed) is built by the first run and kept, as
    in a user's store, instead of once per test. (`try-repo` would build it in a store of
    its own every time.)"""
    return tmp_path_factory.mktemp("pre-commit-home")


def hook_env(home: Path, env: dict | None = None) -> dict:
    return dict(env or os.environ, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never", NO_COLOR="1")


def run_hook(repo: Path, hook: str, checkout: Path, home: Path, *,
             env: dict | None = None) -> subprocess.CompletedProcess:
    """`pre-commit run HOOK --all-files` in `repo`, its config naming `checkout` at its
    commit, as a user's config names snlint at a tag."""
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=checkout, check=True,
                         capture_output=True, text=True).stdout.strip()
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {checkout}\n  rev: {rev}\n  hooks:\n  - id: {hook}\n", encoding="utf-8")
    git(repo, "add", ".pre-commit-config.yaml")
    # pre-commit creates the hook's virtualenv with the Python it runs under.
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", hook, "--all-files", "--color", "never"],
        cwd=repo, env=hook_env(home, env), capture_output=True, text=True, timeout=300)


def try_repo(repo: Path, hook: str, checkout: Path, home: Path, *, pre_commit: list[str],
             env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*pre_commit, "try-repo", str(checkout), hook, "--all-files", "--color", "never"],
        cwd=repo, env=hook_env(home, env), capture_output=True, text=True, timeout=300)


def this_snlint_on_path() -> dict:
    """The environment a `language: system` hook finds: this interpreter's bin/ first (its
    `snlint` script), importing this checkout."""
    if not (Path(sys.executable).parent / "snlint").exists():
        pytest.skip("snlint is not installed next to this Python: pip install -e .")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def test_hook_fails_with_the_finding(gan_repo, checkout, pre_commit_home):
    run = run_hook(gan_repo, "snlint", checkout, pre_commit_home)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "models/d.py:10:21: SN201 " in run.stdout, run.stdout + run.stderr
    assert "Discriminator.head has no spectral norm" in run.stdout


def test_fix_hook_repairs_the_file(gan_repo, checkout, pre_commit_home, missing_sn):
    # Wrapping the layer changes its state_dict keys, so SN201's fix is unsafe: this
    # project says its checkpoints may change, and the hook (plain --fix) writes it.
    (gan_repo / "pyproject.toml").write_text('[tool.snlint]\nextend-safe-fixes = ["SN201"]\n')
    git(gan_repo, "add", ".")
    run = run_hook(gan_repo, "snlint-fix", checkout, pre_commit_home)
    # pre-commit fails a hook that modified files, so the user reviews the fix.
    assert run.returncode == 1, run.stdout + run.stderr
    fixed = (gan_repo / "models" / "d.py").read_text()
    assert "self.head = spectral_norm(nn.Conv2d(128, 1, 4, 1, 0))" in fixed
    assert fixed == missing_sn.replace("nn.Conv2d(128, 1, 4, 1, 0)",
                                  "spectral_norm(nn.Conv2d(128, 1, 4, 1, 0))")


def test_graph_hook_runs_snlint_of_the_environment(gan_repo, checkout, pre_commit_home):
    """`language: system`: the snlint (and torch) on PATH runs, this checkout's here."""
    pytest.importorskip("torch")
    run = run_hook(gan_repo, "snlint-graph", checkout, pre_commit_home, env=this_snlint_on_path())
    assert run.returncode == 1, run.stdout + run.stderr
    assert "models/d.py:10:21: SN201 " in run.stdout, run.stdout + run.stderr
    assert "graph pass: 1 discriminator built" in run.stdout


# the oldest pre-commit the manifest asks for

@pytest.fixture(scope="module")
def oldest_pre_commit(tmp_path_factory) -> list[str]:
    """pre-commit at the manifest's minimum version, in a virtual environment of its own."""
    pre_commit_available()
    venv = tmp_path_factory.mktemp("old-pre-commit") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                          f"pre-commit=={MINIMUM}"], capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    return [str(venv / "bin" / "python"), "-m", "pre_commit"]


def test_oldest_pre_commit_runs_the_source_hook(gan_repo, tmp_path, checkout, oldest_pre_commit):
    # try-repo: the old pre-commit builds the hook's environment in a store of its own.
    run = try_repo(gan_repo, "snlint", checkout, tmp_path / "home", pre_commit=oldest_pre_commit)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "models/d.py:10:21: SN201 " in run.stdout, run.stdout + run.stderr


def test_oldest_pre_commit_runs_the_graph_hook(gan_repo, tmp_path, checkout, oldest_pre_commit):
    pytest.importorskip("torch")
    run = try_repo(gan_repo, "snlint-graph", checkout, tmp_path / "home", pre_commit=oldest_pre_commit,
                   env=this_snlint_on_path())
    assert run.returncode == 1, run.stdout + run.stderr
    assert "models/d.py:10:21: SN201 " in run.stdout, run.stdout + run.stderr
