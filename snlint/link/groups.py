"""Parts of a project the link step can read apart: files that cannot reach one another
through any name the source pass read.

The index answers each lookup from a few files (`ProjectIndex.answers`). Files joined by
every lookup a file's names can make form a group, whose own index gives each of its
files the whole project's answers: so a collection of separate models is linked group by
group, and in the rounds of `--fix` only where a round changed a file. A submodule is
joined to its package. What reaches across files without a name is the whole project's:
its declared options, "the only discriminator class" (decided by the caller), and a
registry (`@ARCH_REGISTRY.register()`: the project is linked whole, `uses_registries`).
"""

from __future__ import annotations

from typing import Iterable, Mapping

from snlint.facts import FileFacts
from snlint.link.index import OUTSIDE, ProjectIndex
from snlint.link.resolve import registries


def groups(files: list[FileFacts], imported: Mapping[str, Iterable[str]]) -> list[list[FileFacts]]:
    """`files` in groups the link step can read apart, each in the files' order, the
    groups in the order of their first file. `imported`: by path, the modules each file
    imports anywhere (`Scopes.modules`: a function's own imports included)."""
    index = ProjectIndex(files)
    parent = list(range(len(files)))
    position = {id(f): i for i, f in enumerate(files)}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i: int, j: int) -> None:
        a, b = root(i), root(j)
        if a != b:
            parent[max(a, b)] = min(a, b)

    packages = {f.module: i for i, f in enumerate(files) if f.is_package and f.module}
    for i, file in enumerate(files):
        for name in _looked_up(file) | set(imported.get(file.path, ())):
            parts = name.split(".")
            for cut in range(len(parts), 0, -1):
                for other in index.answers(".".join(parts[:cut]), file):
                    join(i, position[id(other)])
        parts = file.module.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            package = packages.get(".".join(parts[:cut]))
            if package is not None:
                join(i, package)
    out: dict[int, list[FileFacts]] = {}
    for i, file in enumerate(files):
        out.setdefault(root(i), []).append(file)
    return list(out.values())


def _looked_up(file: FileFacts) -> set[str]:
    """The qualified names the link step may look up for `file`: its name chains, its
    imports, and each name a star import may bring, under every module it star-imports."""
    names = set(file.names.quals.values()) | {qual for _, qual in file.imports} | set(file.star_imports)
    for name in list(names):
        if name.startswith("*."):
            names.discard(name)
            names.update(f"{module}.{name[2:]}" if module else name[2:] for module in file.star_imports)
    return {n for n in names if n and not n.startswith(OUTSIDE)}


def uses_registries(files: list[FileFacts]) -> bool:
    """Whether a class is registered by a decorator (`@ARCH_REGISTRY.register()`): a
    registry holds classes from anywhere in the project, which no import joins."""
    return bool(registries((cls, file) for file in files for _, cls in file.classes))
