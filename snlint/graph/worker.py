"""The graph-pass child process: `python -m snlint.graph.worker`.

Protocol: one JSON object per line on stdin (`{"target": GraphTarget}`, with `"fresh":
true` when the files may have changed since the worker imported them); on the protocol
stream one JSON line per target (TargetFacts), after events: `ready` once torch is
imported, `imported` once the target's file is (a slow start, a hung import and a hung
build are told apart), `built` once the constructor returned (the import, the build and
the forwards each have the time limit), `loading`/`loaded` around each project module's
execution (a hang is charged to the innermost one), and `files`: the project files the
build imported (its facts hold while they stay as they are). The protocol uses
duplicates of the original stdin/stdout; fds 0 and 1 point at /dev/null before any user
code runs, so the user's prints and `input()` never touch it.

The worker runs in a scratch folder the parent made, refuses writes, deletes, process
starts and network access once its own imports are done (snlint.graph.guard), and ends
when its parent does (`_lifeline`). `collect` is also what `snlint.audit` runs in-process.
"""

from __future__ import annotations

import json
import os
import select
import sys
import threading
import time
import traceback
from typing import Any

from snlint.graph import guard
from snlint.graph.build import build
from snlint.graph.facts import GraphTarget, TargetFacts, one_line
from snlint.graph.loader import Loader, error_site, user_files

# Bound now, before any project code can replace json.dumps or json.loads: what the
# worker says is its own.
_encode = json.JSONEncoder(ensure_ascii=True).encode
_decode = json.JSONDecoder().decode
_exit = os._exit
_getppid = os.getppid
_read = os.read
_select = select.select

# The parent hands the read end of a pipe whose write end only it holds: end of file on
# it means the parent is gone (SIGKILL included). PR_SET_PDEATHSIG is set only when the
# parent asks (SNLINT_PDEATHSIG=1): it fires when the *thread* that started the worker
# ends, and a worker started by a lane thread outlives that thread in a GraphSession.
LIFELINE_ENV = "SNLINT_LIFELINE_FD"
PDEATHSIG_ENV = "SNLINT_PDEATHSIG"
PARENT_POLL = 0.25  # seconds between checks of the parent's pid, a fallback of the pipe


def _lifeline() -> None:
    parent = _getppid()
    if os.environ.get(PDEATHSIG_ENV) == "1" and sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if _getppid() != parent:  # the parent died before prctl
        _exit(1)
    fd = os.environ.get(LIFELINE_ENV)

    def watch() -> None:
        pipe = int(fd) if fd and fd.isdigit() else None
        while True:
            if pipe is not None:
                ready, _, _ = _select([pipe], [], [], PARENT_POLL)
                if ready and not _read(pipe, 1):
                    _exit(1)
            else:
                time.sleep(PARENT_POLL)
            if _getppid() != parent:
                _exit(1)

    threading.Thread(target=watch, name="snlint-lifeline", daemon=True).start()


def _redirect_stdio() -> tuple[Any, Any]:
    proto_in = os.fdopen(os.dup(0), "r", encoding="utf-8")
    proto_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    sys.stdin = open(os.devnull, encoding="utf-8")
    sys.stdout = open(os.devnull, "w", encoding="utf-8")
    return proto_in, proto_out


# ---------------------------------------------------------------------------------------
# Facts of a built model (also used in-process by snlint.audit)


def collect(model: Any, target: GraphTarget, example_input: Any = None,
            light: bool = False, budget: Any = None) -> TargetFacts:
    """Module facts, the forward's facts (F.batch_norm calls, batch reductions) and the probe.

    Every forward and the trace start from the state `model` is in now and give it back
    (`pristine.Pristine`; `light`: large trainable weights checked, not copied). The
    forward's facts come from the fx graph, else from forwards recorded with hooks
    (`record.py`), at the probe's input. A phase whose forwards no longer fit the `budget`
    is skipped with a note.
    """
    from snlint.graph import probe, record, sites, trace
    from snlint.graph.pristine import Pristine

    facts = TargetFacts(target)
    facts.modules = sites.module_facts(model)
    from snlint.graph.convmemory import native_large_convs

    with native_large_convs(model), Pristine(model, light=light) as fresh:
        with fresh.use() as m:
            gm, facts.trace_reason = trace.trace(m)
        facts.trace_ok = gm is not None
        if gm is not None:
            facts.batch_norm_calls = trace.batch_norm_calls(gm)
            facts.recorded_by = "fx"
        facts.probe, make_args = probe.probe(fresh, example_input, budget)
        if make_args is None:
            return facts
        skipped = _skipped(budget, facts)
        try:
            if skipped:
                facts.probe.setdefault("notes", []).append(f"batch reductions: {skipped}")
            elif gm is not None:
                facts.batch_reductions = trace.batch_reductions(gm, fresh, make_args)
            else:
                forward = record.record(fresh, make_args)
                facts.batch_norm_calls = forward.batch_norm_calls
                facts.batch_reductions = forward.batch_reductions
                facts.recorded_by = "hooks"
        except Exception as exc:
            what = "shape propagation" if gm is not None else "recording the forward"
            facts.probe.setdefault("notes", []).append(f"{what}: {one_line(exc)}")
        skipped = _skipped(budget, facts)
        if skipped:
            facts.probe.setdefault("notes", []).append(f"measuring the weights: {skipped}")
        else:
            facts.weights = _measure_weights(fresh, make_args, facts)
    return facts


