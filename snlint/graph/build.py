"""Building a discriminator class in the graph-pass worker (child process only)."""

from __future__ import annotations

import inspect
import json
import re
from typing import Any
import types

from snlint.graph.facts import GraphTarget, Site, one_line
from snlint.graph.loader import error_site


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

    from snlint.graph import classes

    obj = classes.find(module, target.class_name, target.line)
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
        return None, f"{target.class_name}() raised {one_line(exc)}", error_site(exc.__traceback__)
    return model, "", None
