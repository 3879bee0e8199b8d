"""The last run's report, given again when nothing it read has changed: checked with
`os.stat` alone, before click, the configuration or any file's text is read.

A record holds its key (command line, working folder, Python, the environment a report
depends on, whether its streams are terminals), its output and exit code, and the probes:
the state of everything the run read or looked for (each file linted, each folder walked,
each .gitignore, every place it looked for a pyproject.toml, a .git or a pyvenv.cfg, and
snlint's own files). Recorded only (`Recorder.save`) are runs that walked the project from
its root with the cache on, without the graph pass, fixes or standard input, and during
which nothing they read changed or had changed within `RACY_NS` before (a file system's
clock is coarse: git's "racy clean" problem).

Imports only the standard library's smallest parts: its whole purpose is what it does not
import.
"""

from __future__ import annotations

import marshal
import os
import sys
import zlib

from snlint.engine.pruning import keep_newest
from snlint.probes import EXISTS, LISTING, OWN, STATE, note, state
from snlint.regular import read_regular

TYPE_CHECKING = False  # typing's own import costs more than all of a replay's work
if TYPE_CHECKING:
    from collections.abc import Callable

FORMAT = 2
RACY_NS = 2_000_000_000
MAX_RECORDS = 256  # the least recently written go first
FOLDER = "replay"
CACHE_DIR = ".snlint_cache"  # snlint.engine.cache.DEFAULT_DIR, without importing it
ENV_CACHE_DIR = "SNLINT_CACHE_DIR"
# What of the environment a report depends on: colour, encodings, snlint's own settings.
_ENV_NAMES = ("NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TERM", "LANG")
_ENV_PREFIXES = ("SNLINT_", "PYTHON", "LC_")

def key(argv: list[str]) -> tuple:
    """What must be the same for a record to answer a run, besides its probes."""
    env = tuple(sorted((k, v) for k, v in os.environ.items()
                       if k in _ENV_NAMES or k.startswith(_ENV_PREFIXES)))
    streams = tuple((_isatty(s), getattr(s, "encoding", None), getattr(s, "errors", None))
                    for s in (sys.stdout, sys.stderr))
    return (FORMAT, os.getcwd(), tuple(argv), env, streams, sys.version, sys.executable,
            tuple(sys.path), sys.platform)


def _isatty(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # closed
        return False


def _name(run_key: tuple) -> str:
    return f"{zlib.crc32(repr(run_key).encode('utf-8', 'surrogatepass')):08x}"


def cache_dirs(cwd: str) -> list[str]:
    """Where a record of a run started in `cwd` may be: the cache folder the environment
    names, else `.snlint_cache` in the working folder or a folder above it (a project's
    root is at or above where snlint runs, when it runs on `.`)."""
    named = os.environ.get(ENV_CACHE_DIR)
    if named:
        return [os.path.abspath(named)]
    out, folder = [], cwd
    while True:
        out.append(os.path.join(folder, CACHE_DIR))
        parent = os.path.dirname(folder)
        if parent == folder:
            return out
        folder = parent


def replay(argv: list[str]) -> tuple[str, int, str] | None:
    """The recorded standard output, exit code and notes on standard error of this run,
    when a record of the same key holds (every probe as recorded)."""
    run_key = key(argv)
    name = _name(run_key)
    for folder in cache_dirs(run_key[1]):
        try:
            record = marshal.loads(read_regular(os.path.join(folder, FOLDER, name)))
        except (OSError, EOFError, ValueError, TypeError):
            continue  # absent, partial, corrupt or of another Python: not an answer
        if not (isinstance(record, tuple) and len(record) == 5 and record[0] == run_key):
            continue
        _, probes, output, code, notes = record
        if not _well_formed(probes, output, code):
            return None  # written by something else, or damaged: a miss, as corrupt bytes are
        if all(state(path, kind) == then for path, kind, then in probes):
            return output, code, notes
        return None
    return None


def _well_formed(probes, output, code) -> bool:
    """Whether a record's parts are what `Recorder.save` writes (marshal gives back any of
    its types)."""
    return (isinstance(output, str) and type(code) is int and code in (0, 1)
            and isinstance(probes, tuple)
            and all(type(p) is tuple and len(p) == 3 and type(p[0]) is str
                    and p[1] in (STATE, EXISTS, LISTING, OWN) for p in probes))


class Recorder:
    """What a run that may be replayed writes on standard output, the notes it writes on
    standard error (a terminal's: the key tells), and its record."""

    def __init__(self, argv: list[str], started_ns: int) -> None:
        self.started_ns = started_ns
        self.key = key(argv)
        self.output: list[str] = []
        self.notes: list[str] = []
        self.spoiled = False  # wrote something a replay could not give again

    def wrote(self, text: str) -> None:
        self.output.append(text)

    def noted(self, text: str) -> None:
        self.notes.append(text)

    def save(self, cache_dir: str, looked_at: dict[str, tuple[int, object]], code: int,
             write: Callable[[str, bytes], None]) -> bool:
        """Keep the record in `cache_dir` with `write` (an atomic replace); False when the
        run cannot be replayed (a record there would not be found, something changed
        since the run looked at it, or a stat is racy)."""
        cache_dir = os.path.abspath(cache_dir)
        if self.spoiled or code not in (0, 1) or cache_dir not in cache_dirs(self.key[1]) \
                or not os.path.isdir(cache_dir):
            return False
        probes = []
        for path in sorted(looked_at):
            kind, seen = looked_at[path]
            now = state(path, kind)
            if now != seen:
                return False  # changed while the run read it
            if kind == STATE and now is not None and now[4] >= self.started_ns - RACY_NS:  # type: ignore[index]
                return False  # changed too recently to trust that its stat would show the next change
            probes.append((path, kind, now))
        folder = os.path.join(cache_dir, FOLDER)
        data = marshal.dumps((self.key, tuple(probes), "".join(self.output), code, "".join(self.notes)))
        try:
            os.makedirs(folder, exist_ok=True)
            write(os.path.join(folder, _name(self.key)), data)
            keep_newest(folder, MAX_RECORDS)
        except OSError:
            return False  # a cache that cannot be written is only slower
        return True


def own_files(looked_at: dict[str, tuple[int, object]]) -> None:
    """Note snlint's own files (its code and rule pages): an edited checkout or a
    reinstall of the same version answers afresh."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # all of snlint
    for top in (package, os.path.join(os.path.dirname(package), "rules")):
        for folder, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            note(looked_at, folder, LISTING)
            for name in filenames:
                if name.endswith((".py", ".md")):
                    note(looked_at, os.path.join(folder, name), OWN)
