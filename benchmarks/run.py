"""snlint's benchmark: every number is a ratio to a peer measured in the same run.

One run measures, on the generated corpus (benchmarks/corpus.py) at three sizes and on
any `--corpus DIR` of real files, every case below as a command in a fresh subprocess, in
interleaved rounds (each case once per round, the order rotated each round; medians):

  python_startup     python -c pass
  ast_parse          python + ast.parse of every file
  libcst_parse       python + libcst.parse_module of every file, one core: the floor
  snlint_cold        snlint --no-graph . with no cache (--no-cache when the build has it,
                     and .snlint_cache deleted before the run)
  snlint_cold_jobs1  the same with --jobs 1                  (when the build has --jobs)
  snlint_warm        the cache filled by an untimed run, nothing changed (when it has a cache)
  snlint_touched     the cache filled, then a comment appended to one file (the same)
  snlint_edited      the cache filled, then a statement appended to that file: what it
                     says changed, so the project is linked again (no target; shown so
                     "touched" is not read as "edited")
  snlint_fix         snlint --fix --no-graph . on a fresh copy, no cache
  snlint_one         snlint --no-graph FILE: one small file alone in a folder
  torchfix_one       torchfix FILE: the same file
  torchfix           torchfix . (its default: one job per core)
  ruff               ruff check --select ALL --no-cache .
and, on the repository's examples/, snlint with the graph pass and without.

The full set runs on the middle generated size and on each real corpus; the other two
sizes run the floor and snlint_cold only, for the time per file across sizes. Peak memory
is ru_maxrss from wait4: the largest resident set of any one process of the command's
tree (the issue's "per process").

The issue's targets are checked as pass/fail on wall-clock ratios; the output is Markdown
(`--markdown` writes it into benchmarks/README.md between its result markers).

    python benchmarks/run.py --markdown                 # measure, write results.json + README
    python benchmarks/run.py --quick --output /tmp/r.json   # seconds: proves the harness

TorchFix pins libcst<1.6 and snlint needs >=1.8, so TorchFix and ruff live in virtual
environments of their own, named by --torchfix/--ruff or SNLINT_BENCH_TORCHFIX/
SNLINT_BENCH_RUFF (else found on PATH or next to this python); without them their rows
say "not installed".
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import corpus as corpus_mod  # noqa: E402  (a sibling script, not a package)

SCHEMA = 2
CACHE_DIR = ".snlint_cache"
README = HERE / "README.md"
MARK_BEGIN, MARK_END = "<!-- results:begin -->", "<!-- results:end -->"
SKIP_DIRS = {"venv", ".venv", "site-packages", "node_modules", "__pycache__", "build", "dist"}
RUN_TIMEOUT = 1800.0  # seconds; a hung command must not hang the benchmark

# The floors as scripts: every .py file under the current folder, read as bytes (both
# parsers detect the encoding); a file that does not parse is counted, not fatal.
FLOOR_SCRIPT = """
import sys
from pathlib import Path
{imp}
bad = 0
for f in sorted(Path('.').rglob('*.py')):
    try:
        {parse}(f.read_bytes())
    except Exception:
        bad += 1
print(bad, 'files did not parse', file=sys.stderr)
"""
AST_FLOOR = FLOOR_SCRIPT.format(imp="import ast", parse="ast.parse")
LIBCST_FLOOR = FLOOR_SCRIPT.format(imp="import libcst", parse="libcst.parse_module")

# A small launcher forks and execs the command and reports its wait4 numbers. Forking
# from this (larger) process would put our own RSS into the child's maxrss; the launcher
# is a bare `python -S` of about 10 MB, the floor of every maxrss reported. The clock
# starts at the fork, so the launcher's own start is not in the wall time.
LAUNCHER = """
import json, os, sys, time
argv = sys.argv[1:]
devnull = os.open(os.devnull, os.O_WRONLY)
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.dup2(devnull, 1)
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
print(json.dumps([wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, os.waitstatus_to_exitcode(status)]))
"""
LIBCST_VERSION = "import importlib.metadata as m; print(m.version('libcst'))"
OK_EXIT = (0, 1)  # the linters exit 1 when they report something


# --------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class Target:
    """One of issue 13's targets: median wall of `num` over that of `den` (same corpus)."""
    key: str
    text: str
    num: str
    den: str
    op: str
    bound: float


