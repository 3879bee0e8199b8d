"""The per-file cache: each file's source facts, kept between runs in `.snlint_cache/`.

An entry is found by (display path, root-relative path) and used only when it holds the
same text digest; its folder is named by a salt over snlint's version and code, the rule
pages, libcst's and Python's versions, so an upgrade starts afresh. The folder holds a
`.gitignore` of `*` and a CACHEDIR.TAG, as ruff's does. Entries are written to a temporary
file and renamed (two runs may share the folder); one that cannot be read counts as absent.
They are pickles read by an unpickler that builds only snlint's facts and findings, so a
planted entry cannot run code.
"""

from __future__ import annotations

import io
import os
import pickle
import sys
import time
from functools import lru_cache
from pathlib import Path

from snlint.engine.pruning import keep_newest
from snlint.files import replace_file
from snlint.regular import read_regular

try:  # hashlib's own blake2b, without the OpenSSL bindings hashlib loads (3 ms of every start)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

FORMAT = 1  # of an entry; part of the salt
PRUNE_AFTER = 7 * 24 * 3600  # seconds a salt's folder is kept unused
MAX_RUNS = 256  # run entries kept (snlint.engine.run_cache), the least recently used go first
DEFAULT_DIR = ".snlint_cache"
GITIGNORE = "# Created by snlint: this folder is a cache.\n*\n"
CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by snlint.\n"
                "# For information about cache directory tags see https://bford.info/cachedir/\n")

# What an entry may contain: the facts, findings and the per-file stage's result, and the
# builtins they are made of. Anything else in a pickle makes the entry unreadable.
_ALLOWED_MODULES = frozenset({"snlint.facts", "snlint.findings", "snlint.engine.per_file",
                              "snlint.engine.run_cache", "snlint.checks.fix_data"})
_ALLOWED_BUILTINS = frozenset({"frozenset", "set", "complex", "slice", "range"})


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if module in _ALLOWED_MODULES or (module == "builtins" and name in _ALLOWED_BUILTINS):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not a cached fact")


def digest(text: str) -> str:
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


@lru_cache(maxsize=1)
def salt() -> str:
    """What every entry depends on besides its file: snlint's version and code (each
    file's size and modification time), the rule pages, libcst's version and Python's."""
    import snlint
    from snlint.catalogue import pages_dir

    libcst_version = _libcst_stamp()
    parts = [f"format={FORMAT}", f"snlint={snlint.__version__}", f"libcst={libcst_version}",
             f"python={sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}"]
    package = Path(__file__).resolve().parent.parent  # all of snlint, not only engine/
    try:
        pages = pages_dir()
    except Exception:  # noqa: BLE001 - no catalogue: the other parts still key the cache
        pages = None
    for folder, pattern in ((package, "*.py"), (pages, "*.md")):
        if folder is None:
            continue
        for path in sorted(folder.rglob(pattern)):
            try:
                info = path.stat()
            except OSError:
                continue
            parts.append(f"{path.relative_to(folder).as_posix()}:{info.st_size}:{info.st_mtime_ns}")
    return blake2b("\n".join(parts).encode(), digest_size=16).hexdigest()


def _libcst_stamp() -> str:
    """Which libcst is installed, without importing it: its version file's path, size and
    modification time, which an upgrade or a reinstall changes."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("libcst")
        version = Path(spec.origin).parent / "_version.py"  # type: ignore[union-attr, arg-type]
        info = version.stat()
        return f"{version}:{info.st_size}:{info.st_mtime_ns}"
    except (ImportError, AttributeError, TypeError, OSError, ValueError):
        return "unknown"


class Cache:
    """The entries of one cache folder (`directory`), under one salt."""

    def __init__(self, directory: Path, salt_value: str | None = None) -> None:
        self.directory = Path(directory)
        self.salt = salt_value if salt_value is not None else salt()
        self.entries = self.directory / f"facts-{self.salt}"
        self._ready = False
        self._touched = False
        self.writes = 0

    @staticmethod
    def for_root(root: Path, cache_dir: str | os.PathLike | None = None) -> "Cache":
        directory = Path(cache_dir) if cache_dir else Path(DEFAULT_DIR)
        return Cache(directory if directory.is_absolute() else Path(root) / directory)

    def _name(self, path: str, relpath: str, run: bool = False) -> Path:
        key = blake2b(f"{path}\0{relpath}".encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        return self.entries / "runs" / key if run else self.entries / key[:2] / key[2:]

    def get(self, path: str, relpath: str, text_digest: str, *, run: bool = False):
        """The value stored for this file with this text, or None. `run`: an entry of
        snlint.engine.run_cache (`path` and `relpath` name the run)."""
        if not self._touched:
            # A salt's folder is as recent as the last run that used it (see _prune).
            self._touched = True
            try:
                os.utime(self.entries)
            except OSError:
                pass
        name = self._name(path, relpath, run)
        try:
            data = read_regular(name)
            if run:
                os.utime(name)  # recently used: the last to be pruned
            stored = _Unpickler(io.BytesIO(data)).load()
        except Exception:  # noqa: BLE001 - absent, partial, corrupt, foreign: a miss
            return None
        if not (isinstance(stored, tuple) and len(stored) == 4
                and stored[:3] == (path, relpath, text_digest)):
            return None
        return stored[3]

    def put(self, path: str, relpath: str, text_digest: str, value, *, run: bool = False) -> None:
        """Store `value`; a cache that cannot be written (read-only checkout, full disk) is
        only slower, never an error."""
        try:
            data = pickle.dumps((path, relpath, text_digest, value), protocol=pickle.HIGHEST_PROTOCOL)
            target = self._name(path, relpath, run)
            self._prepare(target.parent)
            replace_file(target, data)
            if run:
                # A file's entry is replaced when its text changes, but each set of files a
                # hook passes is a run of its own.
                keep_newest(target.parent, MAX_RUNS)
        except Exception:  # noqa: BLE001
            return
        self.writes += 1

    def _prepare(self, folder: Path) -> None:
        if not self._ready:
            self.directory.mkdir(parents=True, exist_ok=True)
            # Written once, before any entry: a folder without them is not one of ours yet.
            for name, content in ((".gitignore", GITIGNORE), ("CACHEDIR.TAG", CACHEDIR_TAG)):
                marker = self.directory / name
                if not marker.exists():
                    replace_file(marker, content.encode("utf-8"))
            self._prune()
            self._ready = True
        folder.mkdir(parents=True, exist_ok=True)

    def _prune(self) -> None:
        """Remove the folders of other salts no run has used for PRUNE_AFTER seconds (two
        versions in use side by side keep both)."""
        cutoff = time.time() - PRUNE_AFTER
        for other in self.directory.glob("facts-*"):
            try:
                if other != self.entries and other.stat().st_mtime < cutoff:
                    import shutil

                    shutil.rmtree(other, ignore_errors=True)
            except OSError:
                continue
