"""The graph pass's own diagnostics (SN910-SN913) and the summary of a run. Parent side:
plain data in, findings and text out; no torch."""

from __future__ import annotations

import importlib.util
import os
import re
from collections import Counter
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


def _at(site: Site | None, display_for: DisplayFor) -> str:
    """`at utils/io.py:3`, "" when the file is unknown or outside the project."""
    shown = display_for(site.file) if site is not None else None
    return f"at {shown}:{site.line}" if shown else ""


def _failure_place(facts: TargetFacts, display_for: DisplayFor) -> tuple[Span, str]:
    """Where an import failure sits: the line of the target's file that raised, else 1:1
    and where in another project file it was raised."""
    site = facts.error_site
    if site is not None and _same_file(site.file, facts.target.file):
        return _span(site), ""
    return Span(1, 1, 1, 1), _at(site, display_for)


def refused_diagnostics(facts: TargetFacts, location: Location) -> list[Finding]:
    """One SN910 naming what the worker refused while the target was imported and built
    (snlint.graph.guard), unless the failure's own message already says it."""
    refused = [r for r in facts.refused if r not in facts.message]
    if not refused:
        return []
    return [diagnostic("SN910", location.path, f"graph pass: refused while importing and "
                                               f"building {facts.target.display}: "
                                               f"{_listed(refused, 8)}",
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
        where = _at(facts.error_site, display_for)
        where = f" ({where})" if where else ""
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
               "layer facts still checked; no forward recorded"
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
    "gin": "gin-config", "ffmpeg": "ffmpeg-python",
}
# Missing modules no `pip install` brings (standard-library parts left out of a build).
NOT_ON_PIP = frozenset({"tkinter", "_tkinter", "_lzma", "_bz2", "_sqlite3", "_ctypes", "readline"})

_MISSING = re.compile(r"^ModuleNotFoundError: No module named '([^']+)'")
# `snlint.graph.runner`'s message for a worker that died while importing.
_CRASHED = re.compile(r"^the worker process exited \(code (-?\d+)\) while importing ")
# Where a missing top-level module is in the project (a folder relative to the project
# root, "" for the root itself), or None when it is not.
Locate = Callable[[str], "str | None"]
# Whether a top-level package is installed where the graph pass imports.
Installed = Callable[[str], bool]


def installed(top: str) -> bool:
    """Whether `top` is importable from this interpreter (the one the worker runs), found
    without importing it."""
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def _version_mismatch(name: str, is_installed: Installed | None) -> bool:
    """`x.y` missing while package `x` is installed: `x` lacks a module another package
    expects (basicsr imports `torchvision.transforms.functional_tensor`, which newer
    torchvision removed); installing `x` changes nothing."""
    top, dot, _ = name.partition(".")
    return bool(dot) and is_installed is not None and is_installed(top)


def missing_module(message: str) -> str | None:
    """The dotted name of `ModuleNotFoundError: No module named 'x.y'`, else None."""
    match = _MISSING.match(message)
    return match.group(1) if match else None


def install_hint(name: str, locate: Locate | None = None, is_installed: Installed | None = None) -> str:
    """What makes a missing module importable, then how to silence the note."""
    top = name.partition(".")[0]
    folder = locate(top) if locate is not None else None
    if folder:  # the project has it, in a folder that is not an import root
        return f"add \"{folder}\" to [tool.snlint] graph-paths, or --ignore SN910"
    if folder == "" or top in NOT_ON_PIP or top.startswith("_"):
        return "--ignore SN910 to silence"
    if _version_mismatch(name, is_installed):
        return (f"{top} is installed but has no {name}: install the version of {top} the "
                "project's packages need, or --ignore SN910")
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
    crashed = _CRASHED.match(facts.message)
    if crashed:
        # A native crash leaves no Python error to compare, and its stderr tail differs
        # from worker to worker: one note per exit code.
        return ("crashed", crashed.group(1))
    site = facts.error_site
    if site is None or not _same_file(site.file, facts.target.file):
        return ("error", facts.message, site.file if site else None, site.line if site else None)
    return ("file", facts.target.file)


def import_diagnostics(failed: list[TargetFacts], display_for: DisplayFor,
                       enabled: Callable[[str], bool] = lambda path: True,
                       locate: Locate | None = None,
                       is_installed: Installed | None = None) -> list[Finding]:
    """One SN910 per cause of failed imports, not one per file or class, in its first file
    (by path) where SN910 is `enabled`: at the line that raised when that file raised it,
    else at 1:1 naming the file that did. Files where SN910 is off are left out."""
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
        hint = install_hint(cause[1], locate, is_installed) if cause[0] == "missing" else ""
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


def graph_note(discriminators: int, *, asked: bool, quiet: bool, terminal: bool) -> str:
    """The line that says what `--graph` would add to a run without it; "" where nobody
    reads it as advice: standard error not a terminal (pre-commit, CI logs, a pipe),
    -q, the graph pass asked for, or no discriminator it would build."""
    if asked or quiet or not terminal or not discriminators:
        return ""
    found = f"{discriminators} discriminator{'' if discriminators == 1 else 's'} found"
    return (f"note: {found}; --graph builds {'it' if discriminators == 1 else 'them'} with torch "
            "to measure weights and batch coupling (runs project code)")


SUMMARY_LINES = 15  # classes listed one a line; the rest are counted
_REASON_CHARS = 60


def _short(text: str, limit: int = _REASON_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "\u2026"


def _shape(shape: list) -> str:
    """The probe's input without its batch dimension: `3x32x32`."""
    return "x".join(str(d) for d in shape[1:]) if len(shape) > 1 else "?"


def class_status(facts: TargetFacts) -> str:
    """What the graph pass did with one class, or why not, in a few words: `built,
    traced, probed at 3x32x32`; `not built: needs arguments (SN912)`."""
    if facts.status == "timeout":
        phase = ("import" if facts.message.startswith("importing ") else
                 "forwards" if facts.message.startswith("running the forwards") else "build")
        return f"timed out in {phase} (SN911)"
    if facts.status == "import_error":
        name = missing_module(facts.message)
        reason = f"no module {name}" if name else _short(facts.message or "import failed")
        return f"not imported: {reason} (SN910)"
    if facts.status != "ok":
        if _NEEDS_ARGUMENTS.search(facts.message):
            reason = "needs arguments"
        else:
            reason = _short(facts.message or "build failed")
        return f"not built: {reason} (SN912)"
    words = ["built"]
    if facts.trace_ok:
        words.append("traced")
    elif facts.recorded_by == "hooks":
        words.append("forward recorded")
    else:
        words.append("not traced (SN913)")
    probe = facts.probe or {}
    if probe.get("ran"):
        words.append(f"probed at {_shape(probe.get('input_shape') or [])}")
    else:
        words.append(f"not probed: {_short(probe.get('reason') or 'no input found')}")
    return ", ".join(words)


def _seconds(facts: TargetFacts) -> str:
    return f"{facts.seconds:.1f} s" if facts.seconds else "-"


def missing_packages(results: list[TargetFacts], locate: Locate | None = None,
                     is_installed: Installed | None = None) -> str:
    """`missing packages: tensorflow (3 classes), dill (1)`: each pip name once, with
    how many classes it kept from being imported; "" when none. A module the project
    holds (`locate`) or no pip install brings is no package: its SN910 says what to do."""
    counts: Counter[str] = Counter()
    for facts in results:
        name = missing_module(facts.message) if facts.status == "import_error" else None
        # A package where its SN910 would say to install one.
        if name is not None and install_hint(name, locate, is_installed).startswith("pip "):
            top = name.partition(".")[0]
            counts[PIP_NAMES.get(top, top)] += 1
    if not counts:
        return ""
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    listed = [f"{name} ({count} class{'es' if count != 1 else ''})" if i == 0 else f"{name} ({count})"
              for i, (name, count) in enumerate(ordered)]
    return "missing packages: " + ", ".join(listed)


def graph_summary(results: list[TargetFacts], limit: int = SUMMARY_LINES,
                  locate: Locate | None = None, is_installed: Installed | None = None) -> str:
    """The graph pass's account of a run, for standard error; "" when nothing was tried.

        graph pass: 2 discriminators built (1 traced, 2 probed), 1 not built
            7.9 s  models/biggan.py:Discriminator  built, traced, probed at 3x32x32
            0.1 s  models/critic.py:Critic         not built: needs arguments (SN912)
        missing packages: tensorflow (3 classes), dill (1)

    At most `limit` classes, then how many more."""
    if not results:
        return ""
    built = [r for r in results if r.status == "ok"]
    failed = len(results) - len(built)
    noun = "discriminator" if len(built) == 1 else "discriminators"
    head = f"graph pass: {len(built)} {noun} built"
    if built:
        traced = sum(r.trace_ok for r in built)
        probed = sum(bool(r.probe.get("ran")) for r in built)
        head += f" ({traced} traced, {probed} probed)"
    if failed:
        head += f", {failed} not built"
    shown = results[:limit]
    names = [f"{r.target.display}:{r.target.class_name}" for r in shown]
    width = min(max(len(n) for n in names), 48)
    times = [_seconds(r) for r in shown]
    clock = max(len(t) for t in times)
    lines = [head]
    lines += [f"  {t:>{clock}}  {n:<{width}}  {class_status(r)}"
              for t, n, r in zip(times, names, shown)]
    if len(results) > limit:
        lines.append(f"  and {len(results) - limit} more")
    missing = missing_packages(results, locate, is_installed)
    if missing:
        lines.append(missing)
    return "\n".join(lines)
