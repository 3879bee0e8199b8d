"""The per-file stage (snlint/engine/per_file.py, snlint/engine/cache.py, snlint/positions/): a cold,
a warm and a parallel run say the same; the cache is found and missed when it should
be; the prefilter skips what cannot matter and nothing else; the one-file path imports
what it uses. Steps are counted (PerFile.stats), never timed."""

from __future__ import annotations

import ast
import json
import os
import pickle
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import libcst as cst
import pytest
from click.testing import CliRunner
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

import snlint
from snlint.engine import cache as cache_module
from snlint.engine import per_file, workers as stealing
from snlint.engine.cache import Cache
from snlint.cli import main
from snlint.config import Config, load_config
from snlint.engine.per_file import PerFile
from snlint.positions import layout
from snlint.source import extract, module_name
from snlint.source.scan_ast import scan_ast

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
        self.bn = nn.BatchNorm2d(b)
        self.head = nn.Conv2d(b, 1, 4, 1, 0)

    def forward(self, x):
        return self.head(self.bn(self.c2(self.c1(x))))
"""
# Torch-free, but the discriminator's widths come from here: read.
LAYERS = """\
def widths(base):
    return base, base * 2
"""
# Torch-free and imported by nothing: never given to libcst.
DOWNLOAD = """\
import urllib.request

URL = "https://example.org/data.zip"


def fetch(path):
    urllib.request.urlretrieve(URL, path)
