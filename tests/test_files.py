import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from snlint.config import Config
from snlint.files import SourceFile, detect_newline, discover, read_source
from snlint.findings import Finding, Span


def touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n", encoding="utf-8")


def displays(paths, config) -> list[str]:
    return [display for display, _ in discover(paths, config)]


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


# ---------------------------------------------------------------- discover

def test_folder_is_walked_recursively_with_display_paths_under_it(project):
    touch(project, "examples/dcgan.py", "examples/sub/resnet.py")
    assert displays(["examples/"], Config(project)) == ["examples/dcgan.py", "examples/sub/resnet.py"]


def test_folder_given_without_slash_gives_the_same_display_paths(project):
    touch(project, "examples/dcgan.py")
    assert displays(["examples"], Config(project)) == ["examples/dcgan.py"]


def test_dot_gives_paths_without_dot_slash(project):
    touch(project, "x.py")
    assert displays(["."], Config(project)) == ["x.py"]


def test_no_paths_means_the_working_directory(project):
    touch(project, "x.py")
    assert displays([], Config(project)) == ["x.py"]


def test_dot_slash_file_is_normalized(project):
    touch(project, "x.py")
    assert displays(["./x.py"], Config(project)) == ["x.py"]


def test_absolute_path_gives_absolute_display_paths(project):
    touch(project, "m/d.py")
    assert displays([str(project / "m")], Config(project)) == [f"{project}/m/d.py"]


def test_discover_returns_absolute_paths(project):
    touch(project, "m/d.py")
    assert discover(["m"], Config(project)) == [("m/d.py", project / "m" / "d.py")]


def test_walk_takes_py_pyi_and_ipynb_only(project):
    touch(project, "a.py", "b.pyi", "c.ipynb", "d.txt", "e.pyc", "f")
    assert displays(["."], Config(project)) == ["a.py", "b.pyi", "c.ipynb"]


def test_explicit_file_with_other_suffix_is_skipped(project):
    touch(project, "notes.txt")
    assert displays(["notes.txt"], Config(project)) == []


def test_explicit_script_without_suffix_that_runs_python_is_linted(project):
    # pre-commit's `types: [python]` passes `train` when its first line runs Python.
    (project / "train").write_text("#!/usr/bin/env python3\nx = 1\n", encoding="utf-8")
    (project / "run").write_text("#!/bin/bash\npython train\n", encoding="utf-8")
    (project / "Makefile").write_text("all:\n\tpython train\n", encoding="utf-8")
    assert displays(["train", "run", "Makefile"], Config(project)) == ["train"]
    assert displays(["."], Config(project)) == []  # a walk does not look for them (as ruff)


def test_explicit_notebook_is_linted(project):
    touch(project, "train.ipynb")
    assert displays(["train.ipynb"], Config(project)) == ["train.ipynb"]


def test_missing_path_is_kept_so_reading_reports_it(project):
    assert displays(["nope.py"], Config(project)) == ["nope.py"]



def test_a_link_to_nothing_is_not_a_file_of_the_walk(project):
    # eg3d links a script into a git submodule a plain clone does not check out.
    touch(project, "pkg/model.py")
    touch(project, "vendor/layers.py")
    os.symlink("../Deep3DFaceRecon/util/preprocess.py", project / "pkg/preprocess.py")
    os.symlink("../vendor/layers.py", project / "pkg/layers.py")
    assert displays(["pkg"], Config(project)) == ["pkg/layers.py", "pkg/model.py"]


def test_a_link_to_nothing_named_on_the_command_line_is_reported(project):
    os.symlink("missing.py", project / "preprocess.py")
    assert displays(["preprocess.py"], Config(project)) == ["preprocess.py"]
    found = read_source("preprocess.py", project / "preprocess.py", 5_000_000)
    assert isinstance(found, Finding) and found.code == "SN903"

def test_order_is_sorted_and_files_are_not_repeated(project):
    touch(project, "b.py", "a/z.py", "a.py")
    assert displays(["b.py", ".", "a/z.py"], Config(project)) == ["a/z.py", "a.py", "b.py"]


def test_hidden_folders_are_skipped(project):
    touch(project, ".cache/x.py", "y.py")
    assert displays(["."], Config(project)) == ["y.py"]


def test_default_excludes_are_skipped_at_any_depth(project):
    touch(project, "venv/a.py", "pkg/__pycache__/b.py", "pkg/build/c.py", "node_modules/d.py",
          "lib/site-packages/e.py", "pkg/ok.py")
    assert displays(["."], Config(project)) == ["pkg/ok.py"]


def test_folder_with_pyvenv_cfg_is_skipped(project):
    touch(project, "env/lib/x.py", "y.py")
    (project / "env" / "pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")
    assert displays(["."], Config(project)) == ["y.py"]


