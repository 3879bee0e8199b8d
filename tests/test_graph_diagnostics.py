"""The graph pass's notes to the user, from its facts alone (no torch): grouped SN910s, the
summary line, and the progress line on standard error."""

from __future__ import annotations

import io
import json

import pytest
from click.testing import CliRunner

from snlint.cli import main
from snlint.engine import RunResult
from snlint.graph.facts import GraphTarget, Site, TargetFacts
from snlint.graph.diagnostics import graph_summary, import_diagnostics, install_hint
from snlint.report.progress import ProgressLine, progress_text, wants_progress

ROOT = "/repo"


def target(display: str, cls: str = "Discriminator") -> GraphTarget:
    return GraphTarget(f"{ROOT}/{display}", display, cls, None, ROOT)


def import_error(display: str, message: str, site: tuple[str, int] | None = None,
                 cls: str = "Discriminator") -> TargetFacts:
    error_site = Site(f"{ROOT}/{site[0]}", site[1], 1, site[1], 14) if site else None
    return TargetFacts(target(display, cls), status="import_error", message=message,
                       error_site=error_site)


def display_for(path: str) -> str | None:
    return path.removeprefix(ROOT + "/") if path.startswith(ROOT + "/") else None


def notes(failed: list[TargetFacts], **options) -> list[tuple]:
    return [(f.code, f.path, f.line, f.column, f.message)
            for f in import_diagnostics(failed, display_for, **options)]


NO_SKIMAGE = "ModuleNotFoundError: No module named 'skimage'"


# ------------------------------------------------------------------ grouped SN910


def test_one_note_per_missing_package_with_the_modules_it_blocked():
    failed = [import_error(f"models/{name}.py", NO_SKIMAGE, (f"models/{name}.py", 2))
              for name in ("c", "a", "b")]
    assert notes(failed) == [(
        "SN910", "models/a.py", 2, 1,
        "graph pass: 3 modules not imported: No module named 'skimage' "
        "(pip install scikit-image, or --ignore SN910); "
        "blocked: models/a.py, models/b.py, models/c.py")]


def test_the_classes_of_one_file_count_once():
    failed = [import_error("models/d.py", NO_SKIMAGE, ("models/d.py", 4), cls)
              for cls in ("NLayerDiscriminator", "PixelDiscriminator")]
    assert notes(failed) == [(
        "SN910", "models/d.py", 4, 1,
        "graph pass: importing models/d.py failed: No module named 'skimage' "
        "(pip install scikit-image, or --ignore SN910)")]


def test_the_note_sits_at_a_file_that_raised_it_itself():
    failed = [import_error("a.py", NO_SKIMAGE, ("util.py", 1)),
              import_error("b.py", NO_SKIMAGE, ("b.py", 5))]
    assert [n[1:4] for n in notes(failed)] == [("b.py", 5, 1)]


def test_a_package_missing_inside_another_project_file_names_that_file():
    failed = [import_error(f"{name}.py", NO_SKIMAGE, ("util.py", 3)) for name in ("a", "b")]
    assert notes(failed) == [(
        "SN910", "a.py", 1, 1,
        "graph pass: 2 modules not imported: No module named 'skimage' "
        "(at util.py:3; pip install scikit-image, or --ignore SN910); blocked: a.py, b.py")]


def test_a_submodule_of_a_missing_package_groups_by_the_missing_name():
    failed = [import_error("a.py", "ModuleNotFoundError: No module named 'mmcv.ops'"),
              import_error("b.py", "ModuleNotFoundError: No module named 'mmcv.ops'"),
              import_error("c.py", "ModuleNotFoundError: No module named 'mmcv'")]
    assert [n[4] for n in notes(failed)] == [
        "graph pass: 2 modules not imported: No module named 'mmcv.ops' "
        "(pip install mmcv, or --ignore SN910); blocked: a.py, b.py",
        "graph pass: importing c.py failed: No module named 'mmcv' "
        "(pip install mmcv, or --ignore SN910)",
    ]


