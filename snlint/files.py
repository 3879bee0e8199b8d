"""Which files a run lints, and reading one of them as Python would.

Discovery follows ruff: named paths are linted as given (a missing one is SN903) unless
`force_exclude` covers them; folders are walked for the same suffixes, skipping hidden
folders, virtual environments, the default and configured excludes and what the
`.gitignore` files ignore (the deepest one that has a say wins, as in git). Reading
decodes as Python decodes source, newlines kept; what is not healthy text is SN902/SN903.
"""

from __future__ import annotations

import io
import os
import re
import stat
import tokenize
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from snlint.config import Config, Glob
from snlint.findings import Finding, Span, diagnostic
from snlint.records import dataclass
from snlint.regular import read_regular
from snlint.probes import EXISTS, LISTING, STATE, note

if TYPE_CHECKING:
    import pathspec

SOURCE_SUFFIXES = (".py", ".pyi")
NOTEBOOK_SUFFIX = ".ipynb"
SUFFIXES = (*SOURCE_SUFFIXES, NOTEBOOK_SUFFIX)

# Folder (and file) names skipped anywhere under a walked folder; `exclude` and
# `extend-exclude` add to these.
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".bzr", ".venv", "venv", "__pycache__", "__pypackages__",
    "build", "dist", "_build", "buck-out", "node_modules", ".tox", ".nox", ".eggs",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints", "site-packages",
)

BINARY_PROBE = 8 * 1024  # a NUL byte in this many leading bytes marks a binary file


# ---------------------------------------------------------------------------- discovery

def discover(paths: list[str], config: Config,
             looked_at: dict[str, tuple[int, object]] | None = None) -> list[tuple[str, Path]]:
    """(display path, absolute path) of every file to lint under `paths` (default `.`),
    sorted by display path, each file once. `looked_at`: what the answer depends on, for
    snlint.engine.replay."""
    walker = _Walker(config, looked_at)
    found: dict[str, tuple[str, Path]] = {}

    def add(display: str, absolute: Path) -> None:
        walker.look(absolute)
        found.setdefault(os.path.realpath(absolute), (display, absolute))

    for arg in paths or ["."]:
        display = display_path(arg)
        absolute = Path(os.path.abspath(arg))
        if config.force_exclude and walker.excluded_with_parents(absolute):
            continue
        if os.path.isdir(absolute):
            for rel, file in walker.walk(absolute):
                add(_join(display, rel), file)
        elif not os.path.lexists(absolute) or absolute.suffix in SUFFIXES or python_script(absolute):
            add(display, absolute)
    return sorted(found.values(), key=lambda item: (item[0].split("/"), item[0]))


# `#!/usr/bin/env python3`, `#!/usr/bin/python -u`: how pre-commit's `types: [python]`
# knows a script without a suffix.
_PYTHON_SHEBANG = re.compile(rb"#![^\n]*\bpython[0-9.]*(?:\s|$)")


def python_script(path: Path) -> bool:
    """A named file without a suffix whose first line runs Python (pre-commit passes such
    scripts to a Python hook); a walk does not look for them (as ruff)."""
    if path.suffix or not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as handle:
            return _PYTHON_SHEBANG.match(handle.readline(256)) is not None
    except OSError:
        return False


def display_path(arg: str) -> str:
    """A command-line path as the display form: `./x.py` -> `x.py`, forward slashes."""
    return os.path.normpath(arg).replace(os.sep, "/")


def _join(display: str, rel: str) -> str:
    return rel if display == "." else f"{display.rstrip('/')}/{rel}"


