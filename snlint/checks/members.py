"""The layers of a module tree the link step built, each with the project class that owns
it and the symbol findings show (`Discriminator.main.3`)."""

from __future__ import annotations

from dataclasses import dataclass

from snlint.findings import Location
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
