"""Output, exit codes, files on disk and configuration never fail badly (issue 31,
points 9, 10 and 11): each test is a reproducer with its exact exit code and message,
and what is left on disk afterwards."""

from __future__ import annotations

import json
import marshal
import os
import platform
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from snlint.engine import replay
from snlint.engine.cache import Cache
from snlint.cli import main
from snlint.files import OWNER
from snlint.fix import UNBUILT
from snlint.regular import read_regular

ROOT = Path(__file__).resolve().parent.parent
ODD_NAME = b"bad\xff.py"  # not UTF-8: Python holds it as "bad\udcff.py"


def snlint(*args: str, input: str | None = None):
    return CliRunner().invoke(main, [*args, "--no-graph", "--no-cache"], input=input)


def snlint_process(*args: str, cwd: Path, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # A process started in the background may inherit SIGINT ignored: give it Python's own.
    return subprocess.Popen([sys.executable, "-m", "snlint", *args], cwd=cwd, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                            **kwargs)


@pytest.fixture
def project(tmp_path, monkeypatch, missing_sn):
    # The missing SN's fix changes state_dict keys (unsafe); these tests need a fix plain
    # --fix writes, as a project with no checkpoint to keep gets.
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n\n"
                                             "[tool.snlint]\nextend-safe-fixes = ['SN201']\n")
    (tmp_path / "d.py").write_text(missing_sn)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def temporaries(folder: Path) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.endswith(".snlint"))


# ---------------------------------------------------------------------------- point 9: output

@pytest.fixture
def odd_name(project):
    os.rename(project / "d.py", os.path.join(os.fsencode(project), ODD_NAME))
    return os.fsdecode(ODD_NAME)


def test_sarif_uri_percent_encodes_the_bytes_of_a_name_that_is_not_utf8(odd_name):
    result = snlint(".", "--output-format", "sarif")
    assert result.exit_code == 1, result.output
    location = json.loads(result.stdout)["runs"][0]["results"][0]["locations"][0]
    assert location["physicalLocation"]["artifactLocation"] == {"uri": "bad%FF.py", "uriBaseId": "%SRCROOT%"}


def test_json_path_of_a_name_that_is_not_utf8_is_ascii_and_gives_the_bytes_back(odd_name):
    result = snlint(".", "--output-format", "json")
    assert result.exit_code == 1
    assert result.stdout.isascii()
    assert [os.fsencode(row["path"]) for row in json.loads(result.stdout)] == [ODD_NAME]


@pytest.mark.parametrize("fmt", ["concise", "github"])
def test_text_shows_a_name_that_is_not_utf8_with_a_replacement_character(odd_name, project, fmt):
    out = subprocess.run([sys.executable, "-m", "snlint", ".", "--no-graph", "--no-cache",
                          "--output-format", fmt], cwd=project, capture_output=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 1, out.stderr
    first = out.stdout.decode("utf-8").splitlines()[0]  # strict: the output is UTF-8
    assert first.startswith("bad\ufffd.py:10:21: SN201" if fmt == "concise"
                            else "::error title=snlint (SN201),file=bad\ufffd.py,line=10,")


def test_json_fix_is_not_null_where_the_text_marks_one(project, monkeypatch):
    # A fix that refuses where the tree does not hold what its payload names: the plain
    # lint's `[*]` stands, and JSON says there is a fix rather than "fix": null.
    from snlint.checks import sn201

    monkeypatch.setattr(sn201, "fix", lambda finding, payload, parsed: None)
    assert "d.py:10:21: SN201 [*]" in snlint("d.py").stdout
    (row,) = json.loads(snlint("d.py", "--output-format", "json").stdout)
    assert row["fix"] == {"applicability": "safe", "message": UNBUILT, "diff": None}


def test_json_fix_carries_its_diff_when_built(project):
    (row,) = json.loads(snlint("d.py", "--output-format", "json").stdout)
    assert row["fix"]["applicability"] == "safe"
    assert row["fix"]["diff"].startswith("--- a/d.py\n+++ b/d.py\n")


def test_ctrl_c_exits_130_with_one_line(project, monkeypatch):
    from snlint import engine

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "run", interrupted)
    result = snlint("d.py")
    assert (result.exit_code, result.stdout, result.stderr) == (130, "", "snlint: interrupted\n")


def _wait_until_reading_stdin(pid: int) -> None:
    """Until the process blocks in read(0, ...) (Linux /proc; x86-64 and arm64 numbers)."""
    read = {"x86_64": "0", "aarch64": "63"}.get(platform.machine())
    if read is None or not os.path.exists(f"/proc/{pid}/syscall"):
        pytest.skip("needs Linux /proc/PID/syscall on x86-64 or arm64")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            fields = Path(f"/proc/{pid}/syscall").read_text().split()
        except OSError:
            fields = []
        if fields[:2] == [read, "0x0"]:
            return
        time.sleep(0.02)
    pytest.fail("snlint never read its standard input")


