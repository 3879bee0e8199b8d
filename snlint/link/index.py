"""The project index: which file a qualified name lives in.

Imports are resolved the way the code is usually run: a module beside the importing
script, an exact module name, one in the nearest folder above the importer that has it,
then a unique module whose name ends with the imported one.
"""

from __future__ import annotations

import posixpath

from snlint.facts import FileFacts
from snlint.records import dataclass

# Names the index never looks up.
OUTSIDE = ("torch.", "builtins.", "functools.", "typing.", "collections.")


@dataclass(frozen=True)
class Resolved:
    file: FileFacts
    name: str  # "" when the qualified name is the module itself; may be dotted (Class.attr)


class ProjectIndex:
    def __init__(self, files: list[FileFacts]) -> None:
        self.files = files
        self.by_module: dict[str, list[FileFacts]] = {}
        # Maps built once: a scan of every file per lookup made the link step quadratic.
        self.by_stem: dict[str, FileFacts] = {}
        self.by_suffix: dict[str, list[FileFacts]] = {}
        self._resolved: dict[tuple[str, str], Resolved | None] = {}
        self._answers: dict[tuple[str, str], list[FileFacts]] = {}
        self._folder_of: dict[str, str] = {}
        self._chains: dict[str, list[str]] = {}
        for f in files:
            self.by_module.setdefault(f.module, []).append(f)
            stem = f.path[:-3] if f.path.endswith(".py") else f.path
            if stem.endswith("/__init__"):
                stem = stem[: -len("/__init__")]
            self.by_stem.setdefault(stem, f)
            parts = f.module.split(".")
            for i in range(1, len(parts)):
                self.by_suffix.setdefault(".".join(parts[i:]), []).append(f)

    def module(self, name: str, importer: FileFacts | None) -> FileFacts | None:
        if importer is not None:
            sibling = self._sibling(name, importer)
            if sibling is not None:
                return sibling
        exact = self.by_module.get(name)
        if exact and len(exact) == 1:
            return exact[0]
        if importer is not None:
            found = self._near(name, importer)
            if found is not None:
                return found
        suffix = self.by_suffix.get(name, [])
        if len(suffix) == 1:
            return suffix[0]
        return None

    def answers(self, name: str, importer: FileFacts) -> list[FileFacts]:
        """Every file `module(name, importer)` reads to answer: its answer, and the files
        that make an exact or a suffix match ambiguous; an index of any part of the project
        that holds `importer` and these gives the same answer (`snlint.link.groups`). The
        importer counts by its folder alone."""
        key = (name, self._folder(importer.path))
        found = self._answers.get(key)
        if found is None:
            found = self._answers[key] = self._answer(name, importer)
        return found

    def _answer(self, name: str, importer: FileFacts) -> list[FileFacts]:
        exact = self.by_module.get(name, [])
        sibling = self._sibling(name, importer)
        if sibling is not None:
            return [sibling]
        if len(exact) == 1:
            return exact
        found = self._near(name, importer)
        if found is not None:
            return [*exact, found]
        return [*exact, *self.by_suffix.get(name, [])]

    def _sibling(self, name: str, importer: FileFacts) -> FileFacts | None:
        """Module `name` beside the importing file, in a folder below the root that is no
        package: the folder a script there runs from is first on `sys.path`."""
        folder = self._folder(importer.path)
        if not folder or folder in self.by_stem:  # the root, or a package (`__init__.py`)
            return None
        return self.by_stem.get(posixpath.join(folder, name.replace(".", "/")))

    def _near(self, name: str, importer: FileFacts) -> FileFacts | None:
        """Module `name` in the importing file's folder, else in the nearest folder above it
        that has it (a repository of several projects, each with its `models` package)."""
        leaf = name.replace(".", "/")
        for folder in self._folders_up(self._folder(importer.path)):
            found = self.by_stem.get(posixpath.join(folder, leaf) if folder else leaf)
            if found is not None:
                return found
        return None

    def _folder(self, path: str) -> str:
        folder = self._folder_of.get(path)
        if folder is None:
            folder = self._folder_of[path] = posixpath.dirname(path)
        return folder

    def _folders_up(self, folder: str) -> list[str]:
        """`folder` and each folder above it, to the top ("" or "/")."""
        chain = self._chains.get(folder)
        if chain is None:
            chain = [folder]
            while (above := posixpath.dirname(chain[-1])) != chain[-1]:
                chain.append(above)
            self._chains[folder] = chain
        return chain

    def resolve(self, qual: str, importer: FileFacts | None) -> Resolved | None:
        if qual.startswith(OUTSIDE):
            return None
        key = (qual, importer.path if importer is not None else "")
        if key not in self._resolved:
            self._resolved[key] = self._resolve(qual, importer)
        return self._resolved[key]

    def _resolve(self, qual: str, importer: FileFacts | None) -> Resolved | None:
        parts = qual.split(".")
        for cut in range(len(parts), 0, -1):
            name = ".".join(parts[:cut])
            # The longest module prefix wins: in a package's __init__, `models.nets.Critic`
            # is the submodule's class, not an attribute `nets` of the package.
            if importer is not None and importer.module == name:
                return Resolved(importer, ".".join(parts[cut:]))
            f = self.module(name, importer)
            if f is not None:
                return Resolved(f, ".".join(parts[cut:]))
        return None
