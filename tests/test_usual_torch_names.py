"""A package from outside the project star-imported for its helpers (`from torch_snippets
import *`, as the notebooks of Modern Computer Vision with PyTorch do) hands torch's
modules on by their usual names: `nn`, `F`, `torch` and `optim` are torch's when nothing
the project defines is so named."""

from __future__ import annotations

from projects import lint_in as lint

PROGRAM = '''
    from torch_snippets import *


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = nn.Sequential(
                nn.Conv2d(3, 64, 4, 2, 1, bias=False),
                nn.BatchNorm2d(64),
                nn.Conv2d(64, 1, 4, 1, 0, bias=False),
            )

        def forward(self, x):
            return self.model(x)


    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = nn.ConvTranspose2d(100, 3, 4, 1, 0)

        def forward(self, z):
            return self.model(z)


    discriminator, generator = Discriminator(), Generator()
    d_optimizer = optim.Adam(discriminator.parameters(), lr=0.0002)
    for real_data in DataLoader([], batch_size=64):
        fake_data = generator(torch.randn(len(real_data), 100, 1, 1))
        prediction_real = discriminator(real_data)
        prediction_fake = discriminator(fake_data.detach())
        d_optimizer.step()
'''


def test_torch_modules_from_an_outside_star_import_are_torchs(tmp_path):
    found = lint(tmp_path, {"train.py": PROGRAM})
    assert [(f.code, f.line) for f in found] == [("SN301", 10), ("SN401", 31)]


def test_a_project_module_star_imported_says_what_its_names_are(tmp_path):
    # The project's own `nn` (here a module of helpers that builds nothing) is not torch's.
    helpers = "class nn:\n    Module = object\n"
    found = lint(tmp_path, {"train.py": PROGRAM.replace("torch_snippets", "helpers"), "helpers.py": helpers})
    assert [f.code for f in found] == []