TARGETS = [
    Target("cold_vs_torchfix", "cold: ≥15× faster than TorchFix", "torchfix", "snlint_cold", ">=", 15),
    Target("cold_vs_floor", "cold: ≤1.5× the one-core libcst parse", "snlint_cold", "libcst_parse", "<=", 1.5),
    Target("warm_vs_cold", "warm, nothing changed: ≥10× faster than cold", "snlint_cold", "snlint_warm", ">=", 10),
    Target("touched_vs_one", "warm, one file touched: ≤2× the one-file run",
           "snlint_touched", "snlint_one", "<=", 2),
    Target("fix_vs_lint", "--fix: ≤1.5× a plain lint", "snlint_fix", "snlint_cold", "<=", 1.5),
    Target("one_vs_torchfix", "one small file: <0.75× TorchFix", "snlint_one", "torchfix_one", "<", 0.75),
]
MEMORY_BOUND_MB = 150  # peak RSS of any one process, source path
SCALING_BOUND = 1.25  # largest over smallest time per file across the sizes
SOURCE_PATH_CASES = ("snlint_cold", "snlint_cold_jobs1", "snlint_warm", "snlint_touched", "snlint_edited",
                     "snlint_fix", "snlint_one")
ROWS = ("python_startup", "ast_parse", "libcst_parse", "snlint_cold", "snlint_cold_jobs1", "snlint_warm",
        "snlint_touched", "snlint_edited", "snlint_fix", "snlint_one", "torchfix", "torchfix_one", "ruff", "snlint_graph",
        "snlint_no_graph")  # the order of the tables
OPS = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, "<": lambda a, b: a < b}


# --------------------------------------------------------------------------- measuring


@dataclass
class Sample:
    wall: float
    cpu: float
    maxrss_kb: int | None
    exit_code: int
    extra: dict = field(default_factory=dict)


def nothing() -> dict:
    return {}


@dataclass
class Case:
    name: str
    what: str
    argv: list[str]
    cwd: Path
    prepare: Callable[[], None] = lambda: None  # untimed, before each run
    after: Callable[[], dict] = nothing  # untimed, after each run: extra facts of the run
    rounds: int | None = None  # None: every round
    vs_peer: str | None = "torchfix"  # the peer row this one is compared with
    samples: list[Sample] = field(default_factory=list)


