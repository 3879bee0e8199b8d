"""The fix machinery: fixed point, overlapping fixes, broken fixes dropped, atomic writes
that keep mode, encoding and line endings, and files that must not be written."""

from __future__ import annotations

import os
import py_compile
import re
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from snlint.checks.fix_data import MissingSN
from snlint.config import Config
from snlint.engine import lint_sources
from snlint.engine import fixing
from snlint.engine.fixing import fix_paths
from snlint.files import discover
from snlint.fix import attach_fixes
from snlint.files import write_atomic
from snlint.fix import apply as apply_module
from snlint.engine.fixing import fixed_point
from snlint.checks import sn105

BUGGY = textwrap.dedent("""\
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = spectral_norm(nn.Conv2d(3, 8, 3))
            self.n = spectral_norm(nn.BatchNorm2d(8))
            self.up = spectral_norm(nn.ConvTranspose2d(8, 8, 4), dim=0)
            self.head = nn.Linear(8, 1)

        def forward(self, x):
            return self.head(self.n(self.a(x)))
""")
# The fixes that change state_dict keys (SN101, SN105, SN201): unsafe by default.
FIXED_KEYS = BUGGY.replace("spectral_norm(nn.BatchNorm2d(8))", "nn.BatchNorm2d(8)").replace(
    ", dim=0)", ")").replace("self.head = nn.Linear(8, 1)", "self.head = spectral_norm(nn.Linear(8, 1))")
FIXED_ALL = FIXED_KEYS.replace("nn.BatchNorm2d(8)", "nn.GroupNorm(1, 8)")


def config(root: Path = Path("."), **options) -> Config:
    return Config(root=root, graph=False, **options)


def run_fixed_point(text: str, *, unsafe: bool = True, max_rounds: int = 8, **options):
    cfg = config(**options)
    problems: list[str] = []
    result = fixed_point({"d.py": text}, cfg, unsafe=unsafe,
                         report=problems.append, max_rounds=max_rounds)
    return result, problems


def fix_tree(tmp_path: Path, *, unsafe: bool = True, write: bool = True, **options):
    cfg = config(tmp_path, cache=False, **options)
    problems: list[str] = []
    outcome = fix_paths([str(tmp_path)], cfg, discover([str(tmp_path)], cfg), unsafe=unsafe,
                        write=write, report=problems.append)
    return outcome, problems


# fixed point and overlaps -------------------------------------------------------------------

def test_safe_fixes_only_without_unsafe():
    result, problems = run_fixed_point(BUGGY, unsafe=False)
    assert result.texts["d.py"] == BUGGY  # every fix here changes state_dict keys
    assert problems == []


def test_extend_safe_fixes_makes_a_rules_fixes_safe():
    result, problems = run_fixed_point(BUGGY, unsafe=False, extend_safe_fixes=["SN1", "SN201"])
    assert result.texts["d.py"] == FIXED_KEYS
    assert problems == []


def test_overlapping_fixes_wait_for_the_next_round():
    # SN101 (unwrap spectral_norm(...)) and SN301 (the BatchNorm2d inside it) overlap.
    one, problems = run_fixed_point(BUGGY, max_rounds=1)
    assert "        self.n = nn.BatchNorm2d(8)\n" in one.texts["d.py"]
    assert problems == ["snlint: fixes did not settle after 1 round"]
    assert not one.settled
    done, _ = run_fixed_point(BUGGY)
    assert done.texts["d.py"] == FIXED_ALL
    assert done.settled


def test_second_run_changes_nothing():
    done, _ = run_fixed_point(BUGGY)
    again, _ = run_fixed_point(done.texts["d.py"])
    assert again.texts["d.py"] == done.texts["d.py"]
    assert sum(again.fixed.values()) == 0


def test_fix_carries_a_diff_and_the_new_text():
    cfg = config()
    findings = lint_sources({"d.py": BUGGY}, cfg, fixes=True)
    sn105 = next(f for f in findings if f.code == "SN105")
    assert sn105.fix.edits[0].path == "d.py"
    assert sn105.fix.edits[0].new_text == BUGGY.replace(", dim=0)", ")")
    assert sn105.fix.diff.startswith("--- a/d.py\n+++ b/d.py\n@@ ")
    assert "-        self.up = spectral_norm(nn.ConvTranspose2d(8, 8, 4), dim=0)\n" in sn105.fix.diff


_DIM_FIX = sn105.fix


def _broken_dim_fix(finding, payload, parsed):
    """A deliberately broken SN105 fix: replaces the dim argument's call with a keyword."""
    plan = _DIM_FIX(finding, payload, parsed)
    call = next(node for node, _ in plan.changes.values())
    return plan.replace(call, cst.Name("lambda"))


