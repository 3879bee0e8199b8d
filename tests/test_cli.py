"""The command line, end to end on tiny files with real mistakes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from snlint import cli
from snlint.cli import main

SN_ON_BATCH_NORM = textwrap.dedent("""\
    import torch.nn as nn
    from torch.nn.utils import spectral_norm
    bn = spectral_norm(nn.BatchNorm2d(3))
""")
LEGACY_SN_ON_CONV = textwrap.dedent("""\
    import torch.nn as nn
    from torch.nn.utils import spectral_norm
    conv = spectral_norm(nn.Conv2d(3, 8, 3))
""")
CLEAN = "import torch.nn as nn\nconv = nn.Conv2d(3, 8, 3)\n"
SYNTAX_ERROR = "def f(:\n    pass\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project root (pyproject.toml) as the working directory; returns a file writer."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)

    def write(name: str, text: str) -> str:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return name

    return write


def snlint(*args: str):
    return CliRunner().invoke(main, list(args))


def codes(result) -> list[str]:
    return [obj["code"] for obj in json.loads(result.stdout)]


# findings and exit codes

def test_finding_exits_1(project):
    project("d.py", SN_ON_BATCH_NORM)
    result = snlint("d.py")
    assert result.exit_code == 1
    assert result.stdout.startswith("d.py:3:6: SN101 ")


def test_json_position_of_sn_call(project):
    project("d.py", SN_ON_BATCH_NORM)
    [obj] = json.loads(snlint("d.py", "--output-format", "json").stdout)
    end = len("bn = spectral_norm(nn.BatchNorm2d(3))") + 1
    assert (obj["code"], obj["path"], obj["line"], obj["column"], obj["end_line"],
            obj["end_column"]) == ("SN101", "d.py", 3, 6, 3, end)


def test_summary_after_findings(project):
    project("d.py", SN_ON_BATCH_NORM)
    assert "Found 1 finding (1 error)." in snlint("d.py").stdout.splitlines()


def test_clean_file_exits_0(project):
    project("ok.py", CLEAN)
    result = snlint("ok.py")
    assert (result.exit_code, result.stdout) == (0, "All checks passed!\n")


def test_default_path_is_current_directory(project):
    project("models/d.py", SN_ON_BATCH_NORM)
    result = snlint("--output-format", "json")
    assert result.exit_code == 1
    assert [obj["path"] for obj in json.loads(result.stdout)] == ["models/d.py"]


def test_exit_zero(project):
    project("d.py", SN_ON_BATCH_NORM)
    result = snlint("d.py", "--exit-zero")
    assert result.exit_code == 0
    assert "SN101" in result.stdout


def test_info_does_not_fail(project):
    project("c.py", LEGACY_SN_ON_CONV)
    result = snlint("c.py", "--extend-select", "SN501", "--output-format", "json")
    assert codes(result) == ["SN501"]
    assert result.exit_code == 0


def test_syntax_error_reported_without_traceback(project):
    project("bad.py", SYNTAX_ERROR)
    result = snlint("bad.py")
    assert result.exit_code == 1
    assert result.stdout.startswith("bad.py:1:")
    assert " SN901 " in result.stdout.splitlines()[0]
    assert "Traceback" not in result.output


def test_syntax_error_in_subprocess_prints_no_traceback(project):
    project("bad.py", SYNTAX_ERROR)
    proc = subprocess.run([sys.executable, "-m", "snlint", "bad.py"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1
    assert "SN901" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_run_from_the_filesystem_root_on_a_folder_elsewhere(tmp_path):
    # It walked `/` for the files the linted ones import, and stat'ed
    # /proc/1/fdinfo/pyvenv.cfg: "internal error: PermissionError".
    (tmp_path / "gan").mkdir()
    (tmp_path / "gan" / "d.py").write_text(SN_ON_BATCH_NORM)
    proc = subprocess.run([sys.executable, "-m", "snlint", "--no-graph", str(tmp_path / "gan")],
                          capture_output=True, text=True, timeout=60, cwd="/")
    assert proc.stderr == ""
    assert proc.returncode == 1
    assert [line.split(" ")[:2] for line in proc.stdout.splitlines()[:-2]] == [
        [f"{tmp_path}/gan/d.py:3:6:", "SN101"]]
    assert not (tmp_path / "gan" / ".snlint_cache").exists()  # SNLINT_CACHE_DIR holds it


def test_missing_path_exits_2(project):
    project("d.py", SN_ON_BATCH_NORM)
    result = snlint("d.py", "nope.py")
    assert result.exit_code == 2
    assert result.stderr == "snlint: path not found: nope.py\n"
    assert result.stdout == ""


def test_unknown_option_exits_2(project):
    assert snlint("--no-such-option").exit_code == 2


def test_bad_output_format_exits_2(project):
    assert snlint("--output-format", "xml").exit_code == 2


def test_engine_crash_is_one_line_exit_2(project, monkeypatch):
    from snlint import engine

    def crash(paths, config, **options):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(engine, "run", crash)
    project("d.py", SN_ON_BATCH_NORM)
    result = snlint("d.py")
    assert result.exit_code == 2
    assert result.stderr == "snlint: internal error: RuntimeError: boom second line\n"
    assert result.stdout == ""


# selection

def test_ignore_code(project):
    project("d.py", SN_ON_BATCH_NORM)
    result = snlint("d.py", "--ignore", "SN101")
    assert (result.exit_code, result.stdout) == (0, "All checks passed!\n")


def test_ignore_prefix(project):
    project("d.py", SN_ON_BATCH_NORM)
    assert snlint("d.py", "--ignore", "SN1").exit_code == 0


def test_select_other_family_drops_finding(project):
    project("d.py", SN_ON_BATCH_NORM)
    result = snlint("d.py", "--select", "SN2", "--output-format", "json")
    assert (result.exit_code, codes(result)) == (0, [])


def test_select_comma_separated_and_repeated(project):
    project("d.py", SN_ON_BATCH_NORM)
    result = snlint("d.py", "--select", "SN2,SN101", "--select", "SN501", "--output-format", "json")
    assert codes(result) == ["SN101", "SN501"]


def test_opt_in_rule_off_by_default(project):
    project("c.py", LEGACY_SN_ON_CONV)
    assert codes(snlint("c.py", "--output-format", "json")) == []


def test_diagnostics_stay_on_whatever_the_selection(project):
    project("bad.py", SYNTAX_ERROR)
    assert codes(snlint("bad.py", "--select", "SN2", "--output-format", "json")) == ["SN901"]


def test_ignore_silences_diagnostics(project):
    project("bad.py", SYNTAX_ERROR)
    assert snlint("bad.py", "--ignore", "SN9").exit_code == 0


def test_options_reach_the_configuration(project, monkeypatch):
    from snlint import engine

    seen = []
    real_run = engine.run
    monkeypatch.setattr(engine, "run", lambda paths, config, **options: seen.append(config)
                        or real_run(paths, config, **options))
    project("ok.py", CLEAN)
    snlint("ok.py", "--select", "sn1, SN2", "--extend-select", "SN501", "--ignore", "SN105",
           "--no-graph", "--graph-timeout", "3", "--force-exclude")
    [config] = seen
    assert (config.select, config.extend_select, config.ignore) == (["SN1", "SN2"], ["SN501"], ["SN105"])
    assert (config.graph, config.graph_timeout, config.force_exclude) == (False, 3.0, True)


def test_configuration_error_exits_2(project):
    project("pyproject.toml", "[tool.snlint]\ngraph-timeout = \"soon\"\n")
    project("ok.py", CLEAN)
    result = snlint("ok.py")
    assert result.exit_code == 2
    assert result.stderr.startswith("snlint: ")
    assert "graph-timeout must be a positive number of seconds" in result.stderr
    assert result.stderr.count("\n") == 1


# formats

def test_default_format_off_a_terminal_is_concise_without_color(project):
    project("d.py", SN_ON_BATCH_NORM)
    result = CliRunner().invoke(main, ["d.py"], color=True)
    assert result.stdout.splitlines()[0].startswith("d.py:3:6: SN101 ")
    assert "\x1b[" not in result.stdout


def test_full_format_shows_source_and_caret(project):
    project("d.py", SN_ON_BATCH_NORM)
    lines = snlint("d.py", "--output-format", "full").stdout.splitlines()
    assert lines[1:5] == [
        "  |",
        "3 | bn = spectral_norm(nn.BatchNorm2d(3))",
        "  |      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ SN101",
        "  |",
    ]
    assert lines[-3:] == ["", "Found 1 finding (1 error).",
                          "No fixes available (1 with --unsafe-fixes)."]  # the BN's keys change


def test_json_has_no_summary(project):
    project("d.py", SN_ON_BATCH_NORM)
    result = snlint("d.py", "--output-format", "json")
    assert codes(result) == ["SN101"]
    assert "Found" not in result.stdout


def test_json_clean_is_empty_array(project):
    project("ok.py", CLEAN)
    result = snlint("ok.py", "--output-format", "json")
    assert (result.exit_code, json.loads(result.stdout)) == (0, [])


def test_json_lines(project):
    project("d.py", SN_ON_BATCH_NORM)
    project("bad.py", SYNTAX_ERROR)
    lines = snlint("bad.py", "d.py", "--output-format", "json-lines").stdout.splitlines()
    assert [json.loads(line)["code"] for line in lines] == ["SN901", "SN101"]


def test_statistics(project):
    project("a.py", SN_ON_BATCH_NORM)
    project("b.py", SN_ON_BATCH_NORM)
    project("bad.py", SYNTAX_ERROR)
    result = snlint(".", "--statistics", "--unsafe-fixes")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "2  SN101  sn-on-normalization [*]",
        "1  SN901  syntax-error",
    ]


def test_color_only_on_a_terminal_and_not_with_no_color(monkeypatch):
    monkeypatch.setattr(cli, "_stdout_is_terminal", lambda: True)
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert cli._use_color() is True
    monkeypatch.setenv("NO_COLOR", "1")
    assert cli._use_color() is False


# rules

def test_version():
    import snlint as package

    result = snlint("--version")
    assert (result.exit_code, result.stdout) == (0, f"snlint {package.__version__}\n")


def test_python_dash_m(project):
    proc = subprocess.run([sys.executable, "-m", "snlint", "--version"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout.startswith("snlint ")


def test_list_rules_table(project):
    from snlint.catalogue import load_catalogue

    result = snlint("--list-rules")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["CODE", "NAME", "SEVERITY", "FIX", "DEFAULT", "SUMMARY"]
    assert [line.split()[0] for line in lines[1:]] == sorted(load_catalogue())
    sn901 = next(line for line in lines if line.startswith("SN901"))
    assert sn901.split()[:5] == ["SN901", "syntax-error", "error", "none", "on"]


def test_list_rules_opt_in_off(project):
    lines = snlint("--list-rules").stdout.splitlines()
    sn501 = next(line for line in lines if line.startswith("SN501"))
    assert sn501.split()[:5] == ["SN501", "legacy-spectral-norm", "info", "unsafe", "off"]


def test_list_rules_json(project):
    rows = json.loads(snlint("--list-rules", "--output-format", "json").stdout)
    sn101 = next(row for row in rows if row["code"] == "SN101")
    assert (sn101["name"], sn101["severity"], sn101["default"]) == ("sn-on-normalization", "error", "on")


def test_explain_prints_rule_page(project):
    result = snlint("--explain", "SN101")
    assert result.exit_code == 0
    assert result.stdout.startswith("# SN101 sn-on-normalization\n\nSeverity: error.")
    assert "## Example" in result.stdout


def test_explain_is_case_insensitive(project):
    assert snlint("--explain", "sn901").stdout.startswith("# SN901 syntax-error\n")


def test_explain_unknown_code_exits_2(project):
    result = snlint("--explain", "SN1")
    assert result.exit_code == 2
    assert result.stderr == "snlint: unknown rule code: SN1 (see snlint --list-rules)\n"


def test_own_process_ends_with_its_code_and_all_its_output(project):
    # `python -m snlint` ends without tearing down its heap (os._exit): what it printed
    # must still all arrive through a pipe, and its exit code stand.
    for i in range(40):
        project(f"bad{i}.py", SYNTAX_ERROR)
    proc = subprocess.run([sys.executable, "-m", "snlint", ".", "--no-graph",
                           "--output-format", "json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert sorted(f["path"] for f in json.loads(proc.stdout)) == sorted(
        f"bad{i}.py" for i in range(40))


def test_own_process_under_a_profiler_exits_normally(project, tmp_path):
    # A profiler (or coverage's tracer) writes what it gathered at exit: not skipped.
    project("bad.py", SYNTAX_ERROR)
    out = tmp_path / "run.prof"
    proc = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out), "-m", "snlint", "bad.py",
                           "--no-graph"], capture_output=True, text=True, timeout=60)
    assert "SN901" in proc.stdout
    assert out.stat().st_size > 0