def run_command(argv: list[str], cwd: Path) -> Sample:
    """Run argv to completion in its own session: wall, CPU (user + system, children
    included) and peak RSS as wait4 reports them; killed whole after RUN_TIMEOUT."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-S", "-c", LAUNCHER, *argv], cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=err, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.communicate()
            return Sample(float("nan"), float("nan"), None, -9, {"stderr_tail": ["timed out"]})
        err.seek(0)
        tail = err.read().decode("utf-8", "replace").strip().splitlines()[-3:]
    try:
        wall, cpu, maxrss, code = json.loads(out.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return Sample(float("nan"), float("nan"), None, proc.returncode or -1, {"stderr_tail": tail})
    return Sample(wall, cpu, maxrss, code, {} if code in OK_EXIT else {"stderr_tail": tail})


def measure(cases: list[Case], repeat: int, log) -> None:
    """Every case once per round, the order rotated so no case always follows another."""
    for rnd in range(repeat):
        shift = rnd * len(cases) // max(repeat, 1)
        for case in cases[shift:] + cases[:shift]:
            if case.rounds is not None and rnd >= case.rounds:
                continue
            case.prepare()
            sample = run_command(case.argv, case.cwd)
            sample.extra.update(case.after())
            case.samples.append(sample)
            log(f"  round {rnd + 1}/{repeat} {case.cwd.name:>14s} {case.name:18s} wall {sample.wall:7.2f} s "
                f"cpu {sample.cpu:7.2f} s" + (f" rss {sample.maxrss_kb / 1024:5.0f} MiB" if sample.maxrss_kb else "")
                + ("" if sample.exit_code in OK_EXIT else f" exit {sample.exit_code} {sample.extra['stderr_tail']}"))


# --------------------------------------------------------------------------- the tools


@dataclass
class Snlint:
    cmd: list[str]
    flags: set[str]
    cache: bool  # the build keeps a cache: --no-cache in its help, or .snlint_cache appeared

    def lint(self, *args: str, cache: bool = False) -> list[str]:
        """A lint command; without `cache`, one that neither reads nor writes a cache."""
        argv = [*self.cmd, *args, "--output-format", "concise"]
        return argv + ["--no-cache"] if not cache and "--no-cache" in self.flags else argv


def default_snlint() -> list[str]:
    script = Path(sys.executable).parent / "snlint"
    return [str(script)] if script.exists() else [sys.executable, "-m", "snlint"]


def compile_bytecode(cmd: list[str]) -> str:
    """Give the measured snlint the bytecode an installed package has. pip compiles a
    package's modules when it installs it (TorchFix's and libcst's have theirs); an
    editable install run with PYTHONDONTWRITEBYTECODE=1 (set on these machines) has none,
    and then every run compiles snlint's modules again: 0.13 s, a third of a one-file run.
    Compiled here as pip would (`compileall`), into the package's own __pycache__
    (ignored by git). Says what it did, for the results."""
    script = Path(cmd[0])
    python = script.parent / "python" if script.name != Path(sys.executable).name else script
    python = python if python.exists() else Path(sys.executable)
    folder = tool_output([str(python), "-c", "import os, snlint; print(os.path.dirname(snlint.__file__))"])
    if not folder:
        return "unknown (snlint not importable by the command's python)"
    stale = [p for p in Path(folder).rglob("*.py") if not _fresh_bytecode(p)]
    if not stale:
        return "present"
    subprocess.run([str(python), "-m", "compileall", "-q", folder], capture_output=True, check=False)
    return f"compiled by the harness for {len(stale)} modules (as pip does on install)"


def _fresh_bytecode(source: Path) -> bool:
    """Whether Python would use the module's cached bytecode: a .pyc whose header holds
    the source's modification time and size (a stale one is compiled again on every run
    when bytecode is not written)."""
    cached = source.parent / "__pycache__" / f"{source.stem}.{sys.implementation.cache_tag}.pyc"
    try:
        header = cached.read_bytes()[:16]
        stat = source.stat()
    except OSError:
        return False
    return (len(header) == 16 and int.from_bytes(header[4:8], "little") == 0
            and int.from_bytes(header[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF
            and int.from_bytes(header[12:16], "little") == stat.st_size & 0xFFFFFFFF)


def probe_snlint(cmd: list[str], work: Path) -> Snlint:
    """What this build can do, from its --help and one run on a one-file folder."""
    help_text = subprocess.run([*cmd, "--help"], capture_output=True, text=True, check=False).stdout
    flags = set(re.findall(r"--[a-z][a-z-]*", help_text))
    probe = work / "probe"
    probe.mkdir()
    (probe / "m.py").write_text("import torch.nn as nn\n", encoding="utf-8")
    subprocess.run([*cmd, "--no-graph", "m.py"], cwd=probe, capture_output=True, check=False)
    return Snlint(cmd, flags, cache="--no-cache" in flags or (probe / CACHE_DIR).exists())


def find_tool(explicit: str | None, env_var: str, name: str) -> str | None:
    for candidate in (explicit, os.environ.get(env_var), shutil.which(name), str(Path(sys.executable).parent / name)):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def tool_output(argv: list[str], cwd: Path | None = None) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[-1] if out.returncode == 0 and text else None


# --------------------------------------------------------------------------- the corpora


@dataclass
class Subject:
    """A folder the cases run in: a generated corpus or a copy of real files."""
    name: str
    root: Path
    files: list[str]  # relative, sorted
    origin: str
    full: bool = True  # every case, or only the floor and snlint_cold (a scaling size)
    lines: int = 0
    digest: str = ""
    facts: dict = field(default_factory=dict)  # the generator's kinds and planted mistakes

    def summary(self) -> dict:
        return {"origin": self.origin, "files": len(self.files), "lines": self.lines, "sha256": self.digest,
                **self.facts}


def describe(name: str, root: Path, origin: str, full: bool) -> Subject:
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*.py"))
    digest, lines = hashlib.sha256(), 0
    for rel in files:
        data = (root / rel).read_bytes()
        digest.update(rel.encode() + b"\0" + data)
        lines += data.count(b"\n")
    return Subject(name, root, files, origin, full, lines, digest.hexdigest())


def generated(n: int, seed: int, work: Path, full: bool) -> Subject:
    made = corpus_mod.generate(n, seed, work / f"gen-{n}")
    subject = describe(f"gen-{n}", made.root.resolve(), f"benchmarks/corpus.py --n {n} --seed {seed}", full)
    subject.facts = {"kinds": made.kinds, "planted": made.planted}
    return subject


def copy_real(source: Path, work: Path) -> Subject:
    """Copy the .py files of a real project (never edit the original: the cases touch and
    fix their folder), leaving out hidden folders, environments and build output."""
    name = source.resolve().name
    while (work / f"real-{name}").exists():  # two --corpus folders of the same name
        name += "_"
    dest = work / f"real-{name}"
    for path in sorted(source.rglob("*.py")):
        rel = path.relative_to(source)
        if path.is_file() and not any(p.startswith(".") or p in SKIP_DIRS for p in rel.parts[:-1]):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest / rel)
    return describe(name, dest, str(source), True)


def pick_one_file(subject: Subject) -> str:
    """The smallest file with a discriminator in it (so both linters have work), else the
    smallest that mentions torch, else the smallest."""
    sized = sorted(((subject.root / f).stat().st_size, f) for f in subject.files)
    texts = {f: (subject.root / f).read_text(encoding="utf-8", errors="replace") for _, f in sized}
    for wanted in (lambda t: "torch" in t and re.search(r"class \w*(Discriminator|Critic|NetD)\b", t),
                   lambda t: "torch" in t, lambda t: True):
        for _, f in sized:
            if wanted(texts[f]):
                return f
    raise ValueError(f"{subject.name}: no .py files")


def remove_cache(folder: Path) -> None:
    shutil.rmtree(folder / CACHE_DIR, ignore_errors=True)


# --------------------------------------------------------------------------- the cases


def fill_cache(snlint: Snlint, folder: Path) -> None:
    subprocess.run(snlint.lint("--no-graph", ".", cache=True), cwd=folder, capture_output=True, check=False)


def touching(path: Path, statement: bool = False) -> tuple[Callable[[], None], Callable[[], dict]]:
    """prepare/after that append a comment to `path` (or, with `statement`, an assignment:
    a change of what the file says), unique per run so no cache entry of an earlier round
    matches, and restore its bytes afterwards."""
    original = path.read_bytes()

    def touch() -> None:
        line = (f"_touched_by_the_benchmark = {time.time_ns()}" if statement
                else f"# touched by the benchmark {time.time_ns()}")
        path.write_bytes(original + f"\n{line}\n".encode())

    def restore() -> dict:
        path.write_bytes(original)
        return {}
    return touch, restore


def fix_copy(source: Path, dest: Path) -> tuple[Callable[[], None], Callable[[], dict]]:
    """prepare/after for --fix: a fresh copy each run; afterwards, how many files changed."""
    def reset() -> None:
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(source, dest, ignore=shutil.ignore_patterns(CACHE_DIR))

    def changed() -> dict:
        return {"files_changed": sum((dest / p.relative_to(source)).read_bytes() != p.read_bytes()
                                     for p in source.rglob("*.py"))}
    return reset, changed


@dataclass
class Group:
    """The cases of one folder, and by name those this build or machine cannot run."""
    name: str
    corpus: dict
    full: bool  # the targets apply (every case ran here)
    cases: list[Case] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    def result(self) -> dict:
        return {"corpus": self.corpus, "full": self.full, "skipped": self.skipped,
                "cases": {c.name: case_summary(c) for c in self.cases}}


def subject_group(s: Subject, snlint: Snlint, peers: dict, work: Path) -> Group:
    """Every case on a full corpus; the floor and a cold run on a scaling size."""
    py, root = sys.executable, s.root
    g = Group(s.name, s.summary(), s.full)
    g.cases = [Case("libcst_parse", "python + libcst.parse_module of every file (one core): the floor",
                    [py, "-c", LIBCST_FLOOR], root),
               Case("snlint_cold", "snlint --no-graph ., no cache", snlint.lint("--no-graph", "."), root,
                    prepare=lambda: remove_cache(root))]
    if not s.full:
        return g
    g.cases += [Case("python_startup", "python -c pass", [py, "-c", "pass"], root),
                Case("ast_parse", "python + ast.parse of every file", [py, "-c", AST_FLOOR], root)]
    if "--jobs" in snlint.flags:
        g.cases.append(Case("snlint_cold_jobs1", "snlint --no-graph --jobs 1 ., no cache",
                            snlint.lint("--no-graph", "--jobs", "1", "."), root, prepare=lambda: remove_cache(root)))
    else:
        g.skipped["snlint_cold_jobs1"] = "not available in this build (no --jobs)"
    one = pick_one_file(s)
    one_dir = work / f"{s.name}-one"
    one_dir.mkdir()
    shutil.copyfile(root / one, one_dir / Path(one).name)
    g.cases.append(Case("snlint_one", f"snlint --no-graph {one} alone in a folder, no cache",
                        snlint.lint("--no-graph", Path(one).name), one_dir, prepare=lambda: remove_cache(one_dir),
                        vs_peer="torchfix_one"))
    g.cases += cache_cases(snlint, root, one, g.skipped)
    g.cases.append(fix_case(snlint, root, work / f"{s.name}-fix"))
    g.cases += peer_cases(peers, root, one_dir, Path(one).name, g.skipped)
    return g


def cache_cases(snlint: Snlint, root: Path, one: str, skipped: dict) -> list[Case]:
    """Warm runs: nothing changed, and `one` touched after the cache was filled."""
    if not snlint.cache:
        skipped["snlint_warm"] = skipped["snlint_touched"] = skipped["snlint_edited"] = \
            "not available in this build (no cache)"
        return []
    touch, restore = touching(root / one)
    edit, unedit = touching(root / one, statement=True)

    def fill_then(change: Callable[[], None]) -> Callable[[], None]:
        def prepare() -> None:
            fill_cache(snlint, root)
            change()
        return prepare
    warm = snlint.lint("--no-graph", ".", cache=True)
    return [Case("snlint_warm", "snlint --no-graph ., cache filled, nothing changed", warm, root,
                 prepare=lambda: fill_cache(snlint, root)),
            Case("snlint_touched", f"snlint --no-graph ., cache filled, then a comment appended to {one}",
                 warm, root, prepare=fill_then(touch), after=restore),
            Case("snlint_edited", f"snlint --no-graph ., cache filled, then a statement appended to {one}",
                 warm, root, prepare=fill_then(edit), after=unedit)]


def fix_case(snlint: Snlint, root: Path, copy: Path) -> Case:
    reset, changed = fix_copy(root, copy)
    reset()  # the folder must exist before the first run: it is the case's cwd
    return Case("snlint_fix", "snlint --fix --no-graph . on a fresh copy, no cache",
                snlint.lint("--fix", "--no-graph", "."), copy, prepare=reset, after=changed)


def peer_cases(peers: dict, root: Path, one_dir: Path, one: str, skipped: dict) -> list[Case]:
    cases = []
    if peers["torchfix"]:
        cases += [Case("torchfix", "torchfix . (one job per core)", [peers["torchfix"], "."], root),
                  Case("torchfix_one", f"torchfix {one} alone in a folder", [peers["torchfix"], one], one_dir,
                       vs_peer=None)]
    else:
        skipped["torchfix"] = skipped["torchfix_one"] = "TorchFix not installed"
    if peers["ruff"]:
        cases.append(Case("ruff", "ruff check --select ALL --no-cache .",
                          [peers["ruff"], "check", "--select", "ALL", "--no-cache", "--isolated", "--exit-zero", "."],
                          root))
    else:
        skipped["ruff"] = "ruff not installed"
    return cases


def examples_group(snlint: Snlint, work: Path, rounds: int) -> Group:
    """snlint on a copy of the repository's examples/, with the graph pass and without."""
    source = REPO / "examples"
    g = Group("examples", describe("examples", source, "examples/ of this repository", False).summary(), False)
    if rounds <= 0:
        g.skipped["snlint_graph"] = "not measured (--graph-repeat 0)"
    elif importlib.util.find_spec("torch") is None:
        g.skipped["snlint_graph"] = "not available: torch is not importable"
    else:
        folder = work / "examples"
        shutil.copytree(source, folder / "examples")
        g.cases = [Case("snlint_graph", "snlint --graph examples/ (torch in a child)",
                        snlint.lint("--graph", "examples"), folder, prepare=lambda: remove_cache(folder),
                        rounds=rounds, vs_peer="snlint_no_graph"),
                   Case("snlint_no_graph", "snlint --no-graph examples/", snlint.lint("--no-graph", "examples"),
                        folder, prepare=lambda: remove_cache(folder), rounds=rounds, vs_peer=None)]
    return g