def _skipped(budget: Any, facts: TargetFacts) -> str:
    """Why the next phase (two forwards or more) is not run: it would not fit the time
    left; "" when it fits."""
    if budget is None or budget.allows(2):
        return ""
    return "skipped: " + budget.refusal(facts.probe.get("input_shape") or [])


def _measure_weights(fresh: Any, make_args: Any, facts: TargetFacts) -> dict:
    from snlint.graph import weights
    from snlint.graph.pristine import Mutated

    try:
        return weights.measure(fresh, make_args)
    except Mutated:
        raise  # a forward wrote a large weight: read again from a full snapshot
    except Exception as exc:  # a model that refuses the extra forwards: nothing measured
        facts.probe.setdefault("notes", []).append(f"measuring the weights: {one_line(exc)}")
        return {}


def _collect_light(module: Any, target: GraphTarget, built: Any, budget: Any = None) -> TargetFacts:
    """`collect` without a copy of the large weights (the worker's peak memory); a model
    whose forward writes one is built again (the same seed: the same model) and read
    with a full snapshot."""
    from snlint.graph.pristine import Mutated

    try:
        return collect(built.model, target, light=True, budget=budget)
    except Mutated:
        built.model = None
        again = build(module, target)
        if again.model is None:
            raise
        return collect(again.model, target, budget=budget)


def handle(loader: Loader, target: GraphTarget, emit: Any, timeout: float | None = None) -> TargetFacts:
    from snlint.graph.budget import Budget

    start = time.perf_counter()
    guard.set_projects([target.root, *target.paths, os.path.dirname(target.file)])
    first_time = os.path.abspath(target.file) not in loader.modules
    module = loader.load(target)
    if first_time:
        emit({"event": "imported", "file": target.file})
    if isinstance(module, tuple):
        message, site = module
        facts = TargetFacts(target, status="import_error", message=message, error_site=site)
    else:
        built = build(module, target)
        if built.model is None:
            facts = TargetFacts(target, status="build_error", message=built.message,
                                error_site=built.site)
        else:
            # The import, the build and the forwards each have the time limit: the parent
            # starts the forwards' clock at this event (BigGAN's orthogonal init alone
            # takes seconds), and the forwards plan inside it.
            emit({"event": "built"})
            budget = Budget.for_timeout(timeout)
            try:
                facts = _collect_light(module, target, built, budget)
            except BaseException as exc:  # snlint's own failure on a strange model
                facts = TargetFacts(target, status="build_error",
                                    message=f"snlint could not inspect the model: {one_line(exc)}",
                                    error_site=error_site(exc.__traceback__))
        facts.built_with = built.built_with
        facts.arguments = built.arguments
    facts.refused = guard.take()
    facts.seconds = round(time.perf_counter() - start, 4)
    return facts


def prepare() -> Any:
    """Import what every worker needs before any project code (torch first); also what
    the fork server (snlint.graph.forkserver) does once for all its workers."""
    import torch

    from snlint.graph import memory

    memory.without_triton()
    from snlint.graph import classes, sites  # noqa: F401

    return torch


def main() -> None:
    _lifeline()
    proto_in, proto_out = _redirect_stdio()

    def emit(obj: dict[str, Any]) -> None:
        try:
            line = _encode(obj)
        except BaseException as exc:  # facts the encoder cannot write: say so, not hang
            line = _encode({"event": "error", "message": f"snlint could not encode its reply: "
                                                         f"{type(exc).__name__}"})
        proto_out.write(line + "\n")
        proto_out.flush()

    torch = prepare()  # after the redirect: torch's import may print

    # The models are small and the batches tiny: one thread is several times faster than
    # torch's pool on a loaded machine, and competes with no other process for the cores.
    torch.set_num_threads(1)

    from snlint.graph import classes, memory, sites

    sites.install()  # before any user code is imported
    classes.install()
    loader = Loader()
    from snlint.graph import loader as loading

    loading.on_loading = lambda path, started: emit(
        {"event": "loading" if started else "loaded", "file": path})
    guard.install(os.getcwd(), sites.is_user_file)  # the scratch folder the parent made
    emit({"event": "ready"})  # the parent starts a target's clock from here
    for line in proto_in:
        if not line.strip():
            continue
        try:
            message = _decode(line)
            if message.get("fresh"):
                loader.forget()
            loading.HUNG.update(message.get("hung") or {})
            target = GraphTarget.from_dict(message["target"])
            facts = handle(loader, target, emit, message.get("timeout"))
            emit({"event": "files", "files": user_files(loader)})
            emit(facts.to_dict())
            memory.release()
        except BaseException:  # a protocol or snlint bug: say so, keep serving
            emit({"event": "error", "message": traceback.format_exc(limit=5)})
    proto_out.flush()
    guard.pause()
    # Skip interpreter shutdown: user threads and atexit handlers must not hang the child.
    _exit(0)


if __name__ == "__main__":
    main()
