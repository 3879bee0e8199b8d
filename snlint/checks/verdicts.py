"""Judgements both passes share, read by each rule over the source's `LayerFact`s and the
runtime's `LeafFacts`, so that a rule holds whichever pass sees the layer."""

from __future__ import annotations

from snlint.torchapi import NEEDS_SN, NORMALIZATION, SN_HOOK, WEIGHTLESS


def needs_sn(kind: str, *, weight_norm: str = "", bypassed: bool = False,
             frozen: bool = False) -> bool:
    """A conv/linear layer that SN201 expects to be spectral-normalized: not one under
    another weight normalization (chosen on purpose), of a frozen feature network, or
    whose forward torch bypasses (MultiheadAttention.out_proj)."""
    return kind in NEEDS_SN and not weight_norm and not bypassed and not frozen


def normalizes_with_batch_statistics(kind: str, *, uses_batch_stats: bool = True,
                                     kept_in_eval: bool = False) -> bool:
    """SN301's layer: a batch norm that uses the current batch's statistics, not one kept
    in eval mode (`.eval()` in `__init__`, or a `train()` override)."""
    return kind == "batch_norm" and uses_batch_stats and not kept_in_eval


# SN1xx: what one side does not know (the source: the parameters' shapes) is None.

def sn_on_normalization(kind: str) -> bool:
    """SN101: SN on a normalization layer divides its affine weight vector by its norm."""
    return kind in NORMALIZATION


def sn_without_weight_matrix(kind: str, *, weight_ndim: int | None = None,
                             has_weight: bool = True) -> bool:
    """SN102: SN on a layer with no weight matrix, or a 1-D weight (PReLU's slope)."""
    return (kind in WEIGHTLESS or (kind == "module" and not has_weight)
            or (weight_ndim is not None and weight_ndim <= 1))


def sn_off_the_weight(kind: str, name: str | None, *, param_ndim: int | None = None) -> bool:
    """SN104: SN on a parameter other than the weight (a bias); a normalization layer's is
    SN101's."""
    return (name is not None and name != "weight" and not sn_on_normalization(kind)
            and (param_ndim is None or param_ndim <= 1))


def sn_dim_off_output_axis(kind: str, dim: int | None, output_axis: int,
                           one_by_one: bool | None) -> bool:
    """SN105: a conv's SN flattened along another axis than its output's (a 1x1 kernel's
    two flattenings are transposes: same sigma)."""
    return (kind in ("conv", "conv_transpose") and dim is not None and dim != output_axis
            and one_by_one is not True)


def hook_sn_never_runs(api: str, bypassed: bool) -> bool:
    """SN107: the hook API on a layer whose forward torch bypasses (out_proj)."""
    return api == SN_HOOK and bypassed


# Over what the graph pass built at a source site: where it has layers there and none is
# the mistake, the runtime clears the source's finding, if built with the project's
# arguments (`Runtime.may_clear`).

def leaf_has_batch_statistics(leaf) -> bool:
    return normalizes_with_batch_statistics(leaf.kind, uses_batch_stats=leaf.uses_batch_stats,
                                            kept_in_eval=leaf.kept_in_eval)


def leaf_missing_sn(leaf) -> bool:
    # The graph pass builds in train mode: a leaf still in eval mode is one a `train()`
    # override holds there (Projected GAN's feature network and its fixed random
    # projections), a fixed feature network as the source pass reads it.
    fixed = leaf.frozen or leaf.kept_in_eval or not leaf.training
    return needs_sn(leaf.kind, weight_norm=leaf.weight_norm, frozen=fixed) and not leaf.sn


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
    """SN401/SN303's premise taken away: built as the project builds it, the
    discriminator normalizes with no batch statistics."""
    return runtime.may_clear and not has_batch_statistics(runtime.facts)


def has_batch_statistics(facts) -> bool:
    """SN401/SN303's premise in the graph: a batch norm in training mode, F.batch_norm with
    batch statistics, or a module the probe measured standardizing with them (other
    coupling is SN302's)."""
    return any(map(leaf_has_batch_statistics, facts.modules)) or bool(facts.batch_norm_calls) \
        or any(map(measured_batch_normalization, probed_sources(facts)))


def probed_sources(facts) -> list[dict]:
    """Where the probe measured samples mixing, the module that first mixes them first."""
    probe = facts.probe or {}
    return list(probe.get("sources") or []) if probe.get("coupled") else []


def measured_batch_normalization(source: dict) -> bool:
    """SN301's kind among the modules the probe found mixing samples: a batch norm, or one
    whose output it measured standardized by the batch's statistics (`(x - x.mean(0)) /
    x.std(0)`). Minibatch stddev, attention across the batch, centering: SN302's."""
    return source.get("kind") == "batch_norm" or bool(source.get("standardizes"))


# The weight a layer computed with in a forward (`snlint.graph.weights`).

def measured(use) -> str | None:
    """What a forward measured of the weight a layer computed with: "raw" (σ far from 1),
    "normalized", or "wrong_axis" (a ConvTranspose's, normalized along dim 0, its input
    axis: SN105); None where nothing was measured."""
    return use.verdict if use is not None else None


def normalized_by_measurement(facts) -> bool:
    """Most measured conv/linear layers compute with a normalized weight: SN201's premise
    where the module facts name no SN (a hand-written one)."""
    uses = [facts.weights.get(m.path) for m in facts.modules if m.kind in NEEDS_SN]
    verdicts = [measured(use) for use in uses]
    normalized = verdicts.count("normalized")
    return normalized > 0 and normalized > verdicts.count("raw")


def sigma_text(sigma: float) -> str:
    return f"σ = {sigma:.3g}" if sigma >= 10 else f"σ = {sigma:.2f}"