# --------------------------------------------------------------------------- results


def summarize(values: list[float]) -> dict:
    values = [v for v in values if v == v]  # a timed-out run is NaN
    if not values:
        return {}
    return {"median": round(statistics.median(values), 4), "min": round(min(values), 4),
            "max": round(max(values), 4), "all": [round(v, 4) for v in values]}


def case_summary(case: Case) -> dict:
    out = {"what": case.what, "argv": shlex.join(case.argv), "runs": len(case.samples), "vs_peer": case.vs_peer,
           "wall_s": summarize([s.wall for s in case.samples]), "cpu_s": summarize([s.cpu for s in case.samples]),
           "maxrss_kb": summarize([s.maxrss_kb for s in case.samples if s.maxrss_kb]),
           "exit_codes": sorted({s.exit_code for s in case.samples})}
    for key in ("stderr_tail", "files_changed"):
        seen = [s.extra[key] for s in case.samples if key in s.extra]
        if seen:
            out[key] = seen[-1]
    return out


def median(cases: dict, name: str, key: str = "wall_s") -> float | None:
    return (cases.get(name) or {}).get(key, {}).get("median")


def ratio(cases: dict, num: str, den: str, key: str = "wall_s") -> float | None:
    a, b = median(cases, num, key), median(cases, den, key)
    return round(a / b, 3) if a is not None and b else None


