"""The ruff habits of issue 34: the warning when there is nothing to lint, -q and
--silent, --color, --output-file, --exit-non-zero-on-fix, --fix-only, --show-settings,
--show-files and --config."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from snlint import cli
from snlint.cli import main
from test_fix_cli import BUGGY

NO_FILES = "warning: No Python files found under the given path(s)\n"
SAFE_FIXED = BUGGY.replace("spectral_norm(nn.LeakyReLU(0.2))", "nn.LeakyReLU(0.2)")
CLEAN = "import torch.nn as nn\nconv = nn.Conv2d(3, 8, 3)\n"


@pytest.fixture(autouse=True)
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    for name in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def snlint(*args: str):
    return CliRunner().invoke(main, ["--no-graph", *args])


# nothing to lint

def test_an_empty_folder_warns_on_stderr_and_exits_0(project):
    (project / "empty").mkdir()
    result = snlint("empty")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", NO_FILES)


def test_a_file_that_is_not_python_warns(project):
    (project / "notes.txt").write_text("notes\n")
    result = snlint("notes.txt")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", NO_FILES)


def test_quiet_silences_the_no_files_warning(project):
    (project / "notes.txt").write_text("notes\n")
    result = snlint("-q", "notes.txt")
    assert (result.exit_code, result.output) == (0, "")


# -q, --silent

def test_quiet_silences_fixed_n_findings(project):
    (project / "d.py").write_text(BUGGY)
    loud = snlint("--fix", "--output-format", "concise", "d.py")
    (project / "d.py").write_text(BUGGY)
    quiet = snlint("--fix", "-q", "--output-format", "concise", "d.py")
    assert loud.stderr == "Fixed 1 finding in 1 file.\n"
    assert quiet.stderr == ""
    assert quiet.stdout == loud.stdout.split("Found")[0]


def test_silent_prints_nothing_and_still_exits_1(project):
    (project / "d.py").write_text(BUGGY)
    result = snlint("--silent", "d.py")
    assert (result.exit_code, result.output) == (1, "")


# --color

def test_color_always_and_never(project):
    (project / "d.py").write_text(BUGGY)
    assert "\x1b[" in snlint("--color", "always", "--output-format", "concise", "d.py").stdout
    assert "\x1b[" not in snlint("--color", "never", "--output-format", "concise", "d.py").stdout


def test_force_color_forces_colors_even_with_no_color(monkeypatch):
    monkeypatch.setattr(cli, "_stdout_is_terminal", lambda: False)
    monkeypatch.setenv("NO_COLOR", "1")
    assert cli._use_color() is False
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert cli._use_color() is True
    assert cli._use_color("never") is False


def test_empty_force_color_is_ignored(monkeypatch):
    monkeypatch.setattr(cli, "_stdout_is_terminal", lambda: False)
    monkeypatch.setenv("FORCE_COLOR", "")
    assert cli._use_color() is False


# --output-file

def test_output_file_holds_the_report_and_stdout_nothing(project):
    (project / "d.py").write_text(BUGGY)
    plain = snlint("--output-format", "concise", "d.py")
    result = snlint("--output-format", "concise", "--output-file", "out.txt", "d.py")
    assert (result.exit_code, result.stdout) == (1, "")
    assert (project / "out.txt").read_text() == plain.stdout


def test_output_file_in_a_missing_folder_is_an_error(project):
    (project / "d.py").write_text(CLEAN)
    result = snlint("--output-file", "no/such/out.txt", "d.py")
    assert result.exit_code == 2
    assert result.stderr.startswith("snlint: cannot write no/such/out.txt: ")


def _to_file_and_to_stdout(*args: str) -> tuple[str, str]:
    """(what `args` write to --output-file, what they print without it); checks that
    stdout stays empty and the exit code is the same."""
    plain = snlint(*args)
    result = CliRunner().invoke(main, ["--no-graph", "--output-file", "out.txt", *args])
    assert (result.exit_code, result.stdout) == (plain.exit_code, "")
    return open("out.txt", encoding="utf-8", newline="").read(), plain.stdout


def test_output_file_holds_the_rule_list(project):
    written, printed = _to_file_and_to_stdout("--list-rules", "--output-format", "json")
    assert written == printed
    assert written.startswith('[\n  {\n    "code": "SN101",')


def test_output_file_holds_the_rule_page(project):
    written, printed = _to_file_and_to_stdout("--explain", "SN101", "--color", "never")
    assert written == printed
    assert written.startswith("# SN101 sn-on-normalization\n\nSeverity: error.")


def test_output_file_holds_the_diff(project):
    (project / "d.py").write_text(BUGGY)
    written, printed = _to_file_and_to_stdout("--diff", "d.py")
    assert written == printed
    assert written.startswith("--- a/d.py\n+++ b/d.py\n@@ -7,7 +7,7 @@\n")
    assert "\n+        self.act = nn.LeakyReLU(0.2)\n" in written
    assert (project / "d.py").read_text() == BUGGY


def test_output_file_holds_the_diff_of_standard_input(project):
    args = ["--no-graph", "--diff", "--stdin-filename", "d.py"]
    plain = CliRunner().invoke(main, args, input=BUGGY)
    result = CliRunner().invoke(main, ["--output-file", "out.txt", *args], input=BUGGY)
    assert (result.exit_code, result.stdout) == (plain.exit_code, "")
    assert (project / "out.txt").read_bytes() == plain.stdout_bytes
    assert plain.stdout.startswith("--- a/d.py\n+++ b/d.py\n@@ -7,7 +7,7 @@\n")

def test_output_file_holds_the_settings(project):
    written, printed = _to_file_and_to_stdout("--show-settings", ".")
    assert written == printed
    assert written.startswith(f"Resolved settings for: {project}\n")


def test_output_file_holds_the_files_listed(project):
    (project / "d.py").write_text(CLEAN)
    written, printed = _to_file_and_to_stdout("--show-files", ".")
    assert written == printed == f"{project / 'd.py'}\n"


# --exit-non-zero-on-fix, --fix-only

def test_exit_non_zero_on_fix_when_nothing_remains(project):
    (project / "d.py").write_text(BUGGY)
    result = snlint("--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", "d.py")
    assert result.exit_code == 1
    assert "Found 2 findings (2 fixed, 0 remaining)." in result.stdout
    assert snlint("--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", "d.py").exit_code == 0


def test_fix_only_fixes_reports_nothing_and_exits_0(project):
    (project / "d.py").write_text(BUGGY)
    result = snlint("--fix-only", "d.py")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "Fixed 1 finding in 1 file.\n")
    assert (project / "d.py").read_text() == SAFE_FIXED


def test_fix_only_with_exit_non_zero_on_fix(project):
    (project / "d.py").write_text(BUGGY)
    assert snlint("--fix-only", "--exit-non-zero-on-fix", "d.py").exit_code == 1
    assert snlint("--fix-only", "--exit-non-zero-on-fix", "d.py").exit_code == 0


# --show-files, --show-settings

def test_show_files_lists_the_files_and_exits_0(project):
    (project / "pyproject.toml").write_text('[tool.snlint]\nexclude = ["gen/"]\n')
    for name in ("b.py", "a/c.ipynb", "gen/g.py", "notes.txt"):
        (project / name).parent.mkdir(exist_ok=True)
        (project / name).write_text(CLEAN)
    result = snlint("--show-files", ".")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == f"{project / 'a' / 'c.ipynb'}\n{project / 'b.py'}\n"


def test_show_files_with_nothing_warns(project):
    (project / "empty").mkdir()
    result = snlint("--show-files", "empty")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", NO_FILES)


def test_show_settings_prints_the_resolved_configuration(project):
    (project / "snlint.toml").write_text('ignore = ["SN3"]\ngraph-timeout = 5\n')
    (project / "d.py").write_text(CLEAN)
    result = snlint("--show-settings", "--extend-select", "SN501", "d.py")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[:3] == [f"Resolved settings for: {project / 'd.py'}",
                         f"Settings path: {project / 'snlint.toml'}",
                         f'root = "{project}"']
    assert 'ignore = ["SN3"]' in lines
    assert 'extend-select = ["SN501"]' in lines
    assert "graph-timeout = 5.0" in lines
    enabled = [line for line in lines if line.startswith("enabled = ")]
    assert '"SN501"' in enabled[0] and '"SN301"' not in enabled[0] and '"SN101"' in enabled[0]


# configuration files

def test_snlint_toml_is_read_at_its_top_level(project):
    (project / "snlint.toml").write_text('ignore = ["SN102", "SN301"]\n')
    (project / "d.py").write_text(BUGGY)
    result = snlint("d.py")
    assert (result.exit_code, result.stdout) == (0, "All checks passed!\n")


def test_dot_snlint_toml_wins_over_snlint_toml_and_pyproject(project):
    (project / "pyproject.toml").write_text('[tool.snlint]\nignore = ["SN102", "SN301"]\n')
    (project / "snlint.toml").write_text('ignore = ["SN102", "SN301"]\n')
    (project / ".snlint.toml").write_text('ignore = ["SN301"]\n')
    (project / "d.py").write_text(BUGGY)
    result = snlint("--output-format", "concise", "d.py")
    assert [line.split()[1] for line in result.stdout.splitlines()[:-2]] == ["SN102"]


def test_an_invalid_snlint_toml_is_a_config_error_naming_it(project):
    (project / "snlint.toml").write_text("[tool.snlint]\nignore = [\"SN3\"]\n")
    (project / "d.py").write_text(CLEAN)
    result = snlint("d.py")
    assert result.exit_code == 2
    assert result.stderr == f"snlint: {project / 'snlint.toml'}: unknown key 'tool'\n"


def test_a_bad_value_in_snlint_toml_names_the_key_without_a_table(project):
    (project / "snlint.toml").write_text("graph = 1\n")
    (project / "d.py").write_text(CLEAN)
    result = snlint("d.py")
    assert result.stderr == (f"snlint: {project / 'snlint.toml'}: graph must be true or false, "
                             "got 1\n")


def test_config_option_reads_that_file_instead(project, tmp_path_factory):
    other = tmp_path_factory.mktemp("elsewhere") / "settings.toml"
    other.write_text('ignore = ["SN102", "SN301"]\n')
    (project / "snlint.toml").write_text('select = ["SN1"]\n')
    (project / "d.py").write_text(BUGGY)
    result = snlint("--config", str(other), "d.py")
    assert (result.exit_code, result.stdout) == (0, "All checks passed!\n")


def test_config_option_with_a_missing_file_is_a_usage_error(project):
    (project / "d.py").write_text(CLEAN)
    assert snlint("--config", "nope.toml", "d.py").exit_code == 2


def test_output_file_holds_no_colors_even_when_forced(project, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    (project / "d.py").write_text(BUGGY)
    snlint("--output-format", "concise", "--output-file", "out.txt", "d.py")
    assert "\x1b" not in (project / "out.txt").read_text()