def test_a_path_that_may_not_be_looked_at_is_not_there(project, monkeypatch):
    # As /proc/1/fdinfo/pyvenv.cfg in a walk from `/`: stat itself is refused.
    touch(project, "a/d.py", "locked/e.py")
    real_stat = os.stat

    def stat(path, *args, **kwargs):
        if "locked" in os.fspath(path):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    assert displays(["."], Config(project)) == ["a/d.py", "locked/e.py"]


def test_exclude_globs_are_relative_to_root(project):
    touch(project, "models/gen.py", "models/disc.py", "other/models/gen.py")
    config = Config(project, exclude=["models/gen.py"])
    assert displays(["."], config) == ["models/disc.py", "other/models/gen.py"]


def test_exclude_relative_to_root_when_run_from_a_subfolder(project, monkeypatch):
    touch(project, "models/gen.py", "models/disc.py")
    monkeypatch.chdir(project / "models")
    assert displays(["."], Config(project, exclude=["models/gen.py"])) == ["disc.py"]


def test_extend_exclude_slashless_glob_matches_names(project):
    touch(project, "a/test_x.py", "a/x.py")
    assert displays(["."], Config(project, extend_exclude=["test_*.py"])) == ["a/x.py"]


def test_exclude_folder_prunes_the_walk(project):
    touch(project, "third_party/lib/x.py", "y.py")
    assert displays(["."], Config(project, exclude=["third_party"])) == ["y.py"]


def test_explicit_file_is_linted_even_when_excluded(project):
    touch(project, "gen.py")
    assert displays(["gen.py"], Config(project, exclude=["gen.py"])) == ["gen.py"]


def test_force_exclude_applies_to_explicit_files(project):
    touch(project, "gen.py")
    config = Config(project, exclude=["gen.py"], force_exclude=True)
    assert displays(["gen.py"], config) == []


def test_force_exclude_applies_to_folders_above_explicit_files(project):
    touch(project, "build/x.py")
    assert displays(["build/x.py"], Config(project, force_exclude=True)) == []


def test_gitignore_at_root_is_respected(project):
    touch(project, "gen/a.py", "scratch.py", "keep.py")
    (project / ".gitignore").write_text("gen/\nscratch.py\n", encoding="utf-8")
    assert displays(["."], Config(project)) == ["keep.py"]


def test_gitignore_in_subfolder_is_relative_to_its_folder(project):
    touch(project, "a/out.py", "a/b/out.py", "out.py")
    (project / "a" / ".gitignore").write_text("/out.py\n", encoding="utf-8")
    assert displays(["."], Config(project)) == ["a/b/out.py", "out.py"]


def test_deeper_gitignore_can_reinclude(project):
    touch(project, "a/x.py", "a/y.py")
    (project / ".gitignore").write_text("*.py\n", encoding="utf-8")
    (project / "a" / ".gitignore").write_text("!x.py\n", encoding="utf-8")
    assert displays(["."], Config(project)) == ["a/x.py"]


def test_root_gitignore_applies_when_walking_a_subfolder(project):
    touch(project, "m/gen.py", "m/d.py")
    (project / ".gitignore").write_text("gen.py\n", encoding="utf-8")
    assert displays(["m"], Config(project)) == ["m/d.py"]


def test_gitignore_lines_git_cannot_read_are_dropped(project):
    touch(project, "gen.py", "keep.py")
    (project / ".gitignore").write_text("!\n[z-a]\ngen.py\n", encoding="utf-8")
    assert displays(["."], Config(project)) == ["keep.py"]


def test_gitignore_does_not_apply_to_explicit_files(project):
    touch(project, "scratch.py")
    (project / ".gitignore").write_text("scratch.py\n", encoding="utf-8")
    assert displays(["scratch.py"], Config(project)) == ["scratch.py"]


# ---------------------------------------------------------------- read_source

def write_bytes(tmp_path: Path, data: bytes, name: str = "m.py") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_utf8_file_is_read_with_its_text(tmp_path):
    path = write_bytes(tmp_path, "s = 'σ'\n".encode())
    assert read_source("m.py", path, 1000) == SourceFile(
        "m.py", path, "s = 'σ'\n", "utf-8", "s = 'σ'\n".encode(), "\n")


def test_crlf_newlines_are_kept(tmp_path):
    path = write_bytes(tmp_path, b"a = 1\r\nb = 2\r\n")
    source = read_source("m.py", path, 1000)
    assert (source.text, source.newline) == ("a = 1\r\nb = 2\r\n", "\r\n")


def test_cr_newline_is_detected(tmp_path):
    path = write_bytes(tmp_path, b"a = 1\rb = 2\r")
    assert read_source("m.py", path, 1000).newline == "\r"


def test_newline_is_the_first_line_ending():
    assert detect_newline("a\nb\r\n") == "\n"


def test_empty_file_is_fine(tmp_path):
    path = write_bytes(tmp_path, b"")
    assert read_source("m.py", path, 1000) == SourceFile("m.py", path, "", "utf-8", b"", "\n")


