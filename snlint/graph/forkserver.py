"""Graph workers forked from one process that has imported torch: a worker starts in
milliseconds instead of the second or more `import torch` costs. A second lane, a worker
started again after a hang, and every graph pass of a long-lived process (an editor, a
test run) pay for torch's import once.

The server (`python -m snlint.graph.forkserver`) imports what a worker imports before
any project code, then waits on a socket. For each worker the parent sends its pipes
(SCM_RIGHTS), environment and folder; the server forks, and the child becomes exactly the
worker `python -m snlint.graph.worker` would have been: its own session, folder,
environment, standard streams and lifeline. The server reports each child's pid and, once
reaped, its exit code (`Forked` answers as `subprocess.Popen` does). The server ends with
its parent (a lifeline pipe) and never runs project code.

Linux only (SOCK_SEQPACKET, fork after torch's import, which starts no thread); elsewhere,
or when the server cannot start, workers are started as before.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

SOCKET_ENV = "SNLINT_FORKSERVER_FD"
# A server serves every worker whose environment differs from its own only in these:
# each worker's own, and pytest's name of the running test (which changes per test and
# means nothing to an import). Each worker gets its whole environment either way.
_PER_WORKER = ("TMPDIR", "TEMP", "TMP", "SNLINT_LIFELINE_FD", "SNLINT_PDEATHSIG",
               "PYTEST_CURRENT_TEST")


def supported() -> bool:
    return sys.platform.startswith("linux") and hasattr(socket, "send_fds")


class Forked:
    """A worker the server forked, seen as `subprocess.Popen` sees its child."""

    def __init__(self, server: "Server", stdin: int, stdout: int, stderr: int) -> None:
        self.server = server
        self.stdin = os.fdopen(stdin, "wb")
        self.stdout = os.fdopen(stdout, "rb")
        self.stderr = os.fdopen(stderr, "rb")
        self.pid = 0
        self.returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            deadline = None if timeout is None else time.monotonic() + timeout
            code = self.server.exit_code(self.pid, deadline)
            if code is None:
                raise subprocess.TimeoutExpired("snlint.graph.worker", timeout or 0.0)
            self.returncode = code
            self.server.ended(self.pid)
        return self.returncode


class Server:
    """The parent's side of one server process."""

    def __init__(self, env: dict[str, str], scratch: str) -> None:
        self.env = env
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        lifeline_read, self.lifeline = os.pipe()
        child_env = dict(env, **{SOCKET_ENV: str(theirs.fileno()),
                                 "SNLINT_LIFELINE_FD": str(lifeline_read)})
        self.scratch = tempfile.mkdtemp(prefix=scratch)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "snlint.graph.forkserver"], env=child_env,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                cwd=self.scratch, start_new_session=True, pass_fds=(theirs.fileno(), lifeline_read))
        finally:
            theirs.close()
            os.close(lifeline_read)
        self.lock = threading.Lock()
        self.exits: dict[int, int] = {}
        self.gone = False
        self.live: set[int] = set()  # the workers not yet waited for
        self.retired = False  # replaced: ends once its last worker has

    def ready(self, deadline: float) -> bool:
        """Whether the server has imported torch and serves (False: it failed or hangs)."""
        with self.lock:
            return self._receive(deadline) == ["ready"]

    def fork(self, env: dict[str, str], cwd: str, lifeline: int) -> Forked:
        """A worker with `env` in `cwd`, holding `lifeline` (the read end of its parent's
        pipe); raises OSError when the server is gone."""
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        theirs = [stdin_r, stdout_w, stderr_w, lifeline]
        try:
            with self.lock:
                if self.gone:
                    raise OSError("the graph-pass fork server is gone")
                request = json.dumps({"env": env, "cwd": cwd}).encode("utf-8")
                try:
                    socket.send_fds(self.sock, [request], theirs)
                except OSError:
                    self.gone = True
                    raise
                forked = Forked(self, stdin_w, stdout_r, stderr_r)
                while True:
                    message = self._receive(None)
                    if message is None:
                        raise OSError("the graph-pass fork server is gone")
                    if message[0] == "pid":
                        forked.pid = int(message[1])
                        self.live.add(forked.pid)
                        return forked
        except BaseException:
            for fd in (stdin_w, stdout_r, stderr_r):
                try:
                    os.close(fd)
                except OSError:
                    pass
            raise
        finally:
            for fd in theirs[:3]:
                os.close(fd)

    def exit_code(self, pid: int, deadline: float | None) -> int | None:
        """The worker's exit code once the server reaped it; None at the deadline."""
        while True:
            with self.lock:
                if pid in self.exits:
                    return self.exits.pop(pid)
                if self.gone:
                    return _gone(pid, deadline)
                # Short waits: another lane may want the socket to start a worker.
                slice_end = time.monotonic() + 0.05
                if deadline is not None:
                    slice_end = min(slice_end, deadline)
                self._receive(slice_end)
            if deadline is not None and time.monotonic() >= deadline and pid not in self.exits:
                return None

    def retire(self) -> None:
        with self.lock:
            self.retired = True
            idle = not self.live
        if idle:
            self.close()

    def ended(self, pid: int) -> None:
        with self.lock:
            self.live.discard(pid)
            idle = self.retired and not self.live
        if idle:
            self.close()

    def close(self) -> None:
        if self.sock.fileno() < 0:
            return
        # A worker still running at exit (an interrupted run) would hold the server,
        # which waits for its workers: it goes with its group, as its lifeline would end it.
        for pid in self.live:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.gone = True
        self.sock.close()
        os.close(self.lifeline)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def _receive(self, deadline: float | None) -> list[str] | None:
        """One message of the server, exit codes recorded on the way; None at the deadline
        or when the server is gone."""
        while not self.gone:
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self.sock], [], [], timeout)[0]:
                return None
            try:
                data = self.sock.recv(4096)
            except OSError:
                data = b""
            if not data:
                self.gone = True
                return None
            message = data.decode("ascii").split()
            if message[0] == "exit":
                self.exits[int(message[1])] = int(message[2])
                continue
            return message
        return None