def check(value: float | None, op: str, bound: float, missing: str | None) -> dict:
    if value is None:
        return {"value": None, "status": "n/a", "note": missing or "not measured"}
    return {"value": value, "status": "pass" if OPS[op](value, bound) else "fail"}


def ratio_targets(cases: dict, skipped: dict) -> list[dict]:
    """The issue's ratio targets on one fully measured corpus: pass, fail or n/a (why)."""
    out = []
    for t in TARGETS:
        missing = skipped.get(t.num) or skipped.get(t.den)
        row = {"key": t.key, "text": t.text, "needed": f"{t.op} {t.bound}",
               **check(ratio(cases, t.num, t.den), t.op, t.bound, missing),
               "cpu_value": ratio(cases, t.num, t.den, "cpu_s")}
        if t.key == "fix_vs_lint" and row["value"] is not None and not cases["snlint_fix"].get("files_changed"):
            row.update(status="n/a", note="no fix applied on this corpus (its ratio shown all the same)")
        out.append(row)
    return out


def memory_target(cases: dict) -> dict:
    peaks = [cases[c]["maxrss_kb"]["max"] for c in SOURCE_PATH_CASES if cases.get(c, {}).get("maxrss_kb")]
    peak_mb = round(max(peaks) * 1024 / 1e6, 1) if peaks else None
    return {"key": "memory", "text": f"peak memory <{MEMORY_BOUND_MB} MB per process (source path)",
            "needed": f"< {MEMORY_BOUND_MB} MB", **check(peak_mb, "<", MEMORY_BOUND_MB, None)}


