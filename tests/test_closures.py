"""A function defined inside another reads the enclosing function's variables as Python
does: their values when it runs, not when it was defined. fsgan's training scripts define
`proces_epoch` in `main` before `D = obj_factory(...)`, with an argument check
(`if not os.path.isdir(exp_dir): raise ...`) between them."""

from __future__ import annotations

import pytest

SCRIPT = '''
    import os
    import torch
    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3)
            self.bn = nn.BatchNorm2d(8)

        def forward(self, x):
            return self.bn(self.conv(x))


    class PatchDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 1, 3)

        def forward(self, x):
            return self.conv(x)


    def main(exp_dir="exp", sizes=(1, 2)):
        def process_epoch(loader):
            for img, _ in loader:
                fake = G(torch.randn(4, 8))
                pred_fake = D(fake.detach())
                pred_real = D(img)
                loss = pred_fake.mean() - pred_real.mean()
                opt.zero_grad()
                loss.backward()
                opt.step()

        BETWEEN
        G = nn.Linear(8, 8)
        D = Discriminator()
        opt = torch.optim.Adam(D.parameters())
        process_epoch(torch.utils.data.DataLoader([]))


    main()
'''

BETWEEN = {
    "an undecided if": "if not os.path.isdir(exp_dir):\n            raise RuntimeError(exp_dir)",
    "a comprehension": "scales = [s * 2 for s in sizes]",
    "a try": "try:\n            os.makedirs(exp_dir)\n        except OSError:\n            pass",
}


@pytest.mark.parametrize("between", BETWEEN.values(), ids=BETWEEN.keys())
def test_a_nested_function_reads_what_its_enclosing_function_assigned_later(lint, between):
    findings = lint(SCRIPT.replace("BETWEEN", between))
    assert [(f.code, f.line) for f in findings if f.code == "SN401"] == [("SN401", 30)]
    assert "not built where it is used" not in findings[-1].message
