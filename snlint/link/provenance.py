"""Where a tensor in training code came from, and what that makes it for one discriminator.

The interpreter attaches origins to every tensor it follows: the data (real), a module
call's output (generated, unless the module only transforms its input), a concatenation
along channels (generated if any part is). A module call stays an `Output` until `sides`
reads it against one discriminator class; names decide only where the data flow is silent.
"""

from __future__ import annotations

import re

from snlint.findings import place
from snlint.records import dataclass

# Modules that change what they are given without generating anything new.
_PASSES_THROUGH = re.compile(
    r"vgg|lpips|perceptual|inception|feature|extractor|augment|^aug|_aug|transform|normali[sz]|"
    r"resize|upsampl|downsampl|interpolat|blur|crop|pool|loss|criterion|classifier", re.I)

# How a side reached a head through the trunk's features (`Evidence.then`).
_FEATURES = ", as features of {} at {{}}"


@dataclass(frozen=True, eq=False)
class Data:
    """Real samples: what a data loader yields, a `dict` batch, a data parameter. `what`
    holds `{at}` where the place goes."""

    what: str
    path: str = ""
    line: int = 0


@dataclass(frozen=True, eq=False)
class Named:
    """The fallback: a parameter nobody passed, judged by its name (`real_imgs`, `fake`), or
    a variable named for real samples whose value nothing here follows."""

    kind: str  # "real" | "fake"
    name: str
    parameter: bool = True  # False: a variable assigned what the link cannot follow


@dataclass(frozen=True, eq=False)
class Output:
    """What a module call returned: generated, unless the module is the discriminator
    itself or only transforms its input (then `inner`, what it was given, decides)."""

    module: object  # the Layer called, or None when the callee is not resolved
    callee: str
    line: int
    inner: frozenset
    role: str = ""  # "generator" / "discriminator" when its name already says so
    path: str = ""


@dataclass(frozen=True, eq=False)
class Channels:
    """`torch.cat((cond, fake), 1)`: generated if any part is. Also the arguments a
    conditional discriminator scores together (`D(x, G(x))`): then `how` is empty."""

    parts: tuple
    line: int
    path: str = ""
    how: str = ", concatenated along channels at {}"


def passes_through(module, callee: str) -> bool:
    if getattr(module, "cls", None) is None:
        return True  # not resolved, a torch layer (nn.Upsample) or an opaque object
    if module.frozen or module.kept_in_eval:
        return True
    names = [module.short_type, callee, *module.bound_names]
    return any(_PASSES_THROUGH.search(n or "") for n in names)


@dataclass(frozen=True)
class Evidence:
    """What decided one side of a call, with the places it names kept apart from the text
    (`{0}` in `text`): only the finding knows whether to say `line 12` or `data.py:12`."""

    text: str
    places: tuple[tuple[str, int], ...] = ()

    def render(self, here: str) -> str:
        return self.text.format(*(place(path, line, here) for path, line in self.places))

    def then(self, text: str, path: str, line: int) -> "Evidence":
        """This evidence followed by `text`, which names one more place as `{}`."""
        return Evidence(self.text + text.replace("{}", "{%d}" % len(self.places)),
                        self.places + ((path, line),))


def sides(origins, discriminator: str | None, depth: int = 0) -> dict[str, Evidence]:
    """{"real": evidence, "fake": evidence} for an input of `discriminator` (a class
    qualname): what the data flow says each part of the batch is, and why."""
    out: dict[str, Evidence] = {}
    if depth > 12:
        return out
    for origin in origins:
        if isinstance(origin, Data):
            out.setdefault("real", Evidence(escaped(origin.what).replace("{{at}}", "{0}"),
                                            ((origin.path, origin.line),)))
        elif isinstance(origin, Named):
            out.setdefault(origin.kind, Evidence(escaped(
                f"the data parameter `{origin.name}`" if origin.kind == "real" and origin.parameter
                else f"named `{origin.name}`")))
        elif isinstance(origin, Output):
            module = origin.module
            cls = getattr(module, "cls", None)
            if cls is not None and cls.qualname == discriminator:
                continue
            if origin.role == "discriminator":
                # A discriminator called in two steps (`netD.cond_logits(netD(real), c)`,
                # DF-GAN's `netC(netD(real), c)`): the trunk's features of a batch are that
                # batch's, and the head scores them as such.
                if cls is not None and discriminator is not None:
                    for kind, why in sides(origin.inner, discriminator, depth + 1).items():
                        out.setdefault(kind, why.then(_FEATURES.format(escaped(origin.callee)),
                                                      origin.path, origin.line))
                continue
            if origin.role == "generator" or not passes_through(module, origin.callee):
                out.setdefault("fake", Evidence(escaped(f"returned by {origin.callee or 'a module'} at ") + "{0}",
                                                ((origin.path, origin.line),)))
            else:
                for kind, why in sides(origin.inner, discriminator, depth + 1).items():
                    out.setdefault(kind, why)
        elif isinstance(origin, Channels):
            parts = [sides(p, discriminator, depth + 1) for p in origin.parts]
            fakes = [p["fake"] for p in parts if "fake" in p]
            reals = [p["real"] for p in parts if "real" in p]
            for kind, found in (("fake", fakes), ("real", reals)):
                if found:
                    out.setdefault(kind, found[0].then(origin.how, origin.path, origin.line)
                                   if origin.how else found[0])
                    break
    return out


def plain_sides(origins, depth: int = 0) -> set[str]:
    """The sides `origins` are on by the plainest evidence only: a batch of the data (real)
    and what a model named as a generator returned (generated)."""
    out: set[str] = set()
    if depth > 12:
        return out
    for origin in origins:
        if isinstance(origin, Data):
            out.add("real")
        elif isinstance(origin, Output):
            if origin.role == "generator":
                out.add("fake")
            elif origin.role != "discriminator" and passes_through(origin.module, origin.callee):
                out |= plain_sides(origin.inner, depth + 1)
        elif isinstance(origin, Channels):
            for part in origin.parts:
                out |= plain_sides(part, depth + 1)
    return out


def escaped(text: str) -> str:
    """Text a name or an expression brought in, safe inside a format string."""
    return text.replace("{", "{{").replace("}", "}}")


def kind_of(found: dict[str, str]) -> str:
    if "real" in found and "fake" in found:
        return "mixed"
    return next(iter(found), "unknown")
