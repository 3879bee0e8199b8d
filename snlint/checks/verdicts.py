"""Judgements both passes share: written once, read by each rule over the linked model's
`LayerFact`s and over the runtime `LeafFacts` joined to them (`snlint.checks.linked`), so
a precision rule holds whichever pass sees the layer.
"""

from __future__ import annotations

from snlint.torchapi import NEEDS_SN, NORMALIZATION, SN_HOOK, WEIGHTLESS


def needs_sn(kind: str, *, weight_norm: str = "", bypassed: bool = False,
             frozen: bool = False) -> bool:
    """A conv/linear layer that SN201 expects to be spectral-normalized. Not one under
    another weight normalization, chosen on purpose (multi-scale audio discriminators put
    SN on one sub-discriminator and weight_norm on the others), not one of a frozen
    (pretrained) feature network, whose weights never train, and not one whose forward
    torch bypasses (MultiheadAttention.out_proj)."""
    return kind in NEEDS_SN and not weight_norm and not bypassed and not frozen


def normalizes_with_batch_statistics(kind: str, *, uses_batch_stats: bool = True,
                                     kept_in_eval: bool = False) -> bool:
    """SN301's layer: a batch norm that uses the current batch's statistics. Not one a
    frozen feature network keeps in eval mode (`.eval()` in `__init__`, or a `train()`
    override that puts it back)."""
    return kind == "batch_norm" and uses_batch_stats and not kept_in_eval


# SN1xx: where SN is put. The source knows a layer's kind and arguments, the runtime also
# its parameters' shapes; what one side does not know is None and never decides alone.

def sn_on_normalization(kind: str) -> bool:
    """SN101: SN on a normalization layer divides its affine weight vector by its norm."""
    return kind in NORMALIZATION


def sn_without_weight_matrix(kind: str, *, weight_ndim: int | None = None,
                             has_weight: bool = True) -> bool:
    """SN102: SN on a layer with no weight matrix (an activation, a container, a module
    without a weight of its own) or a 1-D weight (PReLU's slope)."""
    return (kind in WEIGHTLESS or (kind == "module" and not has_weight)
            or (weight_ndim is not None and weight_ndim <= 1))


def sn_off_the_weight(kind: str, name: str | None, *, param_ndim: int | None = None) -> bool:
    """SN104: SN on a parameter other than the weight (a bias), which is no matrix; a
    normalization layer's is SN101's."""
    return (name is not None and name != "weight" and not sn_on_normalization(kind)
            and (param_ndim is None or param_ndim <= 1))


def sn_dim_off_output_axis(kind: str, dim: int | None, output_axis: int,
                           one_by_one: bool | None) -> bool:
    """SN105: a conv's SN told to flatten along another axis than its output's estimates
    sigma for the wrong matrix; a 1x1 kernel's two flattenings are transposes (same sigma)."""
    return (kind in ("conv", "conv_transpose") and dim is not None and dim != output_axis
            and one_by_one is not True)


def hook_sn_never_runs(api: str, bypassed: bool) -> bool:
    """SN107: the hook API on a layer whose forward torch bypasses (MultiheadAttention
    reads out_proj.weight directly)."""
    return api == SN_HOOK and bypassed


# The same judgements over what the graph pass built at a source site (`snlint.link.join`):
# where the built discriminator has layers there and none of them is the mistake, the
# runtime clears the source's finding (SN added by `apply`, a train() override), if it was
# built with the project's arguments (`Runtime.may_clear`).

def leaf_has_batch_statistics(leaf) -> bool:
    return normalizes_with_batch_statistics(leaf.kind, uses_batch_stats=leaf.uses_batch_stats,
                                            kept_in_eval=leaf.kept_in_eval)


def leaf_missing_sn(leaf) -> bool:
    return needs_sn(leaf.kind, weight_norm=leaf.weight_norm, frozen=leaf.frozen or leaf.kept_in_eval) \
        and not leaf.sn


def uses_sn(facts) -> bool:
    """SN on any conv/linear of the built discriminator: SN201's premise."""
    return any(m.sn for m in facts.modules if m.kind in NEEDS_SN)


def runtime_clears_missing_sn(runtime, site) -> bool:
    leaves = runtime.leaves_built_at(site) if runtime.may_clear else []
    return bool(leaves) and (not uses_sn(runtime.facts) or not any(map(leaf_missing_sn, leaves)))


def runtime_clears_batch_norm(runtime, site) -> bool:
    leaves = runtime.leaves_built_at(site) if runtime.may_clear else []
    return bool(leaves) and not any(map(leaf_has_batch_statistics, leaves))


def runtime_clears_batch_statistics(runtime) -> bool:
    """SN401/SN303's premise taken away: the discriminator, built as the project builds
    it, normalizes with no batch statistics."""
    return runtime.may_clear and not has_batch_statistics(runtime.facts)


def has_batch_statistics(facts) -> bool:
    """The graph's verdict for SN401/SN303: batch-statistics normalization in training
    mode (a batch norm layer, F.batch_norm with batch statistics, or a module the probe
    measured standardizing with the batch's statistics). Other coupling that the probe or
    a batch reduction shows is SN302, not this."""
    return any(map(leaf_has_batch_statistics, facts.modules)) or bool(facts.batch_norm_calls) \
        or any(map(measured_batch_normalization, probed_sources(facts)))


def probed_sources(facts) -> list[dict]:
    """Where the probe measured samples mixing (`snlint.graph.probe.coupling_sources`),
    the module that first mixes them first; none when it measured no coupling."""
    probe = facts.probe or {}
    return list(probe.get("sources") or []) if probe.get("coupled") else []


def measured_batch_normalization(source: dict) -> bool:
    """SN301's kind among the modules the probe found mixing samples: a batch norm, or a
    module whose output the probe measured standardized by the batch's statistics (a
    hand-rolled `(x - x.mean(0)) / x.std(0)`, a third-party block). A concatenated
    statistic (minibatch stddev), attention across the batch, a reduction that only
    centers: SN302's, often deliberate."""
    return source.get("kind") == "batch_norm" or bool(source.get("standardizes"))


# Measured in a forward (`snlint.graph.weights`): the weight a layer really computes with.

def measured_raw(use) -> bool:
    """The layer computed with its raw parameter, σ far from 1."""
    return use is not None and use.verdict == "raw"


def measured_normalized(use) -> bool:
    return use is not None and use.verdict == "normalized"


def measured_wrong_axis(use) -> bool:
    """A ConvTranspose whose weight is normalized along dim 0, its input axis (SN105)."""
    return use is not None and use.verdict == "wrong_axis"


def normalized_by_measurement(facts) -> bool:
    """Most measured conv/linear layers of the built discriminator compute with a normalized
    weight: SN201's premise where the module facts name no SN (a hand-written one). Not one
    orthogonal layer among raw ones."""
    uses = [facts.weights.get(m.path) for m in facts.modules if m.kind in NEEDS_SN]
    normalized = sum(map(measured_normalized, uses))
    return normalized > 0 and normalized > sum(map(measured_raw, uses))


def sigma_text(sigma: float) -> str:
    return f"σ = {sigma:.3g}" if sigma >= 10 else f"σ = {sigma:.2f}"
