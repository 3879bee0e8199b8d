"""A whole run's findings, kept between runs beside the per-file facts (snlint.engine.cache).

A run's findings are a function of what it read: the configuration, the files given and
their texts, the files those import, and the project's list of Python files (what an
import names). When all of these are as the last run of the same files and configuration
read them, its findings stand, without importing the source pass; when some texts changed
but their facts did not (a comment added), `lint._same_facts` gives them without linking.
Kept are the findings before suppression comments (read from the texts every run); only
source-pass runs (the graph pass imports code this cannot see change); built fixes only for
the very texts they were built from.
"""

from __future__ import annotations

import os
from dataclasses import fields, replace
from pathlib import Path
from typing import Iterable, Mapping

from snlint.config import Config
from snlint.engine.cache import Cache, blake2b, digest
from snlint.files import SourceFile, discover, read_source
from snlint.findings import Finding
from snlint.inputs import Inputs
from snlint.records import dataclass

# Configuration that cannot change a finding: how the per-file stage runs.
_NOT_IN_KEY = frozenset({"jobs", "cache", "cache_dir"})


@dataclass(frozen=True)
class RunEntry:
    texts: tuple[tuple[str, str, bool], ...]  # (display path, text digest, given: not imported)
    listing: str  # digest of the project's Python files
    kept: frozenset[str]  # the files the source pass lowered (not set aside by its prefilter)
    mattering: frozenset[str]  # the files the prefilter read for what they say
    findings: tuple[Finding, ...]  # enabled, fixes marked; suppressions not yet applied
    discriminators: frozenset[str] = frozenset()  # "path:Class" the graph pass would build
    # The data files and folders the link step looked for (option files a script loads,
    # the folders of shipped configurations), each with `data_state` as it was.
    data: tuple[tuple[str, str], ...] = ()


class RunCache:
    """The entry of one run: the files given (display paths) under one configuration."""

    def __init__(self, cache: Cache, config: Config, given: list[str], *, fixes: bool = False) -> None:
        self.cache = cache
        self.config = config
        self.fixes = fixes  # built fixes quote their file's text
        settings = tuple((f.name, getattr(config, f.name)) for f in fields(config)
                         if f.init and f.name not in _NOT_IN_KEY)
        self.key = blake2b(repr((os.getcwd(), settings, sorted(given), fixes)).encode(
            "utf-8", "surrogatepass"), digest_size=20).hexdigest()
        self._entry: RunEntry | None | bool = False  # False: not read yet
        self._listing: str | None = None

    @classmethod
    def for_run(cls, config: Config, inputs: Inputs, *, graph: bool, fixes: bool) -> RunCache | None:
        """The run cache of a run of files on disk, when such a run may use it."""
        if not config.cache or graph:
            return None
        run_cache = cls(Cache.for_root(config.root, config.cache_dir), config, list(inputs.sources),
                        fixes=fixes)
        walked = walked_files(inputs.paths, inputs.files, config)
        if walked is not None:
            run_cache._listing = _listing(d for d, _ in walked)
        return run_cache

    def entry(self) -> RunEntry | None:
        if self._entry is False:
            stored = self.cache.get("run", self.key, "", run=True)
            self._entry = stored if isinstance(stored, RunEntry) else None
        return self._entry  # type: ignore[return-value]

    def listing(self) -> str:
        """The project's Python files, as what an import can name."""
        if self._listing is None:
            self._listing = _listing(d for d, _ in project_files(self.config))
        return self._listing

    def unchanged(self, sources: Mapping[str, str], imported: Mapping[str, str] | None = None
                  ) -> list[Finding] | None:
        """The last run's findings when it read exactly these texts. `imported`: the files
        the sources import, as this run found them; None: as the last run found them,
        read again from disk here."""
        entry = self.entry()
        if entry is None or not _same({p: d for p, d, given in entry.texts if given}, sources) \
                or not same_data(entry):
            return None
        others = {p: d for p, d, given in entry.texts if not given}
        if imported is None:
            imported = {}
            for path in others:
                read = read_source(path, os.path.abspath(path), self.config.max_file_size)
                if not isinstance(read, SourceFile):
                    return None
                imported[path] = read.text
        if not _same(others, imported) or entry.listing != self.listing():
            return None
        return list(entry.findings)

    def changed(self, texts: Mapping[str, str]) -> dict[str, str] | None:
        """For a run of the same files (given and imported) as the last one: each file
        whose text changed -> its digest then; None when the files are not the same."""
        entry = self.entry()
        if entry is None or entry.listing != self.listing() or not same_data(entry):
            return None
        then = {p: d for p, d, _ in entry.texts}
        if then.keys() != texts.keys():
            return None
        return {p: d for p, d in then.items() if digest(texts[p]) != d}

    def renew(self, sources: Mapping[str, str], imported: Mapping[str, str]) -> None:
        """The entry's findings kept under these texts (`same_facts` found them to say what
        the entry's said)."""
        entry = self.entry()
        if entry is not None:
            self.store(sources, imported, entry.kept, entry.mattering, list(entry.findings),
                       entry.discriminators, [p for p, _ in entry.data])

    def store(self, sources: Mapping[str, str], imported: Mapping[str, str],
              kept: frozenset[str], mattering: frozenset[str], findings: list[Finding],
              discriminators: frozenset[str] = frozenset(), data: Iterable[str] = ()) -> None:
        texts = tuple([(p, digest(t), True) for p, t in sources.items()]
                      + [(p, digest(t), False) for p, t in imported.items()])
        # What a fix would name things with, and the payload it is built from, belong to
        # the run that built the fix: a report answered from here only shows the mark.
        kept_findings = tuple(f.with_(names=None, fix=f.fix and replace(f.fix, payload=None))
                              for f in findings)
        self.cache.put("run", self.key, "", RunEntry(texts, self.listing(), kept, mattering, kept_findings,
                                                   frozenset(discriminators),
                                                   tuple((p, data_state(p)) for p in sorted(data))),
                       run=True)
        self._entry = False


def data_state(path: str) -> str:
    """A data file's digest, a folder's sorted names, or "" when there is neither."""
    try:
        if os.path.isdir(path):
            return "\n".join(sorted(os.listdir(path)))
        with open(path, "rb") as file:
            return blake2b(file.read(), digest_size=20).hexdigest()
    except OSError:
        return ""


def same_data(entry: RunEntry) -> bool:
    return all(data_state(path) == state for path, state in entry.data)


def project_files(config: Config) -> list[tuple[str, Path]]:
    """The project's Python files, (display, absolute): what a lint of its root reads."""
    return [(d, a) for d, a in discover([os.path.relpath(config.root)], config) if a.suffix == ".py"]


def walked_files(paths: list[str], files: list[tuple[str, Path]], config: Config
                 ) -> list[tuple[str, Path]] | None:
    """`project_files(config)`, when the run of `paths` that found `files` walked the
    project from its root; else None."""
    if [os.path.normpath(p) for p in paths] != [os.path.relpath(config.root)]:
        return None
    return [(d, a) for d, a in files if a.suffix == ".py"]


def _listing(names) -> str:
    return digest("\0".join(sorted(names)))


def _same(digests: Mapping[str, str], texts: Mapping[str, str]) -> bool:
    return digests.keys() == texts.keys() and all(digest(texts[p]) == d for p, d in digests.items())
