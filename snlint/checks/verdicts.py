"""Judgements both passes share: written once, read by each rule over the link step's
`Layer`s and over the runtime `LeafFacts` joined to them (`snlint.checks.linked`), so a
precision rule holds whichever pass sees the layer.
"""

from __future__ import annotations

from snlint.torchapi import NEEDS_SN


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



# The same judgements over what the graph pass built at a source site (`snlint.link.join`):
# where the built discriminator has layers there and none of them is the mistake, the
# runtime clears the source's finding (SN added by `apply`, a train() override).

def leaf_has_batch_statistics(leaf) -> bool:
    return normalizes_with_batch_statistics(leaf.kind, uses_batch_stats=leaf.uses_batch_stats,
                                            kept_in_eval=leaf.kept_in_eval)


def leaf_missing_sn(leaf) -> bool:
    return needs_sn(leaf.kind, weight_norm=leaf.weight_norm, frozen=leaf.frozen) and not leaf.sn


def uses_sn(facts) -> bool:
    """SN on any conv/linear of the built discriminator: SN201's premise."""
    return any(m.sn for m in facts.modules if m.kind in NEEDS_SN)


def runtime_clears_missing_sn(runtime, site) -> bool:
    leaves = runtime.leaves_built_at(site)
    return bool(leaves) and (not uses_sn(runtime.facts) or not any(map(leaf_missing_sn, leaves)))


def runtime_clears_batch_norm(runtime, site) -> bool:
    leaves = runtime.leaves_built_at(site)
    return bool(leaves) and not any(map(leaf_has_batch_statistics, leaves))


def has_batch_statistics(facts) -> bool:
    """The graph's verdict for SN401/SN303: batch-statistics normalization in training
    mode (a batch norm layer, or F.batch_norm with batch statistics). Coupling that only
    the probe or a batch reduction shows is SN302, not this."""
    return any(map(leaf_has_batch_statistics, facts.modules)) or bool(facts.batch_norm_calls)
