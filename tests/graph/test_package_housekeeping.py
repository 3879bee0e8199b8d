"""What an installed package does to its own cache and config folders while it is
imported (matplotlib does both) is no SN910 of the project's: the worker refuses it the
same, and leaves the cache as the package would (no stale lock file)."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from graph_helpers import write  # noqa: E402

from snlint.config import Config  # noqa: E402
from snlint.engine import run  # noqa: E402

# A cache written as libraries write theirs (a lock file, an atomic rename), and a config
# folder that is not the worker's to create; `configure()` does the same when called.
PACKAGE = '''
    import os

    HOME = os.path.expanduser("~")
    CACHE = os.path.join(HOME, ".cache", "fakecache")
    os.makedirs(CACHE, exist_ok=True)
    lock = os.path.join(CACHE, "index.json.lock")
    with open(lock, "x"):
        pass
    try:
        with open(os.path.join(CACHE, "index.json.tmp"), "w") as handle:
            handle.write("{}")
        os.replace(os.path.join(CACHE, "index.json.tmp"), os.path.join(CACHE, "index.json"))
    finally:
        os.remove(lock)


    def configure():
        try:
            os.makedirs(os.path.join(HOME, ".config", "fakecache"), exist_ok=True)
        except OSError:
            pass


    configure()
'''

NETS = '''
    import torch.nn as nn

    import fakecache


    class Discriminator(nn.Module):
        def __init__(self, configure=False):
            super().__init__()
            if configure:
                fakecache.configure()
            self.conv = nn.Conv2d(3, 8, 3)

        def forward(self, x):
            return self.conv(x).mean(dim=(1, 2, 3))
'''


@pytest.fixture
def project(tmp_path, monkeypatch):
    home, site = tmp_path / "home", tmp_path / "lib" / "site-packages"
    write(site, "fakecache/__init__.py", PACKAGE)
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(site)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return root, home


def _run(root):
    return run([str(root)], Config(root=root, graph=True, cache=False))


def test_a_package_keeping_its_cache_at_import_gives_no_note(project):
    root, home = project
    write(root, "nets.py", NETS)
    result = _run(root)
    assert [(r.target.class_name, r.status, r.refused) for r in result.graph] == [
        ("Discriminator", "ok", [])]
    assert [f.code for f in result.findings] == []
    assert sorted(os.listdir(home / ".cache" / "fakecache")) == ["index.json"]
    assert not (home / ".config").exists()


def test_the_same_refusal_asked_for_by_the_project_is_reported(project):
    root, home = project
    write(root, "nets.py", NETS.replace("configure=False", "configure=True"))
    result = _run(root)
    [note] = result.findings
    assert note.code == "SN910"
    assert note.message.endswith(f"nets.py: os.mkdir({str(home / '.config')!r})")
    assert not (home / ".config").exists()