# The interpreter's wording of the SyntaxError varies between Python versions; the rest
# of the line is snlint's own and must match exactly.
DROPPED_SN105 = re.compile(r"snlint: dropped the SN105 fix for d\.py:10:62: its result does not "
                           r"parse \(SyntaxError: [^()]+ \(line 10\)\)")


def test_fix_whose_result_does_not_parse_is_dropped_and_reported(monkeypatch):
    monkeypatch.setattr(sn105, "fix", _broken_dim_fix)
    cfg = config()
    reports: list[str] = []
    plain = lint_sources({"d.py": BUGGY}, cfg)
    # Built from the plain lint's marks, whose payloads the fixes are built from.
    findings = attach_fixes(plain, {"d.py": BUGGY}, cfg, report=reports.append)
    assert next(f for f in findings if f.code == "SN105").fix is None
    assert next(f for f in findings if f.code == "SN101").fix is not None
    assert len(reports) == 1
    assert DROPPED_SN105.fullmatch(reports[0]), reports[0]

    result, problems = run_fixed_point(BUGGY)
    assert result.texts["d.py"] == FIXED_ALL.replace("nn.ConvTranspose2d(8, 8, 4))",
                                                      "nn.ConvTranspose2d(8, 8, 4), dim=0)")
    # Every round plans SN105 again and drops it again.
    assert len(problems) == 3
    assert all(DROPPED_SN105.fullmatch(p) for p in problems), problems


def test_a_file_that_does_not_compile_is_not_fixed():
    """`break` outside a loop parses but does not compile: CPython rejects the file, and
    nothing is written to it."""
    text = BUGGY + "\nbreak\n"
    result, problems = run_fixed_point(text)
    assert result.texts["d.py"] == text
    line = text.count("\n")
    assert problems == [f"snlint: not fixing d.py: CPython does not compile it "
                        f"(SyntaxError: 'break' outside loop (line {line}))"]


def test_a_round_compiles_a_file_once_when_its_result_compiles(monkeypatch):
    """The original is compiled only to judge a result that does not compile."""
    compiled: list[str] = []

    def counted(text, path):
        compiled.append(text)
        return real(text, path)

    real = apply_module.compiles
    monkeypatch.setattr(apply_module, "compiles", counted)
    result, _ = run_fixed_point(BUGGY)
    assert result.texts["d.py"] == FIXED_ALL
    assert BUGGY not in compiled and len(compiled) == len(set(compiled))


def test_a_fix_that_breaks_a_file_that_compiles_is_dropped_even_when_libcst_parses_it(monkeypatch):
    """A result libcst parses but `compile` refuses is dropped when the original compiled."""
    def await_outside_async(finding, payload, parsed):
        plan = _DIM_FIX(finding, payload, parsed)
        call = next(node for node, _ in plan.changes.values())
        return plan.replace(call, call.with_changes(args=[cst.Arg(cst.Await(cst.Name("x")))]))

    monkeypatch.setattr(sn105, "fix", await_outside_async)
    reports: list[str] = []
    cfg = config()
    plain = lint_sources({"d.py": BUGGY}, cfg)
    findings = attach_fixes(plain, {"d.py": BUGGY}, cfg, report=reports.append)
    assert next(f for f in findings if f.code == "SN105").fix is None
    result, problems = run_fixed_point(BUGGY)
    assert "await x" not in result.texts["d.py"]
    assert problems and all("dropped the SN105 fix for d.py:10:62: its result does not parse (SyntaxError:"
                            in p for p in problems), problems


def test_a_planner_that_raises_does_not_end_the_run(monkeypatch, capsys):
    def boom(finding, payload, parsed):
        raise RuntimeError("bug")

    monkeypatch.setattr(sn105, "fix", boom)
    crash = "snlint: internal error in the SN105 fix for d.py:10:62: RuntimeError: bug"
    cfg = config()
    # The engine attaches fixes itself and reports on stderr: the crash must be said there,
    # and the other fixes still attached.
    linted = lint_sources({"d.py": BUGGY}, config(select=["SN1"]), fixes=True)
    assert capsys.readouterr().err == crash + "\n"
    assert [(f.code, f.fix is not None) for f in linted] == [("SN101", True), ("SN105", False)]

    reports: list[str] = []
    plain = lint_sources({"d.py": BUGGY}, config(select=["SN1"]))
    findings = attach_fixes(plain, {"d.py": BUGGY}, cfg, report=reports.append)
    assert [f.code for f in findings if f.fix is not None] == ["SN101"]
    assert reports == [crash]

    # --fix plans again each round; the crash is said in every round that plans SN105,
    # the other fixes are applied.
    result, problems = run_fixed_point(BUGGY)
    assert result.texts["d.py"] == FIXED_ALL.replace("nn.ConvTranspose2d(8, 8, 4))",
                                                      "nn.ConvTranspose2d(8, 8, 4), dim=0)")
    assert problems == ["snlint: internal error planning the SN105 fix for d.py:10:62: "
                        "RuntimeError: bug"] * 3


