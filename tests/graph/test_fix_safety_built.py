"""A safe fix cannot break the program: for each rule with a fix, a small discriminator is
fixed by plain `--fix` and built with torch. A safe fix leaves its `state_dict` keys and
shapes as they were (or, where SN raised at construction, makes it build); an unsafe fix
is left out by plain `--fix`, and where keys change, `--unsafe-fixes` shows they do.

SN401's fix edits training code, not a module; it is covered by its page and by
tests/test_fix_rules.py."""

from __future__ import annotations

import importlib.util
import itertools
import json
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from snlint.cli import main  # noqa: E402

HEAD = """\
import torch.nn as nn
from torch.nn.utils import spectral_norm as hook_sn
from torch.nn.utils.parametrizations import spectral_norm


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = spectral_norm(nn.Conv2d(3, 8, 4, 2, 1))
"""


@dataclass
class Case:
    id: str
    code: str
    body: str  # lines of Discriminator.__init__ after `self.first`
    applicability: str
    # What the fix changes when applied anyway: "keys", or "nothing" (a safe fix's
    # promise); "raised": the original did not build (SN raised), so no checkpoint exists.
    changes: str


CASES = [
    Case("SN101", "SN101", "self.norm = spectral_norm(nn.GroupNorm(2, 8))", "unsafe", "keys"),
    Case("SN102-activation", "SN102", "self.act = spectral_norm(nn.LeakyReLU(0.2))", "safe", "raised"),
    Case("SN102-pooling", "SN102", "self.pool = hook_sn(nn.AvgPool2d(2))", "safe", "raised"),
    Case("SN102-prelu", "SN102", "self.act = spectral_norm(nn.PReLU())", "unsafe", "keys"),
    Case("SN103-hook", "SN103", "self.conv = hook_sn(hook_sn(nn.Conv2d(8, 8, 3)))", "safe", "raised"),
    Case("SN103-parametrizations", "SN103",
         "self.conv = spectral_norm(spectral_norm(nn.Conv2d(8, 8, 3)))", "unsafe", "keys"),
    Case("SN104", "SN104", 'self.head = spectral_norm(nn.Linear(8, 1), name="bias")', "unsafe", "keys"),
    Case("SN105", "SN105", "self.up = spectral_norm(nn.ConvTranspose2d(8, 4, 4, 2, 1), dim=0)",
         "unsafe", "keys"),
    Case("SN106", "SN106", "self.conv = spectral_norm(nn.Conv2d(8, 8, 3))\n"
         "nn.init.orthogonal_(self.conv.weight)", "safe", "nothing"),
    Case("SN107", "SN107", "self.attn = nn.MultiheadAttention(8, 2)\n"
         "self.attn.out_proj = hook_sn(self.attn.out_proj)", "unsafe", "keys"),
    Case("SN201", "SN201", "self.head = nn.Linear(8, 1)", "unsafe", "keys"),
    Case("SN301", "SN301", "self.norm = nn.BatchNorm2d(8)", "unsafe", "keys"),
    Case("SN501", "SN501", "self.head = hook_sn(nn.Linear(8, 1))", "unsafe", "keys"),
]

_names = itertools.count()


def snlint(*args: str):
    return CliRunner().invoke(main, ["--no-graph", "--no-cache", *args])


def build(path: Path, *classes: str) -> list:
    """Instances of `classes` from a fresh import of `path` (its folder on sys.path)."""
    name = f"snlint_fix_safety_{next(_names)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
        return [getattr(module, cls)() for cls in classes]
    finally:
        sys.path.remove(str(path.parent))


def layout(module) -> dict[str, tuple[int, ...]]:
    return {key: tuple(value.shape) for key, value in module.state_dict().items()}


