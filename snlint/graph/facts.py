"""What the graph pass learns about a built discriminator, as plain data: these cross the
process boundary as JSON, and the parent reads them without torch."""

from __future__ import annotations

import functools
import types
from dataclasses import asdict, field, fields
from typing import Any, get_args, get_origin, get_type_hints

from snlint.records import dataclass


def one_line(exc: BaseException, limit: int = 240) -> str:
    """`Type: message` on one line (torch's messages span lines: a module's repr...)."""
    text = " ".join(str(exc).split())
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Record:
    """To JSON (`to_dict`) and back (`from_dict`, guided by the fields' annotations)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Any:
        if d is None:
            return None
        hints = _hints(cls)
        return cls(**{f.name: _load(hints[f.name], d[f.name]) for f in fields(cls) if f.name in d})


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def _load(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin, args = get_origin(hint), get_args(hint)
    if origin is types.UnionType:  # `X | None`
        return _load(args[0], value)
    if origin is list:
        return [_load(args[0], v) for v in value]
    if origin is tuple:
        items = args[:1] * len(value) if args[-1:] == (Ellipsis,) else args
        return tuple(_load(a, v) for a, v in zip(items, value))
    if origin is dict:
        return {k: _load(args[1], v) for k, v in value.items()}
    if isinstance(hint, type) and issubclass(hint, _Record):
        return hint.from_dict(value)
    return value


@dataclass(frozen=True)
class GraphTarget(_Record):
    """One class to build: `file` absolute, `display` as the user sees the path."""

    file: str
    display: str
    class_name: str
    kwargs: dict[str, Any] | None = None
    root: str = ""
    paths: tuple[str, ...] = ()  # import roots, first first (snlint.link.roots); none: `root`
    line: int = 0  # of the `class` statement: a file may define one name in several branches
    # Argument sets the project builds the class with (snlint.link.arguments), tried after
    # `kwargs` (the [tool.snlint.models] override, used alone when given).
    candidates: list[dict[str, Any]] | None = None
    # Command-line options with literal defaults (snlint.link.options), for guessed configs.
    options: dict[str, dict[str, Any]] | None = None



@dataclass(frozen=True)
class Site(_Record):
    """A source range: 1-based, end exclusive, columns in characters."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class SNState(_Record):
    """One spectral normalization on a layer. `api`: hook | parametrization | custom."""

    api: str
    name: str
    dim: int
    site: Site | None = None
    param_shape: tuple[int, ...] | None = None  # of the tensor SN normalizes (weight_orig)
    dim_site: Site | None = None  # the `dim=` argument of the SN call, when written


@dataclass(frozen=True)
class LeafFacts(_Record):
    """A leaf module (or an SN-wrapped one) of a built discriminator.

    `site`: the call that created it as seen from the discriminator (the innermost enclosing
    module method); `origin`: the innermost user frame (the literal constructor call);
    `param_site`: the whole parameter node when built through a parameter's default
    (`norm_layer=nn.BatchNorm2d`); `instances`: leaves of this class built at `site`."""

    path: str
    type_name: str
    type_qualname: str
    kind: str
    kernel_size: tuple[int, ...] | None = None
    weight_shape: tuple[int, ...] | None = None
    sn: list[SNState] = field(default_factory=list)
    site: Site | None = None
    instances: int = 1
    training: bool = True
    bypassed_forward: bool = False
    origin: Site | None = None
    param_site: Site | None = None
    uses_batch_stats: bool = False  # a batch norm using batch statistics as built
    weight_norm: str = ""  # weight norm on the layer, by API: "hook", "parametrization", ""
    kept_in_eval: bool = False  # `.eval()` inside an `__init__` (a frozen feature network)
    frozen: bool = False  # no parameter requires grad (a pretrained part)
    via: list[Site] = field(default_factory=list)  # user calls between `origin` and `site`


@dataclass(frozen=True)
class WeightUse(_Record):
    """The weight a conv/linear layer computed with in a forward (`snlint.graph.weights`):
    `sigma` flattened with the output axis first, `sigma_dim0` along dim 0."""

    verdict: str
    sigma: float
    sigma_dim0: float = 0.0


def empty_probe() -> dict[str, Any]:
    return {"ran": False, "coupled": False, "reason": "", "input_shape": []}


@dataclass
class TargetFacts(_Record):
    """Everything the graph pass found for one target (or why it found nothing)."""

    target: GraphTarget
    status: str = "ok"  # "import_error", "build_error", "timeout"
    message: str = ""
    modules: list[LeafFacts] = field(default_factory=list)
    trace_ok: bool = False
    trace_reason: str = ""
    batch_norm_calls: list[Site | None] = field(default_factory=list)  # with batch statistics
    batch_reductions: list[tuple[str, Site | None]] = field(default_factory=list)
    probe: dict[str, Any] = field(default_factory=empty_probe)
    error_site: Site | None = None  # where an import or build error was raised (project file)
    seconds: float = 0.0  # the worker's wall time on this target
    # What recorded batch_norm_calls and batch_reductions: "fx", "hooks" (real forwards,
    # where fx could not trace), or "" (they are unknown).
    recorded_by: str = ""
    # Which constructor arguments built it, and from where ("built as in train.py:88
    # (ndf=64: argparse default at train.py:12)"); when nothing built it, what was tried.
    built_with: str = ""
    arguments: str = ""  # how they were chosen (`snlint.graph.build.Call.arguments`)
    refused: list[str] = field(default_factory=list)  # by the audit hook (snlint.graph.guard)
    weights: dict[str, WeightUse] = field(default_factory=dict)  # module path -> weight used

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "TargetFacts":
        facts = super().from_dict(d)
        facts.probe = {**empty_probe(), **(facts.probe or {})}
        return facts
