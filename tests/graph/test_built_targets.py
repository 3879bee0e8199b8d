"""Which classes the graph pass builds: the discriminators, not the parts they are built
from."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from graph_helpers import write  # noqa: E402

from snlint.config import Config  # noqa: E402
from snlint.engine import run  # noqa: E402

MODELS = '''
    import torch
    import torch.nn as nn


    class MinibatchStdDev(nn.Module):
        def forward(self, x):
            std = x.std(0).mean().expand(x.shape[0], 1, *x.shape[2:])
            return torch.cat([x, std], 1)


    class FinalBlock(nn.Module):
        def __init__(self, ch):
            super().__init__()
            self.batch_discriminator = MinibatchStdDev()
            self.conv = nn.Conv2d(ch + 1, 1, 4)

        def forward(self, x):
            return self.conv(self.batch_discriminator(x)).flatten(1)


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 8, 3, 2, 1)
            self.final = FinalBlock(8)

        def forward(self, x):
            return self.final(self.stem(x))
'''


def test_a_part_bound_to_a_discriminator_like_name_is_not_built_on_its_own(tmp_path):
    write(tmp_path, "models.py", MODELS)
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True))
    assert [t.target.class_name for t in result.graph] == ["Discriminator"]


def test_a_table_of_attribute_dicts_a_discriminator_reads_is_kept_in_the_copy(tmp_path):
    write(tmp_path, "util.py", '''
        class EasyDict(dict):
            def __getattr__(self, name):
                return self[name]
    ''')
    write(tmp_path, "ops.py", '''
        import util

        gains = {"lrelu": util.EasyDict(gain=2 ** 0.5, alpha=0.2)}
    ''')
    write(tmp_path, "models.py", '''
        import torch.nn as nn
        import ops


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 1, 4)
                self.alpha = ops.gains["lrelu"].alpha

            def forward(self, x):
                return self.conv(x).flatten(1)
    ''')
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True))
    assert [(t.target.class_name, t.status) for t in result.graph] == [("Discriminator", "ok")]
    assert [f.code for f in result.findings] == []


@pytest.mark.parametrize("module, package", [("gin", "gin-config"), ("ffmpeg", "ffmpeg-python")])
def test_a_missing_module_names_the_package_pip_knows(module, package):
    from snlint.graph.diagnostics import install_hint

    assert install_hint(module) == f"pip install {package}, or --ignore SN910"


def test_a_python_2_discriminator_file_is_one_sn901_not_an_sn910_too(tmp_path):
    write(tmp_path, "models.py", '''
        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self):
                super(Discriminator, self).__init__()
                self.conv = nn.Conv2d(3, 1, 4)

            def forward(self, x):
                print "scoring"
                return self.conv(x)
    ''')
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True))
    assert [(t.target.class_name, t.status) for t in result.graph] == [("Discriminator", "import_error")]
    assert [f.code for f in result.findings] == ["SN901"]
