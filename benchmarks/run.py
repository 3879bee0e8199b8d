"""snlint's benchmark: ratios against peers measured in the same run, never wall-clock asserts.

On one generated corpus (benchmarks/corpus.py), in interleaved rounds (every case once
per round, the order rotated each round; the median of the rounds is reported):

  parse_floor            in process: read + `libcst.parse_module` of every file (the floor
                         for any libcst linter)
  engine_source          in process: `snlint.engine.run` with the graph pass off
  engine_graph           in process: the same with the graph pass on (torch in a child)
  python_startup         subprocess: `python -c pass`
  parse_floor_cli        subprocess: python + libcst, read and parse every file
  snlint_cli             subprocess: `snlint --no-graph .`
  torchfix_cli_j1        subprocess: `torchfix -j 1 .` (serial, as snlint is)
  torchfix_cli           subprocess: `torchfix .` (its default: one job per core)
  parse_floor_cli_tf     subprocess: the parse floor with TorchFix's python and libcst
  precommit_snlint       subprocess: the pre-commit hook's command on 5 files
  precommit_parse_floor  subprocess: the parse floor on the same 5 files
  precommit_torchfix     subprocess: `torchfix -j 1` on the same 5 files

Times are wall and CPU (user + system; for subprocesses from wait4, children included).
On a shared machine CPU time is the steadier of the two. Peak memory: maxrss of the
subprocesses, and tracemalloc peaks in process. One cProfile run of the source pass gives
the hotspots, and timers around the engine's stages give their shares without a profiler.

    python benchmarks/run.py                      # n=200, 5 rounds -> benchmarks/results.json
    python benchmarks/run.py --quick --output /tmp/r.json   # seconds: proves the harness works

TorchFix pins libcst<1.6 and snlint needs >=1.8, so TorchFix lives in a virtual
environment of its own: `--torchfix PATH` or SNLINT_BENCH_TORCHFIX names its executable
(else `torchfix` on PATH or next to this python). Without it, its cases are skipped.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import cProfile
import gc
import importlib.metadata
import io
import json
import os
import platform
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus as corpus_mod  # noqa: E402  (a sibling script, not a package)

SCHEMA = 1
PRECOMMIT_FILES = 5

# The parse floor as a script: the same discovery as the in-process floor.
FLOOR_SCRIPT = """
import sys
from pathlib import Path
import libcst
files = sys.argv[1:] or sorted(str(p) for p in Path('.').rglob('*.py'))
for f in files:
    libcst.parse_module(Path(f).read_text(encoding='utf-8'))
"""


# --------------------------------------------------------------------------- measuring


@dataclass
class Sample:
    wall: float
    cpu: float
    maxrss_kb: int | None = None
    exit_code: int | None = None
    extra: dict = field(default_factory=dict)


@dataclass
class Case:
    name: str
    what: str
    run: Callable[[], Sample]
    rounds: int | None = None  # None: every round
    samples: list[Sample] = field(default_factory=list)


# A small launcher forks and execs the command and reports its wait4 numbers. Forking
# from this (large) process would put our own RSS into the child's maxrss; the launcher
# is a bare `python -S` of about 10 MB, the floor of every maxrss reported. Its own start
# is not in the wall time: the clock starts at the fork.
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

OK_EXIT = (0, 1)  # snlint and torchfix exit 1 when they report something


def run_subprocess(argv: list[str], cwd: Path, env: dict | None = None) -> Sample:
    """Run argv to completion: wall time, CPU (user + system, its children included) and
    peak RSS, as wait4 reports them."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, *argv], cwd=cwd, env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, check=False)
        err.seek(0)
        tail = err.read().decode("utf-8", "replace").strip().splitlines()[-3:]
    try:
        wall, cpu, maxrss, code = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return Sample(float("nan"), float("nan"), None, proc.returncode or -1, {"stderr_tail": tail})
    return Sample(wall, cpu, maxrss, code, {"stderr_tail": tail} if code not in OK_EXIT else {})


def run_in_process(fn: Callable[[], dict | None]) -> Sample:
    gc.collect()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    extra = fn() or {}
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    child_cpu = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    if child_cpu > 0:
        extra["child_cpu"] = child_cpu
    return Sample(wall, cpu + child_cpu, None, 0, extra)


