"""The probe builds nothing twice and runs at the smallest input a discriminator accepts:
image sizes from small to large, the first that gives a per-sample output wins, at a
batch of two. In-process (`collect`), no worker."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from snlint.graph.facts import GraphTarget  # noqa: E402
from snlint.graph.probe import candidate_inputs  # noqa: E402
from snlint.graph.worker import collect  # noqa: E402


class Only32(nn.Module):
    """Four stride-2 convs then a Linear over the 2x2 map: 32x32 and nothing else."""

    def __init__(self):
        super().__init__()
        self.convs = nn.Sequential(*[nn.Conv2d(3 if i == 0 else 8, 8, 4, 2, 1) for i in range(4)])
        self.bn = nn.BatchNorm2d(8)
        self.head = nn.Linear(8 * 2 * 2, 1)

    def forward(self, x):
        return self.head(self.bn(self.convs(x)).flatten(1))


class AtLeast64(nn.Module):
    """Five stride-2 valid convs then global pooling: any size from 64 up."""

    def __init__(self):
        super().__init__()
        self.convs = nn.Sequential(*[nn.Conv2d(3 if i == 0 else 4, 4, 3, 2, 0) for i in range(5)])
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(self.convs(x).mean((2, 3)))


class OptionalLabels(nn.Module):
    """A projection discriminator whose labels default to None but are needed."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, 1, 1)
        self.embed = nn.Embedding(10, 4)

    def forward(self, x, y=None):
        h = self.conv(x).sum((2, 3))
        return h.sum(1) + (self.embed(y) * h).sum(1)


def _target(name: str) -> GraphTarget:
    return GraphTarget(__file__, "test_smallest_input.py", name)


def test_a_discriminator_that_accepts_only_32_is_probed_at_32():
    facts = collect(Only32().train(), _target("Only32"))
    assert facts.probe["ran"] and facts.probe["coupled"], facts.probe
    assert facts.probe["input_shape"] == [2, 3, 32, 32]


def test_a_discriminator_that_needs_64_or_more_is_probed_at_64():
    facts = collect(AtLeast64().train(), _target("AtLeast64"))
    assert facts.probe["ran"] and not facts.probe["coupled"], facts.probe
    assert facts.probe["input_shape"] == [2, 3, 64, 64]


def test_image_sizes_are_tried_from_small_to_large():
    made, _ = candidate_inputs(AtLeast64())
    sizes = [rest[-1] for _, rest in made if len(rest) == 3]
    assert sizes == sorted(sizes) and sizes[0] == 16


def test_an_optional_second_argument_gets_labels_when_the_plain_call_fails():
    facts = collect(OptionalLabels().train(), _target("OptionalLabels"))
    assert facts.probe["ran"], facts.probe
    assert facts.probe["input_shape"] == [2, 3, 16, 16]


def test_no_accepted_size_gives_the_largest_image_error_not_the_waveform_one():
    class Only7(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3)
            self.head = nn.Linear(4 * 5 * 5, 1)

        def forward(self, x):
            return self.head(self.conv(x).flatten(1))

    facts = collect(Only7().train(), _target("Only7"))
    assert not facts.probe["ran"]
    assert "2x258064" in facts.probe["reason"], facts.probe["reason"]  # 4 * 254 * 254


