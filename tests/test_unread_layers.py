"""A layer a discriminator builds and nothing ever reads never runs (GatedConvolution's
`self.linear`, whose one use in `forward` is commented out): no finding is about it. One
that anything may read, by its name or without naming it, still counts."""

from __future__ import annotations

from projects import lint_in as lint

MODELS = '''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(
                spectral_norm(nn.Conv2d(3, 64, 4, 2, 1)),
                spectral_norm(nn.Conv2d(64, 128, 4, 2, 1)),
            )
            self.linear = nn.Linear(128 * 4, 1)
            self.norm = nn.BatchNorm1d(1)

        def forward(self, x):
            x = self.body(x)
            x = x.view(x.size(0), -1)
            #x = self.linear(x)
            return x
'''


def codes(findings):
    return [(f.code, f.line) for f in findings]


def test_a_layer_nothing_reads_has_no_finding(tmp_path):
    assert codes(lint(tmp_path, {"models.py": MODELS})) == []


def test_a_layer_forward_reads_has_its_finding(tmp_path):
    models = MODELS.replace("#x = self.linear(x)", "x = self.norm(self.linear(x))")
    assert codes(lint(tmp_path, {"models.py": models})) == [("SN201", 12), ("SN301", 13)]


def test_a_layer_read_from_outside_has_its_finding(tmp_path):
    train = '''
    from models import Discriminator

    netD = Discriminator()
    head = netD.linear
'''
    assert ("SN201", 12) in codes(lint(tmp_path, {"models.py": MODELS, "train.py": train}))


def test_a_layer_named_by_a_string_has_its_finding(tmp_path):
    models = MODELS.replace("#x = self.linear(x)", 'x = getattr(self, "linear")(x)')
    assert ("SN201", 12) in codes(lint(tmp_path, {"models.py": models}))


def test_layers_reached_without_their_names_have_their_findings(tmp_path):
    for reach in ("for layer in self.children(): pass", "x = getattr(self, self.head_name)(x)",
                  "x = self._modules['linear'](x)"):
        models = MODELS.replace("#x = self.linear(x)", reach)
        assert ("SN201", 12) in codes(lint(tmp_path, {"models.py": models})), reach


def test_a_container_subclass_runs_what_it_holds(tmp_path):
    models = '''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm

    class Discriminator(nn.Sequential):
        def __init__(self):
            super().__init__()
            self.conv = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))
            self.linear = nn.Conv2d(64, 1, 4)
'''
    assert codes(lint(tmp_path, {"models.py": models})) == [("SN201", 9)]


def test_a_container_subclass_holds_the_layers_its_init_hands_to_torch(tmp_path):
    # `super().__init__(conv, bn, ...)` of an nn.Sequential subclass: torch's own __init__
    # makes those its children, so they run as the discriminator.
    models = '''
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm

    class Discriminator(nn.Sequential):
        def __init__(self):
            super().__init__(
                spectral_norm(nn.Conv2d(3, 64, 4, 2, 1)),
                nn.BatchNorm2d(64),
                nn.LeakyReLU(0.2),
                nn.Conv2d(64, 1, 4, 1, 0),
            )
'''
    assert codes(lint(tmp_path, {"models.py": models})) == [("SN301", 9), ("SN201", 11)]


def test_a_container_subclass_without_init_holds_its_arguments(tmp_path):
    models = '''
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm

    class Body(nn.Sequential):
        pass

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = Body(spectral_norm(nn.Conv2d(3, 64, 4, 2, 1)), nn.BatchNorm2d(64))

        def forward(self, x):
            return self.body(x)
'''
    assert codes(lint(tmp_path, {"models.py": models})) == [("SN301", 11)]