def summarize(values: list[float]) -> dict:
    if not values:
        return {}
    return {"median": round(statistics.median(values), 4), "min": round(min(values), 4),
            "max": round(max(values), 4), "all": [round(v, 4) for v in values]}


def ratio(a: dict | None, b: dict | None, key: str) -> float | None:
    try:
        num, den = a[key]["median"], b[key]["median"]
    except (KeyError, TypeError):
        return None
    return round(num / den, 3) if den else None


# --------------------------------------------------------------------------- the cases


def _parse_floor(files: list[Path]) -> Callable[[], dict]:
    import libcst

    def run() -> dict:
        for f in files:
            libcst.parse_module(f.read_text(encoding="utf-8"))
        return {}
    return run


class StageTimer:
    """Wraps the engine's stage functions (module attributes it looks up at call time)
    with CPU timers, so one engine run also says where its time went; no profiler. The
    graph stage counts this process only (its worker is a child)."""

    STAGES = [("snlint.engine", "read_source", "read"), ("snlint.source", "lower_file", "lower"),
              ("snlint.per_file", "extract_file", "parse+lower"), ("snlint.engine", "link", "link"),
              ("snlint.engine", "run_checks", "checks"), ("snlint.engine", "graph_pass", "graph"),
              ("snlint.engine", "attach_fixes", "fixes"), ("snlint.engine", "_select", "select")]

    def __init__(self) -> None:
        self.totals: dict[str, float] = collections.defaultdict(float)
        self.saved: list[tuple[object, str, object]] = []

    def __enter__(self) -> "StageTimer":
        import importlib

        for module_name, attr, label in self.STAGES:
            try:
                module = importlib.import_module(module_name)
                original = getattr(module, attr)
            except (ImportError, AttributeError):
                continue

            def timed(*args, __original=original, __label=label, **kwargs):
                start = time.process_time()
                try:
                    return __original(*args, **kwargs)
                finally:
                    self.totals[__label] += time.process_time() - start

            self.saved.append((module, attr, original))
            setattr(module, attr, timed)
        return self

    def __exit__(self, *exc) -> None:
        for module, attr, original in reversed(self.saved):
            setattr(module, attr, original)

    def result(self) -> dict[str, float]:
        out = dict(self.totals)
        if "parse+lower" in out:
            out["parse"] = out.pop("parse+lower") - out.get("lower", 0.0)
        return {k: round(v, 4) for k, v in out.items()}


class GraphSpy:
    """Counts the graph pass's targets and their statuses (wraps snlint.graph_pass.run_graph)."""

    def __init__(self) -> None:
        self.stats: dict = {}

    def __enter__(self) -> "GraphSpy":
        import snlint.graph_pass as graph

        self.module, self.original = graph, graph.run_graph

        def spy(targets, timeout=20.0):
            start = time.perf_counter()
            results = self.original(targets, timeout)
            self.stats = {"targets": len(targets), "run_graph_wall": round(time.perf_counter() - start, 4),
                          "status": dict(collections.Counter(r.status for r in results)),
                          "worker_seconds": round(sum(getattr(r, "seconds", 0) or 0 for r in results), 4)}
            return results

        graph.run_graph = spy
        return self

    def __exit__(self, *exc) -> None:
        self.module.run_graph = self.original


def _engine(root: Path, graph: bool) -> Callable[[], dict]:
    from snlint.config import load_config
    from snlint.engine import run

    config = load_config(root, graph=graph)

    def go() -> dict:
        with StageTimer() as stages, GraphSpy() if graph else contextlib.nullcontext() as spy:
            result = run([str(root)], config)
        extra = {"findings": dict(sorted(collections.Counter(f.code for f in result.findings).items())),
                 "stages": stages.result()}
        if graph and spy is not None:
            extra["graph"] = spy.stats
            extra["passes"] = dict(collections.Counter(f.pass_ for f in result.findings))
        return extra
    return go


