"""snlint.audit: the graph pass in-process, on a module or a factory."""

from __future__ import annotations

import importlib.util

import pytest

torch = pytest.importorskip("torch")

from graph_helpers import span_of, write  # noqa: E402

from snlint import audit  # noqa: E402

MODELS = '''
import torch
import torch.nn as nn
from torch.nn.utils import spectral_norm


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = spectral_norm(nn.Conv2d(3, 8, 3))
        self.bn = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 1, 3)

    def forward(self, x):
        return self.c2(self.bn(self.c1(x)))


class ThreeInputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = spectral_norm(nn.Linear(8, 1))

    def forward(self, x, y, z):
        x = x - x.mean(0, keepdim=True)
        return self.lin(x) + y + z
'''


@pytest.fixture
def models(tmp_path):
    path = write(tmp_path, "models.py", MODELS)
    spec = importlib.util.spec_from_file_location("snlint_test_models", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path, module


def test_factory_gives_findings_at_source_sites(models):
    path, m = models
    findings = audit(lambda: m.Discriminator())
    assert [(f.code, f.path, f.line, f.column, f.end_column) for f in findings] == [
        ("SN301", str(path), *span_of(MODELS, "nn.BatchNorm2d(8)")[:2], span_of(MODELS, "nn.BatchNorm2d(8)")[3]),
        ("SN201", str(path), *span_of(MODELS, "nn.Conv2d(8, 1, 3)")[:2], span_of(MODELS, "nn.Conv2d(8, 1, 3)")[3]),
    ]
    assert all(f.pass_ == "graph" for f in findings)
    assert findings[0].discriminator.evidence == "configuration"


def test_module_built_earlier_has_its_findings_at_the_class(models):
    path, m = models
    model = m.Discriminator()
    model.eval()
    findings = audit(model)
    line = span_of(MODELS, "class Discriminator")[0]
    assert [(f.code, f.line) for f in findings] == [("SN201", line), ("SN301", line)]
    # audit inspects training mode but gives the module back as it was
    assert not model.training and not model.bn.training


def test_example_input_reaches_what_the_probe_cannot_guess(models):
    _, m = models
    assert [f.code for f in audit(lambda: m.ThreeInputs())] == []
    args = (torch.randn(2, 8), torch.zeros(2, 1), torch.zeros(2, 1))
    findings = audit(lambda: m.ThreeInputs(), example_input=args)
    assert [(f.code, f.line) for f in findings] == [("SN302", span_of(MODELS, "x.mean(0, keepdim=True)")[0])]


def test_hook_sn_module_after_a_forward_is_inspected_and_given_back_unchanged(models):
    _, m = models
    model = m.Discriminator()
    model(torch.randn(2, 3, 16, 16))  # hook SN now holds a non-leaf weight: no deepcopy
    before = {k: v.clone() for k, v in model.state_dict().items()}
    rng = torch.random.get_rng_state()
    findings = audit(model)
    line = span_of(MODELS, "class Discriminator")[0]
    assert [(f.code, f.line) for f in findings] == [("SN201", line), ("SN301", line)]
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)  # u, v, running stats
    assert torch.equal(torch.random.get_rng_state(), rng)


def test_factory_must_return_a_module():
    with pytest.raises(TypeError, match="not an nn.Module"):
        audit(lambda: 3)


def test_snlint_audit_is_the_function_on_the_package(models):
    import snlint

    _, m = models
    assert [f.code for f in snlint.audit(lambda: m.Discriminator())] == ["SN301", "SN201"]


def test_importing_snlint_does_not_import_torch():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import sys, snlint; print('torch' in sys.modules)"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