def test_an_output_averaged_over_the_batch_is_the_reason_not_a_larger_sizes_error():
    # WassersteinGAN's DCGAN_D returns `output.mean(0).view(1)`: it runs at 64x64 and
    # its output is one number; at 128 the `view(1)` raises, which says nothing.
    class BatchMeanCritic(nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = nn.Sequential(*[nn.Conv2d(3 if i == 0 else 4, 4, 4, 2, 1) for i in range(4)])
            self.head = nn.Conv2d(4, 1, 4)

        def forward(self, x):
            return self.head(self.convs(x)).mean(0).view(1)

    facts = collect(BatchMeanCritic().train(), _target("BatchMeanCritic"))
    assert not facts.probe["ran"]
    assert facts.probe["reason"] == "output shape [1] is not per sample (input 2x3x64x64)"


class EqualizedConv(nn.Module):
    """An equalized-learning-rate conv: a plain weight parameter, scaled in forward."""

    def __init__(self, c_in, c_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(c_out, c_in, 3, 3))
        self.scale = (c_in * 9) ** -0.5

    def forward(self, x):
        return torch.nn.functional.conv2d(x, self.weight * self.scale, padding=1)


class EqualizedCritic(nn.Module):
    """No torch conv or linear layer at all; a batch standardization after the first conv."""

    def __init__(self):
        super().__init__()
        self.c1 = EqualizedConv(3, 4)
        self.c2 = EqualizedConv(4, 1)

    def forward(self, x):
        h = self.c1(x)
        h = (h - h.mean(0)) / (h.std(0) + 1e-5)
        return self.c2(h).mean((1, 2, 3))


def test_a_discriminator_of_hand_written_layers_is_probed_from_its_first_weight():
    facts = collect(EqualizedCritic().train(), _target("EqualizedCritic"))
    assert facts.probe["ran"] and facts.probe["coupled"], facts.probe
    assert facts.probe["input_shape"] == [2, 3, 16, 16]


class Unshuffled(nn.Module):
    """Folds each 2x2 patch into channels before its first conv: RGB in, 12 channels seen."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(12, 4, 3, 1, 1)

    def forward(self, x):
        return self.conv(nn.functional.pixel_unshuffle(x, 2)).mean((1, 2, 3))


def test_a_discriminator_that_folds_space_into_channels_is_probed_with_an_rgb_image():
    facts = collect(Unshuffled().train(), _target("Unshuffled"))
    assert facts.probe["ran"], facts.probe
    assert facts.probe["input_shape"] == [2, 3, 16, 16]


class UnshuffledEqualized(nn.Module):
    """An equalized-lr conv after a space-to-depth fold: RGB in, 12 channels seen."""

    def __init__(self):
        super().__init__()
        self.conv = EqualizedConv(12, 1)

    def forward(self, x):
        return self.conv(nn.functional.pixel_unshuffle(x, 2)).mean((1, 2, 3))


def test_a_hand_written_first_layer_after_a_fold_is_probed_with_an_rgb_image():
    facts = collect(UnshuffledEqualized().train(), _target("UnshuffledEqualized"))
    assert facts.probe["ran"], facts.probe
    assert facts.probe["input_shape"] == [2, 3, 16, 16]


# --- the light snapshot: large trainable weights checked, not copied ---------------------


class WritesItsWeight(nn.Module):
    """A hand-written normalization that divides its weight in place at every forward."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 64, 4, 2, 1)  # 65,536 weights: checked, not copied
        self.bn = nn.BatchNorm2d(64)

    def forward(self, x):
        self.conv.weight.data /= 2.0
        return self.bn(self.conv(x)).flatten(1)


def test_a_light_snapshot_does_not_copy_large_weights():
    from snlint.graph.pristine import Pristine

    model = WritesItsWeight()
    with Pristine(model, light=True) as fresh:
        copied = {id(saved) for _, saved in fresh._values}
        assert len(fresh._checks) == 1 and fresh._checks[0][0] is model.conv.weight
        assert id(model.conv.weight) not in copied


def test_a_forward_that_writes_a_checked_weight_raises_mutated():
    from snlint.graph.pristine import Mutated, Pristine

    model = WritesItsWeight().train()
    with pytest.raises(Mutated):
        with Pristine(model, light=True) as fresh, fresh.use() as m, torch.no_grad():
            m(torch.randn(2, 64, 8, 8))


def test_the_full_snapshot_gives_the_same_probe_as_before_for_such_a_model():
    facts = collect(WritesItsWeight().train(), _target("WritesItsWeight"))
    assert facts.probe["ran"] and facts.probe["coupled"], facts.probe


def test_the_worker_builds_again_with_a_full_snapshot_when_a_forward_writes_a_weight(tmp_path):
    from snlint.graph import run_graph

    path = tmp_path / "writes.py"
    path.write_text(
        "import torch.nn as nn\n\n\n"
        "class WritesItsWeight(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.conv = nn.Conv2d(64, 64, 4, 2, 1)\n"
        "        self.bn = nn.BatchNorm2d(64)\n\n"
        "    def forward(self, x):\n"
        "        self.conv.weight.data /= 2.0\n"
        "        return self.bn(self.conv(x)).flatten(1)\n")
    [facts] = run_graph([GraphTarget(str(path), "writes.py", "WritesItsWeight", root=str(tmp_path))])
    assert facts.status == "ok", facts.message
    assert facts.probe["ran"] and facts.probe["coupled"], facts.probe


class PhaseShuffled(nn.Module):
    """A WaveGAN-style critic: phase shuffle, each group of samples drawn the same shift
    padded at once (`x[idxs]`), and a head over a fixed length: 4096 samples only."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(1, 4, 25, 4, 11)
        self.c2 = nn.Conv1d(4, 4, 25, 4, 11)
        self.head = nn.Linear(4 * 256, 1)

    def forward(self, x):
        x = self.c1(x)
        shifts = [i % 5 - 2 for i in range(x.shape[0])]  # fixed, so the test is deterministic
        out = x.clone()
        for k in set(shifts):
            idxs = [i for i, s in enumerate(shifts) if s == k]
            out[idxs] = torch.roll(x[idxs], k, -1)
        return self.head(self.c2(out).view(-1, 4 * 256))


class FirstSampleShifted(nn.Module):
    """The same selection fx can trace: `x[:1]` is one sample at any batch size."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 4, 3, 1, 1)

    def forward(self, x):
        x = self.conv(x)
        return torch.cat([torch.roll(x[:1], 1, -1), x[1:]]).mean((1, 2))


def test_a_waveform_critic_with_a_fixed_length_head_is_probed_at_that_length():
    facts = collect(PhaseShuffled().train(), _target("PhaseShuffled"))
    assert facts.probe["ran"] and not facts.probe["coupled"], facts.probe
    assert facts.probe["input_shape"] == [2, 1, 4096]


def test_picking_samples_out_of_the_batch_is_no_batch_reduction_in_a_recorded_forward():
    facts = collect(PhaseShuffled().train(), _target("PhaseShuffled"))
    assert not facts.trace_ok and facts.probe["ran"]
    assert facts.batch_reductions == []


def test_picking_samples_out_of_the_batch_is_no_batch_reduction_in_a_traced_forward():
    facts = collect(FirstSampleShifted().train(), _target("FirstSampleShifted"))
    assert facts.trace_ok and not facts.probe["coupled"], facts.probe
    assert facts.batch_reductions == []


class WithAuxiliaryLoss(nn.Module):
    """A discriminator returning its score and an auxiliary loss started at
    `torch.zeros(1).to(x)`: `x` lends only a dtype and a device (as `x.new_zeros`'s
    receiver does), so nothing is reduced over the batch."""

    def __init__(self, traceable: bool = True):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, 1, 1)
        self.traceable = traceable

    def forward(self, x):
        aux = torch.zeros(1).to(x) + x.new_zeros(1)
        if not self.traceable and x.shape[0] > 0:  # control flow fx cannot trace
            aux = aux + 1
        return self.conv(x).mean((1, 2, 3)), aux


