"""The graph pass's own diagnostics (SN910-SN913): what it could not import, build or trace,
and the one-line summary of a run.

Parent side: plain data in, findings and text out; no torch.
"""

from __future__ import annotations

import os
import re
from dataclasses import field
from typing import TYPE_CHECKING, Callable

from snlint.findings import Finding, Location, Span, diagnostic
from snlint.records import dataclass

if TYPE_CHECKING:  # the engine imports this module on --no-graph runs too: stay light
    from snlint.graph.facts import GraphTarget, Site, TargetFacts

DisplayFor = Callable[[str], "str | None"]
# progress(started, total, target): `target` is the one starting; None once all are done.
Progress = Callable[[int, int, "GraphTarget | None"], None]


@dataclass
class GraphRun:
    """One run's graph pass as the CLI sees it: progress while it runs, results after;
    and the discriminators ("path:Class") it builds, or would build if asked."""

    progress: Progress | None = None
    results: list[TargetFacts] = field(default_factory=list)
    discriminators: set[str] = field(default_factory=set)
    # Source findings a built discriminator showed wrong (`Finding.cleared_by`).
    cleared: list[Finding] = field(default_factory=list)


def _span(site: Site) -> Span:
    return Span(site.line, site.column, site.end_line, site.end_column)


def _same_file(a: str, b: str) -> bool:
    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def _failure_place(facts: TargetFacts, display_for: DisplayFor) -> tuple[Span, str]:
    """Where an import failure sits: the line of the target's file that raised, else 1:1
    and the other project file that raised it (`at utils/io.py:3`, "" when unknown)."""
    site = facts.error_site
    if site is not None and _same_file(site.file, facts.target.file):
        return _span(site), ""
    shown = display_for(site.file) if site is not None else None
    return Span(1, 1, 1, 1), (f"at {shown}:{site.line}" if shown else "")


def refused_diagnostics(facts: TargetFacts, location: Location) -> list[Finding]:
    """One SN910 naming what the worker refused while the target was imported and built
    (snlint.graph.guard), unless the failure's own message already says it."""
    refused = [r for r in facts.refused if r not in facts.message]
    if not refused:
        return []
    shown = ", ".join(refused[:8]) + (f" and {len(refused) - 8} more" if len(refused) > 8 else "")
    return [diagnostic("SN910", location.path, f"graph pass: refused while importing and "
                                               f"building {facts.target.display}: {shown}",
                       location.span)]


def target_diagnostics(facts: TargetFacts, display_for: DisplayFor, fallback: Location) -> list[Finding]:
    """SN910-SN913 of one target. Import failures concern the file, not a class: they sit
    at the failing line (or 1:1) with the same message for every class of the file, so
    they compare equal and deduplicate. What the worker refused comes first."""
    return refused_diagnostics(facts, fallback) + _status_diagnostics(facts, display_for, fallback)


def _status_diagnostics(facts: TargetFacts, display_for: DisplayFor, fallback: Location) -> list[Finding]:
    target = facts.target
    path, span = fallback.path, fallback.span
    if facts.status == "import_error":
        span, where = _failure_place(facts, display_for)
        where = f" ({where})" if where else ""
        return [diagnostic("SN910", target.display, f"graph pass: importing {target.display} "
                                                    f"failed: {facts.message}{where}", span)]
    if facts.status == "timeout":
        if facts.message.startswith("importing "):  # the runner's words for a hung import
            span = Span(1, 1, 1, 1)
        return [diagnostic("SN911", path, f"graph pass: {facts.message}; raise the limit with "
                                          "--graph-timeout SECONDS (graph-timeout in "
                                          "[tool.snlint])", span)]
    if facts.status == "build_error":
        site, where = facts.error_site, ""
        shown = display_for(site.file) if site is not None else None
        if shown:
            where = f" (at {shown}:{site.line})"
        # What was tried (and the [tool.snlint.models] entry that would help) follows
        # the last error and where it was raised.
        tried = f"; {facts.built_with}" if facts.built_with else ""
        return [diagnostic("SN912", path, f"graph pass: cannot build {target.class_name}: "
                                          f"{facts.message}{where}{tried}", span)]
    if not facts.trace_ok and not facts.recorded_by:
        # Where a forward recorded with hooks replaced the trace, nothing the rules read is
        # missing, and a note would only be noise: SN913 is for facts that were lost.
        probe = facts.probe or {}
        ran = ("layer facts and the probe still ran" if probe.get("ran") else
               "layer facts still checked; no forward ran"
               + (f" ({probe['reason']})" if probe.get("reason") else ""))
        return [diagnostic("SN913", path, f"graph pass: torch.fx cannot trace "
                                          f"{target.class_name}: {facts.trace_reason}; "
                                          "`F.batch_norm` calls and batch reductions are "
                                          f"unknown ({ran})", span)]
    return []


