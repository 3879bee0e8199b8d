"""The per-file stage: each file read into its facts, on its own, before the link step,
through a prefilter, the cache and workers (docs/architecture.md, "The per-file stage").
"""

from __future__ import annotations

import functools
import gc
import os
import posixpath
import re
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Mapping

from snlint.config import Config
from snlint.engine.cache import Cache, digest
from snlint.engine.workers import shared_map
from snlint.facts import FileFacts
from snlint.findings import Finding, diagnostic
from snlint.records import dataclass
from snlint.source import ast_modules, extract_python2, extract_with_notes, module_name

# A file matters when its text says any of these: torch and `nn`, spectral normalization,
# what training code calls a discriminator (snlint.link.events.D_NAME), declared options
# and registries. Broad on purpose: a file kept in vain costs one parse, a file skipped in
# error costs findings.
MATTERS = re.compile(
    r"(?i:torch|\bnn\b|spectral|\bsn|sn_|_sn\b|disc|critic|net_?d\b|d_?net|model_?d\b|d_model"
    r"|add_argument|set_defaults|regist)|SN|\bD_|\b[Dd]\b")
SCAN_WEIGHT = 8  # a scan (CPython's parser) costs a fraction of a lowering


@dataclass(frozen=True)
class Extracted:
    """What the per-file stage learnt of one file."""

    facts: FileFacts | None  # None: not lowered (prefiltered, or it failed)
    finding: Finding | None = None  # SN901 when it does not parse; SN904 when read in part; SN999 on a bug
    modules: frozenset[str] | None = None  # what it imports (`Scopes.modules`), when known
    lowered: bool = True  # False: only scanned by the prefilter


def internal(path: str, error: BaseException, stage: str = "") -> Finding:
    """SN999 for a bug met on one file (or in one stage): where it happened, in one line."""
    import traceback

    where = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    at = f" at {Path(where.filename).name}:{where.lineno}" if where else ""
    during = f" in the {stage} checks" if stage else ""
    return diagnostic("SN999", path, f"internal error{during}: {type(error).__name__}: {error}{at}")


def matters(text: str) -> bool:
    return MATTERS.search(text) is not None


def _lower(path: str, text: str, relpath: str) -> Extracted:
    try:
        result, modules, notes = extract_with_notes(text, path, relpath)
    except Exception as e:  # noqa: BLE001 - one file's bug must not end the run
        return Extracted(None, internal(path, e))
    frozen = frozenset(modules) if modules is not None else None
    if not isinstance(result, Finding):
        return Extracted(result, notes[0] if notes else None, frozen)
    if result.code == "SN901":
        # A Python 2 file keeps its SN901, and is read as Python 2 for the rest.
        try:
            read = extract_python2(text, path, relpath)
        except Exception:  # noqa: BLE001 - the SN901 stands alone
            read = None
        if read is not None:
            message = f"{result.message} (read as Python 2 for its other findings; not fixed)"
            return Extracted(read[0], result.with_(message=message), frozenset(read[1]))
    return Extracted(None, result, frozen)


def _scan(path: str, text: str, relpath: str) -> Extracted:
    """A file that does not seem to matter: its imports, by CPython's parser; lowered
    after all when CPython finds it broken (for its SN901)."""
    module, is_package = module_name(relpath)
    modules = ast_modules(text, module, is_package)
    if modules is None:
        return _lower(path, text, relpath)
    return Extracted(None, None, frozenset(modules), lowered=False)


def _work(items: list[tuple[str, str, str, bool]]) -> list[Extracted]:
    return [_lower(p, t, r) if full else _scan(p, t, r) for p, t, r, full in items]


def _weight(item: tuple[str, str, str, bool]) -> int:
    return len(item[1]) if item[3] else len(item[1]) // SCAN_WEIGHT