"""
# Torch-free and broken: still reported.
BROKEN = "def f(:\n    pass\n"


def project(root: Path, files: dict[str, str] | None = None) -> Path:
    files = files or {"models/nets.py": NETS, "models/layers.py": LAYERS,
                      "models/__init__.py": "", "tools/download.py": DOWNLOAD,
                      "tools/broken.py": BROKEN}
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[tool.snlint]\n")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture
def stages(monkeypatch):
    """Every PerFile a CLI run makes, to read its step counts."""
    made: list[PerFile] = []
    original = PerFile.for_run.__func__

    def for_run(cls, config):
        stage = original(cls, config)
        made.append(stage)
        return stage

    monkeypatch.setattr(PerFile, "for_run", classmethod(for_run))
    return made


def cli(*args: str) -> str:
    result = CliRunner().invoke(main, [*args, "--no-graph", "--output-format", "json",
                                       "--exit-zero", "-q"])
    assert result.exit_code == 0, result.output
    return result.stdout


# ---------------------------------------------------------------------------- whole runs

def test_cold_warm_and_parallel_runs_report_the_same(tmp_path, stages, monkeypatch):
    root = project(tmp_path)
    cold = cli(str(root), "--jobs", "1")
    warm = cli(str(root), "--jobs", "1")  # answered whole by the run cache: no per-file stage
    # Another configuration is another run: the per-file cache has every file's facts.
    warm_facts = cli(str(root), "--jobs", "1", "--ignore", "SN999")
    monkeypatch.setattr(stealing, "MIN_SHARED_TEXT", 0)
    parallel = cli(str(root), "--jobs", "2", "--no-cache")
    assert cold == warm == warm_facts == parallel
    findings = json.loads(cold)
    codes = Counter(f["code"] for f in findings)
    assert codes["SN201"] == 1 and codes["SN301"] == 1 and codes["SN901"] == 1
    assert any(f["fix"] is not None for f in findings)  # the fixes are part of what is compared
    first, second, third = (s.stats for s in stages)
    # nets goes to libcst at once; the torch-free files are scanned first: broken goes to
    # libcst for its SN901 (CPython cannot parse it), layers (nets imports it) and the
    # empty __init__ (of the package nets imports from) are lowered after all; download
    # and broken are connected to nothing, and contribute no facts.
    assert (first["lowered"], first["scanned"], first["cached"], first["skipped"]) == (4, 3, 0, 2)
    assert (second["lowered"], second["scanned"], second["cached"]) == (0, 0, 5)
    # In workers: the first round, and the files imports connected after it.
    assert (third["cached"], third["parallel_rounds"]) == (0, 2)
    assert third["lowered"] == first["lowered"]


def test_jobs_1_equals_jobs_2_on_the_examples(monkeypatch):
    examples = Path(__file__).resolve().parent.parent / "examples"
    monkeypatch.setattr(stealing, "MIN_SHARED_TEXT", 0)
    assert cli(str(examples), "--jobs", "1", "--no-cache") == cli(str(examples), "--jobs", "2", "--no-cache")


def test_the_cache_folder_is_out_of_the_way(tmp_path, monkeypatch):
    monkeypatch.delenv("SNLINT_CACHE_DIR")
    root = project(tmp_path)
    cli(str(root))
    folder = root / ".snlint_cache"
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (folder / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    # Discovery never walks into it (a hidden folder), and it has entries.
    assert any(folder.rglob("facts-*/*/*"))


def test_no_cache_and_cache_false_write_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("SNLINT_CACHE_DIR")
    root = project(tmp_path)
    cli(str(root), "--no-cache")
    assert not (root / ".snlint_cache").exists()
    (root / "pyproject.toml").write_text("[tool.snlint]\ncache = false\n")
    cli(str(root))
    assert not (root / ".snlint_cache").exists()
    (root / "pyproject.toml").write_text('[tool.snlint]\ncache-dir = "build/lint-cache"\n')
    cli(str(root))
    assert (root / "build/lint-cache/.gitignore").is_file()


def test_cache_dir_from_the_command_line_or_the_environment(tmp_path, monkeypatch):
    root = project(tmp_path)
    (root / "pyproject.toml").write_text('[tool.snlint]\ncache-dir = "build/lint-cache"\n')
    monkeypatch.setenv("SNLINT_CACHE_DIR", str(tmp_path / "from-env"))
    cli(str(root))
    assert (tmp_path / "from-env/.gitignore").is_file()
    cli(str(root), "--cache-dir", str(tmp_path / "from-cli"))
    assert (tmp_path / "from-cli/.gitignore").is_file()
    assert not (root / "build").exists()


# ---------------------------------------------------------------------------- the cache

def stage_for(root: Path, directory: Path, salt: str | None = None) -> PerFile:
    config = Config(root=root, graph=False, jobs=1)
    return PerFile(config, cache=Cache(directory, salt))


def test_a_changed_file_is_lowered_again_an_unchanged_one_is_not(tmp_path):
    root = project(tmp_path, {"d.py": NETS})
    path = str(root / "d.py")
    first = stage_for(root, tmp_path / "c").results({path: NETS})
    second = stage_for(root, tmp_path / "c")
    again = second.results({path: NETS})
    assert second.stats["cached"] == 1 and second.stats["lowered"] == 0
    assert again[path].facts == first[path].facts
    assert again[path].facts.names.sites == first[path].facts.names.sites
    third = stage_for(root, tmp_path / "c")
    changed = third.results({path: NETS.replace("64", "32")})
    assert third.stats["lowered"] == 1 and third.stats["cached"] == 0
    assert changed[path].facts != first[path].facts


def test_a_change_of_root_is_a_miss(tmp_path):
    # The root names the module (facts hold qualified names): another root, other facts.
    root = project(tmp_path / "proj", {"pkg/d.py": NETS})
    path = str(root / "pkg/d.py")
    stage_for(root, tmp_path / "c").results({path: NETS})
    other = stage_for(root / "pkg", tmp_path / "c")
    found = other.results({path: NETS})
    assert other.stats["lowered"] == 1 and other.stats["cached"] == 0
    assert found[path].facts.module == "d"


def test_a_version_change_is_a_miss(tmp_path, monkeypatch):
    root = project(tmp_path, {"d.py": NETS})
    path = str(root / "d.py")
    cache_module.salt.cache_clear()
    before = cache_module.salt()
    stage_for(root, tmp_path / "c").results({path: NETS})
    monkeypatch.setattr(snlint, "__version__", "999.0")
    cache_module.salt.cache_clear()
    try:
        after = cache_module.salt()
        assert after != before
        stage = stage_for(root, tmp_path / "c")
        stage.results({path: NETS})
        assert stage.stats["lowered"] == 1 and stage.stats["cached"] == 0
    finally:
        monkeypatch.undo()
        cache_module.salt.cache_clear()


def test_a_corrupt_or_foreign_entry_is_ignored(tmp_path):
    root = project(tmp_path, {"d.py": NETS})
    path = str(root / "d.py")
    good = stage_for(root, tmp_path / "c").results({path: NETS})
    entries = [p for p in (tmp_path / "c").rglob("*") if p.is_file() and p.parent.name != "c"]
    assert len(entries) == 1
    entry = entries[0]
    data = entry.read_bytes()
    for bad in (data[: len(data) // 2], b"not a pickle",
                # A pickle that would run code: refused, not run.
                pickle.dumps(os.system), pickle.dumps((path, "d.py", "x", os.getcwd))):
        entry.write_bytes(bad)
        stage = stage_for(root, tmp_path / "c")
        assert stage.results({path: NETS})[path].facts == good[path].facts
        assert stage.stats["lowered"] == 1
    # ... and the entry was written again, whole.
    stage = stage_for(root, tmp_path / "c")
    stage.results({path: NETS})
    assert stage.stats["cached"] == 1


def test_an_unwritable_cache_only_costs_time(tmp_path):
    root = project(tmp_path, {"d.py": NETS})
    blocker = tmp_path / "c"
    blocker.write_text("a file where the folder would be")
    stage = stage_for(root, blocker)
    found = stage.results({str(root / "d.py"): NETS})
    assert found[str(root / "d.py")].facts is not None and stage.cache.writes == 0


# ---------------------------------------------------------------------------- the prefilter

def test_the_prefilter_skips_a_torch_free_file_and_reads_one_a_torch_file_imports(tmp_path):
    root = project(tmp_path)
    texts = {str(root / n): (root / n).read_text()
             for n in ("models/nets.py", "models/layers.py", "tools/download.py")}
    stage = PerFile(Config(root=root, graph=False, jobs=1))
    found = stage.results(texts)
    assert found[str(root / "models/layers.py")].facts is not None
    assert found[str(root / "models/nets.py")].facts is not None
    skipped = found[str(root / "tools/download.py")]
    assert (skipped.facts, skipped.finding, skipped.lowered) == (None, None, False)
    assert stage.stats["scanned"] == 2 and stage.stats["lowered"] == 2  # layers: scanned, then lowered
    everything = PerFile(Config(root=root, graph=False, jobs=1), prefilter=False).results(texts)
    assert everything[str(root / "tools/download.py")].facts is not None


def test_a_script_that_imports_a_model_file_is_read(tmp_path):
    root = project(tmp_path, {"models/nets.py": NETS, "models/layers.py": LAYERS,
                              "run.py": "from models.nets import Discriminator\n\nmodel = Discriminator()\n"})
    texts = {str(p): p.read_text() for p in sorted(root.rglob("*.py"))}
    found = PerFile(Config(root=root, graph=False, jobs=1)).results(texts)
    assert found[str(root / "run.py")].facts is not None


def test_option_declarations_are_read_wherever_they_are(tmp_path):
    # The link step reads every `add_argument` default of the project, imported or not.
    options = "import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument('--ndf', default=8)\n"
    assert per_file.matters(options)
    assert not per_file.matters(DOWNLOAD) and not per_file.matters(LAYERS)


def test_a_prefiltered_file_with_a_cached_lowering_stays_skipped(tmp_path):
    # A run where an import connected a file caches its facts; a run where nothing does
    # must not use them, or a warm run would differ from a cold one.
    root = project(tmp_path)
    nets, layers = str(root / "models/nets.py"), str(root / "models/layers.py")
    stage_for(root, tmp_path / "c").results({nets: NETS, layers: LAYERS})
    alone = stage_for(root, tmp_path / "c").results({layers: LAYERS})
    assert alone[layers].facts is None


# ---------------------------------------------------------------------------- one parse

TRICKY = '''\
import os, a.b as ab
from . import x as y
from m import *
try:
    from new import thing
except ImportError:
    from old import thing
a, *b = [c, (d, e)] = f()
del dd, (ee, ff), gg.attr
global gl
with open(p) as fh, ctx() as (w1, w2):
    pass
if (walrus := compute()) and True is not None:
    print(f"{fx!r:>{width}}", sep=sepv, *star, **kw)
lam = lambda la, lb=ldef, *lc, **le: la + lb
comp = [cx for cx in cy if cx]
class C(Base, metaclass=Meta):
    def method(self, m1, /, m2=3, *, m3: Ann = d3, **m4) -> Ret:
        global gl2
        gl2 = loc = 2
        from inner import thing2
        def nested(n1):
            nonlocal loc
        try:
            pass
        except ValueError as err:
            pass
        return loc
@decorator
async def afunc(a1):
    async for af in aiter():
        await af
def \\
  split(bs):
    bsl = 1
match command:
    case [ma, *mrest]:
        pass
    case {"k": mv, **mkw}:
        pass
    case Point(x=px, y=0) | None:
        pass
'''


def _ast_counts(text: str) -> tuple[Counter, Counter]:
    """Loads and stores of each name as Python's ast has them (plus parameters, definition
    names and captures, which ast does not spell as names)."""
    reads, bound = Counter(), Counter()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Name):
            (reads if isinstance(node.ctx, ast.Load) else bound if isinstance(node.ctx, ast.Store)
             else Counter())[node.id] += 1
        elif isinstance(node, ast.arg):
            bound[node.arg] += 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler,
                               ast.MatchAs, ast.MatchStar)) and node.name:
            bound[node.name] += 1
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound[node.rest] += 1
    return reads, bound


def test_names_are_counted_off_the_one_tree_as_ast_counts_them():
    scopes = scan_ast(ast.parse(TRICKY), "pkg.mod", False)
    reads, bound = _ast_counts(TRICKY)
    assert scopes.reads == reads and scopes.bound == bound
    assert scopes.mentioned == {"dd", "ee", "ff", "gl", "gl2", "loc"}
    assert scopes.imports["thing"] == "new.thing"  # the fallback import does not rebind it
    assert scopes.star == ["m"]
    lines = TRICKY.splitlines()
    method = next(i for i, line in enumerate(lines, 1) if "def method" in line)
    split = next(i for i, line in enumerate(lines, 1) if line.startswith("def \\"))
    # Imports are not bindings here (the file's import table has them).
    assert scopes.functions[(method, "method")] == {"self", "m1", "m2", "m3", "m4", "loc",
                                                    "nested", "err"}
    assert scopes.functions[(split, "split")] == {"bs", "bsl"}
    assert {"a", "b", "c", "d", "e", "fh", "w1", "w2", "walrus", "lam", "comp", "C", "afunc",
            "split", "gl"} <= scopes.module_names | {"gl"}
    assert "cx" not in scopes.module_names  # a comprehension's own scope


def test_the_position_table_is_libcsts(tmp_path):
    module = cst.parse_module(NETS + TRICKY)
    positions, parents = layout(module)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    expected = wrapper.resolve(PositionProvider)
    assert list(positions) == list(expected)  # the node indices
    assert all(positions[n].start == (r.start.line, r.start.column)
               and positions[n].end == (r.end.line, r.end.column) for n, r in expected.items())
    assert dict(parents.items()) == dict(wrapper.resolve(ParentNodeProvider))


def test_imported_files_use_the_modules_the_source_pass_read(tmp_path, monkeypatch):
    from snlint.engine import imported_files

    root = project(tmp_path)
    config = load_config(root, graph=False)

    def no_second_parse(*args):
        raise AssertionError("parsed again")

    monkeypatch.setattr(imported_files, "ast_modules", no_second_parse)
    nets = os.path.relpath(root / "models/nets.py")
    stage = PerFile(config)
    found = imported_files.imported_sources({nets: NETS}, config, modules=stage.modules)
    assert sorted(Path(p).name for p in found) == ["layers.py"]


# ---------------------------------------------------------------------------- start-up

def test_the_one_file_path_imports_only_what_it_uses(tmp_path):
    (tmp_path / "d.py").write_text(NETS)
    script = textwrap.dedent("""
        import sys
        from snlint.cli import main
        try:
            main(["d.py", "--no-graph", "--output-format", "concise"])
        except SystemExit:
            pass
        print(" ".join(sorted(sys.modules)))
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    loaded = set(out.stdout.split()[-1000:]) if out.stdout else set()
    assert "snlint.engine.lint" in loaded, out.stderr
    unused = {"torch", "hypothesis", "importlib.metadata", "multiprocessing",
              "concurrent.futures", "libcst.codemod", "snlint.report.sarif",
              "snlint.report.json", "snlint.report.github"}
    assert loaded & unused == set()


