"""Classes a project constructs from a dotted name in its configuration.

Some training code never names its discriminator in code: it writes
`EasyDict(class_name='pg_modules.discriminator.ProjectedDiscriminator', ...)` and builds
it with `construct_class_by_name(**kwargs)`. When such a string names one of several
discriminator candidates, that one is the discriminator a bare call (`self.D`) is taken
for; in a repository of several projects, the one its own project names.
"""

from __future__ import annotations

import os
from typing import Iterable

from snlint import facts as F


def given_names(files: Iterable[F.FileFacts]) -> list[tuple[str, str, int]]:
    """(name, path, line) of each dotted name the project gives as a `class_name` (read by
    the source pass, `snlint.source.class_names`)."""
    return [(name, file.path, line) for file in files for name, line in file.class_names]


def class_names(files: Iterable[F.FileFacts]) -> dict[str, tuple[str, int]]:
    """Each dotted name the project gives as a `class_name`, with where it is first given."""
    return first_places(given_names(files))


def first_places(given: list[tuple[str, str, int]]) -> dict[str, tuple[str, int]]:
    """`given_names`' names, each with where it is first given."""
    out: dict[str, tuple[str, int]] = {}
    for name, path, line in given:
        out.setdefault(name, (path, line))
    return out


def names(qual: str, name: str) -> bool:
    """Whether the dotted `name` names the class `qual` (the module path from the folder
    a script runs from: `pg_modules.discriminator.ProjectedDiscriminator`)."""
    return qual == name or qual.endswith("." + name)


def named_one(candidates: Iterable[str], given: dict[str, tuple[str, int]],
              ) -> tuple[str, str, tuple[str, int]] | None:
    """The one candidate class (a qualname) a `class_name` string names, with the string
    and where it is given; None when none does, or more than one."""
    found = {(q, name) for q in candidates for name in given if names(q, name)}
    if len({q for q, _ in found}) != 1:
        return None
    q, name = min(found)
    return q, name, given[name]


def named_near(candidates: dict[str, str], given: list[tuple[str, str, int]], at: str,
               ) -> tuple[str, str, tuple[str, int]] | None:
    """For a call in the file `at`, in a repository of several projects: the one candidate
    (qualname -> its file) a `class_name` names in the project folder nearest `at`, itself
    in that folder; None when there is none, or more than one."""
    scored = [(_shared(path, at), name, path, line) for name, path, line in given]
    best = max((score for score, *_ in scored), default=0)
    if best == 0:
        return None
    found = {(q, name, path, line) for score, name, path, line in scored if score == best
             for q, home in candidates.items()
             if names(q, name) and _shared(home, path) >= best}
    if len({q for q, *_ in found}) != 1:
        return None
    q, name, path, line = min(found)
    return q, name, (path, line)


def _shared(a: str, b: str) -> int:
    """How many folders the paths `a` and `b` begin with alike."""
    return len(os.path.commonprefix([a.split("/")[:-1], b.split("/")[:-1]]))