@dataclass
class _Walker:
    config: Config
    looked_at: dict[str, tuple[int, object]] | None = None
    root: Path = field(init=False)
    globs: list[Glob] = field(init=False)
    _ignores: dict[Path, pathspec.GitIgnoreSpec | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.root = Path(os.path.abspath(self.config.root))
        patterns = [*DEFAULT_EXCLUDE, *self.config.exclude, *self.config.extend_exclude]
        self.globs = [Glob.compile(p) for p in patterns]

    def walk(self, top: Path):
        """(path relative to `top`, absolute path) of the files to lint under `top`."""
        boundary = self._gitignore_boundary(top)
        # os.walk does not follow symlinked folders, so a link loop cannot trap it.
        for folder, dirnames, filenames in os.walk(top):
            base = Path(folder)
            self.look(base, LISTING)
            kept = []
            for name in sorted(dirnames):
                path = base / name
                if name.startswith(".") or self.excluded(path, name) \
                        or self.gitignored(path, boundary, is_dir=True):
                    continue
                # os.path's probes answer False where a path may not be looked at
                # (`/proc/1/fdinfo` in a walk from `/`); pathlib's raise PermissionError.
                if os.path.exists(path / "pyvenv.cfg"):
                    self.look(path / "pyvenv.cfg")
                    continue
                kept.append(name)
            dirnames[:] = kept
            for name in sorted(filenames):
                path = base / name
                if path.suffix not in SUFFIXES or self.excluded(path, name) \
                        or self.gitignored(path, boundary, is_dir=False):
                    continue
                if os.path.islink(path) and not os.path.exists(path):
                    # A link to nothing (into a git submodule that is not checked out) is
                    # no file of the project; named on the command line it is SN903.
                    self.look(path, EXISTS)
                    continue
                yield path.relative_to(top).as_posix(), path

    def look(self, path: Path, kind: int = STATE) -> None:
        note(self.looked_at, str(path), kind)

    # -- exclude globs

    def _relative(self, path: Path) -> str | None:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return None

    def excluded(self, path: Path, name: str) -> bool:
        rel = self._relative(path)
        return any(glob.matches_entry(rel, name) for glob in self.globs)

    def excluded_with_parents(self, path: Path) -> bool:
        """`path` or a folder above it (up to the root) is excluded (force-exclude)."""
        rel = self._relative(path)
        if rel is None:
            return self.excluded(path, path.name)
        parts = [] if rel == "." else rel.split("/")
        return any(self.excluded(self.root.joinpath(*parts[:k]), parts[k - 1])
                   for k in range(1, len(parts) + 1))

    # -- .gitignore

    def _spec(self, folder: Path) -> pathspec.GitIgnoreSpec | None:
        if folder not in self._ignores:
            self.look(folder / ".gitignore")
            try:
                lines = read_regular(folder / ".gitignore").decode("utf-8", "replace")
            except OSError:
                self._ignores[folder] = None
            else:
                self._ignores[folder] = _gitignore_spec(lines.splitlines())
        return self._ignores[folder]

    def _gitignore_boundary(self, top: Path) -> Path:
        """The highest folder whose .gitignore applies under `top`: its git work tree,
        else the root when `top` is under it, else `top`."""
        for folder in (top, *top.parents):
            self.look(folder / ".git", EXISTS)  # a work tree's .git changes at every commit
            if os.path.exists(folder / ".git"):
                return folder
        return self.root if top == self.root or self.root in top.parents else top

    def gitignored(self, path: Path, boundary: Path, *, is_dir: bool) -> bool:
        """Whether the .gitignore files from `boundary` down to `path` ignore it."""
        folders = [f for f in reversed(path.parents) if f == boundary or boundary in f.parents]
        ignored = False
        for folder in folders:
            spec = self._spec(folder)
            if spec is None:
                continue
            rel = path.relative_to(folder).as_posix() + ("/" if is_dir else "")
            verdict = spec.check_file(rel).include
            if verdict is not None:
                ignored = verdict
        return ignored


def _gitignore_spec(lines: list[str]) -> pathspec.GitIgnoreSpec:
    """The spec of a .gitignore, less the lines git would not understand either."""
    import pathspec  # only when a folder has a .gitignore: a given file alone needs none

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # pathspec raises its own errors and re.error for bad lines
        pass
    good = []
    for line in lines:
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except Exception:
            continue
        good.append(line)
    return pathspec.GitIgnoreSpec.from_lines(good)


# ---------------------------------------------------------------------------- reading

@dataclass(frozen=True)
class SourceFile:
    path: str  # display path
    abspath: Path
    text: str  # decoded, newlines as in the file
    encoding: str  # as tokenize.detect_encoding names it ("utf-8-sig" when there is a BOM)
    raw: bytes = field(repr=False)
    newline: str = "\n"  # the first line ending: "\n", "\r\n" or "\r"


def read_source(display: str, abspath: Path, max_size: int) -> SourceFile | Finding:
    """The file decoded as Python decodes it, or an SN902 / SN903 diagnostic."""
    try:
        info = os.stat(abspath)
    except OSError as e:
        return diagnostic("SN903", display, f"cannot read file: {_reason(e)}")
    if stat.S_ISDIR(info.st_mode):
        return diagnostic("SN903", display, "cannot read file: is a directory")
    if not stat.S_ISREG(info.st_mode):
        return diagnostic("SN903", display, "cannot read file: not a regular file")
    if info.st_size > max_size:
        return diagnostic("SN903", display,
                          f"file is {info.st_size} bytes, larger than max-file-size ({max_size})")
    try:
        # Read in pieces: a read of max-file-size bytes would allocate them first.
        raw = read_regular(abspath, max_size)
    except OSError as e:
        return diagnostic("SN903", display, f"cannot read file: {_reason(e)}")
    if len(raw) > max_size:  # it grew since stat
        return diagnostic("SN903", display,
                          f"file grew past max-file-size ({max_size}) while being read")

    nul = raw.find(b"\0", 0, BINARY_PROBE)
    if nul >= 0:
        return diagnostic("SN902", display, "binary file", _span_at(raw, nul, "latin-1"))

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as e:
        return _encoding_problem(display, raw, e)
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as e:
        return _undecodable(display, raw, e, encoding)
    except LookupError:
        return diagnostic("SN902", display,
                          f"cannot decode: {encoding!r} is not a text encoding")
    return SourceFile(display, abspath, text, encoding, raw, detect_newline(text))


def detect_newline(text: str) -> str:
    """The first line ending of `text`; "\\n" when it has none."""
    for i, ch in enumerate(text):
        if ch == "\n":
            return "\n"
        if ch == "\r":
            return "\r\n" if text.startswith("\n", i + 1) else "\r"
    return "\n"


def _reason(e: OSError) -> str:
    return e.strerror or str(e) or type(e).__name__


def _encoding_problem(display: str, raw: bytes, e: SyntaxError) -> Finding:
    """tokenize.detect_encoding refused the first two lines."""
    msg = str(e.msg if e.msg is not None else e)
    if msg.startswith("unknown encoding"):
        name = msg.rpartition(":")[2].strip()
        return diagnostic("SN902", display, f"unknown encoding {name!r} in the coding declaration")
    if msg.startswith("encoding problem"):
        return diagnostic("SN902", display,
                          "the UTF-8 byte order mark contradicts the coding declaration")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return _undecodable(display, raw, err, "utf-8")
    return diagnostic("SN902", display, f"cannot decode: {msg}")


def _undecodable(display: str, raw: bytes, e: UnicodeDecodeError, encoding: str) -> Finding:
    return diagnostic("SN902", display,
                      f"cannot decode as {encoding}: {e.reason} at byte offset {e.start}",
                      _span_at(raw, e.start, encoding))


def _span_at(raw: bytes, offset: int, encoding: str) -> Span:
    """The line and character column of byte `offset` (for pointing at a bad byte)."""
    line_start = max(raw.rfind(b"\n", 0, offset), raw.rfind(b"\r", 0, offset)) + 1
    line = raw.count(b"\n", 0, offset) + 1
    if b"\n" not in raw[:offset]:
        line = raw.count(b"\r", 0, offset) + 1
    try:
        column = len(raw[line_start:offset].decode(encoding, errors="replace")) + 1
    except LookupError:
        column = offset - line_start + 1
    return Span(line, column, line, column + 1)


# ---------------------------------------------------------------------------- writing and lines

def write_atomic(path: Path, data: bytes) -> None:
    """Replace the file at `path` (a symlink's target) with `data`, atomically, flushed to
    disk and with the file's mode; a read-only file is refused (`writable_mode`)."""
    target = Path(os.path.realpath(path))
    replace_file(target, data, mode=writable_mode(target), durable=True)


def writable_mode(target: Path) -> int:
    """The permission bits of `target`, or PermissionError when it is read-only (no write
    bit, even for root, or none this user has): a rename over it would defeat them."""
    mode = stat.S_IMODE(os.stat(target).st_mode)
    if not mode & 0o222 or not os.access(target, os.W_OK):
        import errno

        raise PermissionError(errno.EACCES, "permission denied (the file is read-only)", str(target))
    return mode


def replace_file(target: Path, data: bytes, mode: int | None = None, durable: bool = False) -> None:
    """`target` replaced with `data` at once (a temporary file renamed over it); `durable`
    flushes to disk first."""
    tmp = written_beside(target, data, durable)
    try:
        put_in_place(tmp, target, mode)
    except BaseException:
        discard_file(tmp)
        raise


# The process a temporary file belongs to (a forked worker writes in its parent's name),
# in its name, so that a later run knows a killed run's file (`sweep_temporaries`).
OWNER = os.getpid()
TEMPORARY_SUFFIX = ".snlint"
# mkstemp's eight random characters; an owner's pid before them (none in older names).
_TEMPORARY_TAIL = re.compile(r"(?:(\d+)\.)?[a-z0-9_]{8}" + re.escape(TEMPORARY_SUFFIX) + r"\Z")


def written_beside(target: Path, data: bytes, durable: bool = True) -> str:
    """A temporary file `.NAME.OWNER.XXXXXXXX.snlint` beside `target` holding `data`."""
    import tempfile  # only --fix writes: not on a lint's start-up

    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.{OWNER}.",
                               suffix=TEMPORARY_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
    except BaseException:
        discard_file(tmp)
        raise
    return tmp


def put_in_place(tmp: str, target: Path, mode: int | None = None) -> None:
    """The file `written_beside` made renamed over `target` (its mode set first)."""
    if mode is not None:
        os.chmod(tmp, mode)
    os.replace(tmp, target)


def sweep_temporaries(targets: list[Path], *, own: bool = False, before_ns: int | None = None) -> int:
    """Remove the temporary files a --fix left beside `targets`; how many. `own`: this
    process's; else those of a process that is gone, last changed before `before_ns`."""
    by_folder: dict[Path, set[str]] = {}
    for target in targets:
        by_folder.setdefault(target.parent, set()).add(target.name)
    removed = 0
    for folder, names in by_folder.items():
        try:
            entries = [e for e in os.scandir(folder)
                       if e.name.startswith(".") and e.name.endswith(TEMPORARY_SUFFIX)]
        except OSError:
            continue
        for entry in entries:
            if _sweepable(entry, names, own, before_ns):
                try:
                    os.unlink(entry.path)
                    removed += 1
                except OSError:
                    pass
    return removed


def _sweepable(entry: os.DirEntry, names: set[str], own: bool, before_ns: int | None) -> bool:
    for name in names:
        head = f".{name}."
        if not entry.name.startswith(head):
            continue
        match = _TEMPORARY_TAIL.match(entry.name, len(head))
        if match is None:
            continue
        owner = int(match.group(1)) if match.group(1) else None
        try:
            if not entry.is_file(follow_symlinks=False):
                return False
            changed = entry.stat(follow_symlinks=False).st_mtime_ns
        except OSError:
            return False
        if own:
            return owner == OWNER
        return owner != OWNER and not _alive(owner) and (before_ns is None or changed < before_ns)
    return False


def _alive(pid: int | None) -> bool:
    """Whether process `pid` exists (None: a name from before owners were written)."""
    if pid is None or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process: alive
    return True


def discard_file(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
