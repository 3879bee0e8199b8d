"""Training scripts that run at import: built from their definitions-only copy."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from graph_helpers import write  # noqa: E402

from snlint.config import Config  # noqa: E402
from snlint.engine import run  # noqa: E402

TUTORIAL = '''
    import argparse
    import os

    import torch
    import torch.nn as nn

    os.makedirs({images!r}, exist_ok=True)

    parser = argparse.ArgumentParser()
    parser.add_argument("--n_epochs", type=int, default=200)
    parser.add_argument("--img_size", type=int, default=32)
    parser.add_argument("--channels", type=int, default=1)
    opt = parser.parse_args()
    print(opt)

    img_shape = (opt.channels, opt.img_size, opt.img_size)
    cuda = True if torch.cuda.is_available() else False


    class Discriminator(nn.Module):
        def __init__(self):
            super(Discriminator, self).__init__()
            self.model = nn.Sequential(
                nn.Conv2d(opt.channels, 16, 3, 2, 1),
                nn.BatchNorm2d(16),
                nn.LeakyReLU(0.2),
            )
            self.head = nn.Linear(16 * (opt.img_size // 2) ** 2, 1)

        def forward(self, img):
            return self.head(self.model(img).flatten(1))


    discriminator = Discriminator()
    dataloader = torch.utils.data.DataLoader(
        list(range(4)),
        batch_size=2,
    )
    for epoch in range(opt.n_epochs):
        open({marker!r}, "w").write("trained")
        torch.save(discriminator.state_dict(), "d.pth")
'''


def test_a_tutorial_script_is_built_without_running_its_training(tmp_path):
    marker, images = tmp_path / "TRAINED", tmp_path / "images"
    write(tmp_path, "gan.py", TUTORIAL.format(marker=str(marker), images=str(images)))
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True))
    assert [(f.code, f.line, f.pass_) for f in result.findings] == [("SN301", 26, "source+graph")]
    assert [(r.target.class_name, r.status, r.probe["ran"]) for r in result.graph] == [
        ("Discriminator", "ok", True)]
    assert not marker.exists() and not images.exists()
    assert not (tmp_path / "d.pth").exists()


def test_a_required_argument_takes_its_default_none_instead_of_exiting(tmp_path):
    write(tmp_path, "train.py", '''
        import argparse
        import torch.nn as nn

        parser = argparse.ArgumentParser()
        parser.add_argument("--data", required=True)
        parser.add_argument("--ndf", type=int, default=8)
        args = parser.parse_args()


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, args.ndf, 3)
                self.bn = nn.BatchNorm2d(args.ndf)

            def forward(self, x):
                return self.bn(self.conv(x)).mean(dim=(1, 2, 3))


        for epoch in range(10):
            pass
    ''')
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True))
    assert [(r.target.class_name, r.status) for r in result.graph] == [("Discriminator", "ok")]
    assert [(f.code, f.line, f.pass_) for f in result.findings] == [("SN301", 15, "source+graph")]


ARCH_BRANCHES = '''
    import argparse
    import torch.nn as nn
    from torch.nn.utils import spectral_norm

    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="dcgan")
    args = parser.parse_args()

    if args.arch == "dcgan":
        class DCDiscriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 4, 2, 1)
                self.bn = nn.BatchNorm2d(8)

            def forward(self, x):
                return self.bn(self.conv(x)).mean(dim=(1, 2, 3))
    elif args.arch == "sngan":
        class SNDiscriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = spectral_norm(nn.Conv2d(3, 8, 4, 2, 1))
                self.out = nn.Conv2d(8, 1, 1)

            def forward(self, x):
                return self.out(self.conv(x)).mean(dim=(1, 2, 3))

    for step in range(100):
        pass
'''


def test_classes_under_each_branch_of_a_module_level_if_are_built(tmp_path):
    write(tmp_path, "train.py", ARCH_BRANCHES)
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True))
    assert [(r.target.class_name, r.status) for r in result.graph] == [
        ("DCDiscriminator", "ok"), ("SNDiscriminator", "ok")]
    assert [(f.code, f.line, f.pass_) for f in result.findings] == [
        ("SN301", 15, "source+graph"), ("SN201", 24, "source+graph")]


def test_one_class_name_in_two_branches_builds_the_branch_at_the_targets_line(tmp_path):
    write(tmp_path, "nets.py", '''
        import os
        import torch.nn as nn

        if os.environ.get("SNLINT_TEST_NEVER_SET") == "bn":
            class Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.bn = nn.BatchNorm2d(8)
        else:
            class Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.norm = nn.InstanceNorm2d(8)

        for _ in range(3):
            pass
    ''')
    from snlint.graph import GraphTarget, run_graph

    path = str(tmp_path / "nets.py")
    first, second = run_graph([GraphTarget(path, "nets.py", "Discriminator", line=5),
                               GraphTarget(path, "nets.py", "Discriminator", line=10)])
    assert [m.type_name for m in first.modules] == ["BatchNorm2d"]
    assert [m.type_name for m in second.modules] == ["InstanceNorm2d"]


def test_an_error_in_the_copy_points_at_the_scripts_own_line(tmp_path):
    write(tmp_path, "train.py", '''
        import torch.nn as nn

        SIZE = 8


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, SIZE, 3)
                raise ValueError("broken on purpose")


        for epoch in range(3):
            pass
    ''')
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True))
    [diagnostic] = [f for f in result.findings if f.code == "SN912"]
    assert "ValueError: broken on purpose" in diagnostic.message
    assert diagnostic.message.endswith("train.py:11)")


def test_a_numpy_discriminator_class_is_not_built(tmp_path):
    # Hands-On GANs, chapter 1: `class Discriminator(object)` of NumPy arrays.
    write(tmp_path, "simple_gan.py", '''
        import numpy as np


        class Discriminator(object):
            def __init__(self):
                self.w1 = np.zeros((4, 4))

            def forward(self, x):
                return x @ self.w1
    ''')
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True))
    assert result.findings == [] and result.graph == []


def test_a_star_import_of_a_name_the_copy_left_out_still_builds_the_package(tmp_path):
    # `__all__` names `__copyright__`, whose value calls time.strftime (not run in the copy).
    write(tmp_path, "gans/__about__.py", '''
        import time

        __version__ = "0.1"
        __copyright__ = f"Copyright (c) 2020-{time.strftime('%Y')}"
        __all__ = ["__version__", "__copyright__"]
    ''')
    write(tmp_path, "gans/__init__.py", '''
        from gans.__about__ import *  # noqa: F401, F403
        from gans import nets

        __all__ = ["nets"]
    ''')
    write(tmp_path, "gans/nets.py", '''
        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 4, 2, 1)
                self.bn = nn.BatchNorm2d(8)

            def forward(self, x):
                return self.bn(self.conv(x)).mean((1, 2, 3))
    ''')
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True))
    assert [(f.code, f.line, f.pass_) for f in result.findings] == [("SN301", 9, "source+graph")]
    assert [(r.target.class_name, r.status) for r in result.graph] == [("Discriminator", "ok")]


def test_a_default_reading_a_name_the_copy_left_out_is_computed_at_the_call(tmp_path):
    # NUM_WORKERS calls os.cpu_count (not run in the copy); only the data module reads it.
    write(tmp_path, "gan.py", '''
        import os

        import torch.nn as nn

        NUM_WORKERS = int(os.cpu_count() / 2)


        class DataModule:
            def __init__(self, num_workers: int = NUM_WORKERS):
                self.num_workers = num_workers


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 4, 2, 1)
                self.bn = nn.BatchNorm2d(8)

            def forward(self, x):
                return self.bn(self.conv(x)).mean((1, 2, 3))
    ''')
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True))
    assert [(f.code, f.line, f.pass_) for f in result.findings] == [("SN301", 18, "source+graph")]
    assert [(r.target.class_name, r.status) for r in result.graph] == [("Discriminator", "ok")]
