"""The run cache (snlint/engine/run_cache.py): a warm run of unchanged files is answered without
the source pass; a change that leaves every file's facts as they were (a comment, a
`# noqa`) is answered without linking; anything else links again. Whatever the path, a
warm run reports exactly what a cold one does. Steps are counted, never timed."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from snlint.engine import linking
from snlint.config import Config, load_config
from snlint.engine import run
from snlint.inputs import read_inputs
from snlint.engine.run_cache import RunCache

NETS = """\
import torch.nn as nn
from torch.nn.utils.parametrizations import spectral_norm

from models.layers import widths


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        a, b = widths(64)
        self.c1 = spectral_norm(nn.Conv2d(3, a, 4, 2, 1))
        self.c2 = spectral_norm(nn.Conv2d(a, b, 4, 2, 1))
        self.c3 = spectral_norm(nn.Conv2d(b, b, 4, 2, 1))
        self.head = nn.Conv2d(b, 1, 4, 1, 0)

    def forward(self, x):
        return self.head(self.c3(self.c2(self.c1(x))))
"""
LAYERS = """\
def widths(base):
    return base, base * 2
"""
HEAD = "        self.head = nn.Conv2d(b, 1, 4, 1, 0)\n"


@pytest.fixture
def root(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    for name, text in {"models/nets.py": NETS, "models/layers.py": LAYERS,
                       "models/__init__.py": "", "pyproject.toml": "[tool.snlint]\n"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    monkeypatch.chdir(root)  # display paths are relative to the working folder
    return root


@pytest.fixture
def links(monkeypatch):
    """How many times the engine linked a project."""
    count = [0]
    link = linking.link

    def counted(*args, **kwargs):
        count[0] += 1
        return link(*args, **kwargs)

    monkeypatch.setattr(linking, "link", counted)
    return count


def lint(paths=("models",), **options):
    config = load_config(Path.cwd(), graph=False, **options)
    return [(f.code, f.path, f.line, f.message) for f in run(list(paths), config).findings]


def cold(paths=("models",)):
    return lint(paths, cache=False)


def edit(root: Path, name: str, old: str, new: str) -> None:
    path = root / name
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_an_unchanged_project_is_answered_without_linking(root, links):
    first = lint()
    assert [code for code, *_ in first] == ["SN201"]
    assert lint() == first
    assert links[0] == 1


def test_a_comment_added_is_answered_without_linking(root, links):
    first = lint()
    edit(root, "models/nets.py", HEAD, HEAD.rstrip("\n") + "  # the logit\n")
    with open(root / "models/layers.py", "a") as handle:
        handle.write("# widths double at each step\n")
    assert lint() == first == cold()
    assert links[0] == 2  # the first run and the cold one


def test_a_noqa_added_silences_the_finding_on_a_warm_run(root, links):
    lint()
    edit(root, "models/nets.py", HEAD, HEAD.rstrip("\n") + "  # noqa: SN201\n")
    assert lint() == cold() == []
    assert links[0] == 2


def test_a_change_of_what_the_code_says_links_again(root, links):
    lint()
    edit(root, "models/nets.py", HEAD, HEAD.replace("nn.Conv2d(b, 1, 4, 1, 0)",
                                                    "spectral_norm(nn.Conv2d(b, 1, 4, 1, 0))"))
    assert lint() == cold() == []
    assert links[0] == 3


def test_a_partial_run_sees_a_change_in_a_file_it_imports(root, links):
    given = ("models/nets.py",)
    first = lint(given)
    assert [code for code, *_ in first] == ["SN201"]
    # The widths come from here: with 0 channels the discriminator says nothing else,
    # but the helper is read again and the project linked again.
    edit(root, "models/layers.py", "return base, base * 2", "return base, base")
    assert lint(given) == cold(given)
    assert links[0] == 3


def test_a_partial_run_sees_a_new_file_of_the_project(root):
    given = ("models/nets.py",)
    lint(given)
    (root / "models/extra.py").write_text("X = 1\n")
    config = load_config(Path.cwd(), graph=False)
    inputs = read_inputs(list(given), config)
    assert RunCache.for_run(config, inputs, graph=False, fixes=False).unchanged(inputs.sources) is None


def test_another_configuration_is_another_entry(root, links):
    lint()
    assert lint(ignore=["SN201"]) == []
    assert links[0] == 2
    assert [code for code, *_ in lint()] == ["SN201"]  # the first entry still stands
    assert links[0] == 2


def test_runs_that_import_code_do_not_use_it(root):
    config = load_config(Path.cwd(), graph=False)
    inputs = read_inputs(["models"], config)
    assert RunCache.for_run(config, inputs, graph=True, fixes=False) is None
    assert RunCache.for_run(load_config(Path.cwd(), graph=False, cache=False), inputs,
                            graph=False, fixes=False) is None


def snlint_in(root, fmt: str, *python_options: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """`snlint models` run in `root` by a fresh interpreter with `python_options`, and the
    modules it imported (with `-X importtime`)."""
    run = subprocess.run([sys.executable, *python_options, "-m", "snlint", "models", "--no-graph",
                          "--output-format", fmt], capture_output=True, text=True, timeout=120, cwd=root)
    return run, {line.split("|")[-1].strip() for line in run.stderr.splitlines()}


def test_a_warm_run_of_unchanged_files_never_imports_the_source_pass(root):
    first, _ = snlint_in(root, "json")
    second, imported = snlint_in(root, "json", "-X", "importtime")
    assert second.returncode == first.returncode == 1
    assert json.loads(second.stdout) == json.loads(first.stdout)
    assert "snlint.inputs" in imported
    assert not {name for name in imported if name.split(".")[0] == "libcst"}
    assert "snlint.engine.lint" not in imported and "snlint.engine.per_file" not in imported


def test_a_run_after_a_comment_is_added_never_imports_the_link_step(root):
    # The changed file gives the facts it gave: the last run's findings stand, and the
    # link step (most of snlint's imports) is not even imported. (A format that shows
    # fixes, such as JSON, builds them: that run lints.)
    first, _ = snlint_in(root, "concise")
    (root / "models/nets.py").write_text(NETS + "# a comment\n")
    second, imported = snlint_in(root, "concise", "-X", "importtime")
    assert second.returncode == first.returncode == 1
    assert second.stdout == first.stdout and "SN201" in first.stdout
    assert "snlint.engine.per_file" in imported  # the changed file was read again
    assert not {name for name in imported if name == "snlint.engine.linking" or name.startswith("snlint.link.")}


EDITS = [
    ("comment", lambda t: t + "# a comment\n"),
    ("noqa", lambda t: t.replace(HEAD, HEAD.rstrip("\n") + "  # noqa\n")),
    ("sn on the head", lambda t: t.replace("nn.Conv2d(b, 1, 4, 1, 0)", "spectral_norm(nn.Conv2d(b, 1, 4, 1, 0))")),
    ("sn off c3", lambda t: t.replace("spectral_norm(nn.Conv2d(b, b, 4, 2, 1))", "nn.Conv2d(b, b, 4, 2, 1)")),
    ("batch norm", lambda t: t.replace("        self.head =", "        self.bn = nn.BatchNorm2d(b)\n        self.head =")),
    ("blank line", lambda t: "\n" + t),
    ("broken", lambda t: t + "def (:\n"),
    ("back", lambda t: NETS),
]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(range(len(EDITS))), min_size=1, max_size=5))
def test_warm_runs_after_any_edits_report_what_cold_runs_do(root, steps):
    lint()
    for step in steps:
        path = root / "models/nets.py"
        path.write_text(EDITS[step][1](path.read_text()))
        assert lint() == cold(), EDITS[step][0]
    (root / "models/nets.py").write_text(NETS)


def test_built_fixes_are_kept_for_the_same_texts_only(root, links):
    config = load_config(Path.cwd(), graph=False)

    def fixed():
        found = run(["models"], config, fixes=True).findings
        return [(f.code, f.fix.diff, f.fix.edits[0].new_text) for f in found]

    first = fixed()
    assert first[0][1].startswith("--- a/models/nets.py")
    assert "spectral_norm(nn.Conv2d(b, 1, 4, 1, 0))" in first[0][2]
    assert fixed() == first
    assert links[0] == 1
    with open(root / "models/nets.py", "a") as handle:
        handle.write("# the diff's context changes with the text\n")
    again = fixed()
    assert links[0] == 2  # not carried over the comment: the diff quotes the new text
    assert [c for c, *_ in again] == ["SN201"]
    assert again[0][2].endswith("# the diff's context changes with the text\n")


def test_a_cache_entry_that_cannot_be_read_is_a_miss(root, links):
    first = lint()
    for entry in (root / ".snlint_cache").rglob("facts-*/*/*"):
        entry.write_bytes(b"\x80\x05garbage")
    assert lint() == first
    assert links[0] == 2


class _NoCache:
    """A run key is computed without touching a cache."""


def test_the_run_key_leaves_out_how_the_stage_runs():
    def key(config: Config, given=("d.py",)) -> str:
        return RunCache(_NoCache(), config, list(given)).key

    same = {key(Config(root=Path("/p"), graph=False, jobs=1)),
            key(Config(root=Path("/p"), graph=False, jobs=4, cache_dir="elsewhere"))}
    assert len(same) == 1
    assert key(Config(root=Path("/p"), graph=False, select=["SN2"])) not in same
    assert key(Config(root=Path("/q"), graph=False)) != key(Config(root=Path("/p"), graph=False))
    assert key(Config(root=Path("/p"), graph=False), ("d.py", "e.py")) not in same


def test_display_paths_are_read_from_the_working_folder(root, tmp_path, monkeypatch):
    config = load_config(root, graph=False)
    here = RunCache(_NoCache(), config, ["models/nets.py"]).key
    monkeypatch.chdir(tmp_path)
    assert RunCache(_NoCache(), config, ["models/nets.py"]).key != here


def test_run_entries_are_pruned_least_recently_used_first(tmp_path, monkeypatch):
    from snlint.engine import cache as cache_module
    from snlint.engine.cache import Cache

    monkeypatch.setattr(cache_module, "MAX_RUNS", 3)
    cache = Cache(tmp_path / "c", "salt")
    for i in range(3):
        cache.put("run", f"k{i}", "", i, run=True)
        os.utime(cache._name("run", f"k{i}", True), ns=(i * 10**9, i * 10**9))
    assert cache.get("run", "k0", "", run=True) == 0  # read: now the most recent
    cache.put("run", "k3", "", 3, run=True)
    assert [cache.get("run", f"k{i}", "", run=True) for i in range(4)] == [0, None, 2, 3]


@pytest.fixture
def configured(tmp_path, monkeypatch):
    """A project whose training script loads its options from `options/train_a.json` (a
    shipped configuration beside `options/train_b.json`): the discriminator's norm is
    what the files say."""
    from test_shipped_configs import INSTANCE, project

    files = project("options/train_a.json", {"options/train_a.json": INSTANCE,
                                              "options/train_b.json": INSTANCE})
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_an_option_file_edited_is_read_again(configured, links):
    from test_shipped_configs import BATCH

    assert lint(["."]) == []
    (configured / "options" / "train_b.json").write_text(BATCH)
    assert [(code, path, line) for code, path, line, _ in lint(["."])] == [
        ("SN301", "models/networks.py", 12), ("SN401", "train.py", 19)]
    assert links[0] > 1


def test_an_option_file_added_to_the_shipped_folder_is_read(configured):
    from test_shipped_configs import BATCH

    assert lint(["."]) == []
    (configured / "options" / "train_c.json").write_text(BATCH)
    assert [message.rpartition(" (")[2] for *_, message in lint(["."])] == [
        "with options/train_c.json)"] * 2
