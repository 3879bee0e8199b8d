"""The link step: join per-file facts into one project and interpret them.

`link(files, config)` resolves names across files, runs every module body, helper and
module class through the interpreter, and decides which classes are discriminators.
Checks read the result; they never see a syntax tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from snlint.facts import ClassFacts, FileFacts
from snlint.findings import DiscriminatorRef
from snlint.link.index import ProjectIndex
from snlint.link.interpret import Events, Interpreter
from snlint.link.values import Layer

_NAME = re.compile(r"(discriminator|critic)", re.I)
_EXACT = re.compile(r"^(NetD|netD|_netD|D_\w+|D)$")


@dataclass
class Discriminator:
    cls: ClassFacts
    file: FileFacts
    ref: DiscriminatorRef
    instance: Layer | None


@dataclass
class LinkedProject:
    index: ProjectIndex
    events: Events
    roots: dict[str, Layer] = field(default_factory=dict)  # class qualname -> built alone
    discriminators: list[Discriminator] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, message)


def _config_matches(entry: str, file: FileFacts, cls: ClassFacts, root: Path | None) -> bool:
    path, _, name = entry.rpartition(":")
    if name != cls.name:
        return False
    candidates = {file.path}
    if root is not None:
        try:
            candidates.add(Path(file.path).resolve().relative_to(root.resolve()).as_posix())
        except ValueError:
            pass
    return path in candidates or any(c.endswith("/" + path) for c in candidates)


def discriminator_evidence(cls: ClassFacts, file: FileFacts, discriminators: list[str],
                           not_discriminators: list[str], root: Path | None) -> str | None:
    if any(_config_matches(e, file, cls, root) for e in not_discriminators):
        return None
    if any(_config_matches(e, file, cls, root) for e in discriminators):
        return "configuration"
    if _NAME.search(cls.name) or _EXACT.match(cls.name):
        return "name"
    return None


def link(files: list[FileFacts], discriminators: list[str] = (), not_discriminators: list[str] = (),
         root: Path | None = None) -> LinkedProject:
    index = ProjectIndex(files)
    interp = Interpreter(index)
    project = LinkedProject(index, interp.events)

    def guarded(path: str, work) -> None:
        try:
            work()
        except RecursionError:
            project.errors.append((path, "too deeply nested to interpret"))

    for file in files:
        guarded(file.path, lambda: interp.run_module(file))
        for _, fn in file.functions:
            guarded(file.path, lambda: interp.run_function(fn, file))
        for _, cls in file.classes:
            if interp.class_kind(cls, file) == "module":
                def build(cls=cls, file=file) -> None:
                    project.roots[cls.qualname] = interp.instantiate_root(cls, file)
                guarded(file.path, build)

    for file in files:
        for _, cls in file.classes:
            evidence = discriminator_evidence(cls, file, list(discriminators),
                                              list(not_discriminators), root)
            if evidence is None or cls.qualname not in project.roots:
                continue
            ref = DiscriminatorRef(f"{file.path}:{cls.name}", evidence)
            project.discriminators.append(
                Discriminator(cls, file, ref, project.roots.get(cls.qualname)))
    return project
