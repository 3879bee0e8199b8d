"""A precision rule is written once: the layers only the runtime sees (built where the
source pass cannot follow) are judged by the same rule functions, with the same verdicts,
as the layers the source sees; `snlint.audit` (no source side) goes through them too."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("torch")

from graph_helpers import span_of, write  # noqa: E402

from snlint.config import Config  # noqa: E402
from snlint.engine import run  # noqa: E402

# `NN.` is torch.nn reached through importlib: the source pass cannot tell what it builds.
HIDDEN_LAYERS = '''
    import importlib

    import torch.nn as nn
    from torch.nn.utils import weight_norm
    from torch.nn.utils.parametrizations import spectral_norm

    NN = importlib.import_module("torch.nn")


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = spectral_norm(nn.Conv2d(3, 8, 3, padding=1))
            self.blocks = nn.ModuleList()
            for _ in range(2):
                self.blocks.append(weight_norm(NN.Conv2d(8, 8, 3, padding=1)))
            self.norm = NN.BatchNorm2d(8)
            self.plain = NN.Conv2d(8, 1, 3, padding=1)

        def forward(self, x):
            x = self.head(x)
            for block in self.blocks:
                x = block(x)
            return self.plain(self.norm(x))
'''

EXPECTED = [
    ("SN301", span_of(HIDDEN_LAYERS, "NN.BatchNorm2d(8)")),
    ("SN201", span_of(HIDDEN_LAYERS, "NN.Conv2d(8, 1, 3, padding=1)")),
]


def where(findings):
    return [(f.code, (f.line, f.column, f.end_line, f.end_column)) for f in findings]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("hidden")
    write(root, "d.py", HIDDEN_LAYERS)
    return root


def test_the_source_pass_alone_sees_none_of_these_layers(project):
    assert run([str(project)], Config(root=project, graph=False)).findings == []


def test_runtime_only_layers_are_judged_by_the_source_rules_verdicts(project):
    findings = run([str(project)], Config(root=project, graph=True)).findings
    # The weight-normalized convs of the loop need no SN (needs_sn); the batch norm and
    # the plain conv are found by the same SN301 and SN201 functions, from the graph only.
    assert where(findings) == EXPECTED
    assert {f.pass_ for f in findings} == {"graph"}
    sn301, sn201 = findings
    assert sn301.symbol == "Discriminator.norm" and sn201.symbol == "Discriminator.plain"
    assert sn301.discriminator.cls.endswith("d.py:Discriminator")
    assert "instances" not in sn201.message and sn201.data.sn_api == "parametrization"


def test_audit_goes_through_the_same_rules_with_no_source_side(project, monkeypatch):
    import snlint

    monkeypatch.syspath_prepend(str(project))
    sys.modules.pop("d", None)
    import d

    findings = snlint.audit(lambda: d.Discriminator())
    assert where(findings) == EXPECTED
    assert {f.pass_ for f in findings} == {"graph"}
    sys.modules.pop("d", None)


# The SN call is reached through importlib: the source pass sees no SN at all.
HIDDEN_SN = '''
    import importlib

    import torch.nn as nn

    HOOK_SN = importlib.import_module("torch.nn.utils").spectral_norm


    class DimDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = HOOK_SN(nn.Conv2d(3, 8, 1), dim=1)
            self.b = HOOK_SN(nn.Conv2d(8, 1, 3), dim=1)

        def forward(self, x):
            return self.b(self.a(x))
'''


def test_runtime_only_sn_gets_the_source_rules_1x1_exception(tmp_path):
    write(tmp_path, "d.py", HIDDEN_SN)
    assert run([str(tmp_path)], Config(root=tmp_path, graph=False)).findings == []
    findings = run([str(tmp_path)], Config(root=tmp_path, graph=True)).findings
    # dim=1 on the 1x1 conv flattens to the transpose (one sigma): SN105 only on the 3x3.
    assert where(findings) == [("SN105", span_of(HIDDEN_SN, "dim=1", nth=1))]
    (sn105,) = findings
    assert (sn105.pass_, sn105.symbol, sn105.discriminator) == ("graph", "DimDiscriminator.b", None)


def test_runtime_only_findings_name_the_discriminator_as_the_source_rules_do(project):
    findings = run([str(project)], Config(root=project, graph=True)).findings
    sn301, sn201 = findings
    assert sn301.message.startswith(
        "BatchNorm2d `norm` in Discriminator normalizes with the statistics of the current batch in training mode")
    assert sn301.evidence.startswith("Measured: perturbing sample 0 changes the other samples' output of `norm`.")
    assert sn201.message == (
        "Conv2d Discriminator.plain has no spectral norm, but Discriminator normalizes its other conv/linear layers")
    assert sn201.evidence.startswith("It computes with its raw weight, σ = 0.")
