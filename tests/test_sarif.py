"""`--output-format sarif`: valid SARIF 2.1.0, stable fingerprints, rules from the pages."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from snlint.catalogue import load_catalogue
from snlint.cli import main
from snlint.findings import Edit, Finding, Fix, Span
from snlint.report import render
from snlint.report.sarif import replacements

REPO = Path(__file__).resolve().parents[1]
# The OASIS SARIF 2.1.0 schema (errata01), committed with the tests: validation must run
# everywhere, so a missing file is a failure, never a skip.
SCHEMA = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"

def sarif(*args: str) -> dict:
    result = CliRunner().invoke(main, [*args, "--no-graph", "--output-format", "sarif"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def results(log: dict) -> list[dict]:
    return log["runs"][0]["results"]


def fingerprint(result: dict) -> str:
    return result["partialFingerprints"]["snlint/v1"]


def region(result: dict) -> dict:
    return result["locations"][0]["physicalLocation"]["region"]


def uri(result: dict) -> dict:
    return result["locations"][0]["physicalLocation"]["artifactLocation"]


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@functools.cache
def oasis_validator():
    from jsonschema.validators import validator_for

    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = validator_for(schema)  # the schema's $schema names the draft (draft-04)
    validator.check_schema(schema)
    return validator(schema, format_checker=validator.FORMAT_CHECKER)


def validate(log: dict) -> None:
    errors = sorted(oasis_validator().iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


def fixed_finding(text: str, path: str = "d.py") -> Finding:
    """The SN201 of `text` (the missing_sn fixture), with its fix."""
    return Finding("SN201", "missing-sn", "error", "Conv2d has no spectral norm", path,
                   Span(10, 21, 10, 47), symbol="Discriminator.head",
                   fix=Fix("safe", "wrap it with spectral_norm", "",
                           (Edit(path, text.replace(
                               "nn.Conv2d(128, 1, 4, 1, 0)",
                               "spectral_norm(nn.Conv2d(128, 1, 4, 1, 0))")),)))


# the schema

def test_examples_validate_against_the_oasis_schema(monkeypatch):
    monkeypatch.chdir(REPO)
    log = sarif("examples/")
    assert results(log), "examples/ has planted mistakes"
    validate(log)


def test_a_result_with_a_fix_and_a_cell_validates(project, missing_sn):
    (project / "d.py").write_text(missing_sn)
    notebook = Finding("SN201", "missing-sn", "error", "m", "nb.ipynb", Span(2, 5, 2, 9), cell=3)
    validate(json.loads(render([fixed_finding(missing_sn), notebook], "sarif",
                               {"d.py": missing_sn}, root=project)))


# fingerprints

def test_two_runs_give_the_same_fingerprints(monkeypatch):
    monkeypatch.chdir(REPO)
    first, second = sarif("examples/"), sarif("examples/")
    assert [fingerprint(r) for r in results(first)] == [fingerprint(r) for r in results(second)]
    assert len({fingerprint(r) for r in results(first)}) == len(results(first))


def test_inserting_lines_above_a_finding_keeps_its_fingerprint(project, missing_sn):
    (project / "d.py").write_text(missing_sn)
    [before] = results(sarif("d.py"))
    (project / "d.py").write_text("# a comment\n\nimport os\n" + missing_sn)
    [after] = results(sarif("d.py"))
    assert (region(before)["startLine"], region(after)["startLine"]) == (10, 13)
    assert fingerprint(after) == fingerprint(before)


def test_findings_alike_but_for_position_get_different_fingerprints(project):
    a = Finding("SN999", "internal-error", "error", "m", "d.py", Span(1, 1, 1, 2))
    b = Finding("SN999", "internal-error", "error", "m", "d.py", Span(5, 1, 5, 2))
    log = json.loads(render([a, b], "sarif", {"d.py": "x = 1\n" * 5}, root=project))
    assert fingerprint(results(log)[0]) != fingerprint(results(log)[1])


# rules

def test_rules_come_from_the_rule_pages():
    log = json.loads(render([], "sarif", {}))
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    catalogue = load_catalogue()
    assert [r["id"] for r in rules] == sorted(catalogue)
    sn201 = next(r for r in rules if r["id"] == "SN201")
    assert sn201["name"] == "missing-sn"
    assert sn201["shortDescription"]["text"] == catalogue["SN201"].summary
    assert sn201["fullDescription"]["text"] == " ".join(
        catalogue["SN201"].section("What it finds").split())
    assert sn201["help"]["markdown"].startswith("# SN201 missing-sn\n")
    assert sn201["helpUri"].endswith("/rules/SN201.md")
    levels = {r["id"]: r["defaultConfiguration"]["level"] for r in rules}
    assert (levels["SN201"], levels["SN105"], levels["SN501"]) == ("error", "warning", "note")


def test_result_points_at_its_rule_with_level_and_region(project, missing_sn):
    (project / "models").mkdir()
    (project / "models" / "d.py").write_text(missing_sn)
    log = sarif("models/d.py")
    run = log["runs"][0]
    [result] = results(log)
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"] == "SN201"
    assert result["level"] == "error"
    assert region(result) == {"startLine": 10, "startColumn": 21, "endLine": 10, "endColumn": 47}
    assert uri(result) == {"uri": "models/d.py", "uriBaseId": "%SRCROOT%"}
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": project.as_uri() + "/"}}
    assert run["columnKind"] == "unicodeCodePoints"
    assert result["properties"] == {
        "symbol": "Discriminator.head", "pass": "source",
        "discriminator": {"class": "models/d.py:Discriminator", "evidence": "name"},
        "evidence": {"discriminator": "Discriminator: a discriminator by its name", "detail": None}}


def test_uri_is_relative_to_the_project_root_not_the_working_folder(project, monkeypatch,
                                                                     missing_sn):
    (project / "models").mkdir()
    (project / "models" / "d.py").write_text(missing_sn)
    monkeypatch.chdir(project / "models")
    [result] = results(sarif("d.py"))
    assert uri(result) == {"uri": "models/d.py", "uriBaseId": "%SRCROOT%"}


def test_columns_count_code_points(project, missing_sn):
    (project / "d.py").write_text(missing_sn.replace("self.head =", "self.héad =")
                                  .replace("self.head(", "self.héad("))
    [result] = results(sarif("d.py"))
    assert (region(result)["startColumn"], region(result)["endColumn"]) == (21, 47)


def test_notebook_cell_goes_in_properties(project):
    finding = Finding("SN201", "missing-sn", "error", "m", "nb.ipynb", Span(2, 5, 2, 9), cell=3)
    [result] = results(json.loads(render([finding], "sarif", {}, root=project)))
    assert (result["properties"]["cell"], result["properties"]["cellLine"],
            result["properties"]["cellColumn"]) == (3, 2, 5)
    # Line 2 of the cell is not line 2 of the .ipynb file: without the file's place, no region.
    assert "region" not in result["locations"][0]["physicalLocation"]


NOTEBOOK_CELLS = [
    {"cell_type": "markdown", "metadata": {}, "source": ["# A DCGAN\n"]},
    {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
     "source": ["import torch.nn as nn\n", "from torch.nn.utils import spectral_norm\n"]},
    {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
     "source": ["class Discriminator(nn.Module):\n",
                "    def __init__(self):\n",
                "        super().__init__()\n",
                "        self.c1 = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))\n",
                "        self.c2 = spectral_norm(nn.Conv2d(64, 128, 4, 2, 1))\n",
                "        self.bn = spectral_norm(nn.BatchNorm2d(128))\n",
                "\n",
                "    def forward(self, x):\n",
                "        return self.bn(self.c2(self.c1(x)))\n"]},
]


@pytest.fixture
def notebook(project):
    # As Jupyter writes it: indent 1, one source line per JSON line.
    text = json.dumps({"cells": NOTEBOOK_CELLS, "metadata": {}, "nbformat": 4,
                       "nbformat_minor": 5}, indent=1) + "\n"
    (project / "gan.ipynb").write_text(text, encoding="utf-8")
    return text


def test_notebook_region_is_the_source_lines_json_string(notebook):
    [result] = [r for r in results(sarif("gan.ipynb")) if r["ruleId"] == "SN101"]
    assert (result["properties"]["cell"], result["properties"]["cellLine"]) == (3, 6)
    lines = notebook.splitlines()
    line = region(result)["startLine"]
    literal = json.dumps("        self.bn = spectral_norm(nn.BatchNorm2d(128))\n")
    assert lines[line - 1].strip().rstrip(",") == literal
    assert region(result) == {"startLine": line, "startColumn": lines[line - 1].index(literal) + 1,
                              "endLine": line,
                              "endColumn": lines[line - 1].index(literal) + len(literal) + 1}
    validate(sarif("gan.ipynb"))


def test_github_annotation_of_a_notebook_points_at_the_same_line(notebook):
    [sarif_result] = [r for r in results(sarif("gan.ipynb")) if r["ruleId"] == "SN101"]
    out = CliRunner().invoke(main, ["gan.ipynb", "--no-graph", "--output-format", "github"]).stdout
    [annotation] = [a for a in out.splitlines() if "(SN101)" in a]
    where = region(sarif_result)
    assert (f"file=gan.ipynb,line={where['startLine']},col={where['startColumn']},"
            f"endLine={where['endLine']},endColumn={where['endColumn']}::cell 3:6:") in annotation


def test_notebook_cell_fix_is_not_given_as_file_regions(project, missing_sn):
    finding = fixed_finding(missing_sn, "nb.ipynb").with_(cell=3)
    [result] = results(json.loads(render([finding], "sarif", {"nb.ipynb": missing_sn},
                                         root=project)))
    assert "fixes" not in result


# fixes

def test_fix_becomes_the_smallest_replacement(project, missing_sn):
    log = json.loads(render([fixed_finding(missing_sn)], "sarif", {"d.py": missing_sn},
                            root=project))
    [fix] = results(log)[0]["fixes"]
    assert fix["description"]["text"] == "wrap it with spectral_norm (safe)"
    [change] = fix["artifactChanges"]
    assert change["artifactLocation"] == {"uri": "d.py", "uriBaseId": "%SRCROOT%"}
    # The changed line, trimmed to what differs: its common prefix and suffix stay.
    assert change["replacements"] == [
        {"deletedRegion": {"startLine": 10, "startColumn": 21, "endLine": 10, "endColumn": 46},
         "insertedContent": {"text": "spectral_norm(nn.Conv2d(128, 1, 4, 1, 0)"}},
    ]


def test_fix_with_an_added_import_and_a_changed_line_gives_two_replacements():
    old = "import torch.nn as nn\n\n\nx = nn.Conv2d(1, 1, 1)\n"
    new = ("import torch.nn as nn\nfrom torch.nn.utils.parametrizations import spectral_norm\n"
           "\n\nx = spectral_norm(nn.Conv2d(1, 1, 1))\n")
    found = replacements(old, new)
    assert [r["deletedRegion"]["startLine"] for r in found] == [2, 4]
    assert apply(old, found) == new


def test_fix_without_a_change_has_no_fixes_entry(project, missing_sn):
    finding = fixed_finding(missing_sn).with_(
        fix=Fix("safe", "nothing", "", (Edit("d.py", missing_sn),)))
    [result] = results(json.loads(render([finding], "sarif", {"d.py": missing_sn}, root=project)))
    assert "fixes" not in result


def apply(old: str, found: list[dict]) -> str:
    """Apply SARIF replacements (regions in `old`, in order) to `old`."""
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", old)]

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1 if line <= len(starts) else len(old)

    out, at = [], 0
    for r in found:
        region = r["deletedRegion"]
        start = offset(region["startLine"], region["startColumn"])
        end = offset(region["endLine"], region["endColumn"])
        assert at <= start <= end
        out.append(old[at:start] + r["insertedContent"]["text"])
        at = end
    return "".join(out) + old[at:]


LINE = st.text(alphabet="ab \r\n", max_size=12)


@given(st.lists(LINE, max_size=6), st.lists(LINE, max_size=6))
def test_replacements_turn_the_old_text_into_the_new(old_parts, new_parts):
    old, new = "".join(old_parts), "".join(new_parts)
    assert apply(old, replacements(old, new)) == new