@contextmanager
def _no_gc() -> Iterator[None]:
    """The cyclic collector off while trees and facts are built: nothing here makes
    cycles, and each collection would rescan every file's facts. Then what was made is
    moved to the oldest generation (`freeze`, `unfreeze`), so that the next collections
    do not scan it again (unless something else froze objects: not ours to release)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if not gc.get_freeze_count():
            gc.freeze()
            gc.unfreeze()
        if enabled:
            gc.enable()


def default_jobs() -> int:
    """One job per core this process may use (not fewer for a high load average, which
    trails by a minute and counts this command's own last run)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def jobs_for(config: Config) -> int:
    """The processes a stage of this run may use: `--jobs`, else one per core."""
    return config.jobs or default_jobs()


class PerFile:
    """Facts of files, each computed once (memo), read from the cache when unchanged.
    `stats` counts for tests: `lowered`, `scanned` (prefilter only), `cached`, `skipped`
    (not lowered in the end), `parallel_rounds`, `worker_failures` (chunks redone here)."""

    def __init__(self, config: Config, *, cache: Cache | None = None, prefilter: bool = True) -> None:
        self.config = config
        self.cache = cache
        self.prefilter = prefilter
        self.stats: Counter = Counter()
        self._memo: dict[tuple[str, str], Extracted] = {}
        self._matter: dict[tuple[str, str], bool] = {}
        # Files named in `discriminators` are read whatever they say.
        self._wanted = {posixpath.normpath(ref.rsplit(":", 1)[0].replace("\\", "/"))
                        for ref in (*config.discriminators, *config.not_discriminators)}

    @classmethod
    def for_run(cls, config: Config) -> "PerFile":
        """The stage of a run on files on disk: the cache as configured."""
        return cls(config, cache=Cache.for_root(config.root, config.cache_dir) if config.cache else None)

    def modules(self, texts: Mapping[str, str]) -> dict[str, frozenset[str] | None]:
        """Display path -> the modules each file imports (None when not known)."""
        with _no_gc():
            self._first_round(texts)
        return {path: self._memo[(path, text)].modules for path, text in texts.items()}

    def results(self, texts: Mapping[str, str], *,
                meanwhile: Callable[[], None] | None = None) -> dict[str, Extracted]:
        """Display path -> what the stage made of it, for a whole project at once (the
        prefilter's connections are between these files), in order. `meanwhile`: done
        once, while the workers lower files (`shared_map`), else before returning."""
        once = functools.cache(meanwhile or (lambda: None))  # done at most once
        with _no_gc():
            self._first_round(texts, once)
            kept = set(texts)
            if self.prefilter:
                kept = {p for p, t in texts.items() if self._matters(p, t)} | self._connected(texts)
                self._run([(p, t, True) for p, t in texts.items()
                           if p in kept and not self._memo[(p, t)].lowered])
        once()
        out = {}
        for path, text in texts.items():
            found = self._memo[(path, text)]
            if path not in kept:
                # Only what a run that never lowered it would know (a cache entry may hold
                # the facts of a run where an import connected it).
                self.stats["skipped"] += 1
                found = Extracted(None, found.finding, found.modules, lowered=False)
            out[path] = found
        return out

    def alone(self, texts: Mapping[str, str], lowered: set[str]) -> dict[str, Extracted]:
        """Each file as the stage makes it alone: lowered when in `lowered`, else only
        scanned (a run comparing a few changed files with what it made of them before)."""
        with _no_gc():
            self._run([(p, t, p in lowered) for p, t in texts.items()
                       if (p, t) not in self._memo or (p in lowered and not self._memo[(p, t)].lowered)])
        return {path: self._memo[(path, text)] for path, text in texts.items()}

    def matters(self, path: str, text: str) -> bool:
        """Whether the prefilter reads this file for what it says (not only for whom it
        imports or is imported by)."""
        return not self.prefilter or self._matters(path, text)

    def _first_round(self, texts: Mapping[str, str], meanwhile: Callable[[], None] | None = None) -> None:
        todo = [(p, t) for p, t in texts.items() if (p, t) not in self._memo]
        if not todo:
            return
        self._run([(p, t, self.matters(p, t)) for p, t in todo], meanwhile)

    def _matters(self, path: str, text: str) -> bool:
        key = (path, text)
        found = self._matter.get(key)
        if found is None:
            found = self._matter[key] = matters(text) or self.config.relative_path(path) in self._wanted
        return found

    def _connected(self, texts: Mapping[str, str]) -> set[str]:
        """The files that do not seem to matter but imports connect, either way, to one
        that does (transitively). A module is matched by its last name (`import layers`
        from a script folder) and its package's: more than Python would import, never less."""
        leaves: dict[str, set[str]] = {}
        words: dict[str, set[str]] = {}
        mattering: set[str] = set()
        light: list[str] = []
        for path, text in texts.items():
            found = self._memo[(path, text)]
            module, _ = module_name(self.config.relative_path(path))
            parts = module.split(".") if module else []
            leaves[path] = set(parts[-2:])  # the module's name and its package's
            words[path] = {w for m in (found.modules or ()) for w in m.split(".") if w != "*"}
            if self._matters(path, text):
                mattering.add(path)
            else:
                light.append(path)
        imported = set().union(*(words[p] for p in mattering)) if mattering else set()
        names = {parts for p in mattering for parts in leaves[p]}
        kept: set[str] = set()
        changed = True
        while changed:
            changed = False
            for path in light:
                if path in kept:
                    continue
                if leaves[path] & imported or words[path] & names:
                    kept.add(path)
                    imported |= words[path]
                    names |= leaves[path]
                    changed = True
        return kept

    def _run(self, files: list[tuple[str, str, bool]], meanwhile: Callable[[], None] | None = None) -> None:
        """Extract `files` (path, text, whether to lower it or only scan it) into the memo:
        from the cache where it has them, the rest computed."""
        todo: list[tuple[str, str, str, str | None, bool]] = []
        for path, text, full in files:
            relpath = self.config.relative_path(path)
            key = digest(text) if self.cache is not None else None
            if self.cache is not None:
                stored = self.cache.get(path, relpath, key)
                if isinstance(stored, Extracted) and (stored.lowered or not full):
                    self._memo[(path, text)] = stored
                    self.stats["cached"] += 1
                    continue
            todo.append((path, text, relpath, key, full))
        if not todo:
            return
        results, failed = shared_map(_work, [(p, t, r, full) for p, t, r, _, full in todo],
                                     jobs_for(self.config), _weight, meanwhile=meanwhile)
        if failed is not None:
            self.stats["parallel_rounds"] += 1
            self.stats["worker_failures"] += failed
        for (path, text, relpath, key, _), found in zip(todo, results):
            self._memo[(path, text)] = found
            self.stats["lowered" if found.lowered else "scanned"] += 1
            # A failure of snlint itself is not a fact of the file: computed again next time.
            if self.cache is not None and not (found.finding is not None
                                               and found.finding.code == "SN999"):
                self.cache.put(path, relpath, key, found)