def test_facts_are_the_same_through_the_stage_as_alone(tmp_path):
    root = project(tmp_path, {"d.py": NETS})
    path = str(root / "d.py")
    alone = extract(NETS, path, "d.py")
    staged = PerFile(Config(root=root, graph=False, jobs=1)).results({path: NETS})[path].facts
    assert staged == alone and staged.names.sites == alone.names.sites
    assert module_name("pkg/__init__.py") == ("pkg", True)


def test_the_default_jobs_are_the_cores_this_process_may_use(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 2, 5}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 9.0, 9.0), raising=False)
    assert per_file.default_jobs() == 3


def test_a_file_the_configuration_names_is_read_whatever_it_says(tmp_path):
    root = project(tmp_path, {"nets/plain.py": DOWNLOAD})
    path = str(root / "nets/plain.py")
    named = Config(root=root, graph=False, jobs=1, discriminators=["./nets/plain.py:Critic"])
    assert PerFile(named).results({path: DOWNLOAD})[path].facts is not None
    assert PerFile(Config(root=root, graph=False, jobs=1)).results({path: DOWNLOAD})[path].facts is None


def test_a_chunk_whose_worker_fails_is_done_here(tmp_path, monkeypatch):
    root = project(tmp_path, {f"m{i}.py": NETS for i in range(6)})
    texts = {str(root / f"m{i}.py"): NETS for i in range(6)}
    serial = PerFile(Config(root=root, graph=False, jobs=1)).results(texts)
    parent, original = os.getpid(), per_file._work

    def fails_in_a_worker(items):
        if os.getpid() != parent:
            raise MemoryError("killed")
        time.sleep(0.1)  # the worker takes a chunk while this process works on one
        return original(items)

    monkeypatch.setattr(per_file, "_work", fails_in_a_worker)
    monkeypatch.setattr(stealing, "MIN_SHARED_TEXT", 0)
    stage = PerFile(Config(root=root, graph=False, jobs=2))
    found = stage.results(texts)
    # The worker stops at the chunk it failed on; this process does that one again.
    assert stage.stats["parallel_rounds"] == 1 and stage.stats["worker_failures"] == 1
    assert [f.facts for f in found.values()] == [f.facts for f in serial.values()]


