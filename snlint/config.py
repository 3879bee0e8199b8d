"""`[tool.snlint]` and the CLI options that override it (README, "Configuration").

Selection is ruff's: a code is enabled when `select` (or the default set) or
`extend-select` names it and no `ignore` or matching `per-file-ignores` entry does.
SN9xx diagnostics are always selected. Globs match the root-relative path with forward
slashes as fnmatch does, plus `**/`; a slashless pattern also matches a name at any depth.
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections.abc import Mapping
from dataclasses import field, fields
from pathlib import Path, PurePosixPath
from typing import Any

from snlint.catalogue import load_catalogue, rule_codes, selector_matches
from snlint.records import dataclass
from snlint.probes import EXISTS, note

DEFAULT_MAX_FILE_SIZE = 5 * 1024 * 1024

_SELECTOR = re.compile(r"^(?:ALL|SN\d{0,3})$")
_CLASS_REF = re.compile(r"^[^:]+\.py:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")


class ConfigError(Exception):
    """Bad configuration or a bad option value; the CLI exits with code 2."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# ---------------------------------------------------------------------------- globs

def glob_regex(pattern: str) -> re.Pattern[str]:
    """The regex of an fnmatch-like glob with `**`, for a whole root-relative path."""
    pattern = pattern.replace("\\", "/")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    pattern = pattern.strip("/")
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif ch == "*":
            while i < n and pattern[i] == "*":
                i += 1
            out.append(".*")
        elif ch == "?":
            out.append(".")
            i += 1
        elif ch == "[":
            end = pattern.find("]", i + 2 if pattern.startswith("[!", i) else i + 1)
            if end < 0:
                out.append(re.escape(ch))
                i += 1
            else:
                body = pattern[i + 1:end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end + 1
        else:
            out.append(re.escape(ch))
            i += 1
    return re.compile("".join(out), re.S)


@dataclass(frozen=True)
class Glob:
    """One user glob: `matches_file` for per-file-ignores, `matches_entry` for discovery."""

    pattern: str
    regex: re.Pattern[str] = field(repr=False, compare=False)
    basename_only: bool = field(repr=False, compare=False)

    @classmethod
    def compile(cls, pattern: str) -> "Glob":
        return _compile_glob(pattern)

    def matches_entry(self, relpath: str | None, name: str) -> bool:
        """A file or folder at `relpath` (root-relative; None when outside the root)."""
        if relpath is not None and self.regex.fullmatch(relpath):
            return True
        return self.basename_only and bool(self.regex.fullmatch(name))

    def matches_file(self, relpath: str) -> bool:
        """The file or a folder above it, by root-relative path or (slashless pattern)
        by name alone, as `exclude` treats the folders it walks."""
        if self.regex.fullmatch(relpath):
            return True
        parts = relpath.split("/")
        if self.basename_only and any(self.regex.fullmatch(part) for part in parts):
            return True
        return any(self.regex.fullmatch("/".join(parts[:k])) for k in range(1, len(parts)))


@functools.lru_cache(maxsize=1024)
def _compile_glob(pattern: str) -> Glob:
    # "/tests" is anchored at the root; "tests" and "tests/" match at any depth.
    anchored = "/" in pattern.replace("\\", "/").rstrip("/")
    try:
        regex = glob_regex(pattern)
    except re.error as e:
        raise ConfigError(f"invalid glob {pattern!r}: {e}") from None
    return Glob(pattern, regex, not anchored)


def _glob_in(pattern: str, where: str) -> None:
    try:
        Glob.compile(pattern)
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}") from None


def _class_ref(ref: str, where: str) -> None:
    if not _CLASS_REF.match(ref):
        raise ConfigError(f"invalid class reference {ref!r} in {where} "
                          "(expected \"path/relative/to/root.py:ClassName\")")