# ---------------------------------------------------------------------------------------
# Import failures, one per cause

# Import names whose pip distribution is named otherwise.
PIP_NAMES = {
    "skimage": "scikit-image", "cv2": "opencv-python", "PIL": "pillow", "yaml": "pyyaml",
    "sklearn": "scikit-learn", "bs4": "beautifulsoup4", "attr": "attrs",
    "dateutil": "python-dateutil", "Crypto": "pycryptodome", "OpenGL": "PyOpenGL",
    "hydra": "hydra-core", "git": "GitPython", "magic": "python-magic", "jwt": "PyJWT",
    "serial": "pyserial", "usb": "pyusb", "google": "protobuf", "pkg_resources": "setuptools",
    "win32api": "pywin32", "win32con": "pywin32", "fitz": "pymupdf", "dotenv": "python-dotenv",
    "imageio_ffmpeg": "imageio-ffmpeg", "torch_fidelity": "torch-fidelity",
    "pytorch_msssim": "pytorch-msssim", "taming": "taming-transformers",
    "ruamel": "ruamel.yaml", "Levenshtein": "python-Levenshtein", "mpl_toolkits": "matplotlib",
}
# Missing modules no `pip install` brings (standard-library parts left out of a build).
NOT_ON_PIP = frozenset({"tkinter", "_tkinter", "_lzma", "_bz2", "_sqlite3", "_ctypes", "readline"})

_MISSING = re.compile(r"^ModuleNotFoundError: No module named '([^']+)'")
# Where a missing top-level module is in the project (a folder relative to the project
# root, "" for the root itself), or None when it is not.
Locate = Callable[[str], "str | None"]


def missing_module(message: str) -> str | None:
    """The dotted name of `ModuleNotFoundError: No module named 'x.y'`, else None."""
    match = _MISSING.match(message)
    return match.group(1) if match else None


def install_hint(name: str, locate: Locate | None = None) -> str:
    """What makes a missing module importable, then how to silence the note."""
    top = name.partition(".")[0]
    folder = locate(top) if locate is not None else None
    if folder:  # the project has it, in a folder that is not an import root
        return f"add \"{folder}\" to [tool.snlint] graph-paths, or --ignore SN910"
    if folder == "" or top in NOT_ON_PIP or top.startswith("_"):
        return "--ignore SN910 to silence"
    return f"pip install {PIP_NAMES.get(top, top)}, or --ignore SN910"


def _listed(names: list[str], limit: int = 5) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _cause(facts: TargetFacts) -> tuple:
    """Files whose imports failed for one reason share a key: the same missing module, or
    the same error raised at the same line of another file (a shared helper module)."""
    name = missing_module(facts.message)
    if name is not None:
        return ("missing", name)
    site = facts.error_site
    if site is None or not _same_file(site.file, facts.target.file):
        return ("error", facts.message, site.file if site else None, site.line if site else None)
    return ("file", facts.target.file)


