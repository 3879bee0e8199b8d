"""Where the graph pass imports a project from: the folders it puts on `sys.path`.

As pytest's rootdir and `pythonpath` do: the project root (the nearest folder above the
file holding a marker), a `src/` beneath it, and the folders `[tool.snlint] graph-paths`
names; then the configuration root when it is another folder above the file. Unlike
`config.find_root`, `setup.py`/`setup.cfg` count as markers.
"""

from __future__ import annotations

import os
from pathlib import Path

MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def project_root(file: str | Path) -> Path | None:
    """The nearest folder at or above `file`'s folder that holds a marker, or None."""
    folder = Path(os.path.abspath(file)).parent
    for candidate in (folder, *folder.parents):
        if any(os.path.exists(candidate / marker) for marker in MARKERS):
            return candidate
    return None


def import_roots(file: str | Path, config_root: str | Path,
                 graph_paths: list[str] = ()) -> tuple[str, ...]:
    """Absolute folders for `sys.path`, the first taking precedence: `graph-paths`
    (relative to `config_root`), then the file's project root and its `src/` (the one
    holding the file first; not a `src/` that is itself a package), then `config_root`
    and its `src/` when the file lies under it. Only existing folders."""
    absolute = Path(os.path.abspath(file))
    config_root = Path(os.path.abspath(config_root))
    out: list[Path] = [config_root / p for p in graph_paths]
    bases = [project_root(absolute)]
    if absolute.is_relative_to(config_root):
        bases.append(config_root)
    for base in bases:
        if base is None:
            continue
        src = base / "src"
        if os.path.exists(src / "__init__.py"):
            out.append(base)  # `src` is a package the code imports as `src.x`
        elif absolute.is_relative_to(src):
            out += [src, base]  # the code in src/ imports its siblings
        else:
            out += [base, src]
    seen: dict[str, None] = {}
    for folder in out:
        text = os.path.normpath(str(folder))
        if os.path.isdir(text):
            seen.setdefault(text, None)
    return tuple(seen)


# Folders that hold no project module worth suggesting (environments, caches, outputs).
_SKIP = frozenset({"__pycache__", "node_modules", "site-packages", "venv", "env", "build", "dist"})


def _is_module_folder(folder: str) -> bool:
    try:
        return any(entry.name.endswith(".py") for entry in os.scandir(folder))
    except OSError:
        return False


def locate_module(name: str, root: str | Path, depth: int = 3) -> str | None:
    """The folder, relative to `root` with forward slashes ("" for `root` itself), of the
    shallowest `name.py` or `name/` holding Python files within `depth` levels; None when
    the project has no such module (it is a package to install)."""
    level = [Path(os.path.abspath(root))]
    base = level[0]
    for _ in range(depth + 1):
        following = []
        for folder in level:
            if os.path.isfile(folder / f"{name}.py") or (
                    os.path.isdir(folder / name) and _is_module_folder(str(folder / name))):
                relative = folder.relative_to(base).as_posix()
                return "" if relative == "." else relative
            try:
                following += sorted(Path(e.path) for e in os.scandir(folder)
                                    if e.is_dir() and not e.name.startswith(".")
                                    and e.name not in _SKIP)
            except OSError:
                continue
        level = following
    return None
