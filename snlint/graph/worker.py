"""The graph-pass child process: `python -m snlint.graph.worker`.

Protocol: one JSON object per line on stdin (`{"target": GraphTarget}`), one JSON line per
target on the protocol stream (TargetFacts), plus `{"event": "ready"}` once torch is
imported and `{"event": "imported", "file": ...}` once a file has been imported (so the
parent can tell a slow start from a hung import, and a hung import from a hung build). The
protocol uses duplicates of the original stdin/stdout; fds 0 and 1 (and sys.stdin/stdout)
point at /dev/null before any user code runs, so the user's prints, C-level writes and
`input()` calls never touch the protocol. The user's stderr goes wherever the parent put
the child's stderr.

`collect(model, target)` (the facts of one built model) is also what `snlint.audit` runs
in-process.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import re
import sys
import time
import traceback
import types
from typing import Any

from snlint.graph.facts import GraphTarget, Site, TargetFacts, one_line


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


def collect(model: Any, target: GraphTarget, example_input: Any = None) -> TargetFacts:
    """Module facts, fx trace, F.batch_norm calls, batch reductions and the probe.

    `model` must never have run a forward (hook-based SN cannot be deep-copied after one);
    it is not run itself: the trace and every forward use deep copies.
    """
    from snlint.graph import probe, sites, trace

    facts = TargetFacts(target)
    facts.modules = sites.module_facts(model)
    try:
        traced = copy.deepcopy(model)
    except Exception as exc:
        traced, facts.trace_reason = None, f"cannot copy the model: {one_line(exc)}"
    if traced is not None:
        gm, facts.trace_reason = trace.trace(traced)
        facts.trace_ok = gm is not None
        if gm is not None:
            facts.batch_norm_calls = trace.batch_norm_calls(gm)
    facts.probe, make_args = probe.probe(model, example_input)
    if facts.trace_ok and make_args is not None:
        try:
            facts.batch_reductions = trace.batch_reductions(model, make_args)
        except Exception as exc:
            facts.probe.setdefault("notes", []).append(f"shape propagation: {one_line(exc)}")
    return facts


# ---------------------------------------------------------------------------------------
# Importing and building


def _error_site(tb: types.TracebackType | None) -> Site | None:
    """The innermost user frame of a traceback, with the exact column range."""
    from snlint.graph import sites

    best = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if sites.is_user_file(code.co_filename):
            best = sites.to_site(sites.code_pos(code, tb.tb_lasti, tb.tb_lineno))
        tb = tb.tb_next
    return best


def _module_name(file: str) -> tuple[str, str | None]:
    """(import name, folder to put on sys.path for it). Files inside packages keep their
    dotted name so relative imports work; others get a private name (never __main__)."""
    folder, base = os.path.split(file)
    stem = os.path.splitext(base)[0]
    parts = [] if stem == "__init__" else [stem]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    if len(parts) > 1 or (parts and stem == "__init__"):
        name = ".".join(parts)
        existing = sys.modules.get(name)
        if existing is None or os.path.abspath(getattr(existing, "__file__", "") or "") == file:
            if all(p.isidentifier() for p in parts):
                return name, folder
    digest = hashlib.sha1(file.encode("utf-8")).hexdigest()[:10]
    safe = "".join(c if c.isalnum() else "_" for c in stem)
    return f"snlint_user_{safe}_{digest}", None


def _is_user_module(name: str, module: Any) -> bool:
    from snlint.graph import sites

    if name.startswith("snlint_user_"):
        return True
    file = getattr(module, "__file__", None)
    if file:
        return sites.is_user_file(file)
    paths = getattr(module, "__path__", None)  # namespace packages have no __file__
    try:
        return any(sites.is_user_file(os.path.join(p, "__init__.py")) for p in (paths or ()))
    except TypeError:
        return False


class Loader:
    """Imports one target file at a time, remembering its failure.

    Moving on to another file forgets the user modules the previous one imported and its
    sys.path entries: two folders each holding a `blocks.py` (examples, experiments) must
    not share `sys.modules["blocks"]`. torch and the standard library stay imported.
    """

    def __init__(self) -> None:
        self.modules: dict[str, types.ModuleType | tuple[str, Site | None]] = {}
        self.baseline_path = list(sys.path)
        self.baseline_modules = set(sys.modules)

    def _add_path(self, folder: str) -> None:
        if folder and folder not in sys.path:
            sys.path.insert(0, folder)

    def _forget_previous_file(self) -> None:
        self.modules.clear()
        for name, module in list(sys.modules.items()):
            if name not in self.baseline_modules and _is_user_module(name, module):
                del sys.modules[name]
        sys.path[:] = self.baseline_path
        importlib.invalidate_caches()

    def load(self, target: GraphTarget) -> types.ModuleType | tuple[str, Site | None]:
        file = os.path.abspath(target.file)
        if file in self.modules:
            return self.modules[file]
        if self.modules:
            self._forget_previous_file()
        if target.root:
            self._add_path(os.path.abspath(target.root))
        self._add_path(os.path.dirname(file))
        name, package_root = _module_name(file)
        sys.argv = [file]  # a script parsing its arguments at import sees itself, no options
        try:
            if package_root is not None:
                self._add_path(package_root)
                module = importlib.import_module(name)
            else:
                spec = importlib.util.spec_from_file_location(name, file)
                if spec is None or spec.loader is None:
                    raise ImportError(f"cannot load {file}")
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    sys.modules.pop(name, None)
                    raise
            result: Any = module
        except BaseException as exc:  # SystemExit and KeyboardInterrupt included
            result = (one_line(exc), _error_site(exc.__traceback__))
        self.modules[file] = result
        return result


_INPUT_CHANNELS = re.compile(
    r"^((in|input|img|image|num)_?(ch|c|nc|chans?|channels?|planes|dim)|(c|ch|nc)_?in|nc|channels)$")


def _guess(name: str) -> str:
    """An example value for a constructor argument in the suggested configuration."""
    low = name.lower()
    if "class" in low:
        return "10"
    if _INPUT_CHANNELS.match(low):
        return "3"
    if any(k in low for k in ("size", "res", "img", "image")):
        return "64"
    if any(k in low for k in ("layer", "depth", "blocks")):
        return "3"
    if any(k in low for k in ("ch", "nf", "df", "dim", "width", "feat", "hidden", "out", "planes", "nc")):
        return "64"
    return "1"


def _missing_args(cls: type, kwargs: dict[str, Any]) -> list[str]:
    try:
        params = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
             inspect.Parameter.KEYWORD_ONLY)
    return [p.name for p in params
            if p.kind in kinds and p.default is inspect.Parameter.empty and p.name not in kwargs]


def build(module: types.ModuleType, target: GraphTarget) -> tuple[Any, str, Site | None]:
    """(model, "", None) or (None, message, error site)."""
    from torch import nn

    obj: Any = module
    for part in target.class_name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None, f"{target.class_name} is not defined in {target.display}", None
    if not (isinstance(obj, type) and issubclass(obj, nn.Module)):
        return None, f"{target.class_name} is not an nn.Module class", None
    kwargs = dict(target.kwargs or {})
    missing = _missing_args(obj, kwargs)
    if missing:
        given = [f"{k} = {json.dumps(v)}" for k, v in kwargs.items()]
        example = ", ".join(given + [f"{m} = {_guess(m)}" for m in missing])
        return None, (f"{target.class_name} needs arguments: {', '.join(missing)}; add "
                      f"[tool.snlint.models] \"{target.display}:{target.class_name}\" = "
                      f"{{ {example} }}"), None
    try:
        model = obj(**kwargs)
        if not isinstance(model, nn.Module):
            return None, f"{target.class_name}() did not return an nn.Module", None
        model.train()
    except BaseException as exc:
        return None, f"{target.class_name}() raised {one_line(exc)}", _error_site(exc.__traceback__)
    return model, "", None


def handle(loader: Loader, target: GraphTarget, emit: Any) -> TargetFacts:
    start = time.perf_counter()
    first_time = os.path.abspath(target.file) not in loader.modules
    module = loader.load(target)
    if first_time:
        emit({"event": "imported", "file": target.file})
    if isinstance(module, tuple):
        message, site = module
        facts = TargetFacts(target, status="import_error", message=message, error_site=site)
    else:
        model, message, site = build(module, target)
        if model is None:
            facts = TargetFacts(target, status="build_error", message=message, error_site=site)
        else:
            try:
                facts = collect(model, target)
            except BaseException as exc:  # snlint's own failure on a strange model
                facts = TargetFacts(target, status="build_error",
                                    message=f"snlint could not inspect the model: {one_line(exc)}",
                                    error_site=_error_site(exc.__traceback__))
    facts.seconds = round(time.perf_counter() - start, 4)
    return facts


def main() -> None:
    proto_in, proto_out = _redirect_stdio()

    def emit(obj: dict[str, Any]) -> None:
        proto_out.write(json.dumps(obj) + "\n")
        proto_out.flush()

    import torch  # after the redirect: its import may print

    # The models are small and the batches tiny: one thread is 3-5x faster than torch's
    # default pool on a loaded machine (measured on 2 cores: 5.8 s against 18-30 s for the
    # examples), and the worker never competes with the user's other processes for cores.
    torch.set_num_threads(1)

    from snlint.graph import sites

    sites.install()  # before any user code is imported
    loader = Loader()
    emit({"event": "ready"})  # the parent starts a target's clock from here
    for line in proto_in:
        if not line.strip():
            continue
        try:
            target = GraphTarget.from_dict(json.loads(line)["target"])
            facts = handle(loader, target, emit)
            emit(facts.to_dict())
        except BaseException:  # a protocol or snlint bug: say so, keep serving
            emit({"event": "error", "message": traceback.format_exc(limit=5)})
    proto_out.flush()
    # Skip interpreter shutdown: user threads and atexit handlers must not hang the child.
    os._exit(0)


if __name__ == "__main__":
    main()