def scaling(corpora: dict, sizes: list[int]) -> tuple[list[dict], dict]:
    """Time per file of snlint_cold (and of the floor) at each generated size, and the
    target: the largest per-file time over the smallest (wall; CPU beside it, since on a
    shared machine the wall of a long run also measures the neighbours)."""
    def per_file(cases: dict, name: str, n: int, key: str = "wall_s") -> float | None:
        value = median(cases, name, key)
        return round(1000 * value / n, 2) if value else None

    rows = [{"files": n, "lines": corpora[f"gen-{n}"]["corpus"]["lines"],
             "snlint_ms_per_file": per_file(corpora[f"gen-{n}"]["cases"], "snlint_cold", n),
             "snlint_cpu_ms_per_file": per_file(corpora[f"gen-{n}"]["cases"], "snlint_cold", n, "cpu_s"),
             "floor_ms_per_file": per_file(corpora[f"gen-{n}"]["cases"], "libcst_parse", n)} for n in sizes]

    def spread(key: str) -> float | None:
        values = [r[key] for r in rows if r[key]]
        return round(max(values) / min(values), 3) if len(values) == len(sizes) > 1 else None
    target = {"key": "scaling", "text": "time per file within 25% across the sizes", "needed": f"<= {SCALING_BOUND}",
              **check(spread("snlint_ms_per_file"), "<=", SCALING_BOUND, "needs two sizes or more"),
              "cpu_value": spread("snlint_cpu_ms_per_file")}
    return rows, target


def machine(snlint: Snlint, peers: dict) -> dict:
    def version(dist: str) -> str | None:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return None

    torchfix_python = Path(peers["torchfix"]).parent / "python" if peers["torchfix"] else None
    return {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
            "libcst": version("libcst"), "torch": version("torch"),
            "snlint": tool_output([*snlint.cmd, "--version"]),
            # The code measured: the work tree at this commit ("-dirty": with local changes).
            "snlint_commit": tool_output(["git", "describe", "--always", "--dirty"], cwd=REPO),
            "snlint_cache": snlint.cache, "snlint_jobs": "--jobs" in snlint.flags,
            "torchfix": tool_output([peers["torchfix"], "--version"]) if peers["torchfix"] else None,
            "torchfix_libcst": tool_output([str(torchfix_python), "-c", LIBCST_VERSION])
            if torchfix_python and torchfix_python.exists() else None,
            "ruff": tool_output([peers["ruff"], "--version"]) if peers["ruff"] else None,
            "loadavg_start": [round(x, 2) for x in os.getloadavg()]}


# --------------------------------------------------------------------------- Markdown


def fmt(value: float | None, digits: int = 2, suffix: str = "") -> str:
    return "" if value is None else f"{value:.{digits}f}{suffix}"


