"""A spelling of `parametrizations.spectral_norm` for SN201's planner."""

from __future__ import annotations

import libcst as cst

from snlint.edit.names import PARAM_SN
from snlint.edit.parsed import ParsedFile
from snlint.edit.plan import ImportSpec, Plan
from snlint.torchapi import SN_PARAM


def param_sn_ref(parsed: ParsedFile, plan: Plan) -> cst.BaseExpression | None:
    """An expression for torch.nn.utils.parametrizations.spectral_norm in this file,
    adding an import when the file has no way to name it."""
    names = parsed.names
    for name, api in names.sn_names():
        if api == SN_PARAM:
            return cst.Name(name)
    if names.is_free("spectral_norm"):
        plan.imports.append(ImportSpec("torch.nn.utils.parametrizations", "spectral_norm"))
        return cst.Name("spectral_norm")
    ref = names.binding_for(PARAM_SN)  # `nn.utils.parametrizations.spectral_norm`
    if ref is not None:
        return cst.parse_expression(ref)
    if names.is_free("parametrizations"):
        plan.imports.append(ImportSpec("torch.nn.utils", "parametrizations"))
        return cst.parse_expression("parametrizations.spectral_norm")
    return None