def test_notebook_cell_findings_get_no_fix():
    cfg = config()
    finding = next(f for f in lint_sources({"d.py": BUGGY}, cfg) if f.code == "SN105")
    out = attach_fixes([finding.with_(fix=None, cell=2)], {"d.py": BUGGY}, cfg)
    assert out[0].fix is None


# files on disk ----------------------------------------------------------------------------

def write(path: Path, text: str, encoding: str = "utf-8", newline: str = "\n") -> Path:
    path.write_bytes(text.replace("\n", newline).encode(encoding))
    return path


def test_fix_writes_and_keeps_the_mode(tmp_path):
    path = write(tmp_path / "d.py", BUGGY)
    os.chmod(path, 0o751)
    outcome, problems = fix_tree(tmp_path)
    assert path.read_text() == FIXED_ALL
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o751)
    assert [f.source.path for f in outcome.written] == [str(tmp_path / "d.py").replace(os.sep, "/")]
    assert problems == []
    assert [p.name for p in tmp_path.iterdir()] == ["d.py"]  # no temporary file left


def test_crlf_file_keeps_crlf_also_in_added_imports(tmp_path):
    code = BUGGY.replace("from torch.nn.utils.parametrizations import spectral_norm\n", "") \
        .replace("spectral_norm(", "nn.utils.parametrizations.spectral_norm(")
    path = write(tmp_path / "d.py", "import functools\n" + code, newline="\r\n")
    fix_tree(tmp_path)
    data = path.read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert b"nn.GroupNorm(1, 8)" in data


def test_latin1_file_with_a_coding_cookie_is_written_in_latin1(tmp_path):
    note = "        # Normalisierung für Bilder (é)\n"
    text = "# -*- coding: latin-1 -*-\n" + BUGGY.replace("        self.n =", note + "        self.n =")
    path = write(tmp_path / "d.py", text, encoding="latin-1")
    outcome, problems = fix_tree(tmp_path)
    data = path.read_bytes()
    assert data.decode("latin-1") == "# -*- coding: latin-1 -*-\n" + FIXED_ALL.replace(
        "        self.n =", note + "        self.n =")
    py_compile.compile(str(path), doraise=True)
    assert "für".encode("latin-1") in outcome.files[0].diff


def test_utf8_bom_is_kept(tmp_path):
    path = tmp_path / "d.py"
    path.write_bytes(b"\xef\xbb\xbf" + BUGGY.encode())
    fix_tree(tmp_path)
    assert path.read_bytes() == b"\xef\xbb\xbf" + FIXED_ALL.encode()


def test_file_with_a_syntax_error_is_never_written(tmp_path):
    bad = write(tmp_path / "bad.py", BUGGY + "def oops(:\n")
    good = write(tmp_path / "good.py", BUGGY)
    before = bad.read_bytes()
    fix_tree(tmp_path)
    assert bad.read_bytes() == before
    assert good.read_text() == FIXED_ALL


def test_file_changed_on_disk_since_read_is_not_written(tmp_path, monkeypatch):
    path = write(tmp_path / "d.py", BUGGY)
    cfg = config(tmp_path, cache=False)
    calls = []

    def lint(sources, *args, **kwargs):
        if not calls:
            path.write_text(BUGGY + "# edited meanwhile\n")
        calls.append(1)
        return lint_sources(sources, *args, **kwargs)

    monkeypatch.setattr(fixing, "lint_sources", lint)
    problems: list[str] = []
    outcome = fix_paths([str(tmp_path)], cfg, discover([str(tmp_path)], cfg), unsafe=True, write=True,
                        report=problems.append)
    assert path.read_text() == BUGGY + "# edited meanwhile\n"
    assert outcome.written == []
    assert any("changed on disk" in p for p in problems)


def test_atomic_write_leaves_the_file_alone_when_the_rename_fails(tmp_path, monkeypatch):
    path = write(tmp_path / "d.py", BUGGY)

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        write_atomic(path, b"x = 1\n")
    assert path.read_text() == BUGGY
    assert [p.name for p in tmp_path.iterdir()] == ["d.py"]