def fix_of(code: str, path: Path) -> dict:
    rows = json.loads(snlint("--select", code, "--output-format", "json", str(path)).stdout)
    fixes = [row["fix"] for row in rows if row["code"] == code]
    assert len(fixes) == 1 and fixes[0] is not None, rows
    return fixes[0]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_safe_fix_keeps_the_state_dict_and_an_unsafe_one_is_left_to_unsafe_fixes(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "d.py"
    text = HEAD + textwrap.indent(case.body + "\n", " " * 8)
    path.write_text(text)
    assert fix_of(case.code, path)["applicability"] == case.applicability
    if case.changes == "raised":
        with pytest.raises((KeyError, ValueError, RuntimeError)):
            build(path, "Discriminator")
        before = None
    else:
        before = layout(*build(path, "Discriminator"))

    snlint("--fix", "--select", case.code, str(path))
    if case.applicability == "unsafe":
        assert path.read_text() == text  # plain --fix leaves an unsafe fix out
        snlint("--fix", "--unsafe-fixes", "--select", case.code, str(path))
    assert path.read_text() != text
    after = layout(*build(path, "Discriminator"))
    if case.changes == "keys":
        assert after != before
    elif case.changes == "nothing":
        assert after == before


# The SPADE pattern: one init_weights in a base class both networks derive from, run on
# each through apply(); the discriminator's layers under parametrizations, the
# generator's plain.
SHARED_INIT = '''\
import torch.nn as nn
from torch.nn import init
from torch.nn.utils.parametrizations import spectral_norm


class BaseNetwork(nn.Module):
    def init_weights(self, gain=0.02):
        def init_func(m):
            classname = m.__class__.__name__
            if hasattr(m, "weight") and (classname.find("Conv") != -1 or classname.find("Linear") != -1):
                init.normal_(m.weight.data, 0.0, gain)

        self.apply(init_func)


class Generator(BaseNetwork):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 64)
        self.conv = nn.Conv2d(4, 3, 3, 1, 1)
        self.init_weights()


class Discriminator(BaseNetwork):
    def __init__(self):
        super().__init__()
        self.conv1 = spectral_norm(nn.Conv2d(3, 8, 4, 2, 1))
        self.conv2 = spectral_norm(nn.Conv2d(8, 1, 2, 1, 0))
        self.init_weights()
'''


def test_a_shared_init_is_guarded_unsafely_and_both_networks_still_build(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "nets.py"
    path.write_text(SHARED_INIT)
    fix = fix_of("SN106", path)
    assert fix["applicability"] == "unsafe"
    assert "the init also runs for Generator" in fix["message"]
    before = [layout(m) for m in build(path, "Generator", "Discriminator")]

    snlint("--fix", str(path))
    assert path.read_text() == SHARED_INIT  # no safe fix edits code the generator runs
    snlint("--fix", "--unsafe-fixes", "--select", "SN106", str(path))
    assert ('                init.normal_((m.parametrizations.weight.original if '
            'nn.utils.parametrize.is_parametrized(m, "weight") else m.weight).data, 0.0, gain)\n'
            ) in path.read_text()
    g, d = build(path, "Generator", "Discriminator")
    assert [layout(g), layout(d)] == before
    # The init now reaches the trained parameter: its std is the init's, not PyTorch's default.
    torch.manual_seed(0)
    d = build(path, "Discriminator")[0]
    assert abs(d.conv1.parametrizations.weight.original.std().item() - 0.02) < 0.005


# SPADE's discriminator: the hook API through a norm_layer helper on its middle layers.
NORMS = '''\
import torch.nn as nn
from torch.nn.utils import spectral_norm


def get_norm_layer(norm_type="spectralinstance"):
    def add_norm_layer(layer):
        layer = spectral_norm(layer)
        return nn.Sequential(layer, nn.InstanceNorm2d(layer.out_channels, affine=False))

    return add_norm_layer
'''

MIXED = '''\
import torch.nn as nn

from norms import get_norm_layer


class NLayerDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        norm_layer = get_norm_layer("spectralinstance")
        self.first = nn.Conv2d(3, 8, 4, 2, 1)
        self.middle = norm_layer(nn.Conv2d(8, 16, 4, 2, 1))
        self.last = nn.Conv2d(16, 1, 4, 1, 1)
        self.act = nn.LeakyReLU(0.2)

    def forward(self, x):
        return self.last(self.act(self.middle(self.act(self.first(x)))))
'''


def test_missing_sn_is_added_with_the_api_the_discriminator_uses(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "norms.py").write_text(NORMS)
    path = tmp_path / "disc.py"
    path.write_text(MIXED)
    snlint("--fix", ".")
    assert path.read_text() == MIXED  # wrapping changes keys: unsafe
    snlint("--fix", "--unsafe-fixes", "--select", "SN201", ".")
    fixed = path.read_text()
    assert "from torch.nn.utils import spectral_norm\n" in fixed
    assert "        self.first = spectral_norm(nn.Conv2d(3, 8, 4, 2, 1))\n" in fixed
    assert "        self.last = spectral_norm(nn.Conv2d(16, 1, 4, 1, 1))\n" in fixed
    d = build(path, "NLayerDiscriminator")[0]
    convs = [m for m in d.modules() if isinstance(m, torch.nn.Conv2d)]
    assert len(convs) == 3
    assert all(hasattr(m, "weight_orig") and not hasattr(m, "parametrizations") for m in convs)
    assert d(torch.randn(2, 3, 16, 16)).shape[0] == 2


# ParallelWaveGAN's scale discriminator: SN applied by `apply` on the hook API, and a
# `remove_spectral_norm()` method that skips layers without SN by catching ValueError.
REMOVABLE = '''\
import torch


class ScaleDiscriminator(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(torch.nn.Conv1d(1, 8, 15, 1, 7), torch.nn.LeakyReLU(0.1),
                                          torch.nn.Conv1d(8, 1, 3, 1, 1))

        def _apply_spectral_norm(m):
            if isinstance(m, torch.nn.Conv1d):
                torch.nn.utils.spectral_norm(m)

        self.apply(_apply_spectral_norm)

    def remove_spectral_norm(self):
        def _remove_spectral_norm(m):
            try:
                torch.nn.utils.remove_spectral_norm(m)
            except ValueError:
                return

        self.apply(_remove_spectral_norm)

    def forward(self, x):
        return self.layers(x)
'''


def test_the_migrated_discriminator_still_removes_its_spectral_norm(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "d.py"
    path.write_text(REMOVABLE)
    snlint("--fix", "--unsafe-fixes", "--select", "SN501", str(path))
    assert 'torch.nn.utils.parametrize.remove_parametrizations(m, "weight")' in path.read_text()
    d = build(path, "ScaleDiscriminator")[0]
    convs = [m for m in d.modules() if isinstance(m, torch.nn.Conv1d)]
    assert all(torch.nn.utils.parametrize.is_parametrized(m, "weight") for m in convs)
    real, fake = torch.randn(2, 1, 64), torch.randn(2, 1, 64)
    loss = (1 - d(real)).relu().mean() + (1 + d(fake)).relu().mean()
    loss.backward()  # a D step on the migrated layers
    d.eval()
    expected = d(real).detach()
    d.remove_spectral_norm()
    assert not any(torch.nn.utils.parametrize.is_parametrized(m) for m in convs)
    assert torch.allclose(d(real), expected)
