"""The graph pass on a live module, in this process (`snlint.audit`). A factory lets snlint
record where each layer is built; a module built before the call has no sites, and its
findings sit at the class definition."""

from __future__ import annotations

import ast
import inspect
import linecache
import os
from typing import Any, Callable

from torch import nn

from snlint.findings import Location, Span
from snlint.graph import sites
from snlint.graph.facts import GraphTarget, TargetFacts
from snlint.graph.worker import collect


def display_for(path: str) -> str:
    if path.startswith("<"):
        return path
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if rel.startswith(os.pardir) else rel


def _methods(cls: type) -> list:
    codes = [getattr(getattr(v, "__func__", v), "__code__", None) for v in vars(cls).values()]
    return [c for c in codes if c is not None]


def _class_file(cls: type) -> str:
    try:
        return inspect.getsourcefile(cls) or inspect.getfile(cls)
    except (TypeError, OSError):
        pass
    # The class's module is not importable by name (loaded by path, a notebook): its
    # methods still know their file.
    return next((code.co_filename for code in _methods(cls)), "<unknown>")


def _class_location(cls: type) -> tuple[str, Location]:
    """The class's file and its `class Name` line (the home of findings without a site)."""
    file = _class_file(cls)
    file = file if file.startswith("<") else os.path.abspath(file)
    span = Span(1, 1, 1, 1)
    lines = {c.co_firstlineno for c in _methods(cls) if c.co_filename == file}
    tree = sites.parse(file)[0]
    candidates = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)
                  and n.name == cls.__name__] if tree is not None else []
    # Two classes of one name in a file: the one holding the methods.
    candidates.sort(key=lambda n: not any(n.lineno <= ln <= (n.end_lineno or n.lineno) for ln in lines))
    if candidates:
        node = candidates[0]
        text = linecache.getline(file, node.lineno).rstrip()
        column = max(text.find("class "), 0)
        span = Span(node.lineno, column + 1, node.lineno, len(text) + 1)
    return file, Location(display_for(file), span)


def collect_live(target: nn.Module | Callable[[], nn.Module],
                 example_input: Any = None) -> tuple[TargetFacts, Location]:
    """The facts of a module, or of the one a zero-argument factory builds, and the class's
    location (the home of findings without a site of their own)."""
    sites.clear_caches()
    if isinstance(target, nn.Module):
        model = target
    elif callable(target):
        with sites.recording():
            model = target()
        if not isinstance(model, nn.Module):
            raise TypeError(f"audit(): the factory returned {type(model).__name__}, not an nn.Module")
    else:
        raise TypeError(f"audit() takes an nn.Module or a factory, not {type(target).__name__}")

    modes = [(m, m.training) for m in model.modules()]
    model.train()
    try:
        cls = sites.base_class(model)
        file, fallback = _class_location(cls)
        graph_target = GraphTarget(file, fallback.path, cls.__qualname__, None, os.getcwd())
        facts = collect(model, graph_target, example_input)
    finally:
        for m, mode in modes:
            m.training = mode
    return facts, fallback