def test_write_through_a_symlink_writes_the_target(tmp_path):
    target = write(tmp_path / "real.py", "x = 1\n")
    link = tmp_path / "link.py"
    link.symlink_to(target)
    write_atomic(link, b"x = 2\n")
    assert link.is_symlink()
    assert target.read_text() == "x = 2\n"


def test_diff_mode_writes_nothing(tmp_path):
    path = write(tmp_path / "d.py", BUGGY)
    outcome, _ = fix_tree(tmp_path, write=False)
    assert path.read_text() == BUGGY
    assert outcome.files and outcome.written == []
    assert outcome.fixes == 4


def test_findings_the_first_rounds_graph_pass_cleared_are_never_fixed_later(monkeypatch):
    """Round one lints with the graph pass (files as on disk), later rounds without it;
    a source finding the graph pass dropped stays unfixed in every round."""
    from dataclasses import replace

    def lint(sources, cfg, *args, **kwargs):  # stands in for a graph pass that clears SN105
        found = lint_sources(sources, replace(cfg, graph=False), *args, **kwargs)
        return [f for f in found if f.code != "SN105"] if cfg.graph else found

    monkeypatch.setattr(fixing, "lint_sources", lint)
    problems: list[str] = []
    result = fixed_point({"d.py": BUGGY}, replace(config(), graph=True), unsafe=True, report=problems.append)
    assert result.texts["d.py"] == FIXED_ALL.replace("nn.ConvTranspose2d(8, 8, 4))",
                                                      "nn.ConvTranspose2d(8, 8, 4), dim=0)")
    assert problems == []


def test_a_fix_that_does_not_remove_its_finding_is_not_applied_again(monkeypatch):
    """Were the check not to see the SN a fix wrote, the layer would be wrapped once per
    round; here a lint that keeps reporting the layer (at its position, with the names a
    lint of the text resolves) stands in for such a check."""
    from snlint.checks.registry import fixers
    from snlint.findings import Finding, Span
    from snlint.fix.planning import mark
    from snlint.source import extract_file

    layer = "nn.Linear(8, 1)"

    def stubborn(sources, *args, **kwargs):
        lines = sources["d.py"].split("\n")
        row = next(i for i, line in enumerate(lines) if layer in line)
        col = lines[row].index(layer) + 1
        names = next(f.names for f in lint_sources(sources, config()) if f.names is not None)
        finding = Finding("SN201", "missing-sn", "error", "no SN", "d.py",
                          Span(row + 1, col, row + 1, col + len(layer)),
                          data=MissingSN("", sn_callee="spectral_norm"), names=names)
        # Marked fixable, as a lint marks it: a round plans only the marked findings, from
        # their marks' payloads.
        facts, _ = extract_file(sources["d.py"], "d.py", "d.py")
        return [finding.with_(fix=mark(finding, facts, config(), fixers()))]

    problems: list[str] = []
    monkeypatch.setattr(fixing, "lint_sources", stubborn)
    result = fixed_point({"d.py": BUGGY}, config(), unsafe=True, report=problems.append)
    assert "        self.head = spectral_norm(nn.Linear(8, 1))\n" in result.texts["d.py"]
    assert problems[0] == ("snlint: the SN201 fix in d.py did not remove its finding "
                           "(nn.Linear(8, 1)); not applied again")


# the parsed file -----------------------------------------------------------------------

SNLINT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("folder", ["examples", "snlint/edit", "snlint/source"])
def test_every_node_key_the_source_pass_records_names_that_node_in_a_parsed_file(folder):
    # A fix finds its node by the key the source pass recorded (facts.node_key) in a file
    # it parses again with libcst: every call, argument, parameter, global name, import
    # alias and alias value the facts keep is found there, of its kind.
    from snlint.edit.parsed import ParsedFile
    from snlint.source import extract

    seen = 0
    for path in sorted((SNLINT / folder).rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        names = extract(text, str(path), path.name).names
        parsed = ParsedFile(str(path), text)
        for span, key in names.sites.items():
            node = parsed.node(key, (cst.Call, cst.Arg, cst.Param))
            assert node is not None, (path, span)
            if isinstance(node, cst.Call):
                assert parsed.range(node) == ((span.line, span.column - 1),
                                              (span.end_line, span.end_column - 1)), (path, span)
        for key in names.quals:
            assert parsed.node(key, (cst.Name, cst.Attribute)) is not None, path
        for key in names.imports.values():
            assert parsed.node(key, cst.ImportAlias) is not None, path
        for key in names.aliases.values():
            assert parsed.node(key, cst.BaseExpression) is not None, path
        seen += len(names.sites) + len(names.quals)
    assert seen > 100
