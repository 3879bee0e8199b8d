"""SN left off: SN201, a conv/linear layer of a discriminator that uses SN elsewhere."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterator

from snlint.checks import Context, describe
from snlint.checks.verdicts import needs_sn, runtime_clears_missing_sn
from snlint.findings import Finding, Location
from snlint.link.values import Layer


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
    for d in project.discriminators:
        root = d.instance
        if root is None:
            continue
        tree = members(root)
        if root.opaque or any(m.layer.opaque for m in tree):
            continue  # something we cannot follow may add SN; do not guess
        layers = [m for m in tree if _needs_sn(m.layer)]
        with_sn = [m for m in layers if m.layer.sn]
        if not with_sn:
            continue
        callees = Counter(a.callee for m in with_sn for a in m.layer.sn if not a.from_filter)
        apis = {a.callee: a.api for m in with_sn for a in m.layer.sn if not a.from_filter}
        missing = [m for m in layers if not m.layer.sn and not m.layer.ambiguous]
        by_site: dict[tuple, list[Member]] = {}
        for m in missing:
            by_site.setdefault((m.site.path, m.site.span), []).append(m)
        normalized_sites = {(m.site.path, m.site.span) for m in with_sn}
        all_sites = {(m.site.path, m.site.span) for m in layers}
        runtime = project.runtime.get(d.cls.qualname)
        for group in by_site.values():
            m = group[0]
            if runtime is not None and runtime_clears_missing_sn(runtime, m.site):
                continue  # built, and the layers there have SN (added by apply, a loop...)
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
                      "instances": count, "layer": m.layer.short_type})
