"""Graph rules from real, built torch modules, run through the child worker.

All targets of this module run in one worker (one torch import), in a module-scoped
fixture; each test reads the findings of its own class.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from graph_helpers import at, class_location, display_for, span_of, write  # noqa: E402

from snlint.catalogue import load_catalogue  # noqa: E402
from snlint.checks.verdicts import has_batch_statistics  # noqa: E402
from snlint.graph_pass import built_findings  # noqa: E402
from snlint.link.join import runtime_of  # noqa: E402
from snlint.graph import GraphTarget, run_graph  # noqa: E402

HEADER = '''
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import spectral_norm
from torch.nn.utils.parametrizations import spectral_norm as p_sn
'''

RESNET = HEADER + '''

def snconv(cin, cout, k=3):
    return spectral_norm(nn.Conv2d(cin, cout, k, 1, k // 2))


class DBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.c1 = snconv(cin, cout)
        self.c2 = snconv(cout, cout)
        self.c_sc = nn.Conv2d(cin, cout, 1)

    def forward(self, x):
        return F.leaky_relu(self.c2(F.leaky_relu(self.c1(x), 0.2)), 0.2) + self.c_sc(x)


class ResNetDiscriminator(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.blocks = nn.Sequential(*[DBlock(3 if i == 0 else ch, ch) for i in range(4)])
        self.head = spectral_norm(nn.Linear(ch, 1))

    def forward(self, x):
        return self.head(self.blocks(x).sum([2, 3]))


class PatchDiscriminator(nn.Module):
    def __init__(self, nc=3, ndf=8, n_layers=3, norm_layer=nn.BatchNorm2d):
        super().__init__()
        layers = [p_sn(nn.Conv2d(nc, ndf, 4, 2, 1)), nn.LeakyReLU(0.2)]
        for i in range(1, n_layers):
            layers += [p_sn(nn.Conv2d(ndf, ndf, 4, 2, 1)), norm_layer(ndf), nn.LeakyReLU(0.2)]
        layers += [p_sn(nn.Conv2d(ndf, 1, 3, 1, 1))]
        self.model = nn.Sequential(*layers)

    def forward(self, x):
        return self.model(x)


def add_sn(m):
    if isinstance(m, (nn.Conv2d, nn.Linear, nn.GroupNorm)):
        spectral_norm(m)


class ApplyDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.GroupNorm(2, 8), nn.LeakyReLU(0.2),
                                 nn.Conv2d(8, 8, 3), nn.GroupNorm(2, 8))
        self.head = nn.Linear(8, 1)
        self.apply(add_sn)

    def forward(self, x):
        return self.head(self.net(x).mean([2, 3]))


conv3 = functools.partial(nn.Conv2d, kernel_size=3, padding=1)


class PartialDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = spectral_norm(conv3(3, 8))
        self.b = conv3(8, 8)
        self.out = spectral_norm(nn.Linear(8, 1))

    def forward(self, x):
        return self.out(self.b(self.a(x)).mean([2, 3]))


class TwoOnALine(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = p_sn(nn.Conv2d(3, 3, 3, padding=1))
        self.p, self.q = nn.Conv2d(3, 3, 3, padding=1), nn.Conv2d(3, 1, 3, padding=1)

    def forward(self, x):
        return self.q(self.p(self.c(x)))
'''

MISUSE = HEADER + '''

class MisuseDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = spectral_norm(nn.Conv2d(3, 8, 3), dim=1)
        self.c2 = p_sn(p_sn(nn.Conv2d(8, 8, 3)))
        self.gn = p_sn(nn.GroupNorm(2, 8))
        self.inorm = spectral_norm(nn.InstanceNorm2d(8, affine=True))
        self.act = p_sn(nn.PReLU())
        self.c3 = spectral_norm(nn.Conv2d(8, 8, 3), name="bias")
        self.c4 = p_sn(nn.Conv2d(8, 8, 1), dim=1)
        self.tc = p_sn(nn.ConvTranspose2d(8, 8, 3))
        self.tc0 = p_sn(nn.ConvTranspose2d(8, 8, 3), dim=0)
        self.lin = spectral_norm(nn.Linear(8, 1), dim=1)

    def forward(self, x):
        h = self.act(self.inorm(self.gn(self.c2(self.c1(x)))))
        h = self.tc0(self.tc(self.c4(self.c3(h))))
        return self.lin(h.mean([2, 3]))


class AttnDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = p_sn(nn.Linear(8, 16))
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)
        spectral_norm(self.attn.out_proj)
        self.attn2 = nn.MultiheadAttention(16, 2, batch_first=True)
        p_sn(self.attn2.out_proj)
        self.out = p_sn(nn.Linear(16, 1))

    def forward(self, x):
        h = self.inp(x).unsqueeze(1)
        h = self.attn(h, h, h)[0] + self.attn2(h, h, h)[0]
        return self.out(h.squeeze(1))


class SpectralNorm(nn.Module):
    """SAGAN's hand-written SN wrapper (weight_bar, weight_u, weight_v)."""

    def __init__(self, module, name="weight"):
        super().__init__()
        self.module, self.name = module, name
        w = getattr(module, name)
        module.register_parameter(name + "_u", nn.Parameter(torch.randn(w.shape[0]), requires_grad=False))
        module.register_parameter(name + "_bar", nn.Parameter(w.data))
        del module._parameters[name]

    def forward(self, *args):
        w = getattr(self.module, self.name + "_bar")
        u = getattr(self.module, self.name + "_u")
        mat = w.view(w.shape[0], -1)
        v = F.normalize(mat.t() @ u, dim=0)
        u.data = F.normalize(mat @ v, dim=0)
        setattr(self.module, self.name, w / (u @ (mat @ v)))
        return self.module(*args)


class SAGANDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = SpectralNorm(nn.Conv2d(3, 8, 3))
        self.c2 = nn.Conv2d(8, 1, 3)

    def forward(self, x):
        return self.c2(F.leaky_relu(self.c1(x), 0.1))


class SNConv2d(nn.Conv2d):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        spectral_norm(self)


class SubclassDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = SNConv2d(3, 8, 3)
        self.c2 = SNConv2d(8, 1, 3)

    def forward(self, x):
        return self.c2(F.leaky_relu(self.c1(x), 0.2))


class SNOnSequential(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = p_sn(nn.Sequential(nn.Conv2d(3, 8, 3)))


class NeedsArgs(nn.Module):
    def __init__(self, in_ch, ndf, n_layers=3):
        super().__init__()
        self.c = p_sn(nn.Conv2d(in_ch, ndf, 3))
        self.bn = nn.BatchNorm2d(ndf)

    def forward(self, x):
        return self.bn(self.c(x))
'''

COUPLING = HEADER + '''

class BranchyDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = spectral_norm(nn.Conv2d(3, 8, 3))
        self.c2 = nn.Conv2d(8, 1, 3)

    def forward(self, x):
        h = self.c1(x)
        if h.mean() > 0:
            h = h * 2
        return self.c2(h)


class MinibatchStdDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = p_sn(nn.Conv2d(3, 8, 3))
        self.head = p_sn(nn.Linear(8, 1))

    def forward(self, x):
        h = self.c1(x)
        h = h + h.std(0, keepdim=True).mean()
        return self.head(h.mean([2, 3]))


class UntraceableStdDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = p_sn(nn.Conv2d(3, 8, 3))
        self.head = p_sn(nn.Linear(8, 1))

    def forward(self, x):
        h = self.c1(x)
        if h.shape[0] > 1:
            h = h + h.roll(1, 0)
        return self.head(h.mean([2, 3]))


class MinibatchStd(nn.Module):
    def forward(self, x):
        std = x.std(0, keepdim=True).mean()
        if std > 0:
            x = x + std
        return x


class LocatedStdDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = p_sn(nn.Conv2d(3, 8, 3))
        self.mbstd = MinibatchStd()
        self.head = p_sn(nn.Linear(8, 1))

    def forward(self, x):
        return self.head(self.mbstd(self.c1(x)).mean([2, 3]))


class SequenceFirstAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = p_sn(nn.Linear(8, 16))
        self.attn = nn.MultiheadAttention(16, 2)
        self.out = p_sn(nn.Linear(16, 1))

    def forward(self, x):
        h = self.inp(x).unsqueeze(1)
        return self.out(self.attn(h, h, h)[0].squeeze(1))


class FunctionalBNDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = p_sn(nn.Conv2d(3, 8, 3))
        self.head = p_sn(nn.Linear(8, 1))

    def forward(self, x):
        h = F.batch_norm(self.c1(x), None, None, training=True)
        return self.head(h.mean([2, 3]))


class QuietDiscriminator(nn.Module):
    """Per-sample norms, dropout, both SN APIs, and a batch norm train() keeps in eval."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            p_sn(nn.Conv2d(3, 8, 3)), nn.InstanceNorm2d(8, affine=True), nn.LeakyReLU(0.2),
            p_sn(nn.Conv2d(8, 8, 3)), nn.GroupNorm(2, 8), nn.Dropout(0.5),
            spectral_norm(nn.Conv2d(8, 8, 3)), nn.LayerNorm([8, 26, 26]), nn.Dropout2d(0.3),
            spectral_norm(nn.Conv2d(8, 8, 3)), nn.BatchNorm2d(8),
        )
        self.head = p_sn(nn.Linear(8, 1))

    def train(self, mode=True):
        super().train(mode)
        for m in self.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.eval()
        return self

    def forward(self, x):
        return self.head(self.net(x).mean([2, 3]))


class ProjectionDiscriminator(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.c1 = p_sn(nn.Conv2d(3, 8, 4, 2, 1))
        self.c2 = p_sn(nn.Conv2d(8, 8, 4, 2, 1))
        self.lin = p_sn(nn.Linear(8, 1))
        self.embed = p_sn(nn.Embedding(num_classes, 8))

    def forward(self, x, y):
        h = F.leaky_relu(self.c2(F.leaky_relu(self.c1(x), 0.2)), 0.2).sum([2, 3])
        return self.lin(h) + (self.embed(y) * h).sum(1, keepdim=True)


class MNISTDiscriminator(nn.Module):
    """28x28 input with a view(-1) head: at 32, 64, ... the head folds positions into the
    batch dimension, and the probe must not accept those outputs."""

    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            p_sn(nn.Conv2d(1, 8, 4, 2, 1)), nn.LeakyReLU(0.2),
            p_sn(nn.Conv2d(8, 16, 4, 2, 1)), nn.LeakyReLU(0.2),
            p_sn(nn.Conv2d(16, 1, 7)),
        )

    def forward(self, x):
        return self.main(x).view(-1)
'''

FLAT = HEADER + '''

class FlatPatchDiscriminator(nn.Module):
    """A patch critic whose .flatten() head folds positions into the batch at every size."""

    def __init__(self, norm=nn.GroupNorm):
        super().__init__()
        self.c1 = p_sn(nn.Conv2d(3, 8, 4, 2, 1))
        self.n = norm(2, 8) if norm is nn.GroupNorm else norm(8)
        self.c2 = p_sn(nn.Conv2d(8, 1, 3, 1, 1))

    def forward(self, x):
        return self.c2(F.leaky_relu(self.n(self.c1(x)), 0.2)).flatten()


class FlatPatchBN(FlatPatchDiscriminator):
    def __init__(self):
        super().__init__(norm=nn.BatchNorm2d)
'''

FILES = {"resnet.py": RESNET, "misuse.py": MISUSE, "coupling.py": COUPLING, "flat.py": FLAT}
CLASSES = {
    "resnet.py": ["ResNetDiscriminator", "PatchDiscriminator", "ApplyDiscriminator",
                  "PartialDiscriminator", "TwoOnALine"],
    "misuse.py": ["MisuseDiscriminator", "AttnDiscriminator", "SAGANDiscriminator",
                  "SubclassDiscriminator", "SNOnSequential", "NeedsArgs", "NoSuchClass"],
    "coupling.py": ["BranchyDiscriminator", "MinibatchStdDiscriminator",
                    "UntraceableStdDiscriminator", "LocatedStdDiscriminator",
                    "SequenceFirstAttention", "FunctionalBNDiscriminator",
                    "QuietDiscriminator", "ProjectionDiscriminator", "MNISTDiscriminator"],
    "flat.py": ["FlatPatchDiscriminator", "FlatPatchBN"],
}


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    """{name: (TargetFacts, findings)} for every target, from one worker run."""
    root = tmp_path_factory.mktemp("project")
    targets = []
    for name, source in FILES.items():
        path = write(root, name, source)
        targets += [GraphTarget(str(path), name, cls, None, str(root)) for cls in CLASSES[name]]
    targets.append(GraphTarget(str(root / "misuse.py"), "misuse.py", "NeedsArgs",
                               {"in_ch": 3, "ndf": 8}, str(root)))
    results = run_graph(targets, timeout=60)
    rules = load_catalogue()
    out = {}
    for target, facts in zip(targets, results):
        fallback = class_location(root / target.display, target.display, target.class_name)
        findings = built_findings(facts, rules, display_for=display_for(root), fallback=fallback)
        key = target.class_name + ("[configured]" if target.kwargs else "")
        out[key] = (facts, findings)
    out["_root"] = root
    return out


def codes(findings):
    return sorted(f.code for f in findings)


# --- SN201 through helpers, loops, partials ---------------------------------------------


def test_missing_sn_on_shortcut_built_in_a_loop_is_one_finding(runtime):
    facts, findings = runtime["ResNetDiscriminator"]
    assert facts.status == "ok" and facts.trace_ok
    assert at(findings) == [("SN201", *span_of(RESNET, "nn.Conv2d(cin, cout, 1)"))]
    finding = findings[0]
    assert finding.symbol == "ResNetDiscriminator.blocks.0.c_sc"
    assert "4 instances built here" in finding.message
    assert finding.pass_ == "graph"
    assert finding.discriminator.to_dict() == {"class": "resnet.py:ResNetDiscriminator",
                                               "evidence": "name"}


def test_helper_layers_sit_at_the_helper_call_seen_from_the_block(runtime):
    facts, _ = runtime["ResNetDiscriminator"]
    c1 = next(m for m in facts.modules if m.path == "blocks.0.c1")
    line, column, _, end = span_of(RESNET, "snconv(cin, cout)")
    assert (c1.site.line, c1.site.column, c1.site.end_column) == (line, column, end)
    # The SN call itself is inside the helper.
    line, column, _, end = span_of(RESNET, "spectral_norm(nn.Conv2d(cin, cout, k, 1, k // 2))")
    assert (c1.sn[0].site.line, c1.sn[0].site.column, c1.sn[0].site.end_column) == (line, column, end)
    assert c1.instances == 4


def test_missing_sn_through_a_partial(runtime):
    _, findings = runtime["PartialDiscriminator"]
    assert at(findings) == [("SN201", *span_of(RESNET, "conv3(8, 8)"))]


def test_two_layers_on_one_line_are_told_apart_by_column(runtime):
    _, findings = runtime["TwoOnALine"]
    assert at(findings) == [
        ("SN201", *span_of(RESNET, "nn.Conv2d(3, 3, 3, padding=1)", nth=1)),
        ("SN201", *span_of(RESNET, "nn.Conv2d(3, 1, 3, padding=1)")),
    ]


def test_sn_added_by_apply_counts_and_sn_on_group_norm_is_found_in_the_function(runtime):
    facts, findings = runtime["ApplyDiscriminator"]
    # No SN201: apply() put SN on every conv and the linear head.
    assert at(findings) == [("SN101", *span_of(RESNET, "spectral_norm(m)"))]
    assert "2 instances built here" in findings[0].message
    assert findings[0].discriminator is None


# --- SN301 ---------------------------------------------------------------------------


def test_batch_norm_from_norm_layer_default_points_at_the_parameter(runtime):
    facts, findings = runtime["PatchDiscriminator"]
    assert at(findings) == [("SN301", *span_of(RESNET, "norm_layer=nn.BatchNorm2d"))]
    assert "2 instances" in findings[0].message
    assert facts.probe["ran"] and facts.probe["coupled"]  # explained by the batch norm: no SN302
    assert has_batch_statistics(facts)


def test_functional_batch_norm_in_training(runtime):
    facts, findings = runtime["FunctionalBNDiscriminator"]
    expected = span_of(COUPLING, "F.batch_norm(self.c1(x), None, None, training=True)")
    assert at(findings) == [("SN301", *expected)]
    assert facts.probe["coupled"]


# --- SN1xx, both APIs ----------------------------------------------------------------


def test_sn_misuse_on_both_apis(runtime):
    facts, findings = runtime["MisuseDiscriminator"]
    assert facts.status == "ok", facts.message
    assert at(findings) == [
        ("SN105", *span_of(MISUSE, "dim=1")),
        ("SN103", *span_of(MISUSE, "p_sn(p_sn(nn.Conv2d(8, 8, 3)))")),
        ("SN101", *span_of(MISUSE, "p_sn(nn.GroupNorm(2, 8))")),
        ("SN101", *span_of(MISUSE, "spectral_norm(nn.InstanceNorm2d(8, affine=True))")),
        ("SN102", *span_of(MISUSE, "p_sn(nn.PReLU())")),
        ("SN104", *span_of(MISUSE, 'spectral_norm(nn.Conv2d(8, 8, 3), name="bias")')),
        ("SN105", *span_of(MISUSE, "dim=0")),
    ]
    by_code = {f.code: f for f in findings}
    assert by_code["SN102"].message.startswith("spectral norm on PReLU, which has a 1-D weight")
    assert by_code["SN103"].symbol == "MisuseDiscriminator.c2"


def test_hook_sn_on_attention_out_proj_never_runs(runtime):
    facts, findings = runtime["AttnDiscriminator"]
    # The parametrization on attn2.out_proj does apply: no finding there.
    assert at(findings) == [("SN107", *span_of(MISUSE, "spectral_norm(self.attn.out_proj)"))]
    assert findings[0].symbol == "AttnDiscriminator.attn.out_proj"
    assert facts.probe["input_shape"] == [2, 8]


def test_hand_written_sn_wrapper_counts_as_sn(runtime):
    facts, findings = runtime["SAGANDiscriminator"]
    assert facts.trace_ok, facts.trace_reason
    assert at(findings) == [("SN201", *span_of(MISUSE, "nn.Conv2d(8, 1, 3)"))]
    c1 = next(m for m in facts.modules if m.path == "c1.module")
    assert [(s.api, s.name) for s in c1.sn] == [("custom", "weight")]


def test_hook_sn_on_a_conv_subclass_stays_a_leaf_for_fx(runtime):
    facts, findings = runtime["SubclassDiscriminator"]
    assert facts.trace_ok, facts.trace_reason
    assert findings == []
    assert [m.path for m in facts.modules] == ["c1", "c2"]


# --- diagnostics ---------------------------------------------------------------------


def test_missing_constructor_arguments_are_guessed_by_name(runtime):
    facts, findings = runtime["NeedsArgs"]
    assert facts.status == "ok"
    assert facts.built_with == "built with guessed sizes: in_ch=3, ndf=64"
    assert at(findings) == [("SN301", *span_of(MISUSE, "nn.BatchNorm2d(ndf)"))]


def test_configured_arguments_build_the_class(runtime):
    facts, findings = runtime["NeedsArgs[configured]"]
    assert facts.status == "ok"
    assert at(findings) == [("SN301", *span_of(MISUSE, "nn.BatchNorm2d(ndf)"))]


def test_torch_error_at_sn_time_is_a_build_diagnostic(runtime):
    facts, findings = runtime["SNOnSequential"]
    assert [f.code for f in findings] == ["SN912"]
    line = span_of(MISUSE, "self.body")[0]
    assert findings[0].message == (
        "graph pass: cannot build SNOnSequential: SNOnSequential() raised ValueError: "
        "Module 'Sequential( (0): Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1)) )' has no "
        f"parameter or buffer with name 'weight' (at misuse.py:{line})")


def test_unknown_class_is_a_build_diagnostic(runtime):
    _, findings = runtime["NoSuchClass"]
    assert [(f.code, f.message) for f in findings] == [
        ("SN912", "graph pass: cannot build NoSuchClass: NoSuchClass is not defined in misuse.py")]


def test_untraceable_discriminator_keeps_module_findings_and_the_probe(runtime):
    facts, findings = runtime["BranchyDiscriminator"]
    assert not facts.trace_ok and "TraceError" in facts.trace_reason
    assert facts.recorded_by == "hooks"  # recorded from real forwards: no SN913
    # `if h.mean() > 0` reads every sample: a reduction over the batch.
    assert at(findings) == [("SN201", *span_of(COUPLING, "nn.Conv2d(8, 1, 3)")),
                            ("SN302", *span_of(COUPLING, "h.mean()"))]
    assert facts.probe["ran"]  # coupled or not: whether the perturbation flips the branch


# --- SN302 and the probe -------------------------------------------------------------


def test_minibatch_stddev_is_a_batch_reduction(runtime):
    facts, findings = runtime["MinibatchStdDiscriminator"]
    assert at(findings) == [("SN302", *span_of(COUPLING, "h.std(0, keepdim=True)"))]
    assert findings[0].severity == "info"
    assert facts.probe["coupled"] and not has_batch_statistics(facts)


def test_coupling_only_the_probe_sees_goes_to_the_class(runtime):
    facts, findings = runtime["UntraceableStdDiscriminator"]
    assert codes(findings) == ["SN302"] and facts.batch_reductions == []
    sn302 = next(f for f in findings if f.code == "SN302")
    assert sn302.line == span_of(COUPLING, "class UntraceableStdDiscriminator")[0]
    assert "probe" in sn302.message


def test_probe_locates_coupling_inside_an_untraceable_module(runtime):
    facts, findings = runtime["LocatedStdDiscriminator"]
    # The forward recorded with hooks finds the reduction itself, which wins.
    assert at(findings) == [("SN302", *span_of(COUPLING, "x.std(0, keepdim=True)"))]
    assert [s["path"] for s in facts.probe["sources"]] == ["mbstd"]


def test_probe_finds_attention_reading_the_batch_as_a_sequence(runtime):
    facts, findings = runtime["SequenceFirstAttention"]
    assert facts.trace_ok and facts.batch_reductions == []
    attention = span_of(COUPLING, "nn.MultiheadAttention(16, 2)")
    assert at(findings) == [("SN201", *attention), ("SN302", *attention)]
    assert "MultiheadAttention `attn` mix samples" in findings[1].message


def test_no_false_coupling_from_per_sample_norms_dropout_sn_or_eval_batch_norm(runtime):
    facts, findings = runtime["QuietDiscriminator"]
    assert findings == []
    assert facts.probe["ran"] and not facts.probe["coupled"], facts.probe
    bn = next(m for m in facts.modules if m.type_name == "BatchNorm2d")
    assert not bn.training and not bn.uses_batch_stats
    assert not has_batch_statistics(facts)


def test_conditional_discriminator_gets_class_labels(runtime):
    facts, findings = runtime["ProjectionDiscriminator"]
    assert findings == []
    assert facts.probe["ran"] and not facts.probe["coupled"]
    assert facts.probe["input_shape"] == [2, 3, 16, 16]


def test_probe_accepts_only_per_sample_outputs(runtime):
    facts, _ = runtime["MNISTDiscriminator"]
    assert facts.probe["ran"] and not facts.probe["coupled"]
    assert facts.probe["input_shape"] == [2, 1, 28, 28]


def test_flattened_patch_map_is_read_back_per_sample(runtime):
    facts, findings = runtime["FlatPatchDiscriminator"]
    assert findings == []
    assert facts.probe["ran"] and facts.probe["flattened_output"] and not facts.probe["coupled"]
    facts, findings = runtime["FlatPatchBN"]
    assert facts.probe["ran"] and facts.probe["coupled"]
    assert [s["path"] for s in facts.probe["sources"]] == ["n"]
    assert at(findings) == [("SN301", *span_of(FLAT, "norm(8)"))]


def test_the_join_finds_runtime_layers_by_construction_and_sn_sites(runtime):
    facts, _ = runtime["PartialDiscriminator"]
    joined = runtime_of(facts, display_for(runtime["_root"]))
    built = {(path, (s.line, s.column, s.end_line, s.end_column)): [m.path for m in leaves]
             for (path, s), leaves in joined.built_at.items()}
    sn = {(path, (s.line, s.column, s.end_line, s.end_column)) for path, s in joined.sn_at}
    assert built[("resnet.py", span_of(RESNET, "conv3(8, 8)"))] == ["b"]
    assert ("resnet.py", span_of(RESNET, "spectral_norm(conv3(3, 8))")) in sn