def test_folders_of_other_versions_unused_for_a_week_are_removed(tmp_path):
    root = project(tmp_path, {"d.py": NETS})
    old, recent = tmp_path / "c/facts-old", tmp_path / "c/facts-recent"
    for folder in (old, recent):
        (folder / "ab").mkdir(parents=True)
        (folder / "ab/cd").write_bytes(b"x")
    week_ago = time.time() - cache_module.PRUNE_AFTER - 60
    os.utime(old, (week_ago, week_ago))
    stage_for(root, tmp_path / "c").results({str(root / "d.py"): NETS})
    assert not old.exists() and recent.exists()


def test_every_fact_pickles_to_an_equal_fact_with_its_node_indices():
    # Facts pickle by their fields' values (findings.record): the cache and the workers
    # must give back what was lowered, node indices (not part of equality) included.
    facts = extract(NETS, "models/nets.py", "models/nets.py")
    again = pickle.loads(pickle.dumps(facts, protocol=pickle.HIGHEST_PROTOCOL))
    assert again == facts
    assert again.names.sites == facts.names.sites
    assert [s.node for s in again.names.sites] == [s.node for s in facts.names.sites]
    assert all(s.node is not None for s in again.names.sites)


def test_the_stage_leaves_its_facts_in_the_oldest_generation(tmp_path):
    # Made with the collector off, they would all sit in the youngest generation, and the
    # first collection after the stage would scan every one of them again.
    import gc

    root = project(tmp_path, {"d.py": NETS})
    path = str(root / "d.py")
    facts = PerFile(Config(root=root, graph=False, jobs=1)).results({path: NETS})[path].facts
    young = {id(o) for generation in (0, 1) for o in gc.get_objects(generation=generation)}
    assert gc.is_tracked(facts.classes) and id(facts.classes) not in young
    assert gc.isenabled() and not gc.get_freeze_count()
