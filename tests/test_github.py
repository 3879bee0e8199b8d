"""`--output-format github`: workflow-command annotations, escaped as Actions escapes them."""

from __future__ import annotations


from click.testing import CliRunner

from snlint.cli import main
from snlint.findings import Finding, Span
from snlint.report import render



def finding(severity: str = "error", message: str = "m", path: str = "d.py",
            cell: int | None = None) -> Finding:
    return Finding("SN201", "missing-sn", severity, message, path, Span(10, 21, 11, 4), cell=cell)


def test_cli_prints_one_annotation_per_finding(tmp_path, monkeypatch, missing_sn):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "d.py").write_text(missing_sn)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["models", "--no-graph", "--output-format", "github"])
    assert result.exit_code == 1
    assert result.stdout == (
        "::error title=snlint (SN201),file=models/d.py,line=10,col=21,endLine=10,endColumn=47"
        "::Conv2d Discriminator.head has no spectral norm; Discriminator"
        " normalizes 2 of its 3 conv/linear sites\n")


def test_clean_run_prints_nothing(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "d.py").write_text("import torch.nn as nn\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["d.py", "--no-graph", "--output-format", "github"])
    assert (result.exit_code, result.stdout) == (0, "")


def test_severity_picks_the_command():
    out = render([finding("error"), finding("warning"), finding("info")], "github", {})
    assert [line.split(" ", 1)[0] for line in out.splitlines()] == [
        "::error", "::warning", "::notice"]


def test_message_escapes_percent_and_line_breaks():
    out = render([finding(message="100% sure:\r\nsee, here")], "github", {})
    assert out.endswith("::100%25 sure:%0D%0Asee, here")


def test_properties_escape_comma_and_colon():
    out = render([finding(path="a,b:c%.py")], "github", {})
    assert ",file=a%2Cb%3Ac%25.py," in out


def test_notebook_finding_names_the_cell_in_the_message():
    out = render([finding(path="nb.ipynb", cell=3)], "github", {})
    assert out == "::error title=snlint (SN201),file=nb.ipynb::cell 3:10:21: m"


def test_notebook_finding_points_at_its_line_of_the_notebook_file():
    out = render([finding(path="nb.ipynb", cell=3).with_(file_span=Span(40, 4, 40, 60))], "github", {})
    assert out == ("::error title=snlint (SN201),file=nb.ipynb,line=40,col=4,endLine=40,"
                   "endColumn=60::cell 3:10:21: m")
