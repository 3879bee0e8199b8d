"""Which folders the graph pass puts on sys.path (parent side, no torch), and the
`graph-paths` setting."""

from __future__ import annotations

import pytest

from snlint.config import ConfigError, load_config
from snlint.link.roots import import_roots, locate_module, project_root


def make(root, *names):
    for name in names:
        path = root / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("")


@pytest.mark.parametrize("marker", ["pyproject.toml", "setup.py", "setup.cfg", ".git/"])
def test_each_marker_makes_a_project_root(tmp_path, marker):
    make(tmp_path, f"proj/{marker}", "proj/models/d.py")
    assert project_root(tmp_path / "proj/models/d.py") == tmp_path / "proj"


def test_roots_of_a_file_are_its_project_root_then_src(tmp_path):
    make(tmp_path, "setup.py", "src/pkg/__init__.py", "models/d.py")
    assert import_roots(tmp_path / "models/d.py", tmp_path) == (str(tmp_path), str(tmp_path / "src"))


def test_a_file_under_src_puts_src_first(tmp_path):
    make(tmp_path, "pyproject.toml", "src/models/d.py")
    assert import_roots(tmp_path / "src/models/d.py", tmp_path) == (
        str(tmp_path / "src"), str(tmp_path))


def test_a_src_folder_that_is_a_package_is_not_a_root(tmp_path):
    make(tmp_path, ".git/", "src/__init__.py", "src/models/d.py")
    assert import_roots(tmp_path / "src/models/d.py", tmp_path) == (str(tmp_path),)


def test_the_configuration_root_follows_a_nested_project_root(tmp_path):
    # The repository's pyproject.toml is the configuration root; a vendored project with
    # its own setup.py inside it is the file's project root and comes first.
    make(tmp_path, "pyproject.toml", "third_party/vq/setup.py", "third_party/vq/vq/d.py")
    assert import_roots(tmp_path / "third_party/vq/vq/d.py", tmp_path) == (
        str(tmp_path / "third_party/vq"), str(tmp_path))


def test_without_a_marker_the_configuration_root_is_the_root(tmp_path):
    make(tmp_path, "models/d.py")
    assert import_roots(tmp_path / "models/d.py", tmp_path) == (str(tmp_path),)


def test_graph_paths_come_first(tmp_path):
    make(tmp_path, ".git/", "lib/a/x.py", "lib/b/y.py", "d.py")
    assert import_roots(tmp_path / "d.py", tmp_path, ["lib/b", "lib/a"]) == (
        str(tmp_path / "lib/b"), str(tmp_path / "lib/a"), str(tmp_path))


def test_locate_module_finds_the_shallowest_module_or_package(tmp_path):
    make(tmp_path, "a/b/blocks.py", "c/blocks/__init__.py", "data/blocks/readme.txt")
    assert locate_module("blocks", tmp_path) == "c"
    assert locate_module("b", tmp_path) == "a"
    assert locate_module("missing", tmp_path) is None


def test_locate_module_says_root_for_a_module_at_the_root(tmp_path):
    make(tmp_path, "utils.py")
    assert locate_module("utils", tmp_path) == ""


def test_locate_module_skips_hidden_folders_and_environments(tmp_path):
    make(tmp_path, ".venv/lib/skimage.py", "venv/skimage/__init__.py")
    assert locate_module("skimage", tmp_path) is None


# ------------------------------------------------------------------ graph-paths


def test_graph_paths_are_read_from_pyproject(tmp_path):
    make(tmp_path, "third_party/blocks/")
    (tmp_path / "pyproject.toml").write_text('[tool.snlint]\ngraph-paths = ["third_party/blocks"]\n')
    assert load_config(tmp_path).graph_paths == ["third_party/blocks"]


def test_graph_paths_must_be_folders(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.snlint]\ngraph-paths = ["lib"]\n')
    with pytest.raises(ConfigError) as error:
        load_config(tmp_path)
    assert error.value.message == (f"{tmp_path}/pyproject.toml: [tool.snlint] graph-paths: "
                                   f"'lib' is not a folder (the paths are relative to {tmp_path})")


def test_graph_paths_must_be_a_list_of_strings(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.snlint]\ngraph-paths = "lib"\n')
    with pytest.raises(ConfigError, match="graph-paths must be a list of strings"):
        load_config(tmp_path)
