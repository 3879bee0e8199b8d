"""The CI recipes of docs/ci.md: the GitHub Actions workflow (docs/ci/github-actions.yml)
parsed, its structure checked, and each `run:` step that calls snlint run as written on a
small project (the install step replaced by this checkout); the pre-commit config shown
names the real hooks and the current version's tag."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import snlint

yaml = pytest.importorskip("yaml", reason="in the dev extra: pip install -e .[dev]")

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / "docs" / "ci" / "github-actions.yml"
SCHEMA = REPO / "tests" / "data" / "sarif-schema-2.1.0.json"
TAG = f"v{snlint.__version__}"


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def steps(job: str) -> list[dict]:
    return workflow()["jobs"][job]["steps"]


def snlint_step(job: str) -> str:
    [command] = [s["run"] for s in steps(job) if s.get("run", "").startswith("snlint ")]
    return command


def run_step(command: str, project: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    """`command` as a runner's bash runs it (`bash -e {0}`), `snlint` being this checkout."""
    shim = tmp_path / "bin"
    shim.mkdir(exist_ok=True)
    (shim / "snlint").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m snlint "$@"\n')
    (shim / "snlint").chmod(0o755)
    env = {"PATH": f"{shim}:/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(tmp_path),
           "NO_COLOR": "1"}
    return subprocess.run(["bash", "--noprofile", "--norc", "-e", "-c", command], cwd=project,
                          env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def buggy_project(tmp_path, missing_sn) -> Path:
    project = tmp_path / "gan"
    (project / "models").mkdir(parents=True)
    (project / "models" / "d.py").write_text(missing_sn)
    (project / "pyproject.toml").write_text("[project]\nname = 'gan'\n")
    return project


@pytest.fixture
def clean_project(buggy_project) -> Path:
    d = buggy_project / "models" / "d.py"
    d.write_text(d.read_text().replace("nn.Conv2d(128, 1, 4, 1, 0)",
                                       "spectral_norm(nn.Conv2d(128, 1, 4, 1, 0))"))
    return buggy_project


# the workflow's structure

def test_workflow_runs_on_pull_requests_and_pushes():
    on = workflow()[True]  # YAML 1.1 reads the key `on` as true
    assert set(on) == {"push", "pull_request"}
    assert workflow()["permissions"] == {"contents": "read"}
    assert sorted(workflow()["jobs"]) == ["code-scanning", "lint"]


@pytest.mark.parametrize("job", ["lint", "code-scanning"])
def test_each_job_checks_out_installs_the_tag_and_runs_the_source_pass(job):
    uses = [s["uses"].split("@")[0] for s in steps(job) if "uses" in s]
    assert uses[:2] == ["actions/checkout", "actions/setup-python"]
    [install] = [s["run"] for s in steps(job) if s.get("name") == "Install snlint"]
    assert install == f'python -m pip install "snlint @ git+https://github.com/snlint/snlint@{TAG}"'
    assert "--no-graph" in shlex.split(snlint_step(job))


def test_sarif_upload_reads_the_file_the_snlint_step_writes():
    job = workflow()["jobs"]["code-scanning"]
    assert job["permissions"]["security-events"] == "write"
    written = re.fullmatch(r"snlint .* > (\S+)", snlint_step("code-scanning")).group(1)
    [upload] = [s for s in job["steps"] if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    assert upload["with"]["sarif_file"] == written == "snlint.sarif"
    assert job["steps"][-1] is upload


# the workflow's commands, run

def test_lint_step_fails_with_an_annotation(buggy_project, tmp_path):
    proc = run_step(snlint_step("lint"), buggy_project, tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith(
        "::error title=snlint (SN201),file=models/d.py,line=10,col=21,endLine=10,endColumn=47::")


def test_lint_step_passes_on_a_clean_project(clean_project, tmp_path):
    proc = run_step(snlint_step("lint"), clean_project, tmp_path)
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr


def test_sarif_step_succeeds_and_writes_valid_sarif(buggy_project, tmp_path):
    from jsonschema.validators import validator_for

    proc = run_step(snlint_step("code-scanning"), buggy_project, tmp_path)
    assert proc.returncode == 0, proc.stderr
    log = json.loads((buggy_project / "snlint.sarif").read_text(encoding="utf-8"))
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = validator_for(schema)
    errors = list(validator(schema, format_checker=validator.FORMAT_CHECKER).iter_errors(log))
    assert errors == []
    [result] = log["runs"][0]["results"]
    assert result["ruleId"] == "SN201"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "models/d.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"]["startLine"] == 10


# the pre-commit config shown in docs/ci.md and the README

@pytest.mark.parametrize("page", ["docs/ci.md", "README.md"])
def test_pre_commit_config_shown_names_the_real_hooks_and_tag(page):
    text = (REPO / page).read_text(encoding="utf-8")
    [block] = re.findall(r"```yaml\n(# \.pre-commit-config\.yaml\n.*?)```", text, re.S)
    [repo] = yaml.safe_load(block)["repos"]
    manifest = {h["id"] for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert repo["repo"] == "https://github.com/snlint/snlint"
    assert repo["rev"] == TAG
    assert [h["id"] for h in repo["hooks"]] == ["snlint", "snlint-fix"]
    assert "snlint-graph" in manifest and {h["id"] for h in repo["hooks"]} <= manifest


def test_every_pinned_tag_is_the_current_version():
    """Bumping __version__ is a release: the recipes pin its tag, so they move with it."""
    pins = {}
    for name in ("README.md", "docs/ci.md", "docs/ci/github-actions.yml", ".pre-commit-hooks.yaml"):
        text = (REPO / name).read_text(encoding="utf-8")
        pins[name] = set(re.findall(r"snlint/snlint@(v[\w.]+)|rev: (v[\w.]+)", text))
    assert {name: {a or b for a, b in found} for name, found in pins.items()} == {
        name: {TAG} for name in pins}
