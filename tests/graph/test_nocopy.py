"""No copy, no trace: facts without `copy.deepcopy` and, where fx gives up, from a forward
recorded with hooks.

Most targets run in one worker (one torch import), in a module-scoped fixture; the state
restore and determinism are checked in-process.
"""

from __future__ import annotations

import copy
import importlib.util
import textwrap

import pytest

torch = pytest.importorskip("torch")

from graph_helpers import at, class_location, display_for, span_of, write  # noqa: E402

from snlint.catalogue import load_catalogue  # noqa: E402
from snlint.graph_pass import built_findings  # noqa: E402
from snlint.config import Config  # noqa: E402
from snlint.engine import run  # noqa: E402
from snlint.graph import GraphTarget, run_graph, sites  # noqa: E402
from snlint.graph.pristine import Pristine  # noqa: E402
from snlint.graph.worker import collect  # noqa: E402

# The old weight_norm is the point of these tests; torch's deprecation note is not.
pytestmark = pytest.mark.filterwarnings("ignore:.*weight_norm.*deprecated:FutureWarning")

AUDIO = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import spectral_norm, weight_norm
from torch.nn.utils.parametrizations import weight_norm as p_weight_norm


class ScaleDiscriminator(nn.Module):
    """MelGAN-style: weight_norm everywhere (deepcopy refuses it), SN on the first scale."""

    def __init__(self, use_sn=False):
        super().__init__()
        norm = spectral_norm if use_sn else weight_norm
        self.convs = nn.ModuleList([
            norm(nn.Conv1d(1, 8, 15, 1, padding=7)),
            norm(nn.Conv1d(8, 8, 41, 4, groups=4, padding=20)),
            norm(nn.Conv1d(8, 8, 5, 1, padding=2)),
        ])
        self.post = norm(nn.Conv1d(8, 1, 3, 1, padding=1))

    def forward(self, x):
        for conv in self.convs:
            x = F.leaky_relu(conv(x), 0.1)
        return torch.flatten(self.post(x), 1, -1)


class WNBatchNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = weight_norm(nn.Conv1d(1, 8, 5, padding=2))
        self.bn = nn.BatchNorm1d(8)
        self.c2 = weight_norm(nn.Conv1d(8, 1, 5, padding=2))

    def forward(self, x):
        return self.c2(F.leaky_relu(self.bn(self.c1(x)), 0.1))


class PWNBatchNorm(nn.Module):
    """WNBatchNorm's twin with the parametrization API, which deepcopy accepts."""

    def __init__(self):
        super().__init__()
        self.c1 = p_weight_norm(nn.Conv1d(1, 8, 5, padding=2))
        self.bn = nn.BatchNorm1d(8)
        self.c2 = p_weight_norm(nn.Conv1d(8, 1, 5, padding=2))

    def forward(self, x):
        return self.c2(F.leaky_relu(self.bn(self.c1(x)), 0.1))


