"""Parts of a project the link step can read apart: files that cannot reach one another
through any name the source pass read.

The link step finds what a name means through the project index (`ProjectIndex`), and
the index answers each lookup from a few files: the one it names and those that would
make it ambiguous (`ProjectIndex.answers`). Files joined by every such lookup a file's
names can make, of every prefix of every name, form a group; an index of one group gives
each of its files the answers the whole project's index gives. So the link, the checks
and the findings of a group are those of the whole project restricted to it, and a
collection of separate models (PyTorch-GAN: one folder per paper, each with its own
`models.py`) is linked group by group: in parallel, and, in the rounds of `--fix`, only
where a round changed a file.

A submodule is joined to its package (`pkg.sub` reached as an attribute of `pkg`). Two
things reach across files without a name the index resolves, and are the whole
project's: the command-line options it declares (given to every part), and "the only
discriminator class" (decided by the caller from every part); a project that registers
classes in a registry (`@ARCH_REGISTRY.register()`) is linked whole (`uses_registries`).
"""

from __future__ import annotations

from typing import Iterable, Mapping

from snlint.facts import FileFacts
from snlint.link.index import ProjectIndex
from snlint.link.resolve import registries

# Names the index never looks up (`ProjectIndex.resolve`).
_OUTSIDE = ("torch.", "builtins.", "functools.", "typing.", "collections.")


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
    return {n for n in names if n and not n.startswith(_OUTSIDE)}


def uses_registries(files: list[FileFacts]) -> bool:
    """Whether a class is registered by a decorator (`@ARCH_REGISTRY.register()`): a
    registry is looked up by its name, and holds classes from anywhere in the project,
    which no import joins."""
    return bool(registries((cls, file) for file in files for _, cls in file.classes))