def test_bom_is_decoded_and_named_utf8_sig(tmp_path):
    path = write_bytes(tmp_path, b"\xef\xbb\xbfx = 1\n")
    source = read_source("m.py", path, 1000)
    assert (source.text, source.encoding) == ("x = 1\n", "utf-8-sig")


def test_pep263_cookie_is_honoured(tmp_path):
    path = write_bytes(tmp_path, b"# -*- coding: latin-1 -*-\ns = '\xe9'\n")
    source = read_source("m.py", path, 1000)
    assert (source.text, source.encoding) == ("# -*- coding: latin-1 -*-\ns = 'é'\n", "iso-8859-1")


# Bytes that are no healthy text: (the file, the SN902 message, where it points).
UNDECODABLE = [
    pytest.param(b"a = 1\nb = 2\nc = '\xff'\n",
                 "cannot decode as utf-8: invalid start byte at byte offset 17", Span(3, 6, 3, 7),
                 id="invalid-utf8-names-encoding-and-offset"),
    pytest.param(b"s = '\xc3('\n",
                 "cannot decode as utf-8: invalid continuation byte at byte offset 5",
                 Span(1, 6, 1, 7), id="invalid-utf8-in-first-line-names-offset"),
    pytest.param(b"# coding: klingon\nx = 1\n",
                 "unknown encoding 'klingon' in the coding declaration", Span(1, 1, 1, 1),
                 id="unknown-encoding-in-cookie"),
    pytest.param(b"# coding: rot13\nx = 1\n",
                 "cannot decode: 'rot13' is not a text encoding", Span(1, 1, 1, 1),
                 id="non-text-encoding-in-cookie"),
    pytest.param(b"\xef\xbb\xbf# coding: latin-1\nx = 1\n",
                 "the UTF-8 byte order mark contradicts the coding declaration", Span(1, 1, 1, 1),
                 id="bom-with-other-cookie"),
    pytest.param(b"x = 1\n\x00\x01\x02", "binary file", Span(2, 1, 2, 2),
                 id="nul-byte-marks-a-binary-file"),
]


@pytest.mark.parametrize(("raw", "message", "span"), UNDECODABLE)
def test_undecodable_file_is_an_sn902_saying_why(tmp_path, raw, message, span):
    path = write_bytes(tmp_path, raw)
    finding = read_source("m.py", path, 1000)
    assert (finding.code, finding.path, finding.message, finding.span) == (
        "SN902", "m.py", message, span)


def test_file_larger_than_max_size(tmp_path):
    path = write_bytes(tmp_path, b"x = 1\n" * 10)
    finding = read_source("m.py", path, 59)
    assert (finding.code, finding.message) == (
        "SN903", "file is 60 bytes, larger than max-file-size (59)")


def test_file_of_exactly_max_size_is_read(tmp_path):
    path = write_bytes(tmp_path, b"x = 1\n" * 10)
    assert isinstance(read_source("m.py", path, 60), SourceFile)


def test_missing_file_is_unreadable(tmp_path):
    finding = read_source("gone.py", tmp_path / "gone.py", 1000)
    assert (finding.code, finding.message) == ("SN903", "cannot read file: No such file or directory")


def test_directory_is_unreadable(tmp_path):
    finding = read_source("d.py", tmp_path, 1000)
    assert (finding.code, finding.message) == ("SN903", "cannot read file: is a directory")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_permission_denied_is_unreadable(tmp_path):
    path = write_bytes(tmp_path, b"x = 1\n")
    path.chmod(0)
    try:
        finding = read_source("m.py", path, 1000)
    finally:
        path.chmod(0o644)
    assert (finding.code, finding.message) == ("SN903", "cannot read file: Permission denied")


COOKIES = [b"", b"# coding: latin-1\n", b"# coding: utf-16\n", b"# coding: rot13\n",
           b"# coding: nope\n", b"\xef\xbb\xbf", b"\xef\xbb\xbf# coding: cp1252\n"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=st.sampled_from(COOKIES), data=st.binary(max_size=300))
def test_read_source_never_raises(tmp_path, prefix, data):
    path = write_bytes(tmp_path, prefix + data)
    result = read_source("m.py", path, 200)
    assert isinstance(result, SourceFile) or (
        isinstance(result, Finding) and result.code in ("SN902", "SN903"))


def test_a_script_without_suffix_is_linted_as_python(project):
    from snlint.engine import run

    (project / "train").write_text(
        "#!/usr/bin/env python\nimport torch.nn as nn\n\n\nclass Discriminator(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.bn = nn.BatchNorm2d(8)\n",
        encoding="utf-8")
    findings = run(["train"], Config(project, graph=False)).findings
    assert [(f.path, f.code, f.line) for f in findings] == [("train", "SN301", 8)]