def test_workers_that_crashed_while_importing_are_one_note_per_exit_code():
    failed = [import_error(f"{name}.py", f"the worker process exited (code -11) while importing "
                           f"{name}.py: I0000 {pid} port.cc:153] oneDNN custom operations are on")
              for name, pid in (("a", 2758), ("b", 2844))]
    assert notes(failed) == [(
        "SN910", "a.py", 1, 1,
        "graph pass: 2 modules not imported: the worker process exited (code -11) while "
        "importing a.py: I0000 2758 port.cc:153] oneDNN custom operations are on; "
        "blocked: a.py, b.py")]


def test_one_error_raised_in_a_shared_module_is_one_note():
    message = "RuntimeError: CUDA is not available"
    failed = [import_error(f"{name}.py", message, ("common/env.py", 7)) for name in "abcdefg"]
    assert notes(failed) == [(
        "SN910", "a.py", 1, 1,
        "graph pass: 7 modules not imported: RuntimeError: CUDA is not available "
        "(at common/env.py:7); blocked: a.py, b.py, c.py, d.py, e.py and 2 more")]


def test_errors_each_file_raises_itself_stay_apart():
    failed = [import_error("a.py", "NameError: name 'x' is not defined", ("a.py", 3)),
              import_error("b.py", "NameError: name 'x' is not defined", ("b.py", 3))]
    assert [n[1:3] for n in notes(failed)] == [("a.py", 3), ("b.py", 3)]


def test_files_where_sn910_is_ignored_leave_the_group():
    failed = [import_error(f"{name}.py", NO_SKIMAGE) for name in ("legacy", "new", "newer")]
    assert notes(failed, enabled=lambda path: path != "legacy.py") == [(
        "SN910", "new.py", 1, 1,
        "graph pass: 2 modules not imported: No module named 'skimage' "
        "(pip install scikit-image, or --ignore SN910); blocked: new.py, newer.py")]


@pytest.mark.parametrize(("name", "hint"), [
    ("skimage", "pip install scikit-image, or --ignore SN910"),
    ("cv2", "pip install opencv-python, or --ignore SN910"),
    ("PIL.Image", "pip install pillow, or --ignore SN910"),
    ("yaml", "pip install pyyaml, or --ignore SN910"),
    ("sklearn.metrics", "pip install scikit-learn, or --ignore SN910"),
    ("einops", "pip install einops, or --ignore SN910"),
    ("tkinter", "--ignore SN910 to silence"),
])
def test_install_hints_use_the_pip_name(name, hint):
    assert install_hint(name) == hint


def test_a_module_the_project_holds_elsewhere_is_not_a_package_to_install():
    def locate(name):
        return {"blocks": "third_party", "models": ""}.get(name)

    assert install_hint("blocks", locate) == (
        "add \"third_party\" to [tool.snlint] graph-paths, or --ignore SN910")
    # A project package already at the root: a submodule is missing, not a package.
    assert install_hint("models.missing", locate) == "--ignore SN910 to silence"


def test_a_module_an_installed_package_lacks_asks_for_another_version_not_an_install():
    def is_installed(top):
        return top == "torchvision"

    name = "torchvision.transforms.functional_tensor"
    assert install_hint(name, is_installed=is_installed) == (
        "torchvision is installed but has no torchvision.transforms.functional_tensor: install "
        "the version of torchvision the project's packages need, or --ignore SN910")
    assert install_hint("torchvision", is_installed=is_installed) == (
        "pip install torchvision, or --ignore SN910")


# ------------------------------------------------------------------ summary


def built(cls: str, traced: bool = True, probed: bool = True, seconds: float = 0.5) -> TargetFacts:
    facts = TargetFacts(target(f"models/{cls.lower()}.py", cls), trace_ok=traced,
                        seconds=seconds)
    facts.probe["ran"] = probed
    facts.probe["input_shape"] = [2, 3, 32, 32] if probed else []
    if not probed:
        facts.probe["reason"] = "forward needs 3 arguments"
    return facts


def test_summary_says_per_class_what_was_built_traced_and_probed():
    hooks = built("B", traced=False, seconds=12.25)
    hooks.recorded_by = "hooks"
    results = [built("A"), hooks, built("C", probed=False), built("D", traced=False)]
    assert graph_summary(results).splitlines() == [
        "graph pass: 4 discriminators built (2 traced, 3 probed)",
        "   0.5 s  models/a.py:A  built, traced, probed at 3x32x32",
        "  12.2 s  models/b.py:B  built, forward recorded, probed at 3x32x32",
        "   0.5 s  models/c.py:C  built, traced, not probed: forward needs 3 arguments",
        "   0.5 s  models/d.py:D  built, not traced (SN913), probed at 3x32x32",
    ]