@pytest.mark.parametrize("traceable", [True, False])
def test_a_tensor_lending_its_dtype_and_device_is_no_batch_reduction(traceable):
    facts = collect(WithAuxiliaryLoss(traceable).train(), _target("WithAuxiliaryLoss"))
    assert facts.trace_ok is traceable and facts.probe["ran"], facts.probe
    assert facts.batch_reductions == []

class ClipCritic(nn.Module):
    """A video discriminator: frames strided to 4x4 then a 4x4x4 head, time never strided
    (valid in time): 16 frames of 64x64 fit, no cube smaller than 64 does."""

    def __init__(self):
        super().__init__()
        layers = []
        for i in range(4):
            layers += [nn.Conv3d(3 if i == 0 else 4, 4, 4, (1, 2, 2), (0, 1, 1)), nn.BatchNorm3d(4)]
        self.main = nn.Sequential(*layers, nn.Conv3d(4, 1, 4, 1, 0))

    def forward(self, x):
        return self.main(x).flatten(1)


class Voxels64(nn.Module):
    """A voxel discriminator that views its input as one 64-cube per sample."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(1, 2, 4, 4, 0)
        self.bn = nn.BatchNorm3d(2)

    def forward(self, x):
        x = x.view(-1, 1, 64, 64, 64)
        return self.bn(self.conv(x)).mean((1, 2, 3, 4))


def test_a_video_discriminator_is_probed_at_a_16_frame_clip_not_a_64_cube():
    facts = collect(ClipCritic().train(), _target("ClipCritic"))
    assert facts.probe["ran"] and facts.probe["coupled"], facts.probe
    assert facts.probe["input_shape"] == [2, 3, 16, 64, 64]


def test_a_voxel_discriminator_of_64_cubes_is_still_probed_at_the_cube():
    facts = collect(Voxels64().train(), _target("Voxels64"))
    assert facts.probe["ran"] and facts.probe["coupled"], facts.probe
    assert facts.probe["input_shape"] == [2, 1, 64, 64, 64]