def find_torchfix(explicit: str | None) -> str | None:
    for candidate in (explicit, os.environ.get("SNLINT_BENCH_TORCHFIX"), shutil.which("torchfix"),
                      str(Path(sys.executable).parent / "torchfix")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _torchfix_python(torchfix: str) -> str | None:
    python = Path(torchfix).parent / "python"
    return str(python) if python.exists() else None


def _tool_version(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[-1] if out.returncode == 0 and text else None


def snlint_command() -> list[str]:
    script = Path(sys.executable).parent / "snlint"
    return [str(script)] if script.exists() else [sys.executable, "-m", "snlint"]


# --------------------------------------------------------------------------- extras


def tracemalloc_peaks(root: Path, files: list[Path]) -> dict:
    """Peak traced Python memory of the parse floor and of one engine run (in process)."""
    out = {}
    for name, fn in (("parse_floor", _parse_floor(files)), ("engine_source", _engine(root, False))):
        gc.collect()
        tracemalloc.start()
        fn()
        out[name] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    out["ratio"] = round(out["engine_source"] / out["parse_floor"], 3) if out["parse_floor"] else None
    return out


def profile_source_pass(root: Path, top: int = 15) -> dict:
    """One cProfile run of the source pass: the top functions by own time, and snlint's
    own functions by cumulative time (shares of the profiled total)."""
    run = _engine(root, False)
    profiler = cProfile.Profile()
    profiler.enable()
    run()
    profiler.disable()
    stats = pstats.Stats(profiler, stream=io.StringIO())
    # The share basis is the profiled run itself (the largest cumulative time).
    total = max((ct for (_, _, _, ct, _) in stats.stats.values()), default=0.0) or 1.0

    def where(key) -> str:
        file, line, name = key
        for marker in ("site-packages/", "/snlint/", "/lib/python3"):
            if marker in file:
                file = file.split(marker, 1)[1]
                file = ("snlint/" + file) if marker == "/snlint/" else file
                break
        return f"{file}:{line}({name})"

    rows = [(key, tt, ct) for key, (cc, nc, tt, ct, callers) in stats.stats.items()]
    by_self = sorted(rows, key=lambda r: r[1], reverse=True)[:top]
    own = [r for r in rows if "/snlint/" in r[0][0] and "benchmarks" not in r[0][0]]
    by_cumulative = sorted(own, key=lambda r: r[2], reverse=True)[:top]
    return {
        "profiled_total_s": round(total, 3),
        "top_self": [{"function": where(k), "self_s": round(tt, 3), "share": round(tt / total, 3)}
                     for k, tt, _ in by_self],
        "top_snlint_cumulative": [{"function": where(k), "cumulative_s": round(ct, 3),
                                   "share": round(ct / total, 3)} for k, _, ct in by_cumulative],
    }


def scaling(sizes: list[int], seed: int, log) -> list[dict]:
    """The source pass's CPU by stage at several corpus sizes (one warm run each): a stage
    whose cost grows faster than the files do shows here first."""
    rows = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="snlint-scale-") as folder:
            corpus = corpus_mod.generate(n, seed, folder)
            run = _engine(corpus.root.resolve(), False)
            run()
            start = time.process_time()
            extra = run()
            cpu = time.process_time() - start
        rows.append({"files": n, "lines": corpus.lines, "cpu_s": round(cpu, 3),
                     "ms_per_line": round(1000 * cpu / max(corpus.lines, 1), 3), "stages_cpu_s": extra["stages"]})
        log(f"  scaling n={n}: cpu {cpu:.2f} s, link {extra['stages'].get('link', 0):.2f} s")
    return rows


# --------------------------------------------------------------------------- main


def build_cases(root: Path, files: list[Path], args, torchfix: str | None) -> list[Case]:
    rel = [str(f.relative_to(root)) for f in files]
    precommit = rel[:PRECOMMIT_FILES]
    py = sys.executable
    snlint = snlint_command()
    env = dict(os.environ)
    cases = [
        Case("parse_floor", "in process: read + libcst.parse_module of every file",
             lambda: run_in_process(_parse_floor(files))),
        Case("engine_source", "in process: snlint.engine.run, graph pass off",
             lambda: run_in_process(_engine(root, False))),
        Case("python_startup", "subprocess: python -c pass",
             lambda: run_subprocess([py, "-c", "pass"], root, env)),
    ]
    if not args.quick:  # on a corpus of 5 files or fewer these are the pre-commit cases
        cases += [
            Case("parse_floor_cli", "subprocess: python + libcst, read and parse every file",
                 lambda: run_subprocess([py, "-c", FLOOR_SCRIPT], root, env)),
            Case("snlint_cli", "subprocess: snlint --no-graph --output-format concise .",
                 lambda: run_subprocess(snlint + ["--no-graph", "--output-format", "concise", "."], root, env)),
        ]
    cases += [
        Case("precommit_snlint", f"subprocess: snlint --no-graph --force-exclude on {len(precommit)} files",
             lambda: run_subprocess(snlint + ["--no-graph", "--force-exclude", *precommit], root, env)),
        Case("precommit_parse_floor", f"subprocess: the parse floor on the same {len(precommit)} files",
             lambda: run_subprocess([py, "-c", FLOOR_SCRIPT, *precommit], root, env)),
    ]
    if args.graph_repeat > 0:
        cases.append(Case("engine_graph", "in process: snlint.engine.run, graph pass on (torch in a child)",
                          lambda: run_in_process(_engine(root, True)), rounds=args.graph_repeat))
    if torchfix:
        tf_python = _torchfix_python(torchfix)
        cases += [
            Case("torchfix_cli_j1", "subprocess: torchfix -j 1 . (serial)",
                 lambda: run_subprocess([torchfix, "-j", "1", "."], root, env)),
            Case("torchfix_cli", "subprocess: torchfix . (default jobs: one per core)",
                 lambda: run_subprocess([torchfix, "."], root, env)),
            Case("precommit_torchfix", f"subprocess: torchfix -j 1 on the same {len(precommit)} files",
                 lambda: run_subprocess([torchfix, "-j", "1", *precommit], root, env)),
        ]
        if tf_python:
            cases.append(Case("parse_floor_cli_tf", "subprocess: the parse floor with TorchFix's python/libcst",
                              lambda: run_subprocess([tf_python, "-c", FLOOR_SCRIPT], root, env)))
    return cases


def measure(cases: list[Case], repeat: int, log, warm: bool = True) -> None:
    if warm:  # imports and caches of the in-process cases; not counted
        for case in cases:
            if case.name in ("parse_floor", "engine_source"):
                case.run()
    for rnd in range(repeat):
        order = cases[rnd % len(cases):] + cases[:rnd % len(cases)]
        for case in order:
            if case.rounds is not None and rnd >= case.rounds:
                continue
            sample = case.run()
            case.samples.append(sample)
            log(f"  round {rnd + 1}/{repeat} {case.name:24s} wall {sample.wall:8.3f} s  cpu {sample.cpu:8.3f} s"
                + (f"  maxrss {sample.maxrss_kb / 1024:6.1f} MiB" if sample.maxrss_kb else "")
                + (f"  exit {sample.exit_code}" if sample.exit_code not in (0, None) else "")
                + (f"  stderr: {sample.extra['stderr_tail']}" if "stderr_tail" in sample.extra else ""))


def case_summary(case: Case) -> dict:
    out = {"what": case.what, "runs": len(case.samples),
           "wall_s": summarize([s.wall for s in case.samples]),
           "cpu_s": summarize([s.cpu for s in case.samples])}
    rss = [s.maxrss_kb for s in case.samples if s.maxrss_kb]
    if rss:
        out["maxrss_kb"] = summarize(rss)
    out["exit_codes"] = sorted({s.exit_code for s in case.samples if s.exit_code is not None})
    tails = [s.extra["stderr_tail"] for s in case.samples if "stderr_tail" in s.extra]
    if tails:
        out["stderr_tail"] = tails[-1]
    last = case.samples[-1].extra if case.samples else {}
    for key in ("findings", "graph", "passes"):
        if key in last:
            out[key] = last[key]
    stages = [s.extra["stages"] for s in case.samples if "stages" in s.extra]
    if stages:
        out["stages_cpu_s"] = {k: round(statistics.median(st.get(k, 0.0) for st in stages), 4)
                           for k in stages[0]}
    return out


def compute_ratios(c: dict) -> dict:
    def both(a: str, b: str) -> dict | None:
        if a not in c or b not in c:
            return None
        return {"cpu": ratio(c[a], c[b], "cpu_s"), "wall": ratio(c[a], c[b], "wall_s")}

    out = {
        "snlint_engine_over_parse_floor": both("engine_source", "parse_floor"),
        "snlint_cli_over_parse_floor_cli": both("snlint_cli", "parse_floor_cli"),
        "snlint_cli_over_torchfix_j1": both("snlint_cli", "torchfix_cli_j1"),
        "snlint_cli_over_torchfix": both("snlint_cli", "torchfix_cli"),
        "torchfix_j1_over_its_parse_floor": both("torchfix_cli_j1", "parse_floor_cli_tf"),
        "parse_floor_libcst_snlint_over_torchfix": both("parse_floor_cli", "parse_floor_cli_tf"),
        "graph_run_over_source_run": both("engine_graph", "engine_source"),
        "precommit_over_python_startup": both("precommit_snlint", "python_startup"),
        "precommit_over_parse_floor": both("precommit_snlint", "precommit_parse_floor"),
        "precommit_snlint_over_torchfix": both("precommit_snlint", "precommit_torchfix"),
    }
    if "snlint_cli" in c and "parse_floor_cli" in c:
        out["maxrss_snlint_cli_over_parse_floor_cli"] = ratio(c["snlint_cli"], c["parse_floor_cli"], "maxrss_kb")
    if "snlint_cli" in c and "torchfix_cli_j1" in c:
        out["maxrss_snlint_cli_over_torchfix_j1"] = ratio(c["snlint_cli"], c["torchfix_cli_j1"], "maxrss_kb")
    return {k: v for k, v in out.items() if v is not None}


def machine(torchfix: str | None) -> dict:
    def version(dist: str) -> str | None:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return None

    return {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
            "libcst": version("libcst"), "snlint": version("snlint"), "torch": version("torch"),
            "torchfix": _tool_version([torchfix, "--version"]) if torchfix else None,
            "torchfix_libcst": (_tool_version([_torchfix_python(torchfix), "-c",
                                               "import importlib.metadata as m; print(m.version('libcst'))"])
                                if torchfix and _torchfix_python(torchfix) else None),
            # The code measured: the work tree at this commit ("-dirty": with local changes).
            "snlint_commit": _tool_version(["git", "-C", str(HERE.parent), "describe", "--always", "--dirty"]),
            "loadavg_start": [round(x, 2) for x in os.getloadavg()]}


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description="snlint benchmarks: ratios against peers in one run.")
    p.add_argument("--n", type=int, default=None, help="corpus files (default 200; --quick: 3)")
    p.add_argument("--seed", type=int, default=corpus_mod.DEFAULT_SEED)
    p.add_argument("--repeat", type=int, default=None, help="rounds (default 5; --quick: 1)")
    p.add_argument("--graph-repeat", type=int, default=None,
                   help="rounds that also run the graph pass (default 3; --quick: 0)")
    p.add_argument("--torchfix", help="the torchfix executable (its own virtual environment)")
    p.add_argument("--no-torchfix", action="store_true")
    p.add_argument("--no-profile", action="store_true")
    p.add_argument("--quick", action="store_true",
                   help="3 files, 1 round, no graph pass, no TorchFix: proves the harness, measures nothing")
    p.add_argument("--output", help="JSON results (default benchmarks/results.json; --quick: none)")
    p.add_argument("--note", default="", help="a note on the machine, stored in the results")
    p.add_argument("--corpus", help="write the corpus here and keep it (default: a temporary folder)")
    p.add_argument("--scaling", default="",
                   help="comma-separated corpus sizes for a stage-by-stage scaling run (e.g. 100,200,400,800)")
    p.add_argument("-q", "--quiet", action="store_true")
    args = p.parse_args(argv)
    quick = args.quick
    args.n = args.n if args.n is not None else (3 if quick else corpus_mod.DEFAULT_N)
    args.repeat = args.repeat if args.repeat is not None else (1 if quick else 5)
    args.graph_repeat = min(args.repeat, args.graph_repeat if args.graph_repeat is not None else (0 if quick else 3))
    output = args.output if args.output is not None else (None if quick else str(HERE / "results.json"))
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))

    torchfix = None if (args.no_torchfix or quick) and not args.torchfix else find_torchfix(args.torchfix)
    if args.graph_repeat > 0:
        try:
            import importlib.util
            if importlib.util.find_spec("torch") is None:
                log("torch is not importable: no graph pass")
                args.graph_repeat = 0
        except ImportError:
            args.graph_repeat = 0

    with contextlib.ExitStack() as stack:
        if args.corpus:
            out_dir = Path(args.corpus)
        else:
            out_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="snlint-bench-")))
        corpus = corpus_mod.generate(args.n, args.seed, out_dir)
        root = corpus.root.resolve()
        files = [root / f for f in corpus.files]
        log(f"corpus: {corpus.summary()}")
        info = machine(torchfix)
        if args.note:
            info["note"] = args.note
        cases = build_cases(root, files, args, torchfix)
        log(f"measuring {len(cases)} cases, {args.repeat} round(s)"
            + (f", graph pass in {args.graph_repeat}" if args.graph_repeat else "")
            + ("" if torchfix else "; TorchFix not found: its cases skipped"))
        measure(cases, args.repeat, log, warm=not quick)
        summaries = {c.name: case_summary(c) for c in cases if c.samples}
        results = {
            "schema": SCHEMA,
            "quick": quick,
            "settings": {"n": args.n, "seed": args.seed, "repeat": args.repeat,
                         "graph_repeat": args.graph_repeat, "precommit_files": min(PRECOMMIT_FILES, len(files))},
            "machine": info,
            "corpus": corpus.summary(),
            "cases": summaries,
            "ratios": compute_ratios(summaries),
        }
        pre = summaries.get("precommit_snlint")
        if pre:
            results["precommit"] = {"files": [str(f.relative_to(root)) for f in files[:PRECOMMIT_FILES]],
                                    "wall_s": pre["wall_s"]["median"], "cpu_s": pre["cpu_s"]["median"],
                                    "under_one_second_wall": pre["wall_s"]["median"] < 1.0,
                                    "under_one_second_cpu": pre["cpu_s"]["median"] < 1.0}
        log("memory: tracemalloc peaks")
        results["tracemalloc_peak_bytes"] = tracemalloc_peaks(root, files)
        if not args.no_profile:
            log("profile: one cProfile run of the source pass")
            results["profile"] = profile_source_pass(root)
        if args.scaling:
            log("scaling: the source pass at several corpus sizes")
            results["scaling"] = scaling([int(x) for x in args.scaling.split(",") if x.strip()], args.seed, log)
        results["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]

    report(results, print)
    if output:
        Path(output).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        log(f"wrote {output}")
    return results


def report(results: dict, out) -> None:
    cases = results["cases"]
    out(f"corpus: {results['corpus']['files']} files, {results['corpus']['lines']} lines; "
        f"{results['settings']['repeat']} rounds, medians; machine: {results['machine']['cores']} cores, "
        f"load {results['machine']['loadavg_start']} -> {results['machine'].get('loadavg_end')}")
    out(f"{'case':24s} {'wall s':>9s} {'cpu s':>9s} {'maxrss MiB':>11s}")
    for name, c in cases.items():
        rss = c.get("maxrss_kb", {}).get("median")
        out(f"{name:24s} {c['wall_s']['median']:9.3f} {c['cpu_s']['median']:9.3f} "
            f"{(rss / 1024 if rss else float('nan')):11.1f}")
    out("ratios (cpu / wall):")
    for name, value in results["ratios"].items():
        if isinstance(value, dict):
            out(f"  {name:44s} {value['cpu']!s:>8s} / {value['wall']!s:<8s}")
        else:
            out(f"  {name:44s} {value!s:>8s}")
    tm = results.get("tracemalloc_peak_bytes")
    if tm:
        out(f"tracemalloc peak: parse floor {tm['parse_floor'] / 2**20:.1f} MiB, "
            f"engine {tm['engine_source'] / 2**20:.1f} MiB (x{tm['ratio']})")
    stages = cases.get("engine_source", {}).get("stages_cpu_s")
    if stages:
        out("engine stages (median cpu s): " + ", ".join(f"{k} {v:.3f}" for k, v in stages.items()))
    for row in results.get("scaling", []):
        out(f"scaling: {row['files']:5d} files {row['cpu_s']:8.2f} s cpu ({row['ms_per_line']} ms/line), "
            f"link {row['stages_cpu_s'].get('link', 0):.2f} s")
    prof = results.get("profile")
    if prof:
        out(f"profile (cProfile total {prof['profiled_total_s']} s), snlint functions by cumulative share:")
        for row in prof["top_snlint_cumulative"][:10]:
            out(f"  {row['share']:6.1%}  {row['function']}")


if __name__ == "__main__":
    main()
