"""SN501 legacy-spectral-norm: the hook API `torch.nn.utils.spectral_norm`."""

from __future__ import annotations

from functools import partial
from typing import Iterator

from snlint.checks import sn107
from snlint.checks.emit import Emitter
from snlint.checks.fix_data import LinkedInits
from snlint.checks.sn_migration import migrate, migration
from snlint.findings import Finding
from snlint.torchapi import SN_HOOK


CODE = "SN501"


def check(model, emit: Emitter) -> Iterator[Finding]:
    # Where SN107 reports the hook API (it never runs there), SN501 would be a second
    # finding for one mistake.
    never_applied = {(f.path, f.span) for f in sn107.check(model, emit)}
    for call in model.sn_calls:
        if call.api == SN_HOOK and (call.call.path, call.call.span) not in never_applied:
            yield emit.finding(
                CODE, call.call,
                "torch.nn.utils.spectral_norm is the legacy hook API; "
                "torch.nn.utils.parametrizations.spectral_norm is the maintained one",
                data=_inits_after(model, call))


def _inits_after(model, call) -> LinkedInits | None:
    """The inits of `.weight` run on layers after an SN the fix moves with `call` (the
    hook API's calls of the same name in the same file): once moved, `.weight` is
    recomputed on every access, and an init the fix leaves writing it does nothing."""
    def moved(sn) -> bool:
        return sn.api == SN_HOOK and sn.callee == call.callee and sn.call.path == call.call.path

    def this_call(sn) -> bool:
        return sn.call.path == call.call.path and sn.call.span == call.call.span

    def sites(applied) -> tuple:
        return tuple(sorted({(init.call.span.node, init.call.path, init.call.span.line) for init in model.inits
                             if init.param == "weight" and any(map(applied, init.sn))},
                            key=lambda site: site[1:]))

    every = sites(moved)
    if not every:
        return None
    return LinkedInits(every, own=sites(this_call))


# Every call of the hook API's name in the file moves, its import changing.
fix_input = partial(migration, whole_file=True)
fix = migrate
