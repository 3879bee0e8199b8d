"""Configuration values the interpreter evaluates statically: argparse defaults, dicts with
attribute access (EasyDict, OmegaConf), and JSON/YAML files loaded by a literal path: the
arguments a project builds its discriminator with, which the graph pass reuses and names
the origin of.
"""

from __future__ import annotations

import json
import os
from contextvars import ContextVar
from typing import Any

from snlint.findings import Location
from snlint.regular import read_regular
from snlint.link.values import UNKNOWN, ConstV, DictV, FileV, ListV, NamespaceV, TupleV, UnknownV, Value

# Classes (by their last name) that make a dict readable by attribute.
ATTR_DICTS = frozenset({"EasyDict", "edict", "AttrDict", "Munch", "DotMap", "Box", "ConfigDict",
                        "DictConfig", "Dict", "AttributeDict", "DotDict", "dotdict"})
_ATTR_DICT_MODULES = ("easydict.", "munch.", "dotmap.", "box.", "ml_collections.", "addict.",
                      "omegaconf.")
_NAMESPACES = frozenset({"argparse.Namespace", "types.SimpleNamespace"})
_PARSERS = frozenset({"argparse.ArgumentParser", "configargparse.ArgumentParser",
                      "configargparse.ArgParser"})
_YAML_LOADS = frozenset({"yaml.load", "yaml.safe_load", "yaml.full_load", "yaml.unsafe_load"})
_LOADS = _YAML_LOADS | {"json.load"}
MAX_CONFIG_BYTES = 1 << 20

# A shipped configuration file chosen in place of an option's default (`{dest: path}`), and
# the files a link loaded (`snlint.shipped_configs`): context variables, as the choice is
# made deep inside the interpreter and holds for one whole link.
CHOSEN: ContextVar[dict[str, str] | None] = ContextVar("chosen_configs", default=None)
LOADED: ContextVar[set[str] | None] = ContextVar("loaded_configs", default=None)
# Every data file (and folder of shipped configurations) the link step looked for, found
# or not, as absolute paths: a run's findings depend on them as on its Python files.
READ: ContextVar[set[str] | None] = ContextVar("data_read", default=None)


def noted(path: str) -> str:
    read = READ.get()
    if read is not None:
        read.add(os.path.abspath(path))
    return path


def where(loc: Location) -> str:
    return f"{loc.path}:{loc.span.line}"


def named_config_call(qual: str, args: list[Value], kwargs: dict[str, Value], loc: Location,
                      file_path: str) -> Value | None:
    """The value of a call to a configuration helper, or None when `qual` is not one."""
    if qual in _PARSERS:
        return NamespaceV(origin=where(loc))
    if qual in _NAMESPACES:
        return NamespaceV(dict(kwargs), parsed=True, origin=where(loc))
    if qual == "builtins.vars" and len(args) == 1 and isinstance(args[0], NamespaceV):
        return DictV(dict(args[0].attrs), origin=args[0].origin)
    if qual == "builtins.open" and args and isinstance(args[0], ConstV) and isinstance(args[0].value, str):
        return _file(args[0].value, file_path)
    if qual in _LOADS and args and isinstance(args[0], FileV):
        return load_file(args[0], yaml=qual in _YAML_LOADS)
    if qual == "omegaconf.OmegaConf.load" and args and isinstance(args[0], ConstV) \
            and isinstance(args[0].value, str):
        loaded = load_file(_file(args[0].value, file_path), yaml=True)
        _attrs_deep(loaded)
        return loaded
    last = qual.rsplit(".", 1)[-1]
    if qual == "omegaconf.OmegaConf.create" or (
            last in ATTR_DICTS and (qual.startswith(_ATTR_DICT_MODULES) or last != "Dict")):
        return attr_dict(args, kwargs)
    return None


def attr_dict(args: list[Value], kwargs: dict[str, Value]) -> Value:
    """`EasyDict({...})`, `EasyDict(a=1)`: the items, readable by attribute (nested dicts
    too, as EasyDict and OmegaConf convert them)."""
    if args and isinstance(args[0], DictV):
        out = DictV({**args[0].items, **kwargs}, attrs=True, origin=args[0].origin)
    elif args and isinstance(args[0], NamespaceV):
        out = DictV({**args[0].attrs, **kwargs}, attrs=True, origin=args[0].origin)
    elif args:
        return UNKNOWN
    else:
        out = DictV(dict(kwargs), attrs=True)
    _attrs_deep(out)
    return out


def _attrs_deep(value: Value, depth: int = 0) -> None:
    if depth > 8:
        return
    if isinstance(value, DictV):
        value.attrs = True
        for item in value.items.values():
            _attrs_deep(item, depth + 1)
    elif isinstance(value, (ListV, TupleV)):
        for item in value.items:
            _attrs_deep(item, depth + 1)


