"""Replay (snlint/engine/replay.py): a run identical to the last one, over a project in which
nothing it read has changed, gives the recorded report without linking. Anything the
report depends on that changed (a file's text, a new file, the configuration, a
.gitignore, the command line) makes it lint again. Whether a run was replayed is seen
from the cache: a replay writes nothing there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from snlint.engine import replay

FINDING = "models/d.py:10:21: SN201"  # the one finding of conftest.MISSING_SN
LONG_AGO = time.time_ns() - 3600 * 10**9


def age(root: Path) -> None:
    """Every file and folder of the project modified an hour ago: older than a racy stat,
    so that the next run may leave a record. (Changes made after a record need no aging:
    the next run compares, then lints.)"""
    for folder, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".snlint_cache"]
        for name in filenames:
            os.utime(os.path.join(folder, name), ns=(LONG_AGO, LONG_AGO))
        os.utime(folder, ns=(LONG_AGO, LONG_AGO))


@pytest.fixture
def root(tmp_path, missing_sn):
    root = tmp_path / "proj"
    (root / "models").mkdir(parents=True)
    (root / "models" / "d.py").write_text(missing_sn)
    (root / "pyproject.toml").write_text("[tool.snlint]\n")
    age(root)
    return root


def snlint(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != replay.ENV_CACHE_DIR}
    return subprocess.run([sys.executable, "-m", "snlint", *(args or (".", "--no-graph"))],
                          capture_output=True, text=True, timeout=120, cwd=root, env=env)


def records(root: Path) -> list[str]:
    folder = root / ".snlint_cache" / replay.FOLDER
    return sorted(os.listdir(folder)) if folder.is_dir() else []


def replayed(root: Path, *args: str) -> tuple[bool, subprocess.CompletedProcess]:
    """Run snlint with the cache's facts removed: a run that lints writes them again."""
    for facts in (root / ".snlint_cache").glob("facts-*"):
        shutil.rmtree(facts)
    done = snlint(root, *args)
    return not any((root / ".snlint_cache").glob("facts-*")), done


def test_an_identical_run_replays_the_report_and_exit_code(root):
    first = snlint(root)
    assert FINDING in first.stdout and first.returncode == 1
    assert len(records(root)) == 1
    again, second = replayed(root)
    assert again
    assert (second.stdout, second.stderr, second.returncode) == (first.stdout, first.stderr, 1)


def test_a_file_edited_in_place_is_linted_again(root, missing_sn):
    snlint(root)
    d = root / "models" / "d.py"
    before = os.stat(d)
    # The same size and modification time: only the change time tells.
    d.write_text(missing_sn.replace("128, 1, 4, 1, 0", "128, 1, 4, 1, 1"))
    os.utime(d, ns=(before.st_atime_ns, before.st_mtime_ns))
    again, done = replayed(root)
    assert not again and FINDING in done.stdout
    d.write_text(missing_sn.replace("nn.Conv2d(128, 1, 4, 1, 0)", "spectral_norm(nn.Conv2d(128, 1, 4, 1, 0))"))
    again, done = replayed(root)
    assert not again and "SN201" not in done.stdout and done.returncode == 0


def test_a_touched_file_is_linted_again_with_the_same_report(root):
    first = snlint(root)
    os.utime(root / "models" / "d.py")
    again, done = replayed(root)
    assert not again and done.stdout == first.stdout


def test_a_new_file_in_a_walked_folder_is_linted(root, missing_sn):
    snlint(root)
    (root / "models" / "e.py").write_text(missing_sn)
    again, done = replayed(root)
    assert not again and "models/e.py:10:21: SN201" in done.stdout


def test_a_new_folder_deep_in_the_project_is_walked(root, missing_sn):
    snlint(root)
    (root / "models" / "deep").mkdir()
    age(root)
    snlint(root)  # records the walk with the empty folder in it
    (root / "models" / "deep" / "e.py").write_text(missing_sn)
    again, done = replayed(root)
    assert not again and "models/deep/e.py:10:21: SN201" in done.stdout


def test_a_changed_configuration_is_read(root):
    snlint(root)
    (root / "pyproject.toml").write_text('[tool.snlint]\nignore = ["SN201"]\n')
    again, done = replayed(root)
    assert not again and "SN201" not in done.stdout


def test_a_snlint_toml_added_beside_pyproject_is_read(root):
    snlint(root)
    (root / ".snlint.toml").write_text('ignore = ["SN201"]\n')
    again, done = replayed(root)
    assert not again and "SN201" not in done.stdout


def test_the_no_files_warning_is_replayed(tmp_path):
    root = tmp_path / "proj"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "notes.txt").write_text("notes\n")
    (root / "pyproject.toml").write_text("[tool.snlint]\n")
    age(root)
    first = snlint(root)
    second = snlint(root)
    assert (first.returncode, first.stderr) == (0, "warning: No Python files found under the given path(s)\n")
    assert (second.stdout, second.stderr, second.returncode) == (first.stdout, first.stderr, 0)


def test_a_gitignore_edited_in_place_is_read(root):
    (root / ".gitignore").write_text("build/\n")
    age(root)
    snlint(root)
    (root / ".gitignore").write_text("models/\n")  # no entry of the root folder changes
    again, done = replayed(root)
    assert not again and "SN201" not in done.stdout


