"""Import roots: the graph pass imports a project as its own scripts and tools do.

Each test lays out a small repository the way real GAN repositories are laid out and
checks that the discriminator was built (the graph pass's own record of the run) and that
no SN910 says otherwise.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402
from graph_helpers import write  # noqa: E402

from snlint.cli import main  # noqa: E402
from snlint.config import Config, load_config  # noqa: E402
from snlint.engine import run  # noqa: E402

DISCRIMINATOR_USING = '''
    import torch.nn as nn
    {imports}


    class {name}(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = {layer}
            self.act = nn.LeakyReLU(0.2)

        def forward(self, x):
            return self.act(self.conv(x)).mean(dim=(1, 2, 3))
'''


def discriminator(imports: str, layer: str, name: str = "Discriminator") -> str:
    return DISCRIMINATOR_USING.format(imports=imports, layer=layer, name=name)


SN_CONV = '''
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm


    def sn_conv(cin, cout):
        return spectral_norm(nn.Conv2d(cin, cout, 3, 1, 1))
'''


def built(result) -> list[tuple[str, str, str]]:
    return [(r.target.display, r.target.class_name, r.status) for r in result.graph]


def sn910(result) -> list[str]:
    return [f.message for f in result.findings if f.code == "SN910"]


def test_src_layout_imports_its_siblings_from_src(tmp_path):
    # As PyTorch-StudioGAN: src/ holds folders without __init__.py that import each other
    # as top-level names (`python src/main.py` puts src/ on sys.path).
    write(tmp_path, "pyproject.toml", "[project]\nname = 'gan'\n")
    write(tmp_path, "src/utils/ops.py", SN_CONV)
    write(tmp_path, "src/models/resnet.py",
          discriminator("from utils.ops import sn_conv", "sn_conv(3, 8)"))
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True))
    assert built(result) == [(f"{tmp_path}/src/models/resnet.py", "Discriminator", "ok")]
    assert sn910(result) == []


def test_a_module_named_like_its_package_loads_inside_the_package(tmp_path):
    write(tmp_path, "setup.py", "")
    write(tmp_path, "models/__init__.py", "from .models import *\n")
    write(tmp_path, "models/models.py", discriminator("", "nn.Conv2d(3, 8, 3)"))
    write(tmp_path, "models/critic.py", '''
        from models.models import Discriminator


        class Critic(Discriminator):
            pass
    ''')
    result = run([str(tmp_path / "models")], Config(root=tmp_path, graph=True))
    assert sorted(built(result)) == [
        (f"{tmp_path}/models/critic.py", "Critic", "ok"),
        (f"{tmp_path}/models/models.py", "Discriminator", "ok"),
    ]


# A folder without __init__.py: (where the helper is, where the discriminator is, its import).
FOLDERS_WITHOUT_INIT = [
    pytest.param("models/models.py", "models/d.py", "from models.models import sn_conv",
                 id="a-module-named-like-its-folder-loads-as-a-namespace-package"),
    pytest.param("nets/layers.py", "nets/d.py", "from .layers import sn_conv",
                 id="relative-imports-work"),
    pytest.param("gan/networks.py", "gan/d.py", "from networks import sn_conv",
                 id="sibling-imports-keep-working"),
]


@pytest.mark.parametrize(("helper", "path", "import_line"), FOLDERS_WITHOUT_INIT)
def test_imports_in_a_folder_without_init(tmp_path, helper, path, import_line):
    write(tmp_path, ".git/HEAD", "")
    write(tmp_path, helper, SN_CONV)
    write(tmp_path, path, discriminator(import_line, "sn_conv(3, 8)"))
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True))
    assert built(result) == [(f"{tmp_path}/{path}", "Discriminator", "ok")]


def test_a_vendored_package_at_the_root_is_importable(tmp_path):
    write(tmp_path, "pyproject.toml", "")
    write(tmp_path, "vendor_sn/__init__.py", SN_CONV)
    write(tmp_path, "experiments/cifar/d.py",
          discriminator("from vendor_sn import sn_conv", "sn_conv(3, 8)"))
    result = run([str(tmp_path / "experiments")], Config(root=tmp_path, graph=True))
    assert built(result) == [(f"{tmp_path}/experiments/cifar/d.py", "Discriminator", "ok")]


def test_linting_a_subfolder_imports_from_the_repository_root(tmp_path, monkeypatch):
    # No marker file at all: the working directory is the project root, as for `snlint .`.
    write(tmp_path, "utils.py", SN_CONV)
    write(tmp_path, "models/__init__.py", "")
    write(tmp_path, "models/blocks.py", "from utils import sn_conv\n")
    write(tmp_path, "models/d.py", discriminator("from models.blocks import sn_conv",
                                                 "sn_conv(3, 8)"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["models", "--graph", "--output-format", "json"])
    assert json.loads(result.stdout) == []
    assert result.stderr.splitlines()[0] == "graph pass: 1 discriminator built (1 traced, 1 probed)"


def test_setup_py_marks_the_project_root(tmp_path, monkeypatch):
    # The working directory is above the project: the folder holding setup.py is its root.
    write(tmp_path, "gan/setup.py", "")
    write(tmp_path, "gan/utils.py", SN_CONV)
    write(tmp_path, "gan/models/d.py", discriminator("from utils import sn_conv", "sn_conv(3, 8)"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["gan/models", "--graph", "--output-format", "json"])
    assert (json.loads(result.stdout), result.stderr.splitlines()[0]) == (
        [], "graph pass: 1 discriminator built (1 traced, 1 probed)")


def test_graph_paths_adds_folders_to_the_import_path(tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.snlint]\ngraph-paths = ["third_party/blocks"]\n')
    write(tmp_path, "third_party/blocks/snblocks.py", SN_CONV)
    write(tmp_path, "models/d.py", discriminator("from snblocks import sn_conv", "sn_conv(3, 8)"))
    result = run([str(tmp_path)], load_config(tmp_path, graph=True))
    assert built(result) == [(f"{tmp_path}/models/d.py", "Discriminator", "ok")]


def test_without_graph_paths_the_same_module_is_not_found_and_the_note_says_where_it_is(tmp_path):
    write(tmp_path, "pyproject.toml", "")
    write(tmp_path, "third_party/blocks/snblocks.py", SN_CONV)
    write(tmp_path, "models/d.py", discriminator("from snblocks import sn_conv", "sn_conv(3, 8)"))
    result = run([str(tmp_path)], load_config(tmp_path, graph=True))
    assert sn910(result) == [
        f"graph pass: importing {tmp_path}/models/d.py failed: No module named 'snblocks' "
        "(add \"third_party/blocks\" to [tool.snlint] graph-paths, or --ignore SN910)"]


def test_a_missing_package_is_one_note_for_every_module_it_blocked(tmp_path):
    conv = "nn.Conv2d(3, 8, 3)"
    write(tmp_path, "pyproject.toml", "")
    write(tmp_path, "models/a.py", discriminator("import skimage_xyz", conv, "CriticA"))
    write(tmp_path, "models/b.py", discriminator("import skimage_xyz.io", conv, "CriticB"))
    write(tmp_path, "models/c.py", discriminator("from util import x", conv, "CriticC"))
    write(tmp_path, "models/util.py", "import skimage_xyz\nx = 1\n")
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True))
    notes = [(f.code, f.path, f.line, f.column, f.message) for f in result.findings
             if f.code.startswith("SN9")]
    assert notes == [(
        "SN910", f"{tmp_path}/models/a.py", 3, 1,
        "graph pass: 3 modules not imported: No module named 'skimage_xyz' "
        "(pip install skimage_xyz, or --ignore SN910); "
        f"blocked: {tmp_path}/models/a.py, {tmp_path}/models/b.py, {tmp_path}/models/c.py")]


def test_ignore_sn910_silences_the_grouped_note(tmp_path):
    write(tmp_path, "pyproject.toml", "")
    write(tmp_path, "a.py", discriminator("import skimage_xyz", "nn.Conv2d(3, 8, 3)", "CriticA"))
    write(tmp_path, "b.py", discriminator("import skimage_xyz", "nn.Conv2d(3, 8, 3)", "CriticB"))
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True, ignore=["SN910"]))
    assert (sn910(result), [r.status for r in result.graph]) == ([], ["import_error"] * 2)


def test_moving_on_from_a_file_forgets_nested_namespace_packages(tmp_path):
    # As taming-transformers: `taming/` and `taming/modules/` have no __init__.py; the
    # second file's import must not trip over the first file's namespace packages.
    write(tmp_path, "setup.py", "")
    write(tmp_path, "gan/modules/disc/model.py", discriminator("", "nn.Conv2d(3, 8, 3)"))
    write(tmp_path, "gan/modules/losses/__init__.py", "")
    write(tmp_path, "gan/modules/losses/loss.py", discriminator(
        "from gan.modules.disc.model import Discriminator as D", "D()", "LossWithDiscriminator"))
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True))
    assert [(r.target.class_name, r.status) for r in result.graph] == [
        ("Discriminator", "ok"), ("LossWithDiscriminator", "ok")]