def parser_method(parser: NamespaceV, name: str, args: list[Value], kwargs: dict[str, Value],
                  loc: Location) -> Value | None:
    """Methods of an argparse parser that decide the namespace `parse_args()` returns."""
    if parser.parsed:
        return None
    if name == "add_argument":
        dest, value = option(args, kwargs, loc)
        if dest is not None:
            parser.attrs[dest] = value
        return ConstV(None)
    if name in ("add_argument_group", "add_mutually_exclusive_group"):
        return parser  # a group's options land in the same namespace
    if name == "set_defaults":
        parser.attrs.update({k: _with_origin(v, f"argparse set_defaults at {where(loc)}")
                             for k, v in kwargs.items()})
        return ConstV(None)
    if name in ("parse_args", "parse_known_args"):
        parsed = NamespaceV(dict(parser.attrs), parsed=True, origin=f"argparse defaults from {where(loc)}")
        return parsed if name == "parse_args" else TupleV((parsed, ListV()))
    return None


def option(args: list[Value], kwargs: dict[str, Value], loc: Location) -> tuple[str | None, Value]:
    """(dest, default) of one `add_argument(...)` call, as argparse would set it."""
    flags = [a.value for a in args if isinstance(a, ConstV) and isinstance(a.value, str)]
    if len(flags) != len(args) or not flags:
        return None, UNKNOWN
    dest_v = kwargs.get("dest")
    if isinstance(dest_v, ConstV) and isinstance(dest_v.value, str):
        dest = dest_v.value
    else:
        long = next((f for f in flags if f.startswith("--")), None)
        dest = (long or flags[0]).lstrip("-").replace("-", "_")
    if not dest.isidentifier():
        return None, UNKNOWN
    chosen = CHOSEN.get()
    if chosen and dest in chosen:
        return dest, ConstV(chosen[dest], f"--{dest} {chosen[dest]}")
    action = kwargs.get("action")
    action_name = action.value if isinstance(action, ConstV) else None
    required = kwargs.get("required")
    if isinstance(required, ConstV) and required.value:
        value = UnknownV(f"--{dest} is required")  # the user always passes it
    elif "default" in kwargs:
        value = kwargs["default"]
    elif action_name == "store_true":
        value = ConstV(False)
    elif action_name == "store_false":
        value = ConstV(True)
    elif action is not None:
        value = UnknownV(f"argparse action for {dest}")
    else:
        value = ConstV(None)
    kind = kwargs.get("type")
    if isinstance(value, ConstV) and isinstance(value.value, str) and kind is not None:
        # argparse converts a string default through `type`.
        qual = getattr(kind, "qual", "")
        convert = {"builtins.int": int, "builtins.float": float, "builtins.str": str}.get(qual)
        if convert is None:
            return dest, UnknownV(f"argparse type of {dest}")
        try:
            value = ConstV(convert(value.value))
        except ValueError:
            return dest, UnknownV(f"argparse default of {dest}")
    return dest, _with_origin(value, f"argparse default at {where(loc)}")


def _with_origin(value: Value, origin: str) -> Value:
    if isinstance(value, ConstV) and not value.origin:
        return ConstV(value.value, origin)
    return value


def _file(path: str, file_path: str) -> FileV:
    """A literal path, resolved from the working directory or the script's own folder."""
    folder = os.path.dirname(file_path)
    for candidate in (path, os.path.join(folder, path)):
        if os.path.isfile(noted(candidate)):
            return FileV(os.path.abspath(candidate), path)
    return FileV("", path)


def load_file(file: FileV, yaml: bool) -> Value:
    """A JSON (or, with PyYAML importable, YAML) file's content as interpreter values."""
    if not file.path:
        return UnknownV(f"{file.shown} not found")
    try:
        if os.path.getsize(file.path) > MAX_CONFIG_BYTES:
            return UnknownV(f"{file.shown} is too large")
        text = read_regular(file.path, MAX_CONFIG_BYTES).decode("utf-8")
        if yaml and not file.path.endswith(".json"):
            try:
                import yaml as pyyaml
            except ImportError:
                return UnknownV("PyYAML is not installed")
            data = pyyaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as exc:  # noqa: BLE001 - an unreadable config is just unknown
        return UnknownV(f"{file.shown}: {type(exc).__name__}")
    loaded = LOADED.get()
    if loaded is not None:
        loaded.add(file.path)  # read as the script reads it (YAML through json.load is not)
    return from_plain(data, f"from {file.shown}")


def from_plain(data: Any, origin: str) -> Value:
    if isinstance(data, dict):
        return DictV({k: from_plain(v, origin) for k, v in data.items()}, origin=origin)
    if isinstance(data, list):
        return ListV([from_plain(v, origin) for v in data])
    if isinstance(data, (int, float, str, bool)) or data is None:
        return ConstV(data, origin)
    return UNKNOWN