def import_diagnostics(failed: list[TargetFacts], display_for: DisplayFor,
                       enabled: Callable[[str], bool] = lambda path: True,
                       locate: Locate | None = None) -> list[Finding]:
    """One SN910 per cause of failed imports, not one per file or class.

    A group sits in its first file (by path) where SN910 is `enabled`: at the line that
    raised when that file raised it, else at 1:1 naming the file that did. Files where
    SN910 is off (per-file-ignores) are left out of the groups and the counts.
    """
    by_file: dict[str, TargetFacts] = {}
    for facts in sorted(failed, key=lambda f: f.target.display):
        if enabled(facts.target.display):
            by_file.setdefault(os.path.abspath(facts.target.file), facts)
    groups: dict[tuple, list[TargetFacts]] = {}
    for facts in by_file.values():
        groups.setdefault(_cause(facts), []).append(facts)
    out = []
    for cause, members in groups.items():
        first, reason = members[0], members[0].message
        if cause[0] == "missing":
            # The import line itself reads best: prefer a file that raised it.
            first = next((m for m in members if m.error_site is not None
                          and _same_file(m.error_site.file, m.target.file)), first)
            reason = reason.removeprefix("ModuleNotFoundError: ")
        span, where = _failure_place(first, display_for)
        hint = install_hint(cause[1], locate) if cause[0] == "missing" else ""
        notes = [note for note in (where, hint) if note]
        reason += f" ({'; '.join(notes)})" if notes else ""
        if len(members) == 1:
            message = f"graph pass: importing {first.target.display} failed: {reason}"
        else:
            blocked = _listed([m.target.display for m in members])
            message = f"graph pass: {len(members)} modules not imported: {reason}; blocked: {blocked}"
        out.append(diagnostic("SN910", first.target.display, message, span))
    return out


# ---------------------------------------------------------------------------------------
# The summary line

# build.py's words for a constructor with required parameters, and Python's own.
_NEEDS_ARGUMENTS = re.compile(r"needs arguments|missing \d+ required (?:positional|keyword-only) "
                              r"argument")


def not_built_reason(facts: TargetFacts) -> str:
    """Two or three words on why a target was not built, for the summary."""
    if facts.status == "import_error":
        name = missing_module(facts.message)
        return f"no module {name}" if name else "import failed"
    if facts.status == "timeout":
        return "timed out"
    if _NEEDS_ARGUMENTS.search(facts.message):
        return "needs arguments"
    return "build failed"


def graph_note(discriminators: int, *, asked: bool, quiet: bool, terminal: bool) -> str:
    """The line that says what `--graph` would add to a run without it; "" where nobody
    reads it as advice: standard error not a terminal (pre-commit, CI logs, a pipe),
    -q, the graph pass asked for, or no discriminator it would build."""
    if asked or quiet or not terminal or not discriminators:
        return ""
    found = f"{discriminators} discriminator{'' if discriminators == 1 else 's'} found"
    return (f"note: {found}; --graph builds {'it' if discriminators == 1 else 'them'} with torch "
            "to measure weights and batch coupling (runs project code)")


def graph_summary(results: list[TargetFacts], limit: int = 6) -> str:
    """`graph pass: 12 discriminators built (9 traced, 12 probed), 2 not built: Critic
    (needs arguments), NetD (import failed)`; "" when nothing was tried.

    Classes not built for one reason are named together (`Discriminator x5 (no module
    seaborn)`): the SN91x notes give each file and line.
    """
    if not results:
        return ""
    built = [r for r in results if r.status == "ok"]
    failed = [r for r in results if r.status != "ok"]
    noun = "discriminator" if len(built) == 1 else "discriminators"
    text = f"graph pass: {len(built)} {noun} built"
    if built:
        traced = sum(r.trace_ok for r in built)
        probed = sum(bool(r.probe.get("ran")) for r in built)
        text += f" ({traced} traced, {probed} probed)"
    if not failed:
        return text
    by_reason: dict[str, dict[str, int]] = {}
    for r in failed:
        names = by_reason.setdefault(not_built_reason(r), {})
        names[r.target.class_name] = names.get(r.target.class_name, 0) + 1
    items, left = [], 0
    for reason, names in by_reason.items():
        named = [f"{name} x{count}" if count > 1 else name for name, count in names.items()]
        room = max(limit - sum(len(i[0]) for i in items), 0)
        left += len(named[room:])
        if named[:room]:
            items.append((named[:room], reason))
    listed = ", ".join(f"{', '.join(named)} ({reason})" for named, reason in items)
    more = f" and {left} more" if left else ""
    return f"{text}, {len(failed)} not built: {listed}{more}"
