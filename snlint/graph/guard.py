"""The worker's second line of defence: an audit hook that refuses what importing and
building project code never needs (child process only). What it refuses is listed for
users in docs/graph-pass.md ("What the worker refuses").

Every refusal raises `Refused` (a PermissionError, so libraries that fall back on an
unwritable folder still do) and is recorded for SN910 (`take()`), except what an installed
package or the standard library does while it is being imported with no project frame
nearer (matplotlib creating its config folder): refused the same, but not the project's
doing. In the cache folder the worker may delete and rename what it created there itself,
so a library's cache is never left with a stale lock. Not a sandbox: native code and
ctypes are not seen."""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# Events refused outright (process starts, signals, network).
_REFUSED = frozenset({
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
    "os.forkpty", "os.kill", "os.killpg", "pty.spawn", "os.startfile",
    "socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg", "socket.getaddrinfo",
    "socket.gethostbyname", "socket.gethostbyaddr", "urllib.Request", "ftplib.connect",
    "smtplib.connect", "telnetlib.Telnet.open", "webbrowser.open",
})
# Events that change the file at their first argument: refused outside the writable places.
_WRITES = frozenset({
    "os.mkdir", "os.truncate", "os.chmod", "os.chown", "os.utime", "os.link", "os.symlink",
    "os.setxattr", "os.removexattr", "shutil.copyfile", "shutil.copymode", "shutil.copystat",
    "shutil.copytree", "shutil.make_archive", "shutil.unpack_archive",
})
# Events that delete or move: refused outside the scratch folder.
_DELETES = frozenset({"os.remove", "os.rmdir", "shutil.rmtree", "os.rename"})
_SECOND_IS_WRITTEN = frozenset({"os.link", "os.symlink", "shutil.copyfile", "shutil.copytree",
                                "shutil.unpack_archive"})
_WATCHED = _REFUSED | _WRITES | _DELETES | {"open", "sqlite3.connect"}
_SNLINT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class Refused(PermissionError):
    """What the graph pass's worker does not let project code do."""


class _State:
    active = False
    scratch = ""
    cache = ""
    projects: tuple[str, ...] = ()
    refused: list[str] = []
    created: set[str] = set()  # what the worker created in the cache folder
    project_file: Callable[[str], bool] | None = None


def _real(path: Any, dir_fd: Any = None) -> str | None:
    if isinstance(path, int):
        return None  # an open file descriptor: opened before, or refused then
    try:
        path = os.fsdecode(path)
        if isinstance(dir_fd, int) and not os.path.isabs(path):
            path = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), path)
        return os.path.realpath(path)
    except (TypeError, ValueError, OSError):
        return "?"  # unknown: not a writable place


def _under(path: str, folder: str) -> bool:
    return bool(folder) and (path == folder or path.startswith(folder.rstrip(os.sep) + os.sep))


def _writable(path: str | None, *, delete: bool = False) -> bool:
    if path is None:
        return True
    if _under(path, _State.scratch):
        return True
    if any(_under(path, p) for p in _State.projects):
        return False
    if delete:
        return path in _State.created
    return _under(path, _State.cache) or path == os.devnull


def _creating(path: str | None) -> None:
    """Remember a file or folder the worker is about to create in the cache folder."""
    if path is not None and path not in _State.created and _under(path, _State.cache) \
            and not os.path.lexists(path):
        _State.created.add(path)


def _package_import() -> bool:
    """Whether the event comes from an installed package's (or the standard library's)
    module code running at its import, with no project frame nearer to the event."""
    if _State.project_file is None:
        return False
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back  # the hook's own frames
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(_SNLINT):
            return False  # the worker's own code (the loader, the probe) called it
        if not name.startswith("<"):  # `<frozen importlib._bootstrap>`: the import machinery
            if _State.project_file(name):
                return False
            if frame.f_code.co_name == "<module>":
                return True
        frame = frame.f_back
    return False


def _shown(event: str, args: tuple) -> str:
    name = {"os.exec": "os.execv", "os.spawn": "os.spawnv"}.get(event, event)
    if event == "open":
        mode = args[1] if args[1] is not None else f"flags={args[2]:#o}"
        path = args[0] if isinstance(args[0], int) else os.fsdecode(args[0])
        return f"open({path!r}, {mode!r})"
    if event == "subprocess.Popen":
        shown = args[1] if isinstance(args[1], (str, bytes)) else list(args[1] or ())
        return f"subprocess.Popen({shown!r})"
    if event in ("socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg"):
        return f"{event}({args[1]!r})" if len(args) > 1 else f"{event}()"
    count = 2 if event in ("os.rename", "os.link", "os.symlink", "shutil.copyfile",
                           "shutil.copytree") else 1
    shown = [repr(os.fsdecode(a)) if isinstance(a, (bytes, os.PathLike)) else repr(a)
             for a in args[:count] if a is not None and not isinstance(a, dict)]
    return f"{name}({', '.join(shown)})"


def _refuse(event: str, args: tuple) -> None:
    what = _shown(event, args)
    if len(_State.refused) < 50 and not _package_import():
        _State.refused.append(what)
    raise Refused(f"snlint graph pass refused: {what}")


def _hook(event: str, args: tuple) -> None:
    if event not in _WATCHED or not _State.active:
        return
    if event in _REFUSED:
        _refuse(event, args)
    elif event == "open":
        path, mode, flags = args
        writes = (any(c in mode for c in "wax+") if isinstance(mode, str)
                  else bool((flags or 0) & _WRITE_FLAGS))
        if writes:
            real = _real(path)
            if not _writable(real):
                _refuse(event, args)
            _creating(real)
    elif event == "sqlite3.connect":
        if args and args[0] not in (":memory:", b":memory:", ""):
            _refuse(event, args)
    elif event == "os.rename":
        # Moving what may be deleted to where may be written: the last step of an atomic
        # write into the cache, whose new name is then the worker's own.
        source, target = _real(args[0], args[2]), _real(args[1], args[3])
        if not (_writable(source, delete=True) and _writable(target) and target != os.devnull):
            _refuse(event, args)
        _creating(target)
    elif event in _DELETES:
        if not _writable(_real(args[0], args[1] if len(args) > 1 else None), delete=True):
            _refuse(event, args)
    elif event in _WRITES:
        if event == "os.mkdir":
            path = _real(args[0], args[2] if len(args) > 2 else None)
        else:
            path = _real(args[1] if event in _SECOND_IS_WRITTEN else args[0])
        if not _writable(path):
            _refuse(event, args)
        if event == "os.mkdir":
            _creating(path)


def install(scratch: str, project_file: Callable[[str], bool] | None = None) -> None:
    """Refuse from now on (an audit hook stays for the process's life). `scratch` is the
    worker's own folder, where anything goes. `project_file(filename)` tells a frame of
    the project's code from one of an installed package or the standard library (without
    it, every refusal is reported)."""
    _State.scratch = os.path.realpath(scratch)
    _State.project_file = project_file
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    _State.cache = os.path.realpath(cache)
    _State.active = True
    sys.addaudithook(_hook)


def set_projects(folders: list[str]) -> None:
    """The folders of the project being built: never written, even where the cache is."""
    _State.projects = tuple(sorted({os.path.realpath(f) for f in folders if f}))


def pause() -> None:
    """The worker's own clean-up, after the last target."""
    _State.active = False


def take() -> list[str]:
    """What was refused since the last call."""
    refused, _State.refused = _State.refused, []
    return list(dict.fromkeys(refused))