@pytest.mark.parametrize("signum, code, line", [
    (signal.SIGINT, 130, "snlint: interrupted"),
    (signal.SIGTERM, 143, "snlint: terminated (SIGTERM)"),
])
def test_a_signal_ends_a_run_with_128_plus_its_number(project, signum, code, line):
    # A run reading standard input waits there: the signal comes mid-run, not at start-up.
    proc = snlint_process("--no-graph", "--stdin-filename", "d.py", cwd=project,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_until_reading_stdin(proc.pid)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert (proc.returncode, out, err.decode()) == (code, b"", line + "\n")


# ---------------------------------------------------------------------------- point 10: files

def _many(project: Path, text: str, count: int) -> list[Path]:
    files = []
    for i in range(count):
        path = project / f"m{i:03}.py"
        path.write_text(text)
        files.append(path)
    return files


@pytest.mark.parametrize("jobs", ["1", "2"])  # 2: a standby process writes the files early
def test_ctrl_c_in_the_write_phase_leaves_no_temporary_file(project, missing_sn, monkeypatch, jobs):
    from snlint import files as writing

    files = _many(project, missing_sn, 4)
    replace = os.replace
    calls = []

    def interrupted_on_the_third(src, dst):
        calls.append(dst)
        if len(calls) == 3:
            raise KeyboardInterrupt
        replace(src, dst)

    monkeypatch.setattr(writing.os, "replace", interrupted_on_the_third)
    result = snlint(".", "--fix", "-j", jobs)
    assert (result.exit_code, result.stderr) == (130, "snlint: interrupted\n")
    assert temporaries(project) == []
    fixed = missing_sn.replace("self.head = nn.Conv2d(128, 1, 4, 1, 0)",
                               "self.head = spectral_norm(nn.Conv2d(128, 1, 4, 1, 0))")
    texts = [p.read_text() for p in [project / "d.py", *files]]
    assert texts.count(fixed) == 2 and texts.count(missing_sn) == 3  # whole files, old or new


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_later_fix_removes_what_a_killed_run_left_and_only_that(project):
    dead = _dead_pid()
    left = [f".d.py.{dead}.abcd_123.snlint", ".d.py.k2j4h5g6.snlint"]  # a killed run's; an older snlint's
    kept = [
        ".d.py.1.abcd_123.snlint",  # pid 1 is alive: a run still writing
        f".notes.txt.{dead}.abcd_123.snlint",  # beside a file snlint does not lint
        f".d.py.{dead}.abc.snlint",  # not mkstemp's name
        ".d.snlint",
    ]
    old = time.time() - 3600
    for name in left + kept:
        (project / name).write_bytes(b"half a file")
        os.utime(project / name, (old, old))
    result = snlint(".", "--fix")
    assert result.exit_code == 0, result.output
    assert temporaries(project) == sorted(kept)


def test_a_temporary_file_newer_than_the_run_is_left(project):
    # Its owner is gone, but it was written after this run began: not this run's to judge.
    name = f".d.py.{_dead_pid()}.abcd_123.snlint"
    (project / name).write_bytes(b"")
    future = time.time() + 3600
    os.utime(project / name, (future, future))
    snlint(".", "--fix")
    assert temporaries(project) == [name]


def test_sigkill_during_fix_then_fix_again_leaves_nothing_behind(project, missing_sn):
    files = _many(project, missing_sn, 150)
    # Its own process group, killed whole (as a CI runner kills a job): no helper it
    # forked lives on to write after the next run has begun.
    proc = snlint_process(".", "--fix", "--no-graph", "--no-cache", cwd=project,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          start_new_session=True)
    time.sleep(1.5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    result = snlint(".", "--fix")
    assert result.exit_code == 0, result.output
    assert temporaries(project) == []
    for path in files:
        compile(path.read_text(), str(path), "exec")


def test_fix_refuses_a_read_only_file_and_fixes_the_others(project, missing_sn):
    (project / "e.py").write_text(missing_sn)
    os.chmod(project / "d.py", 0o444)
    result = snlint(".", "--fix")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "snlint: cannot write d.py: permission denied (the file is read-only)",
        "Fixed 1 finding in 1 file.",
    ]
    assert result.stdout.startswith("d.py:10:21: SN201 [*]")
    assert (project / "d.py").read_text() == missing_sn
    assert stat.S_IMODE(os.stat(project / "d.py").st_mode) == 0o444
    assert "spectral_norm(nn.Conv2d(128, 1, 4, 1, 0))" in (project / "e.py").read_text()
    assert temporaries(project) == []


def test_owner_of_a_temporary_file_is_in_its_name(tmp_path):
    from snlint.files import written_beside

    tmp = Path(written_beside(tmp_path / "a.py", b"x"))
    assert tmp.name.startswith(f".a.py.{OWNER}.") and tmp.name.endswith(".snlint")


# ---------------------------------------------------------------------------- point 11: config

def configured(project: Path, body: str):
    (project / "pyproject.toml").write_text("[tool.snlint]\n" + textwrap.dedent(body))
    return snlint(".")


def test_a_huge_max_file_size_reads_the_file(project):
    result = configured(project, "max-file-size = 50000000000\n")
    assert result.exit_code == 1
    assert result.stdout.startswith("d.py:10:21: SN201")


def test_a_read_is_never_larger_than_the_file(tmp_path):
    (tmp_path / "a").write_bytes(b"abc")
    assert read_regular(tmp_path / "a", 50_000_000_000) == b"abc"
    assert read_regular(tmp_path / "a", 2) == b"abc"  # one byte more than the limit: too large
    assert read_regular(tmp_path / "a") == b"abc"


@pytest.mark.parametrize("body, message", [
    ('exclude = ["[z-a]"]',
     "[tool.snlint] exclude: invalid glob '[z-a]': bad character range z-a at position 1"),
    ('per-file-ignores = {"[z-a]" = ["SN301"]}',
     "[tool.snlint] per-file-ignores: invalid glob '[z-a]': bad character range z-a at position 1"),
    ('discriminators = ["d:Discriminator"]',
     "invalid class reference 'd:Discriminator' in [tool.snlint] discriminators "
     '(expected "path/relative/to/root.py:ClassName")'),
    ('select = ["SN777"]',
     "unknown rule code 'SN777' in [tool.snlint] select (no rule's code starts with it; "
     "see snlint --list-rules)"),
    ('ignore = ["SN8"]',
     "unknown rule code 'SN8' in [tool.snlint] ignore (no rule's code starts with it; "
     "see snlint --list-rules)"),
    ("graph-timeout = nan", "[tool.snlint] graph-timeout must be a positive number of seconds, got nan"),
    ("graph-timeout = inf", "[tool.snlint] graph-timeout must be a positive number of seconds, got inf"),
    ("graph-timeout = -1", "[tool.snlint] graph-timeout must be a positive number of seconds, got -1"),
])
def test_a_configuration_error_names_the_file_and_the_key(project, body, message):
    result = configured(project, body + "\n")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"snlint: {project / 'pyproject.toml'}: {message}\n"


@pytest.mark.parametrize("args, message", [
    (["--select", ""], "Invalid value for '--select': no rule code given (to turn rules off, use --ignore)"),
    (["--graph-timeout", "nan"], "Invalid value for '--graph-timeout': nan is not a finite number of seconds"),
    (["--graph-timeout", "inf"], "Invalid value for '--graph-timeout': inf is not a finite number of seconds"),
])
def test_an_option_that_would_be_ignored_silently_is_a_usage_error(project, args, message):
    result = snlint("d.py", *args)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == f"Error: {message}"


def test_an_unknown_code_on_the_command_line_is_an_error(project):
    result = snlint("d.py", "--select", "SN777")
    assert (result.exit_code, result.stderr) == (
        2, "snlint: unknown rule code 'SN777' in --select (no rule's code starts with it; "
           "see snlint --list-rules)\n")


def _within(seconds: float, work):
    out = []
    thread = threading.Thread(target=lambda: out.append(work()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked on a FIFO"
    return out[0]


def test_a_fifo_as_pyproject_toml_is_an_error_not_a_hang(project):
    (project / "pyproject.toml").unlink()
    os.mkfifo(project / "pyproject.toml")
    (project / ".git").mkdir()  # the root, whatever pyproject.toml is
    result = _within(30, lambda: snlint("d.py"))
    assert (result.exit_code, result.stderr) == (
        2, f"snlint: {project / 'pyproject.toml'}: cannot read: not a regular file\n")


def test_a_fifo_as_gitignore_is_skipped(project):
    os.mkfifo(project / ".gitignore")
    result = _within(30, lambda: snlint("."))
    assert result.exit_code == 1
    assert result.stdout.startswith("d.py:10:21: SN201")


def test_a_fifo_as_a_cache_entry_is_a_miss(tmp_path):
    cache = Cache(tmp_path / "cache")
    cache.put("a.py", "a.py", "digest", ("facts",))
    name = cache._name("a.py", "a.py")
    name.unlink()
    os.mkfifo(name)
    assert _within(30, lambda: cache.get("a.py", "a.py", "digest")) is None


@pytest.mark.parametrize("record", [
    lambda k: (k, "probes", "output", 0),
    lambda k: (k, ((1, 2, 3),), "output", 0),
    lambda k: (k, (), b"output", 0),
    lambda k: (k, (), "output", "1"),
    lambda k: (k, (), "output", 7),
])
def test_a_replay_record_of_the_wrong_shape_is_a_miss(tmp_path, monkeypatch, record):
    monkeypatch.setenv(replay.ENV_CACHE_DIR, str(tmp_path))
    argv = ["."]
    folder = tmp_path / replay.FOLDER
    folder.mkdir()
    (folder / replay._name(replay.key(argv))).write_bytes(marshal.dumps(record(replay.key(argv))))
    assert replay.replay(argv) is None


def test_add_noqa_leaves_a_read_only_file_and_says_so(project, missing_sn):
    (project / "e.py").write_text(missing_sn)
    os.chmod(project / "d.py", 0o444)
    result = snlint(".", "--add-noqa")
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        "snlint: cannot write d.py: permission denied (the file is read-only)",
        "Added 1 noqa directive.",
    ]
    assert (project / "d.py").read_text() == missing_sn
    assert "nn.Conv2d(128, 1, 4, 1, 0)  # noqa: SN201" in (project / "e.py").read_text()