def test_a_project_root_made_above_is_found(root, tmp_path):
    # Without a pyproject.toml or a .git, the working folder is the root; one put in the
    # folder above makes that the root, with its configuration.
    (root / "pyproject.toml").unlink()
    age(root)
    assert FINDING in snlint(root).stdout
    (tmp_path / "pyproject.toml").write_text('[tool.snlint]\nignore = ["SN2"]\n')
    done = snlint(root)  # linted with the new root's cache, in the folder above
    assert "SN201" not in done.stdout and any((tmp_path / ".snlint_cache").glob("facts-*"))


def test_a_virtual_environment_that_is_one_no_more_is_walked(root, missing_sn):
    (root / "env").mkdir()
    (root / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (root / "env" / "e.py").write_text(missing_sn)
    age(root)
    assert "env/e.py" not in snlint(root).stdout
    (root / "env" / "pyvenv.cfg").unlink()  # changes env/, which the walk skipped
    again, done = replayed(root)
    assert not again and "env/e.py:10:21: SN201" in done.stdout


def test_another_command_line_is_not_answered_by_the_record(root):
    snlint(root)
    again, done = replayed(root, ".", "--no-graph", "--select", "SN3")
    assert not again and "SN201" not in done.stdout


def test_the_run_that_makes_the_cache_folder_leaves_a_record(root):
    # A folder's entries are compared less its dot-folders: the cache's own does not count.
    assert not (root / ".snlint_cache").exists()
    snlint(root)
    assert len(records(root)) == 1
    assert replayed(root)[0]


def test_files_changed_just_before_the_run_leave_no_record(root, missing_sn):
    (root / "models" / "d.py").write_text(missing_sn)  # modified now: its stat may not show a later change
    assert FINDING in snlint(root).stdout
    assert records(root) == []


@pytest.mark.parametrize("args", [
    (".", "--no-graph", "--output-format", "json"),  # builds fixes
    (".", "--no-graph", "--fix"),
    (".", "--no-graph", "--no-cache"),
    ("models", "--no-graph"),  # a part of the project: what it imports is not walked
])
def test_runs_that_cannot_be_replayed_leave_no_record(root, args):
    snlint(root, *args)
    assert records(root) == []


def test_a_record_that_cannot_be_read_is_no_answer(root):
    first = snlint(root)
    (name,) = records(root)
    (root / ".snlint_cache" / replay.FOLDER / name).write_bytes(b"\x00not a record")
    again, done = replayed(root)
    assert not again and done.stdout == first.stdout
    assert records(root) == [name]  # written anew


def test_a_change_after_the_run_looked_leaves_no_record(tmp_path, monkeypatch, missing_sn):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(replay.ENV_CACHE_DIR)  # the record goes to the project's cache folder
    (tmp_path / ".snlint_cache").mkdir()
    d = tmp_path / "d.py"
    d.write_text(missing_sn)
    age(tmp_path)

    def save(change) -> bool:
        recorder = replay.Recorder([".", "--no-graph"], time.time_ns())
        looked_at: dict = {}
        replay.note(looked_at, str(d))
        replay.note(looked_at, str(tmp_path), replay.LISTING)
        change()
        return recorder.save(str(tmp_path / ".snlint_cache"), looked_at, 1,
                             lambda path, data: Path(path).write_bytes(data))

    assert save(lambda: None)
    assert not save(lambda: (tmp_path / "e.py").write_text(missing_sn))  # a file added mid-run
    age(tmp_path)
    assert not save(lambda: os.utime(d, ns=(LONG_AGO + 1, LONG_AGO + 1)))  # changed mid-run


def test_snlint_s_own_code_anywhere_in_the_package_keys_replay_and_cache(tmp_path):
    """An edited checkout answers afresh: a rule module outside engine/ counts, as does
    a rule page."""
    import snlint

    package = Path(snlint.__file__).resolve().parent
    looked: dict = {}
    replay.own_files(looked)
    assert str(package / "checks" / "sn201.py") in looked
    assert str(package.parent / "rules" / "SN201.md") in looked
    copy = tmp_path / "copy"
    shutil.copytree(package, copy / "snlint", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(package.parent / "rules", copy / "rules")
    salt = [sys.executable, "-c", "from snlint.engine.cache import salt; print(salt())"]
    env = dict(os.environ, PYTHONPATH=str(copy))
    before = subprocess.run(salt, capture_output=True, text=True, env=env, cwd=copy,
                            check=True).stdout
    os.utime(copy / "snlint" / "checks" / "sn201.py", ns=(LONG_AGO, LONG_AGO))
    after = subprocess.run(salt, capture_output=True, text=True, env=env, cwd=copy,
                           check=True).stdout
    assert before.strip() and before != after


def test_an_option_file_the_training_script_loads_is_a_probe(tmp_path):
    """A run whose findings depend on a JSON file the script loads is not replayed once
    that file changed."""
    import textwrap

    from test_shipped_configs import BATCH, INSTANCE, project

    root = tmp_path / "proj"
    for name, text in project("options/train_a.json", {"options/train_a.json": INSTANCE,
                                                        "options/train_b.json": INSTANCE}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    (root / "pyproject.toml").write_text("[tool.snlint]\n")
    age(root)
    assert snlint(root).stdout == "All checks passed!\n"
    assert records(root)
    (root / "options" / "train_b.json").write_text(BATCH)
    replay_only, done = replayed(root)
    assert not replay_only
    assert [line.split(" ")[:2] for line in done.stdout.splitlines()[:2]] == [
        ["models/networks.py:12:13:", "SN301"], ["train.py:19:12:", "SN401"]]
