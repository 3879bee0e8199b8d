"""The objects every later stage speaks: positions, findings, fixes.

Positions follow the output contract: lines and columns are 1-based, columns count
characters, and ends are exclusive (as libcst and SARIF count).
"""

from __future__ import annotations

from dataclasses import field, fields, replace
from operator import attrgetter
from typing import Any

from snlint.records import dataclass


def record(cls=None, /, **options):
    """`@dataclass(frozen=True, slots=True, **options)` that pickles by its fields' values.

    Facts are the most numerous objects of a run and the per-file cache and the workers
    pickle them: slots take a quarter of their memory, but the state functions dataclasses
    give slotted classes pickle at half the speed of a plain `__dict__`. A tuple of the
    values, read by one C attrgetter and given back to the constructor, is faster than
    either."""
    def wrap(cls):
        cls = dataclass(frozen=True, slots=True, **options)(cls)
        given = [f for f in fields(cls) if f.init]
        positional = [f.name for f in given if not f.kw_only]
        keywords = tuple(f.name for f in given if f.kw_only)
        get_args = _getter(positional)
        get_kwargs = _getter(list(keywords))

        if keywords:
            def __reduce__(self):
                return (_construct, (type(self), get_args(self), keywords, get_kwargs(self)))
        else:
            def __reduce__(self):  # the class itself, called from C: no frame of ours
                return (type(self), get_args(self))

        cls.__reduce__ = __reduce__
        return cls
    return wrap if cls is None else wrap(cls)


def _getter(names: list[str]):
    if not names:
        return lambda obj: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return attrgetter(*names)


def _construct(cls, args: tuple, keywords: tuple[str, ...], values: tuple):
    return cls(*args, **dict(zip(keywords, values))) if keywords else cls(*args)

# Diagnostics are about snlint's own view of a file, not about the user's model, so
# they have no rule page; their metadata lives here.
DIAGNOSTICS: dict[str, tuple[str, str, str]] = {
    "SN901": ("syntax-error", "error", "The file does not parse as Python."),
    "SN902": ("undecodable-file", "error", "The file cannot be decoded, or is binary."),
    "SN903": ("unreadable-file", "error", "The file cannot be read, or is larger than max-file-size."),
    "SN904": ("nested-too-deeply", "info", "Part of the file is nested deeper than snlint follows; "
              "it is read as unknown values."),
    "SN910": ("graph-import-failed", "info", "Graph pass: the module failed to import."),
    "SN911": ("graph-timeout", "info", "Graph pass: import or build exceeded the time limit."),
    "SN912": ("graph-build-failed", "info", "Graph pass: the class could not be built."),
    "SN913": ("graph-trace-failed", "info", "Graph pass: torch.fx could not trace the module."),
    "SN920": ("analysis-budget-exceeded", "info",
              "Read with less precision: a function, class or module body exceeded the analysis budget."),
    "SN999": ("internal-error", "error", "Internal error in snlint on this file."),
}

SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


@record(order=True)
class Span:
    line: int
    column: int
    end_line: int
    end_column: int
    # The node the source pass read at this span (`snlint.facts.node_key`), so a
    # fix edits that node without looking for it again. Not part of equality: source and
    # graph locations are joined by position, and a graph site has no node.
    node: int | None = field(default=None, compare=False, repr=False)

    @classmethod
    def point(cls, line: int, column: int) -> "Span":
        return cls(line, column, line, column + 1)


@record
class Location:
    """A span in a particular file; `path` is the display path of the file."""

    path: str
    span: Span


def place(path: str, line: int, here: str) -> str:
    """A line as a message names it: `line 12` in the finding's own file (`here`),
    `data.py:12` in another."""
    return f"line {line}" if not path or path == here else f"{path}:{line}"


@record
class DiscriminatorRef:
    cls: str  # "path.py:ClassName"
    evidence: str  # "configuration" | "training code" | "name"
    detail: str = ""  # human words for the message, e.g. "called on real and fake in train()"
    # How the code reaches the instance a finding judged, when it is not built where it is
    # called: "built by define_D() at train.py:40 (netD='basic' ...)", "; "-separated steps.
    via: str = ""

    def to_dict(self) -> dict[str, str]:
        out = {"class": self.cls, "evidence": self.evidence}
        if self.via:
            out["via"] = self.via
        return out

    @property
    def name(self) -> str:
        """The class's name, as a one-line message names the discriminator."""
        return self.cls.rpartition(":")[2]

    def why(self) -> str:
        """What makes the class a discriminator, and how the code reaches it: the evidence
        a message leaves to the full formats (`Finding.evidence_of`)."""
        why = _WHY.get(self.evidence, self.evidence)
        return "; ".join(part for part in (why, self.detail, self.via) if part)


_WHY = {"configuration": "configured as a discriminator",
        "name": "a discriminator by its name",
        "training code": "used as a discriminator by the training code"}


@record
class Edit:
    """A replacement in one file (the result of a libcst transform): the file's text
    `base`, as read, with its characters `start` to `end` replaced by `text`; by default
    the whole of it (`Edit(path, new_text)`). A finding's fix keeps only the stretch it
    changes, so that a file's many fixes do not each hold the whole file."""

    path: str
    text: str
    start: int = 0
    end: int | None = None  # None: to the end of `base`
    base: str = field(default="", compare=False, repr=False)

    @property
    def new_text(self) -> str:
        """The whole new text of the file."""
        end = len(self.base) if self.end is None else self.end
        return self.base[:self.start] + self.text + self.base[end:]


# A fix's applicability. Here, not beside the plans (snlint.edit.plan), so the rules'
# `fix_input` halves name it without importing libcst.
SAFE, UNSAFE = "safe", "unsafe"


