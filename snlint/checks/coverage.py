"""SN left off: SN201, a conv/linear layer of a discriminator that uses SN elsewhere."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterator

from snlint.checks import Context, describe
from snlint.checks.linked import Shown, confirmed, runtime_only
from snlint.checks.verdicts import leaf_missing_sn, needs_sn, runtime_clears_missing_sn, uses_sn
from snlint.findings import Finding, Location
from snlint.link.values import Layer
from snlint.torchapi import NEEDS_SN


@dataclass
class Member:
    layer: Layer
    owner: Layer
    symbol: str

    @property
    def site(self) -> Location:
        """The call that builds the layer, seen from its owner's __init__: a helper that
        returns the layer itself shows as the helper's call; a helper that returns a
        container holding it does not (wrapping that call would put SN on the container)."""
        loc, frame = self.layer.call, self.layer.frame
        target = self.owner.init_frame
        while target is not None and frame is not target and frame.call_site is not None \
                and frame.parent is not None and frame.returned is self.layer:
            loc, frame = frame.call_site, frame.parent
        return loc


def members(root: Layer) -> list[Member]:
    """Every layer of a module tree, with the project class that owns it and its symbol
    (`DBlock.c_sc`, `Discriminator.main.3`, `Discriminator.layers[*]`)."""
    out: list[Member] = []
    seen: set[int] = set()

    def walk(node: Layer, owner: Layer, path: str) -> None:
        for name, child in node.children():
            if id(child) in seen:
                continue
            seen.add(id(child))
            if (node.kind == "container" and child.in_loop and name.isdigit()) or name.startswith("*"):
                sub = f"{path}[*]"
            else:
                sub = f"{path}.{name}" if path else name
            out.append(Member(child, owner, f"{owner.short_type}.{sub}"))
            if child.cls is not None and child.init_frame is not None:
                walk(child, child, "")
            else:
                walk(child, owner, sub)

    walk(root, root, "")
    return out


def _needs_sn(layer: Layer) -> bool:
    return needs_sn(layer.kind, weight_norm=layer.weight_norm, bypassed=layer.bypassed,
                    frozen=layer.frozen)


def check(project, ctx: Context) -> Iterator[Finding]:
    yield from sn201(project, ctx)


def sn201(project, ctx: Context) -> Iterator[Finding]:
    """SN201 from the source's layers and the runtime leaves joined to them: a group the
    built discriminator shows without SN is confirmed, one it shows with SN (added by
    apply, a loop...) is cleared, and a leaf only the runtime has (built where the source
    cannot follow) is judged by the same `needs_sn`."""
    shown_by_source: set[int] = set()
    for d in project.discriminators:
        runtime = project.runtime.get(d.cls.qualname)
        for finding, site in _source_sn201(project, d, ctx):
            if runtime is not None:
                leaves = runtime.leaves_built_at(site)
                shown_by_source.update(map(id, leaves))
                if runtime_clears_missing_sn(runtime, site):
                    continue
                if leaves:
                    finding = confirmed(finding, runtime)
            yield finding
    yield from runtime_only(ctx, (
        Shown(runtime, "SN201", m.site, m.path,
              f"{m.type_name} {_owner(runtime)}.{m.path} has no spectral norm, but "
              f"{describe(runtime.ref) or 'the discriminator'} normalizes its other conv/linear "
              "layers (seen in the built model)",
              {"layer": m.type_name, "sn_api": _runtime_sn_api(runtime.facts)})
        for runtime in project.runtime.values() if uses_sn(runtime.facts)
        for m in runtime.facts.modules if leaf_missing_sn(m) and id(m) not in shown_by_source))


def _owner(runtime) -> str:
    return runtime.facts.target.class_name


def _runtime_sn_api(facts) -> str:
    apis = Counter(s.api for m in facts.modules if m.kind in NEEDS_SN for s in m.sn)
    return apis.most_common(1)[0][0] if apis else ""


def _source_sn201(project, d, ctx: Context) -> Iterator[tuple[Finding, Location]]:
    root = d.instance
    if root is None:
        return
    tree = members(root)
    if root.opaque or any(m.layer.opaque for m in tree):
        return  # something we cannot follow may add SN; do not guess
    layers = [m for m in tree if _needs_sn(m.layer)]
    with_sn = [m for m in layers if m.layer.sn]
    if not with_sn:
        return
    callees = Counter(a.callee for m in with_sn for a in m.layer.sn if not a.from_filter)
    apis = {a.callee: a.api for m in with_sn for a in m.layer.sn if not a.from_filter}
    missing = [m for m in layers if not m.layer.sn and not m.layer.ambiguous]
    by_site: dict[tuple, list[Member]] = {}
    for m in missing:
        by_site.setdefault((m.site.path, m.site.span), []).append(m)
    normalized_sites = {(m.site.path, m.site.span) for m in with_sn}
    all_sites = {(m.site.path, m.site.span) for m in layers}
    for group in by_site.values():
        m = group[0]
        count = len(group)
        # Instances behind an `if` we could not decide may not all exist; do not count them.
        many = f" ({count} instances built here)" if count > 1 and not any(
            g.layer.conditional for g in group) else ""
        yield ctx.finding(
            "SN201", m.site,
            f"{m.layer.short_type} {m.symbol} has no spectral norm, but {describe(d.ref)} "
            f"normalizes the layers built at {len(normalized_sites)} of its "
            f"{len(all_sites)} conv/linear sites{many}",
            symbol=m.symbol, discriminator=d.ref,
            data={"sn_callee": callees.most_common(1)[0][0] if callees else "",
                  "sn_api": apis.get(callees.most_common(1)[0][0], "") if callees else "",
                  "instances": count, "layer": m.layer.short_type}), m.site