def markdown(results: dict) -> str:
    """The results section of benchmarks/README.md: machine, per-corpus rows with their
    ratios, scaling, and the targets as pass/fail."""
    m, st = results["machine"], results["settings"]
    torchfix = (f"TorchFix {m['torchfix']} (libcst {m['torchfix_libcst']})" if m["torchfix"]
                else "TorchFix not installed")
    lines = [f"Measured by `{results['command']}` at snlint `{m['snlint_commit']}`: {m['cores']} cores, "
             f"Python {m['python']}, libcst {m['libcst']}, torch {m['torch']}; {torchfix}, "
             f"{m['ruff'] or 'ruff not installed'}. {st['repeat']} interleaved rounds"
             f" (graph: {st['graph_repeat']}), medians; load average {m['loadavg_start']} at the start, "
             f"{m.get('loadavg_end')} at the end. snlint's bytecode: {m.get('snlint_bytecode', 'not recorded')}."
             " Wall and CPU seconds; peak RSS is the largest process; "
             "× columns are wall-clock ratios." + (" **--quick: proves the harness, measures nothing.**"
                                                   if results["quick"] else ""), ""]
    lines += ["### Targets (issue 13)", "", "| corpus | target | measured (wall) | CPU | needed | result |",
              "| --- | --- | ---: | ---: | --- | --- |"]
    for t in results["targets"]:
        result = t["status"] + (f": {t['note']}" if t.get("note") else "")
        unit = " MB" if t["key"] == "memory" else "×"
        lines.append(f"| {t['corpus']} | {t['text']} | {fmt(t['value'], suffix=unit)} | "
                     f"{fmt(t.get('cpu_value'), suffix=unit)} | "
                     f"{t['needed']} | {result} |")
    for name, sub in results["corpora"].items():
        c = sub["corpus"]
        lines += ["", f"### {name}: {c['files']} files, {c['lines']} lines ({c['origin']})", "",
                  "| case | what | wall s | CPU s | peak RSS MB | × floor | × peer |",
                  "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
        cases = sub["cases"]
        for case in sorted([*cases, *sub["skipped"]], key=ROWS.index):
            if case in sub["skipped"]:
                lines.append(f"| {case} | {sub['skipped'][case]} | | | | | |")
                continue
            row = cases[case]
            what = row["what"] + (f" ({row['files_changed']} files fixed)" if "files_changed" in row else "")
            rss = row["maxrss_kb"].get("max")
            peer = (f"{fmt(ratio(cases, case, row['vs_peer']))} ({row['vs_peer']})"
                    if row["vs_peer"] in cases and row["vs_peer"] != case else "")
            lines.append(f"| {case} | {what} | {fmt(median(cases, case))} | {fmt(median(cases, case, 'cpu_s'))}"
                         f" | {fmt(rss * 1024 / 1e6 if rss else None, 0)} | {fmt(ratio(cases, case, 'libcst_parse'))}"
                         f" | {peer} |")
    lines += ["", "### Scaling (snlint_cold, no cache)", "",
              "| files | lines | snlint wall ms/file | snlint CPU ms/file | floor wall ms/file |",
              "| ---: | ---: | ---: | ---: | ---: |"]
    for row in results["scaling"]:
        lines.append(f"| {row['files']} | {row['lines']} | {fmt(row['snlint_ms_per_file'], 1)} | "
                     f"{fmt(row['snlint_cpu_ms_per_file'], 1)} | {fmt(row['floor_ms_per_file'], 1)} |")
    return "\n".join(lines) + "\n"


def write_section(path: Path, section: str) -> None:
    """Replace what stands between the result markers of `path` (append them if absent)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    block = f"{MARK_BEGIN}\n{section}{MARK_END}"
    if MARK_BEGIN in text and MARK_END in text:
        head, rest = text.split(MARK_BEGIN, 1)
        text = head + block + rest.split(MARK_END, 1)[1]
    else:
        text = text + ("\n" if text and not text.endswith("\n") else "") + block + "\n"
    path.write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="snlint benchmarks: ratios against peers in one run.")
    p.add_argument("--sizes", help="three generated corpus sizes; the middle one gets every case "
                                   "(default 100,200,400; --quick: 2,3,4)")
    p.add_argument("--seed", type=int, default=corpus_mod.DEFAULT_SEED)
    p.add_argument("--corpus", action="append", default=[], metavar="DIR",
                   help="a folder of real files to measure too (copied; may repeat)")
    p.add_argument("--repeat", type=int, help="rounds (default 5; --quick: 1)")
    p.add_argument("--graph-repeat", type=int, help="rounds of the graph pass on examples/ (default 3; --quick: 0)")
    p.add_argument("--snlint", help="the snlint command to measure (default: the one next to this python)")
    p.add_argument("--torchfix", help="the torchfix executable (its own virtual environment)")
    p.add_argument("--ruff", help="the ruff executable")
    p.add_argument("--no-torchfix", action="store_true")
    p.add_argument("--no-ruff", action="store_true")
    p.add_argument("--quick", action="store_true", help="tiny corpora, 1 round: proves the harness, measures nothing")
    p.add_argument("--output", help="JSON results (default benchmarks/results.json; --quick: none)")
    p.add_argument("--markdown", nargs="?", const=str(README), metavar="PATH",
                   help="write the results section into PATH between its markers (default benchmarks/README.md)")
    p.add_argument("--from-json", metavar="FILE",
                   help="measure nothing: judge and render FILE's results (--markdown, --output to write them)")
    p.add_argument("--work", help="keep the corpora and copies in this folder (default: a temporary one)")
    p.add_argument("-q", "--quiet", action="store_true")
    args = p.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command, as the results state it
    args.sizes = sorted(int(x) for x in (args.sizes or ("2,3,4" if args.quick else "100,200,400")).split(","))
    args.repeat = args.repeat if args.repeat is not None else (1 if args.quick else 5)
    args.graph_repeat = min(args.repeat, args.graph_repeat if args.graph_repeat is not None
                            else (0 if args.quick else 3))
    if args.output is None and not (args.quick or args.from_json):
        args.output = str(HERE / "results.json")
    return args


def benchmark(args: argparse.Namespace, work: Path, log) -> dict:
    snlint = probe_snlint(shlex.split(args.snlint) if args.snlint else default_snlint(), work)
    peers = {"torchfix": None if args.no_torchfix else find_tool(args.torchfix, "SNLINT_BENCH_TORCHFIX", "torchfix"),
             "ruff": None if args.no_ruff else find_tool(args.ruff, "SNLINT_BENCH_RUFF", "ruff")}
    main_size = args.sizes[len(args.sizes) // 2]
    subjects = [generated(n, args.seed, work, full=n == main_size) for n in args.sizes]
    subjects += [copy_real(Path(d), work) for d in args.corpus]
    info = machine(snlint, peers)
    info["snlint_bytecode"] = compile_bytecode(snlint.cmd)
    groups = [subject_group(s, snlint, peers, work) for s in subjects]
    groups.append(examples_group(snlint, work, args.graph_repeat))
    cases = [c for g in groups for c in g.cases]
    log(f"measuring {len(cases)} cases, {args.repeat} round(s); cache: {snlint.cache}; "
        f"torchfix: {peers['torchfix']}; ruff: {peers['ruff']}")
    measure(cases, args.repeat, log)
    info["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]

    command = shlex.join(["python", "benchmarks/run.py", *args.argv])
    results = {"schema": SCHEMA, "quick": args.quick, "command": command,
               "settings": {"sizes": args.sizes, "seed": args.seed, "repeat": args.repeat,
                            "graph_repeat": args.graph_repeat},
               "machine": info, "corpora": {g.name: g.result() for g in groups}}
    evaluate(results)
    return results


def evaluate(results: dict) -> None:
    """The targets and the scaling rows from the measurements; --from-json evaluates again,
    so a stored run is judged by the current rules."""
    corpora, sizes = results["corpora"], results["settings"]["sizes"]
    targets = []
    for name, sub in corpora.items():
        if sub["full"]:
            targets += [{"corpus": name, **t} for t in ratio_targets(sub["cases"], sub["skipped"])]
        if any(c in sub["cases"] for c in SOURCE_PATH_CASES):  # memory: every corpus and size
            targets.append({"corpus": name, **memory_target(sub["cases"])})
    results["scaling"], target = scaling(corpora, sizes)
    results["targets"] = targets + [{"corpus": "gen-" + ",".join(map(str, sizes)), **target}]


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
    if args.from_json:
        results = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
        evaluate(results)
    elif args.work:
        Path(args.work).mkdir(parents=True, exist_ok=False)
        results = benchmark(args, Path(args.work).resolve(), log)
    else:
        with tempfile.TemporaryDirectory(prefix="snlint-bench-") as folder:
            results = benchmark(args, Path(folder).resolve(), log)
    section = markdown(results)
    if not args.quiet:
        print(section)
    if args.output:
        Path(args.output).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        log(f"wrote {args.output}")
    if args.markdown:
        write_section(Path(args.markdown), section)
        log(f"wrote the results section of {args.markdown}")
    return results


if __name__ == "__main__":
    main()