def test_summary_says_why_a_class_was_not_built_with_its_note():
    results = [
        TargetFacts(target("models/critic.py", "Critic"), status="build_error", seconds=0.1,
                    message="TypeError: Critic.__init__() missing 2 required positional "
                            "arguments: 'ndf' and 'nc'"),
        import_error("models/netd.py", "ImportError: cannot import name 'x'", cls="NetD"),
        TargetFacts(target("models/slow.py", "SlowCritic"), status="timeout", seconds=20.0,
                    message="building models/slow.py exceeded the 20 s limit; the worker "
                            "process was killed"),
        TargetFacts(target("models/bad.py", "BadCritic"), status="build_error", seconds=0.2,
                    message="BadCritic() raised ValueError: bad"),
    ]
    assert graph_summary(results).splitlines() == [
        "graph pass: 0 discriminators built, 4 not built",
        "   0.1 s  models/critic.py:Critic    not built: needs arguments (SN912)",
        "       -  models/netd.py:NetD        not imported: ImportError: cannot import name 'x' (SN910)",
        "  20.0 s  models/slow.py:SlowCritic  timed out in build (SN911)",
        "   0.2 s  models/bad.py:BadCritic    not built: BadCritic() raised ValueError: bad (SN912)",
    ]


def test_summary_lists_each_missing_package_once_with_its_classes():
    results = [import_error(f"exp{i}/d.py", NO_SKIMAGE) for i in range(3)]
    results.append(import_error("gan/critic.py", "ModuleNotFoundError: No module named 'dill'",
                                cls="Critic"))
    lines = graph_summary(results).splitlines()
    assert lines[1] == "  -  exp0/d.py:Discriminator  not imported: no module skimage (SN910)"
    assert lines[-1] == "missing packages: scikit-image (3 classes), dill (1)"


def test_summary_lists_no_module_the_project_holds_as_a_package():
    results = [import_error("gan/d.py", "ModuleNotFoundError: No module named 'blocks.sn'"),
               import_error("gan/e.py", "ModuleNotFoundError: No module named '_tkinter'"),
               import_error("gan/f.py", "ModuleNotFoundError: No module named 'dill'")]
    text = graph_summary(results, locate=lambda name: "third_party" if name == "blocks" else None)
    assert text.splitlines()[-1] == "missing packages: dill (1 class)"


def test_summary_lists_no_installed_package_that_lacks_a_module_as_missing():
    results = [import_error("archs/d.py", "ModuleNotFoundError: No module named "
                            "'torchvision.transforms.functional_tensor'"),
               import_error("gan/f.py", "ModuleNotFoundError: No module named 'dill'")]
    text = graph_summary(results, is_installed=lambda top: top == "torchvision")
    assert text.splitlines()[-1] == "missing packages: dill (1 class)"


def test_summary_lists_fifteen_classes_then_counts_the_rest():
    results = [built(f"Critic{i}") for i in range(18)]
    lines = graph_summary(results).splitlines()
    assert len(lines) == 1 + 15 + 1
    assert lines[-1] == "  and 3 more"


def test_no_summary_without_targets():
    assert graph_summary([]) == ""


# ------------------------------------------------------------------ progress


@pytest.mark.parametrize(("terminal", "elapsed", "shown"), [
    (True, 2.5, True), (True, 1.9, False), (False, 30.0, False)])
def test_progress_only_on_a_terminal_after_two_seconds(terminal, elapsed, shown):
    assert wants_progress(terminal, elapsed) is shown


def test_progress_text_fits_the_terminal():
    assert progress_text(5, 12, target("models/d.py"), 80) == (
        "graph pass: building 5/12 Discriminator (models/d.py)...")
    long = progress_text(5, 12, target("models/" + "x" * 90 + ".py"), 60)
    assert long == "graph pass: building 5/12 Discriminator (models/" + "x" * 9 + "..."


