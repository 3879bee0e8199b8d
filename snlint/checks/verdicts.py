"""Judgements both passes share: written once, read by the source rules (over the link
step's `Layer`s) and the graph rules (over runtime `LeafFacts`), so a precision rule
holds whichever pass sees the layer.
"""

from __future__ import annotations

from snlint.torchapi import NEEDS_SN


def needs_sn(kind: str, *, weight_norm: str = "", bypassed: bool = False) -> bool:
    """A conv/linear layer that SN201 expects to be spectral-normalized. Not one under
    another weight normalization, chosen on purpose (multi-scale audio discriminators put
    SN on one sub-discriminator and weight_norm on the others), and not one whose
    forward torch bypasses (MultiheadAttention.out_proj)."""
    return kind in NEEDS_SN and not weight_norm and not bypassed


def normalizes_with_batch_statistics(kind: str, *, uses_batch_stats: bool = True,
                                     kept_in_eval: bool = False) -> bool:
    """SN301's layer: a batch norm that uses the current batch's statistics. Not one a
    frozen feature network keeps in eval mode (`.eval()` in `__init__`, or a `train()`
    override that puts it back)."""
    return kind == "batch_norm" and uses_batch_stats and not kept_in_eval