def _positive_int(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and value > 0


def _positive_number(value: Any) -> bool:
    """A finite number above 0 (an infinite limit never ends a hung import)."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) \
        and math.isfinite(value) and value > 0


# ---------------------------------------------------------------------------- selection

def _validate_selectors(codes: Any, where: str) -> list[str]:
    codes = _string_list(codes, where)
    for code in codes:
        if not _SELECTOR.match(code):
            raise ConfigError(f"invalid rule code {code!r} in {where} (expected ALL, "
                              "or SN followed by up to three digits, e.g. SN3, SN301)")
        if code != "ALL" and not any(known.startswith(code) for known in rule_codes()):
            # A typo would otherwise select or ignore nothing, silently.
            raise ConfigError(f"unknown rule code {code!r} in {where} (no rule's code "
                              "starts with it; see snlint --list-rules)")
    return codes


def _known_rules(codes: Any, where: str) -> list[str]:
    """Selectors that name at least one rule: moving a code no rule has across the safe
    line would do nothing, silently."""
    codes = _validate_selectors(codes, where)
    rules = [code for code, rule in load_catalogue().items() if not rule.is_diagnostic]
    for code in codes:
        if not any(selector_matches(rule, [code]) for rule in rules):
            raise ConfigError(f"unknown rule code {code!r} in {where}")
    return codes


def _string_list(value: Any, where: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)) \
            or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings, got {value!r}")
    return list(value)


@dataclass
class Config:
    root: Path
    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    extend_exclude: list[str] = field(default_factory=list)
    discriminators: list[str] = field(default_factory=list)  # "path.py:Class"
    not_discriminators: list[str] = field(default_factory=list)
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    norm_replacement: str = "groupnorm"
    # Rules whose fixes the project moves across the safe line (`snlint.fix.safety`).
    extend_safe_fixes: list[str] = field(default_factory=list)
    extend_unsafe_fixes: list[str] = field(default_factory=list)
    graph: bool = False  # the graph pass imports the project's code: only when asked
    graph_timeout: float = 20.0
    graph_paths: list[str] = field(default_factory=list)  # sys.path folders, root-relative
    models: dict[str, dict] = field(default_factory=dict)
    force_exclude: bool = False
    # The per-file stage (snlint.engine.per_file): processes (None: one per core) and the
    # cache of per-file facts (snlint.engine.cache) in `cache_dir` (None: .snlint_cache in the root).
    jobs: int | None = None
    cache: bool = True
    cache_dir: str | None = None
    _relative: dict[tuple[Path, str], str] = field(default_factory=dict, init=False,
                                                    repr=False, compare=False)
    _opt_in: frozenset[str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.root = Path(os.path.abspath(self.root))
        for key in _CHECKED:
            name = _KEYS[key]
            if getattr(self, name) is not None or key != "select":
                setattr(self, name, _checked(key, getattr(self, name), key))
        for pattern in (*self.per_file_ignores, *self.exclude, *self.extend_exclude):
            Glob.compile(pattern)  # a bad glob is a ConfigError now, not mid-run
        if self.jobs is not None and not _positive_int(self.jobs):
            raise ConfigError(f"jobs must be a positive number, got {self.jobs!r}")

    # -- selection

    def is_selected(self, code: str) -> bool:
        """Selected by select / the default set / extend-select (ignores not applied)."""
        if code.startswith("SN9"):
            return True
        if self.select is None:
            chosen = code not in self.opt_in_codes()
        else:
            chosen = selector_matches(code, self.select)
        return chosen or selector_matches(code, self.extend_select)

    def opt_in_codes(self) -> frozenset[str]:
        """The rules whose page says `default: off` (read once per configuration)."""
        if self._opt_in is None:
            self._opt_in = frozenset(code for code, rule in load_catalogue().items() if rule.opt_in)
        return self._opt_in

    def is_enabled(self, code: str, path: str) -> bool:
        """Whether findings of `code` are reported for the file with display path `path`."""
        if not self.is_selected(code) or selector_matches(code, self.ignore):
            return False
        if not self.per_file_ignores:
            return True
        relpath = self.relative_path(path)
        return not any(selector_matches(code, codes) and Glob.compile(pattern).matches_file(relpath)
                       for pattern, codes in self.per_file_ignores.items())

    def relative_path(self, path: str) -> str:
        """The display path `path` relative to the root with forward slashes (cleaned
        when it is not under the root)."""
        key = (self.root, path)
        cached = self._relative.get(key)
        if cached is None:
            cached = self._relative[key] = _relative_to(self.root, path)
        return cached


def _relative_to(root: Path, path: str) -> str:
    absolute = Path(os.path.abspath(path))
    candidates = [(absolute, root)]
    try:
        candidates.append((absolute.resolve(), root.resolve()))
    except (OSError, RuntimeError):
        pass
    for a, r in candidates:
        try:
            return a.relative_to(r).as_posix()
        except ValueError:
            continue
    cleaned = PurePosixPath(os.path.normpath(path).replace(os.sep, "/")).as_posix()
    return cleaned


# ---------------------------------------------------------------------------- root & loading

# The first found is read (ruff's order); pyproject.toml holds the settings under
# [tool.snlint], the others at their top level.
CONFIG_FILES = (".snlint.toml", "snlint.toml", "pyproject.toml")


def config_file(folder: Path, looked_at: dict[str, tuple[int, object]] | None = None) -> Path | None:
    """The configuration file of `folder`: the first of CONFIG_FILES it holds."""
    for name in CONFIG_FILES:
        note(looked_at, str(folder / name))
    for name in CONFIG_FILES:
        # Any file but a folder: a FIFO or a dangling link is read, and refused, by name.
        if os.path.lexists(folder / name) and not os.path.isdir(folder / name):
            return folder / name
    return None


def find_root(paths: list[str], looked_at: dict[str, tuple[int, object]] | None = None) -> Path:
    """The nearest folder at or above the first path that holds a configuration file or
    a .git; else the working directory when the path lies in it, else the path's folder.
    `looked_at`: where it looked, for snlint.engine.replay."""
    start = Path(os.path.abspath(paths[0] if paths else "."))
    if not os.path.isdir(start):
        start = start.parent
    # os.path's probes: a folder that may not be looked at holds no marker (pathlib's raise).
    for folder in (start, *start.parents):
        found = config_file(folder, looked_at)
        note(looked_at, str(folder / ".git"), EXISTS)
        if found is not None or os.path.exists(folder / ".git"):
            return folder
    # The root is walked and holds the cache: never the filesystem root, nor a folder the
    # path is not in.
    cwd = Path.cwd()
    if cwd.parent != cwd and (start == cwd or cwd in start.parents):
        return cwd
    return start


# toml key -> Config field: every setting but `jobs` (a command-line option only).
_FIELDS = frozenset(f.name for f in fields(Config) if f.init) - {"root"}
_KEYS = {name.replace("_", "-"): name for name in sorted(_FIELDS - {"jobs"})}


def load_config(root: Path, *, settings: Path | None = None, **cli_overrides: Any) -> Config:
    """The settings of the project's configuration file (or `settings`: --config), then
    the CLI overrides that are not None. As in ruff, a CLI `select` starts the selection
    afresh; the CLI's extend-* and `ignore` add to the file's; other values replace it."""
    root = Path(os.path.abspath(root))
    path = settings if settings is not None else config_file(root)
    values = read_settings(Path(os.path.abspath(path))) if path is not None else {}

    unknown = sorted(set(cli_overrides) - _FIELDS)
    if unknown:
        raise TypeError(f"load_config() got unexpected override(s): {', '.join(unknown)}")
    cli = {k: v for k, v in cli_overrides.items() if v is not None}
    for name in ("select", "extend_select", "ignore", "extend_safe_fixes", "extend_unsafe_fixes"):
        if name in cli:
            cli[name] = _split_codes(cli[name], name.replace("_", "-"))

    if "select" in cli:
        values["select"] = cli.pop("select")
        values["extend_select"] = cli.pop("extend_select", [])
        values["ignore"] = cli.pop("ignore", [])
    for name in ("extend_select", "ignore", "extend_exclude", "extend_safe_fixes",
                 "extend_unsafe_fixes"):
        if name in cli:
            values[name] = list(values.get(name, [])) + list(cli.pop(name))
    values.update(cli)
    return Config(root=root, **values)


def _split_codes(value: Any, where: str) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(v, str) for v in items):
        raise ConfigError(f"--{where} must be rule codes, got {value!r}")
    codes = [code for item in items for code in re.split(r"[,\s]+", item.strip()) if code]
    return _validate_selectors(codes, f"--{where}")


def read_settings(path: Path) -> dict[str, Any]:
    """The settings of the configuration file `path` (Config field -> value)."""
    from snlint.regular import read_regular

    try:
        data = read_regular(path)  # a FIFO there would block a plain read for ever
    except FileNotFoundError:
        if path.name == "pyproject.toml":
            return {}
        raise ConfigError(f"{path}: no such file") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    import tomllib  # only where there is a pyproject.toml (2 ms of a start)

    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 ({e.reason} at byte {e.start})") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None
    if path.name == "pyproject.toml":
        label = "[tool.snlint]"
        table = doc.get("tool", {}).get("snlint", {}) if isinstance(doc.get("tool"), dict) else {}
    else:
        label, table = "", doc
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.snlint] must be a table")
    values = {}
    for key, value in table.items():
        if key not in _KEYS:
            where = f" in {label}" if label else ""
            raise ConfigError(f"{path}: unknown key {key!r}{where}{_hint(key)}")
        values[_KEYS[key]] = _check_value(key, value, path, f"{label} " if label else "")
    return values


def _hint(key: str) -> str:
    hint = ""
    kebab = key.replace("_", "-")
    if kebab in _KEYS:
        hint = f" (did you mean {kebab!r}?)"
    else:
        import difflib

        close = difflib.get_close_matches(key, list(_KEYS), n=1)
        if close:
            hint = f" (did you mean {close[0]!r}?)"
    return hint


# The settings Config checks itself, whoever made it (the others come from a file, checked
# as it is read, or from click), in this order.
_CHECKED = ("select", "extend-select", "ignore", "extend-safe-fixes", "extend-unsafe-fixes",
            "per-file-ignores", "exclude", "extend-exclude", "discriminators",
            "not-discriminators", "graph-paths", "graph", "graph-timeout", "max-file-size")


def _checked(key: str, value: Any, where: str) -> Any:
    """`value` of setting `key`, or a ConfigError naming it `where`."""
    if key in ("select", "extend-select", "ignore"):
        return _validate_selectors(value, where)
    if key in ("extend-safe-fixes", "extend-unsafe-fixes"):
        return _known_rules(value, where)
    if key in ("exclude", "extend-exclude", "graph-paths"):
        return _string_list(value, where)
    if key in ("discriminators", "not-discriminators"):
        refs = _string_list(value, where)
        for ref in refs:
            _class_ref(ref, where)
        return refs
    if key == "per-file-ignores":
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where} must be a table of glob = [codes], got {value!r}")
        return {str(glob): _validate_selectors(codes, f"{where} {glob!r}")
                for glob, codes in value.items()}
    if key in ("graph", "force-exclude", "cache"):
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, got {value!r}")
        return value
    if key == "max-file-size":
        if not _positive_int(value):
            raise ConfigError(f"{where} must be a positive number of bytes, got {value!r}")
        return value
    if key == "graph-timeout":
        if not _positive_number(value):
            raise ConfigError(f"{where} must be a positive number of seconds, got {value!r}")
        return value
    if key == "norm-replacement":
        allowed = ("groupnorm", "instancenorm", "identity")
        if value not in allowed:
            raise ConfigError(f"{where} must be one of {', '.join(allowed)}, got {value!r}")
        return value
    if key == "models":
        if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
            raise ConfigError(f"{where} must be a table of tables "
                              "([tool.snlint.models.\"path.py:Class\"])")
    return value  # cache-dir: `_check_value` knows the folder it is relative to


def _check_value(key: str, value: Any, path: Path, table: str = "[tool.snlint] ") -> Any:
    """`_checked`, its messages naming the file, and what only the file tells: globs,
    and folders relative to it."""
    where = f"{table}{key}"
    try:
        if key == "per-file-ignores" and not isinstance(value, dict):
            raise ConfigError(f"{where} must be a table of glob = [codes]")
        if key == "cache-dir" and (not isinstance(value, str) or not value):
            raise ConfigError(f"{where} must be a folder (relative to {path.parent}), "
                              f"got {value!r}")
        if key == "per-file-ignores":
            for glob in value:
                _glob_in(glob, where)
        value = _checked(key, value, where)
        for pattern in value if key in ("exclude", "extend-exclude") else ():
            _glob_in(pattern, where)
        for folder in value if key == "graph-paths" else ():
            if not os.path.isdir(path.parent / folder):
                raise ConfigError(f"{where}: {folder!r} is not a folder (the paths are "
                                  f"relative to {path.parent})")
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
    return float(value) if key == "graph-timeout" else value
