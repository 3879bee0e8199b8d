"""The two passes joined: one finding per mistake, whichever pass sees it."""

from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("torch")

from snlint.config import Config  # noqa: E402
from snlint.engine import run  # noqa: E402

HELPER_RETURNS_A_SEQUENTIAL = '''
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm


    def down(cin, cout):
        return nn.Sequential(
            spectral_norm(nn.Conv2d(cin, cout, 4, 2, 1)),
            nn.BatchNorm2d(cout),
            nn.Conv2d(cout, cout, 3, 1, 1),
        )


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.d1 = down(3, 16)
            self.d2 = down(16, 32)
            self.out = spectral_norm(nn.Linear(32, 1))

        def forward(self, x):
            return self.out(self.d2(self.d1(x)).mean(dim=(2, 3)))
'''


def test_layers_a_helper_builds_in_a_container_are_one_finding_from_both_passes(tmp_path):
    (tmp_path / "d.py").write_text(textwrap.dedent(HELPER_RETURNS_A_SEQUENTIAL))
    findings = run([str(tmp_path)], Config(root=tmp_path, graph=True)).findings
    assert [(f.code, f.line, f.column, f.pass_) for f in findings] == [
        ("SN301", 9, 9, "source+graph"),
        ("SN201", 10, 9, "source+graph"),
    ]


HELPER_RETURNS_A_LIST = '''
    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()

            def block(cin, cout, first=False):
                layers = [nn.Conv2d(cin, cout, 3, 1, 1)]
                if not first:
                    layers.append(nn.BatchNorm2d(cout))
                layers.append(nn.Conv2d(cout, cout, 3, 2, 1))
                layers.append(nn.BatchNorm2d(cout))
                return layers

            layers = []
            cin = 3
            for i, cout in enumerate([8, 16]):
                layers.extend(block(cin, cout, first=(i == 0)))
                cin = cout
            self.model = nn.Sequential(*layers, nn.Conv2d(cin, 1, 3, 1, 1))

        def forward(self, x):
            return self.model(x)
'''


def test_each_batch_norm_a_helper_builds_is_confirmed_by_its_own_runtime_leaves(tmp_path):
    # The runtime records both batch norms at the helper's call; each is joined to the
    # source's layer by its own innermost construction, so both are "source+graph".
    (tmp_path / "d.py").write_text(textwrap.dedent(HELPER_RETURNS_A_LIST))
    findings = run([str(tmp_path)], Config(root=tmp_path, graph=True)).findings
    assert [(f.code, f.line, f.column, f.pass_) for f in findings] == [
        ("SN301", 12, 31, "source+graph"),
        ("SN301", 14, 27, "source+graph"),
    ]