def _gone(pid: int, deadline: float | None) -> int | None:
    """The exit code of a worker whose server died: it ends too (its parent is gone), with
    no code to tell."""
    while deadline is None or time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return -signal.SIGKILL
        time.sleep(0.02)
    return None


# ------------------------------------------------------------------------- one per process

class _Servers:
    """The server of this process, started by the first worker that wants one: tied to
    the process (a forked snlint worker does not share its parent's) and to the
    environment it was started with."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.server: Server | None = None
        self.owner = 0
        self.failed: dict[str, str] | None = None
        self.exit_hook = False

    def get(self, env: dict[str, str], scratch: str, limit: float) -> Server | None:
        base = {k: v for k, v in env.items() if k not in _PER_WORKER}
        with self.lock:
            if self.owner != os.getpid():
                self.server, self.failed, self.owner = None, None, os.getpid()
            if self.server is not None and (self.server.env != base or self.server.gone):
                self.server.retire()  # its workers still answer through it
                self.server = None
            if self.server is None and self.failed != base:
                # Failing, workers are started the slow way, which says why they cannot.
                self.failed = base
                try:
                    server = Server(base, scratch)
                except OSError:
                    return None
                if server.ready(time.monotonic() + limit):
                    self.server, self.failed = server, None
                    if not self.exit_hook:
                        # Waited for at exit, as a child is (`snlint.cli` also does before
                        # its fast exit, which skips these hooks).
                        atexit.register(self.close)
                        self.exit_hook = True
                else:
                    server.proc.kill()
                    server.close()
            return self.server


    def close(self) -> None:
        """End this process's server and wait for it (its workers first)."""
        with self.lock:
            server = self.server if self.owner == os.getpid() else None
            self.server = None
        if server is not None:
            server.close()


SERVERS = _Servers()


# ------------------------------------------------------------------------- the server

def main() -> None:
    sock = socket.socket(fileno=int(os.environ.pop(SOCKET_ENV)))
    lifeline = int(os.environ.pop("SNLINT_LIFELINE_FD"))
    try:
        from snlint.graph import worker

        worker.prepare()
    except BaseException:
        os._exit(1)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sock.send(b"ready")
    while True:
        _reap(sock)
        try:
            ready = select.select([sock, lifeline, wake_r], [], [])[0]
        except InterruptedError:
            continue
        if wake_r in ready:
            os.read(wake_r, 4096)
        if lifeline in ready and not os.read(lifeline, 1):
            os._exit(0)  # snlint is gone; its workers see their own lifelines
        if sock not in ready:
            continue
        try:
            data, fds, _, _ = socket.recv_fds(sock, 1 << 20, 4)
        except OSError:
            data, fds = b"", []
        if not data:
            _wait_all()  # their time and memory count as snlint's, who waits for us
            os._exit(0)
        pid = os.fork()
        if pid == 0:
            for fd in (wake_r, wake_w, lifeline):
                os.close(fd)
            _become_worker(sock, fds, json.loads(data))
        for fd in fds:
            os.close(fd)
        sock.send(f"pid {pid}".encode("ascii"))


def _wait_all() -> None:
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def _reap(sock: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        try:
            sock.send(f"exit {pid} {os.waitstatus_to_exitcode(status)}".encode("ascii"))
        except OSError:
            pass


def _become_worker(sock: socket.socket, fds: list[int], request: dict) -> None:
    """In the forked child: the process `python -m snlint.graph.worker` would have been."""
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        sock.close()
        os.setsid()
        stdin, stdout, stderr, lifeline = fds
        for fd, std in ((stdin, 0), (stdout, 1), (stderr, 2)):
            os.dup2(fd, std)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ["SNLINT_LIFELINE_FD"] = str(lifeline)
        tempfile.tempdir = None  # TMPDIR is the worker's own folder now
        sys.path[0] = os.getcwd()  # where `-m` puts the current directory
        from snlint.graph import worker

        sys.argv = [worker.__file__]
        worker.main()
    finally:
        os._exit(1)


if __name__ == "__main__":
    main()
