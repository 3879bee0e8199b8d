"""The rest of the project a partial run needs (pre-commit passes only the changed
files): the files the linted files import, transitively, within the project root, read
for their facts; their own findings are not reported.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Mapping

from snlint.config import Config
from snlint.engine.run_cache import project_files
from snlint.files import SourceFile, read_source
from snlint.source import ast_modules, module_name, project_modules

MAX_CONTEXT_FILES = 400


def imported_sources(given: dict[str, str], config: Config,
                     modules: Callable[[dict[str, str]], Mapping[str, set[str] | None]] | None = None,
                     files: list[tuple[str, Path]] | None = None) -> dict[str, str]:
    """Display path -> text of the project files the `given` files import, transitively,
    that are not among them. `modules`: the modules files import as the source pass read
    them (display path -> `Scopes.modules`, None when not known), so that no file is
    parsed again here. `files`: `project_files(config)`, when the caller has them."""
    if not given:
        return {}
    project: dict[str, tuple[str, Path]] = {}
    files = project_files(config) if files is None else files
    given_abs = {os.path.abspath(p) for p in given}
    if all(str(a) in given_abs or os.path.abspath(d) in given_abs for d, a in files):
        return {}
    for display, absolute in files:
        name, _ = module_name(config.relative_path(display))
        project.setdefault(name, (display, absolute))

    # The given files' imports at once: the source pass reads them in one batch (workers).
    found: dict[str, frozenset[str] | set[str] | None] = \
        dict(modules(given)) if modules is not None else {}

    def imports_of(display: str, relpath: str, text: str) -> set[str]:
        if display not in found and modules is not None:
            found.update(modules({display: text}))
        known = found.get(display)
        if known is None:
            known = ast_modules(text, *module_name(relpath)) or ()
        return project_modules(known)

    def candidate(imported: str, importer: str) -> str | None:
        parts = imported.split(".")
        folder = importer.rsplit(".", 1)[0] if "." in importer else ""
        for cut in range(len(parts), 0, -1):
            head = ".".join(parts[:cut])
            # A script folder on sys.path (`import layers` next to it): same folder first.
            sibling = f"{folder}.{head}" if folder else head
            if head in project or sibling in project:
                return head if head in project else sibling
            suffix = [n for n in project if n.endswith("." + head)]
            if len(suffix) == 1:
                return suffix[0]
        return None

    out: dict[str, str] = {}
    queue = [(p, config.relative_path(p), text) for p, text in given.items()]
    seen: set[str] = set()
    while queue and len(out) < MAX_CONTEXT_FILES:
        display, relpath, text = queue.pop()
        module, _ = module_name(relpath)
        for imported in sorted(imports_of(display, relpath, text)):
            name = candidate(imported, module)
            if name is None or name in seen:
                continue
            seen.add(name)
            display, absolute = project[name]
            if str(absolute) in given_abs or os.path.abspath(display) in given_abs:
                continue
            read = read_source(display, absolute, config.max_file_size)
            if isinstance(read, SourceFile):
                out[display] = read.text
                queue.append((display, config.relative_path(display), read.text))
    return out
