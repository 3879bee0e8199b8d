"""Editors and adoption: `--stdin-filename` / `-` lint standard input; `--add-noqa` writes
`# noqa: CODE` on reported lines and changes nothing else."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from snlint.cli import main
from snlint.noqa import add_noqa

HEAD = "        self.head = nn.Conv2d(128, 1, 4, 1, 0)"


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return tmp_path


def snlint(*args: str, input: bytes | str | None = None):
    return CliRunner().invoke(main, [*args, "--no-graph"], input=input)


def found(result) -> list[tuple[str, str, int, int]]:
    return [(f["path"], f["code"], f["line"], f["column"]) for f in json.loads(result.stdout)]


# standard input

def test_stdin_filename_lints_stdin_as_that_path(project, missing_sn):
    result = snlint("--stdin-filename", "models/d.py", "--output-format", "json",
                    input=missing_sn)
    assert result.exit_code == 1
    assert found(result) == [("models/d.py", "SN201", 10, 21)]


def test_dash_reads_stdin(project, missing_sn):
    result = snlint("-", "--output-format", "concise", input=missing_sn)
    assert result.exit_code == 1
    assert result.stdout == (
        "-:10:21: SN201 Conv2d Discriminator.head has no spectral norm; Discriminator"
        " normalizes 2 of its 3 conv/linear"
        " sites\nFound 1 finding (1 error).\nNo fixes available (1 with --unsafe-fixes).\n")


def test_stdin_filename_follows_per_file_ignores(project, missing_sn):
    (project / "pyproject.toml").write_text(
        '[tool.snlint.per-file-ignores]\n"models/*" = ["SN201"]\n')
    ignored = snlint("--stdin-filename", "models/d.py", "--output-format", "json",
                     input=missing_sn)
    kept = snlint("--stdin-filename", "other/d.py", "--output-format", "json", input=missing_sn)
    assert (ignored.exit_code, found(ignored)) == (0, [])
    assert found(kept) == [("other/d.py", "SN201", 10, 21)]


def test_stdin_filename_excluded_with_force_exclude_says_nothing(project, missing_sn):
    (project / "pyproject.toml").write_text('[tool.snlint]\nexclude = ["gen/"]\n')
    result = snlint("--stdin-filename", "gen/d.py", "--force-exclude", input=missing_sn)
    assert (result.exit_code, result.stdout) == (0, "")


def test_stdin_is_decoded_by_its_coding_cookie(project, missing_sn):
    text = "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n" + missing_sn
    result = snlint("--stdin-filename", "d.py", "--output-format", "json",
                    input=text.encode("latin-1"))
    assert found(result) == [("d.py", "SN201", 12, 21)]


def test_binary_stdin_is_a_diagnostic(project):
    result = snlint("--stdin-filename", "d.py", "--output-format", "json", input=b"x = 1\0\n")
    assert found(result) == [("d.py", "SN902", 1, 6)]


def test_paths_beside_stdin_are_ignored_with_a_warning(project, missing_sn):
    (project / "d.py").write_text(missing_sn)
    result = snlint("d.py", "--stdin-filename", "s.py", "--output-format", "json",
                    input="x = 1\n")
    assert (result.exit_code, found(result)) == (0, [])
    assert result.stderr == "snlint: warning: ignoring d.py: linting standard input\n"


# --add-noqa on files

def test_add_noqa_writes_the_directive_and_the_finding_goes_away(project, missing_sn):
    (project / "d.py").write_text(missing_sn)
    result = snlint("d.py", "--add-noqa")
    assert result.exit_code == 0
    assert result.stderr == "Added 1 noqa directive.\n"
    assert (project / "d.py").read_text() == missing_sn.replace(HEAD, HEAD + "  # noqa: SN201")
    assert snlint("d.py").exit_code == 0


def test_add_noqa_twice_adds_nothing(project, missing_sn):
    (project / "d.py").write_text(missing_sn)
    snlint("d.py", "--add-noqa")
    again = snlint("d.py", "--add-noqa")
    assert again.stderr == "Added 0 noqa directives.\n"


def test_add_noqa_merges_into_an_existing_directive(project, missing_sn):
    (project / "d.py").write_text(missing_sn.replace(HEAD, HEAD + "  # noqa: E501"))
    snlint("d.py", "--add-noqa")
    assert HEAD + "  # noqa: E501, SN201\n" in (project / "d.py").read_text()


def test_add_noqa_keeps_every_other_byte(project, missing_sn):
    raw = ("\ufeff" + missing_sn.replace("\n", "\r\n").replace(
        "import torch.nn as nn", "import torch.nn as nn  # torch\t")).encode("utf-8")
    (project / "d.py").write_bytes(raw)
    snlint("d.py", "--add-noqa")
    assert (project / "d.py").read_bytes() == raw.replace(
        HEAD.encode() + b"\r\n", HEAD.encode() + b"  # noqa: SN201\r\n")


def test_add_noqa_leaves_diagnostics_alone(project):
    (project / "bad.py").write_text("def f(:\n    pass\n")
    result = snlint("bad.py", "--add-noqa")
    assert result.stderr == "Added 0 noqa directives.\n"
    assert (project / "bad.py").read_text() == "def f(:\n    pass\n"


def test_add_noqa_refuses_stdin(project, missing_sn):
    result = snlint("-", "--add-noqa", input=missing_sn)
    assert result.exit_code == 2


# add_noqa on text

def test_directive_goes_after_another_comment():
    text, n = add_noqa("x = f()  # type: ignore\n", {1: {"SN201"}})
    assert (text, n) == ("x = f()  # type: ignore  # noqa: SN201\n", 1)


def test_codes_of_one_line_share_one_directive():
    assert add_noqa("x = f()\n", {1: {"SN301", "SN101"}}) == ("x = f()  # noqa: SN101, SN301\n", 1)


def test_trailing_spaces_are_kept():
    assert add_noqa("x = f() \n", {1: {"SN201"}}) == ("x = f()  # noqa: SN201\n", 1)


def test_bare_noqa_is_left_as_it_is():
    assert add_noqa("x = f()  # noqa\n", {1: {"SN201"}}) == ("x = f()  # noqa\n", 0)


def test_noqa_colon_without_codes_gets_the_codes():
    assert add_noqa("x = f()  # noqa:\n", {1: {"SN201"}}) == ("x = f()  # noqa: SN201\n", 1)


def test_line_ending_inside_a_multiline_string_is_skipped():
    text = 'x = f(mode="""\nzeros""")\n'
    assert add_noqa(text, {1: {"SN201"}}) == (text, 0)
    assert add_noqa(text, {2: {"SN201"}}) == ('x = f(mode="""\nzeros""")  # noqa: SN201\n', 1)


def test_line_continued_with_a_backslash_is_skipped():
    text = "x = f() + \\\n    g()\n"
    assert add_noqa(text, {1: {"SN201"}}) == (text, 0)


def test_noqa_inside_a_string_is_not_a_directive():
    text = 'x = f("# noqa: E501")\n'
    assert add_noqa(text, {1: {"SN201"}}) == ('x = f("# noqa: E501")  # noqa: SN201\n', 1)


def test_text_that_does_not_tokenize_is_unchanged():
    assert add_noqa("x = (\n", {1: {"SN201"}}) == ("x = (\n", 0)
