"""What the graph pass learns about a built discriminator, as plain data.

These dataclasses cross the process boundary as JSON (`to_dict` / `from_dict`), so they
hold only str, int, bool, tuples, lists and dicts, and this module never imports torch:
the parent process (engine, checks) reads them without paying for torch.
"""

from __future__ import annotations

from dataclasses import asdict, field
from typing import Any

from snlint.records import dataclass

STATUSES = ("ok", "import_error", "build_error", "timeout")


def one_line(exc: BaseException, limit: int = 240) -> str:
    """`Type: message` on one line (torch's messages span lines: a module's repr...)."""
    text = " ".join(str(exc).split())
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass(frozen=True)
class GraphTarget:
    """One class to build: `file` absolute, `display` as the user sees the path."""

    file: str
    display: str
    class_name: str
    kwargs: dict[str, Any] | None = None
    root: str = ""
    # Import roots for sys.path, first = highest priority (snlint.link.roots); empty: `root`.
    paths: tuple[str, ...] = ()
    # The line of the `class` statement: a file may define one name in several
    # module-level branches (`if args.arch == ...:`), and the worker builds this one.
    line: int = 0
    # Argument sets the project itself builds the class with (snlint.link.arguments), tried
    # in order after `kwargs` (the [tool.snlint.models] override, used alone when given).
    candidates: list[dict[str, Any]] | None = None
    # The project's command-line options with literal defaults (snlint.link.options):
    # {dest: {"value": ..., "where": "path:line"}}, read by a guessing namespace.
    options: dict[str, dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "GraphTarget":
        return cls(d["file"], d["display"], d["class_name"], d.get("kwargs"), d.get("root", ""),
                   tuple(d.get("paths", ())), d.get("line", 0), d.get("candidates"),
                   d.get("options"))


@dataclass(frozen=True)
class Site:
    """A source range: 1-based, end exclusive, columns in characters."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> "Site | None":
        if d is None:
            return None
        return cls(d["file"], d["line"], d["column"], d["end_line"], d["end_column"])


@dataclass(frozen=True)
class SNState:
    """One spectral normalization on a layer. `api`: hook | parametrization | custom."""

    api: str
    name: str
    dim: int
    site: Site | None = None
    # Shape of the tensor SN normalizes (weight_orig / parametrizations.<name>.original).
    param_shape: tuple[int, ...] | None = None
    # The `dim=` argument (keyword or fifth positional) inside the SN call, when written.
    dim_site: Site | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"api": self.api, "name": self.name, "dim": self.dim,
                "site": self.site.to_dict() if self.site else None,
                "param_shape": list(self.param_shape) if self.param_shape is not None else None,
                "dim_site": self.dim_site.to_dict() if self.dim_site else None}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "SNState":
        shape = d.get("param_shape")
        return cls(d["api"], d["name"], d["dim"], Site.from_dict(d.get("site")),
                   tuple(shape) if shape is not None else None,
                   Site.from_dict(d.get("dim_site")))


@dataclass(frozen=True)
class LeafFacts:
    """A leaf module (or an SN-wrapped one) of a built discriminator.

    `site` is the call that created the layer as seen from the discriminator: the line in
    the innermost enclosing module method (through a helper function: the helper's call
    site). `origin` is the innermost user frame (the literal constructor call, possibly
    inside a helper). `param_site` is set when the constructor was reached through a
    parameter's default value (`norm_layer=nn.BatchNorm2d`): the whole parameter node.
    `instances` counts the leaves of this class built at the same `site` in this target.
    """

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
    # A batch norm that normalizes with batch statistics in the model's training mode
    # (training, or track_running_stats=False which uses them even in eval).
    uses_batch_stats: bool = False
    # Another weight normalization on the layer, chosen on purpose (multi-scale audio
    # discriminators): "hook" (torch.nn.utils.weight_norm), "parametrization"
    # (parametrizations.weight_norm), or "" for none.
    weight_norm: str = ""
    # Put in eval mode by `.eval()` / `.train(False)` inside an `__init__` (a frozen
    # feature network), as the source pass's `kept_in_eval` counts it.
    kept_in_eval: bool = False
    # No parameter of it requires grad once built: a frozen (pretrained) part.
    frozen: bool = False
    # The user calls between `origin` and `site` (a helper the owner's closure calls).
    via: list[Site] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path, "type_name": self.type_name, "type_qualname": self.type_qualname,
            "kind": self.kind,
            "kernel_size": list(self.kernel_size) if self.kernel_size is not None else None,
            "weight_shape": list(self.weight_shape) if self.weight_shape is not None else None,
            "sn": [s.to_dict() for s in self.sn],
            "site": self.site.to_dict() if self.site else None,
            "instances": self.instances, "training": self.training,
            "bypassed_forward": self.bypassed_forward,
            "origin": self.origin.to_dict() if self.origin else None,
            "param_site": self.param_site.to_dict() if self.param_site else None,
            "uses_batch_stats": self.uses_batch_stats,
            "weight_norm": self.weight_norm, "kept_in_eval": self.kept_in_eval,
            "frozen": self.frozen, "via": [v.to_dict() for v in self.via],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "LeafFacts":
        ks, ws = d.get("kernel_size"), d.get("weight_shape")
        return cls(
            d["path"], d["type_name"], d.get("type_qualname", d["type_name"]), d["kind"],
            tuple(ks) if ks is not None else None, tuple(ws) if ws is not None else None,
            [SNState.from_dict(s) for s in d.get("sn", [])], Site.from_dict(d.get("site")),
            d.get("instances", 1), d.get("training", True), d.get("bypassed_forward", False),
            Site.from_dict(d.get("origin")), Site.from_dict(d.get("param_site")),
            d.get("uses_batch_stats", False), d.get("weight_norm", ""),
            d.get("kept_in_eval", False), d.get("frozen", False),
            [Site.from_dict(v) for v in d.get("via", ())],
        )


@dataclass(frozen=True)
class WeightUse:
    """The weight a conv/linear layer computed with in a forward (`snlint.graph.weights`).

    `verdict`: "raw" (its raw parameter, σ far from 1), "normalized" (σ ≈ 1), "wrong_axis"
    (a ConvTranspose normalized along dim 0, its input axis), or "" (no clear verdict).
    `sigma`: σ of the weight used, flattened with the output axis first; `sigma_dim0`
    flattened along dim 0 (differs for ConvTranspose).
    """

    verdict: str
    sigma: float
    sigma_dim0: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "WeightUse":
        return cls(d["verdict"], d["sigma"], d.get("sigma_dim0", 0.0))


def _empty_probe() -> dict[str, Any]:
    return {"ran": False, "coupled": False, "reason": "", "input_shape": []}


@dataclass
class TargetFacts:
    """Everything the graph pass found for one target (or why it found nothing)."""

    target: GraphTarget
    status: str = "ok"
    message: str = ""
    modules: list[LeafFacts] = field(default_factory=list)
    trace_ok: bool = False
    trace_reason: str = ""
    # F.batch_norm calls with batch statistics; None where the call's site is unknown.
    batch_norm_calls: list[Site | None] = field(default_factory=list)
    batch_reductions: list[tuple[str, Site | None]] = field(default_factory=list)
    probe: dict[str, Any] = field(default_factory=_empty_probe)
    # Where an import or build error was raised, when that is in a project file.
    error_site: Site | None = None
    # Wall time the worker spent on this target (seconds), for the report and benchmarks.
    seconds: float = 0.0
    # What recorded batch_norm_calls and batch_reductions: "fx" (the traced graph), "hooks"
    # (real forward passes, when fx could not trace), or "" (neither: they are unknown).
    recorded_by: str = ""
    # Which constructor arguments built it and where they came from ("built as in
    # train.py:88 (ndf=64: argparse default at train.py:12)"); when no attempt built it,
    # what was tried.
    built_with: str = ""
    # How those arguments were chosen (`snlint.graph.build.Call.arguments`): "configured",
    # "project", "defaults" or "guessed"; "" when nothing was built.
    arguments: str = ""
    # What the worker's audit hook refused while this target was imported and built
    # (snlint.graph.guard): `os.remove('samples/x.png')`.
    refused: list[str] = field(default_factory=list)
    # Module path -> the weight that layer computed with (`snlint.graph.weights`), for the
    # conv/linear layers a forward called.
    weights: dict[str, WeightUse] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "weights": {path: w.to_dict() for path, w in self.weights.items()},
            "target": self.target.to_dict(), "status": self.status, "message": self.message,
            "modules": [m.to_dict() for m in self.modules],
            "trace_ok": self.trace_ok, "trace_reason": self.trace_reason,
            "batch_norm_calls": [s.to_dict() if s else None for s in self.batch_norm_calls],
            "batch_reductions": [[what, s.to_dict() if s else None]
                                 for what, s in self.batch_reductions],
            "probe": dict(self.probe),
            "error_site": self.error_site.to_dict() if self.error_site else None,
            "seconds": self.seconds, "recorded_by": self.recorded_by,
            "built_with": self.built_with, "arguments": self.arguments, "refused": list(self.refused),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "TargetFacts":
        probe = _empty_probe()
        probe.update(d.get("probe") or {})
        return cls(
            GraphTarget.from_dict(d["target"]), d.get("status", "ok"), d.get("message", ""),
            [LeafFacts.from_dict(m) for m in d.get("modules", [])],
            d.get("trace_ok", False), d.get("trace_reason", ""),
            [Site.from_dict(x) for x in d.get("batch_norm_calls", [])],
            [(what, Site.from_dict(s)) for what, s in d.get("batch_reductions", [])],
            probe, Site.from_dict(d.get("error_site")), d.get("seconds", 0.0),
            d.get("recorded_by", ""),
            d.get("built_with", ""), d.get("arguments", ""), [str(r) for r in d.get("refused", ())],
            {path: WeightUse.from_dict(w) for path, w in (d.get("weights") or {}).items()},
        )