def applies(applicability: str, unsafe: bool) -> bool:
    """Whether a fix of this applicability is applied (and marked `[*]`): safe fixes
    always, unsafe ones only with --unsafe-fixes."""
    return applicability == "safe" or unsafe


@record
class Fix:
    """A finding's fix. A plain lint only marks that a fix exists (`built` false: no
    message, diff or edits, only its applicability); the fix itself is built when an
    output shows it or `--fix` applies it (`snlint.fix`)."""

    applicability: str  # "safe" | "unsafe"
    message: str = ""
    diff: str = ""
    edits: tuple[Edit, ...] = ()
    # What the rule decided its fix edits, from the source facts (its `fix_input`): the
    # typed input its libcst half builds the edit from. Not output.
    payload: Any = field(default=None, compare=False, repr=False)

    def applies(self, unsafe: bool) -> bool:
        return applies(self.applicability, unsafe)

    @property
    def built(self) -> bool:
        return bool(self.message or self.diff or self.edits)

    def to_dict(self) -> dict[str, str]:
        # No diff (null) for a fix marked available that could not be built alone.
        return {"applicability": self.applicability, "message": self.message,
                "diff": self.diff or None}


@record
class Cleared:
    """Why a source finding is not reported: the pass that showed it wrong and what it saw
    (`snlint.checks.cleared`). JSON lists such a finding with `cleared_by`; no other
    output shows it, and it changes no exit code."""

    pass_: str  # "graph"
    evidence: str  # "BatchNorm2d Critic.bn is kept in eval mode in the built Critic (...)"

    def to_dict(self) -> dict[str, str]:
        return {"pass": self.pass_, "evidence": self.evidence}


@record
class Related:
    """Another place a finding concerns (SARIF `relatedLocations`): for a layer built
    inside a helper the generator also runs, the helper's line, where the finding points
    at the discriminator's own call of it."""

    path: str
    span: Span
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.span.line, "column": self.span.column,
                "message": self.message}


@record
class Finding:
    code: str
    name: str
    severity: str
    message: str
    path: str
    span: Span
    cell: int | None = None
    pass_: str = "source"
    symbol: str | None = None
    discriminator: DiscriminatorRef | None = None
    fix: Fix | None = None
    # What the rule's fix and the safety policy read of the finding: a frozen record of the
    # rule's (`snlint.checks.sn_applications.SNCall`, ...), or None. Not output.
    data: Any = field(default=None, compare=False)
    # What the names of the finding's file mean (`snlint.facts.Names`, resolved by the
    # link step): a fix names things through it. Not output.
    names: Any = field(default=None, compare=False, repr=False)
    cleared_by: Cleared | None = None
    related: tuple[Related, ...] = ()
    # Why the finding holds, beyond its one-line message: the candidates, the measured
    # values, the mechanism. Shown by `full`, `--show-fixes`, JSON and SARIF.
    evidence: str = field(default="", compare=False)
    # A notebook finding's place in the .ipynb file's own text (the JSON string of its
    # source line), for formats that point into the file (SARIF, GitHub); None elsewhere.
    file_span: Span | None = field(default=None, compare=False)

    @property
    def node(self) -> int | None:
        """The index of the source node the finding is about, when the source pass read it."""
        return self.span.node

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def column(self) -> int:
        return self.span.column

    @property
    def end_line(self) -> int:
        return self.span.end_line

    @property
    def end_column(self) -> int:
        return self.span.end_column

    @property
    def is_diagnostic(self) -> bool:
        return self.code.startswith("SN9")

    def with_(self, **changes: Any) -> "Finding":
        return replace(self, **changes)

    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.span.line, self.span.column, self.code)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "message": self.message,
            "path": self.path,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "cell": self.cell,
            "pass": self.pass_,
            "symbol": self.symbol,
            "discriminator": self.discriminator.to_dict() if self.discriminator else None,
            "fix": self.fix.to_dict() if self.fix else None,
        }
        out["evidence"] = self.evidence_of()
        if self.related:
            out["related"] = [r.to_dict() for r in self.related]
        if self.cleared_by is not None:
            out["cleared_by"] = self.cleared_by.to_dict()
        return out

    def evidence_of(self) -> dict[str, str | None] | None:
        """`{"discriminator": "Critic: used as a discriminator by the training code",
        "detail": "..."}`: why the discriminator is one, and the rule's own evidence;
        either None when absent, and None for both."""
        ref = self.discriminator
        why = f"{ref.name}: {ref.why()}" if ref is not None and ref.why() else None
        if why is None and not self.evidence:
            return None
        return {"discriminator": why, "detail": self.evidence or None}

    @property
    def explanation(self) -> str:
        """The message with what it leaves to the full formats: why the discriminator is
        one and the finding's evidence, as one text (what `full` shows under the line)."""
        ref = self.discriminator
        why = f"{ref.name} ({ref.why()})." if ref is not None and ref.why() else ""
        return " ".join(part for part in (self.message + ("." if why or self.evidence else ""),
                                          why, self.evidence) if part)

    def via(self) -> str:
        """` (via models/basicblock.py:69)` for a finding with related locations, as the
        text formats end its line; else empty."""
        if not self.related:
            return ""
        return " (via " + ", ".join(f"{r.path}:{r.span.line}" for r in self.related) + ")"


def diagnostic(code: str, path: str, message: str, span: Span | None = None,
               cell: int | None = None) -> Finding:
    """An SN9xx diagnostic about snlint's own view of `path` (not about the model)."""
    name, severity, _ = DIAGNOSTICS[code]
    return Finding(code, name, severity, message, path, span or Span(1, 1, 1, 1), cell=cell,
                   pass_="graph" if code.startswith("SN91") else "source")