def test_progress_line_is_rewritten_in_place_and_cleared():
    stream, now = io.StringIO(), iter([0.0, 1.0, 2.5, 3.0, 4.0])
    line = ProgressLine(stream, True, clock=lambda: next(now), width=lambda: 80)
    line(1, 3, target("a.py", "A"))       # t=0: the clock starts
    line(2, 3, target("b.py", "BB"))      # t=1: too early
    line(3, 3, target("c.py", "CriticC"))  # t=2.5: shown
    line(3, 3, target("d.py", "D"))       # t=3: shorter text, padded over the old one
    line(3, 3, None)                      # the end: blanked
    first = "graph pass: building 3/3 CriticC (c.py)..."
    second = "graph pass: building 3/3 D (d.py)..."
    assert stream.getvalue() == ("\r" + first + "\r" + second.ljust(len(first))
                                 + "\r" + " " * len(second) + "\r")


def test_a_tick_for_the_same_target_writes_nothing_new():
    stream, now = io.StringIO(), iter([0.0, 2.5, 3.0, 3.5])
    line = ProgressLine(stream, True, clock=lambda: next(now), width=lambda: 80)
    for _ in range(4):
        line(1, 1, target("a.py", "A"))
    assert stream.getvalue() == "\rgraph pass: building 1/1 A (a.py)..."


def test_no_progress_off_a_terminal():
    stream, now = io.StringIO(), iter([0.0, 10.0, 20.0])
    line = ProgressLine(stream, False, clock=lambda: next(now), width=lambda: 80)
    line(1, 2, target("a.py"))
    line(2, 2, target("b.py"))
    line(2, 2, None)
    assert stream.getvalue() == ""


# ------------------------------------------------------------------ the CLI


@pytest.fixture
def graph_ran(tmp_path, monkeypatch):
    """A run whose graph pass built one discriminator and could not import another."""
    from snlint import engine

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "d.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    seen = {}

    def fake_run(paths, config, progress=None, **options):
        seen["progress"] = progress
        return RunResult([], {"d.py": "x = 1\n"}, ["d.py"],
                         [built("Discriminator"), import_error("d.py", NO_SKIMAGE, cls="NetD")])

    monkeypatch.setattr(engine, "run", fake_run)
    return seen


SUMMARY = ("graph pass: 1 discriminator built (1 traced, 1 probed), 1 not built\n"
           "  0.5 s  models/discriminator.py:Discriminator  built, traced, probed at 3x32x32\n"
           "      -  d.py:NetD                              not imported: no module skimage (SN910)\n"
           "missing packages: scikit-image (1 class)\n")


def test_the_summary_goes_to_stderr_and_json_stays_clean(graph_ran):
    result = CliRunner().invoke(main, ["d.py", "--output-format", "json"])
    assert (json.loads(result.stdout), result.stderr) == ([], SUMMARY)


def test_the_summary_follows_the_text_report(graph_ran):
    result = CliRunner().invoke(main, ["d.py"])
    assert (result.stdout, result.stderr) == ("All checks passed!\n", SUMMARY)


def test_quiet_prints_findings_only(graph_ran):
    result = CliRunner().invoke(main, ["d.py", "--quiet"])
    assert (result.stdout, result.stderr, graph_ran["progress"]) == ("", "", None)


def test_progress_is_handed_to_the_run_off_a_terminal_too_and_stays_silent(graph_ran):
    CliRunner().invoke(main, ["d.py"])
    assert isinstance(graph_ran["progress"], ProgressLine)
    assert graph_ran["progress"].is_terminal is False


def test_sn911_says_how_to_raise_the_limit():
    from snlint.findings import Location, Span
    from snlint.graph.diagnostics import target_diagnostics

    facts = TargetFacts(target("models/slow.py", "SlowCritic"), status="timeout",
                        message="building models/slow.py exceeded the 20 s limit; the worker process was killed")
    [sn911] = target_diagnostics(facts, display_for, Location("models/slow.py", Span(3, 1, 3, 10)))
    assert (sn911.code, sn911.line) == ("SN911", 3)
    assert sn911.message == (
        "graph pass: building models/slow.py exceeded the 20 s limit; the worker process was "
        "killed; raise the limit with --graph-timeout SECONDS (graph-timeout in [tool.snlint])")