class PeriodDiscriminator(nn.Module):
    """HiFi-GAN-style: folds a waveform into 2-D by a period (fx cannot trace the `if`),
    and scores real and generated audio in one call."""

    def __init__(self, period=3):
        super().__init__()
        self.period = period
        self.c1 = weight_norm(nn.Conv2d(1, 8, (5, 1), (3, 1), padding=(2, 0)))
        self.post = weight_norm(nn.Conv2d(8, 1, (3, 1), 1, padding=(1, 0)))

    def score(self, x):
        b, c, t = x.shape
        if t % self.period != 0:
            x = F.pad(x, (0, self.period - t % self.period), "reflect")
            t = x.shape[-1]
        x = x.view(b, c, t // self.period, self.period)
        return torch.flatten(self.post(F.leaky_relu(self.c1(x), 0.1)), 1, -1)

    def forward(self, y, y_hat):
        return self.score(y), self.score(y_hat)
'''

UNTRACEABLE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import spectral_norm


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = spectral_norm(nn.Conv2d(3, 8, 3, padding=1))
        self.bn = nn.BatchNorm2d(8)
        self.c2 = spectral_norm(nn.Conv2d(9, 8, 3, padding=1))
        self.head = spectral_norm(nn.Linear(8, 1))

    def forward(self, x):
        if x.sum() > 0:
            x = x * 1.0
        n = int(x.shape[0])
        h = F.leaky_relu(self.bn(self.c1(x)), 0.2)
        h = F.batch_norm(h, None, None, training=True)
        std = h.std(0, keepdim=True).mean().expand(len(h), 1, *h.shape[2:])
        h = torch.cat([h, std], 1)
        return self.head(self.c2(h).mean([2, 3])).view(n, 1)


class QuietUntraceable(nn.Module):
    """Dropout, both SN APIs and an untraceable branch: nothing couples samples."""

    def __init__(self):
        super().__init__()
        self.c1 = spectral_norm(nn.Conv2d(3, 8, 3))
        self.drop = nn.Dropout(0.5)
        self.c2 = torch.nn.utils.parametrizations.spectral_norm(nn.Conv2d(8, 1, 3))

    def forward(self, x):
        h = self.drop(self.c1(x))
        if len(h) > 0:
            h = F.dropout(h, 0.3, training=self.training)
        return self.c2(h)


class Remembers(nn.Module):
    """Keeps Python state no restore reaches: each call scales by how often it ran."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 1, 3)
        self.seen = []

    def forward(self, x):
        self.seen.append(1)
        return self.c(x) * len(self.seen)


class ThreeArgs(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = spectral_norm(nn.Conv2d(3, 8, 3))

    def forward(self, x, y, z):
        if x.sum() > 0:
            x = x + y
        return self.c(x) + z
'''

FILES = {"audio.py": AUDIO, "untraceable.py": UNTRACEABLE}
CLASSES = {
    "audio.py": ["ScaleDiscriminator", "WNBatchNorm", "PWNBatchNorm", "PeriodDiscriminator"],
    "untraceable.py": ["Discriminator", "QuietUntraceable", "Remembers", "ThreeArgs"],
}


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    root = tmp_path_factory.mktemp("project")
    targets = []
    for name, source in FILES.items():
        path = write(root, name, source)
        targets += [GraphTarget(str(path), name, cls, None, str(root)) for cls in CLASSES[name]]
    results = run_graph(targets, timeout=60)
    rules = load_catalogue()
    out = {}
    for target, facts in zip(targets, results):
        fallback = class_location(root / target.display, target.display, target.class_name)
        findings = built_findings(facts, rules, display_for=display_for(root), fallback=fallback)
        out[target.class_name] = (facts, findings)
    return out


def _load(tmp_path, source, name):
    path = write(tmp_path, name + ".py", source)
    spec = importlib.util.spec_from_file_location(f"snlint_test_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- weight_norm: no deepcopy -----------------------------------------------------------


def test_weight_norm_refuses_deepcopy(tmp_path):
    """The premise, on this torch: the old weight_norm cannot be copied even unrun."""
    audio = _load(tmp_path, AUDIO, "audio")
    with pytest.raises(RuntimeError, match="weight_norm"):
        copy.deepcopy(audio.WNBatchNorm())


def test_weight_norm_discriminator_gets_module_facts_trace_and_probe(runtime):
    facts, findings = runtime["ScaleDiscriminator"]
    assert facts.status == "ok", facts.message
    assert facts.trace_ok and facts.recorded_by == "fx", facts.trace_reason
    assert [m.path for m in facts.modules] == ["convs.0", "convs.1", "convs.2", "post"]
    assert all(m.kind == "conv" and not m.sn for m in facts.modules)
    assert facts.probe["ran"] and not facts.probe["coupled"], facts.probe
    assert facts.probe["input_shape"] == [2, 1, 16]
    assert findings == []  # weight_norm on purpose: no SN201, no note


def test_weight_norm_with_batch_norm_is_found_by_module_facts_and_probe(runtime):
    facts, findings = runtime["WNBatchNorm"]
    assert at(findings) == [("SN301", *span_of(AUDIO, "nn.BatchNorm1d(8)"))]
    assert facts.probe["ran"] and facts.probe["coupled"]
    assert [s["path"] for s in facts.probe["sources"]] == ["bn"]


def test_probe_verdict_on_the_uncopyable_model_matches_its_copyable_twin(runtime):
    wn, _ = runtime["WNBatchNorm"]
    pwn, _ = runtime["PWNBatchNorm"]
    keys = ("ran", "coupled", "input_shape", "reason")
    assert {k: wn.probe[k] for k in keys} == {k: pwn.probe[k] for k in keys}
    assert [s["path"] for s in wn.probe["sources"]] == [s["path"] for s in pwn.probe["sources"]]


def test_period_discriminator_gets_a_waveform_and_a_second_input(runtime):
    facts, findings = runtime["PeriodDiscriminator"]
    assert not facts.trace_ok and facts.recorded_by == "hooks"
    assert facts.probe["ran"] and not facts.probe["coupled"], facts.probe
    assert facts.probe["input_shape"] == [2, 1, 1024]
    assert findings == []


# --- fx cannot trace: recorded with hooks -------------------------------------------------


def test_untraceable_forward_is_recorded_with_hooks(runtime):
    facts, findings = runtime["Discriminator"]
    assert not facts.trace_ok and facts.recorded_by == "hooks"
    assert at(findings) == [
        ("SN301", *span_of(UNTRACEABLE, "nn.BatchNorm2d(8)")),
        ("SN302", *span_of(UNTRACEABLE, "x.sum()")),
        ("SN301", *span_of(UNTRACEABLE, "F.batch_norm(h, None, None, training=True)")),
        ("SN302", *span_of(UNTRACEABLE, "h.std(0, keepdim=True)")),
    ]
    assert [what for what, _ in facts.batch_reductions] == ["`.sum()`", "`.std()`"]
    assert facts.probe["ran"] and facts.probe["coupled"]


def test_torch_layers_own_functional_calls_are_not_reported_twice(runtime):
    """BatchNorm2d calls F.batch_norm inside: that is the layer's fact (one SN301 at the
    layer), not a functional call at the line that calls the layer."""
    facts, _ = runtime["Discriminator"]
    lines = [s.line for s in facts.batch_norm_calls]
    assert lines == [span_of(UNTRACEABLE, "F.batch_norm(h, None, None, training=True)")[0]]


def test_no_false_coupling_from_dropout_or_sn_without_a_trace(runtime):
    facts, findings = runtime["QuietUntraceable"]
    assert not facts.trace_ok and facts.recorded_by == "hooks"
    assert facts.probe["ran"] and not facts.probe["coupled"], facts.probe
    assert findings == []


def test_a_forward_that_does_not_repeat_gives_no_verdict(runtime):
    facts, findings = runtime["Remembers"]
    assert not facts.probe["ran"] and not facts.probe["coupled"]
    assert facts.probe["reason"].startswith("the same input gave another output on a second run")
    assert findings == []


def test_sn913_says_what_was_lost_when_no_forward_could_run(runtime):
    facts, findings = runtime["ThreeArgs"]
    assert facts.recorded_by == "" and not facts.probe["ran"]
    assert [f.code for f in findings] == ["SN913"]
    message = findings[0].message
    assert message.startswith("graph pass: torch.fx cannot trace ThreeArgs: TraceError")
    assert message.endswith("; `F.batch_norm` calls and batch reductions are unknown (layer "
                            "facts still checked; no forward recorded (forward needs 3 arguments))")


def test_untraceable_discriminator_through_the_engine(tmp_path):
    (tmp_path / "d.py").write_text(textwrap.dedent(UNTRACEABLE), encoding="utf-8")
    config = Config(root=tmp_path, graph=True, extend_select=("SN302",))
    findings = [f for f in run([str(tmp_path)], config).findings
                if f.discriminator and f.discriminator.cls.endswith("d.py:Discriminator")]
    assert [(f.code, f.line, f.pass_) for f in findings] == [
        ("SN301", span_of(UNTRACEABLE, "nn.BatchNorm2d(8)")[0], "source+graph"),
        ("SN302", span_of(UNTRACEABLE, "x.sum()")[0], "graph"),
        ("SN301", span_of(UNTRACEABLE, "F.batch_norm(h, None, None, training=True)")[0], "source+graph"),
        ("SN302", span_of(UNTRACEABLE, "h.std(0, keepdim=True)")[0], "source+graph"),
    ]


# --- restoring instead of copying --------------------------------------------------------


def _built(module, name):
    sites.clear_caches()
    with sites.recording():
        return getattr(module, name)()


def test_collect_twice_on_one_model_gives_the_same_facts(tmp_path):
    module = _load(tmp_path, UNTRACEABLE, "untraceable")
    model = _built(module, "Discriminator")
    target = GraphTarget(module.__file__, "untraceable.py", "Discriminator")
    first, second = collect(model, target).to_dict(), collect(model, target).to_dict()
    assert first["recorded_by"] == "hooks" and first["probe"]["ran"]
    assert first == second


def test_pristine_gives_back_every_state_a_forward_changes(tmp_path):
    module = _load(tmp_path, UNTRACEABLE, "untraceable")
    model = module.Discriminator()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    weight = model.c1.weight
    rng = torch.random.get_rng_state()
    with Pristine(model) as fresh:
        with fresh.use() as m:
            m(torch.randn(2, 3, 8, 8))
            m.extra = 1
            m.bn.eval()
        assert not hasattr(model, "extra") and model.bn.training
        assert model.c1.weight is weight  # hook SN's recomputed weight, put back
        with fresh.use() as m:
            m(torch.randn(2, 3, 8, 8))
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)  # SN u/v, BN running stats
    assert torch.equal(torch.random.get_rng_state(), rng)
    copy.deepcopy(model)  # back to a never-run model: hook SN copies again
