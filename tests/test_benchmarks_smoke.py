"""The benchmark scripts work: the corpus generator and the harness's --quick mode.

Structure only, never a timing: speed and memory are measured in benchmarks/, as ratios
against peers run in the same process group, not asserted here.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _corpus_module():
    spec = importlib.util.spec_from_file_location("snlint_benchmark_corpus", BENCHMARKS / "corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_corpus_writes_the_same_three_files_for_the_same_seed(tmp_path):
    corpus = _corpus_module()
    first = corpus.generate(3, seed=0, out=tmp_path / "a")
    second = corpus.generate(3, seed=0, out=tmp_path / "b")
    assert len(first.files) == 3
    assert sorted(str(p.relative_to(first.root)) for p in first.root.rglob("*.py")) == first.files
    assert first.digest == second.digest
    assert first.summary()["files"] == 3 and sum(first.kinds.values()) == 3


def test_every_template_and_planted_mistake_generates_valid_python(monkeypatch):
    corpus = _corpus_module()
    for rate in (0.0, 1.0):  # no mistakes; a mistake in every file that can hold one
        monkeypatch.setattr(corpus, "MISTAKE_RATE", rate)
        files, kinds, planted = corpus.generate_files(150, seed=1)
        assert len(files) == 150
        assert set(kinds) == {"dcgan", "sngan", "biggan", "wgangp", "patch", "util"}
        assert bool(planted) == (rate > 0)
        for path, text in files.items():
            compile(text, path, "exec")


TARGETS = {"cold_vs_torchfix", "cold_vs_floor", "warm_vs_cold", "touched_vs_one", "fix_vs_lint",
           "one_vs_torchfix", "memory", "scaling"}


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCHMARKS / "run.py"), "--quick", "--quiet", *args],
                          capture_output=True, text=True, timeout=300, check=False)


def _script(path: Path, body: str) -> str:
    path.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
    path.chmod(0o755)
    return str(path)


def test_quick_run_measures_this_build_and_says_what_it_cannot(tmp_path):
    output = tmp_path / "results.json"
    proc = _run("--no-torchfix", "--no-ruff", "--output", str(output))
    assert proc.returncode == 0, proc.stderr
    results = json.loads(output.read_text(encoding="utf-8"))
    assert results["quick"] is True and results["settings"]["repeat"] == 1
    assert set(results["corpora"]) == {"gen-2", "gen-3", "gen-4", "examples"}
    main = results["corpora"]["gen-3"]
    assert main["corpus"]["files"] == 3 and main["full"] is True
    measured = {"python_startup", "ast_parse", "libcst_parse", "snlint_cold", "snlint_fix", "snlint_one"}
    assert measured <= set(main["cases"])
    for name in measured:
        case = main["cases"][name]
        assert case["runs"] == 1
        assert set(case["wall_s"]) == {"median", "min", "max", "all"}
        assert case["maxrss_kb"]["max"] > 0
        assert set(case["exit_codes"]) <= {0, 1}, case.get("stderr_tail")
    assert isinstance(main["cases"]["snlint_fix"]["files_changed"], int)
    # Every row is either measured or says why not (no TorchFix here; cache and --jobs per build).
    for name in ("torchfix", "torchfix_one", "ruff", "snlint_warm", "snlint_touched", "snlint_edited",
                 "snlint_cold_jobs1"):
        assert (name in main["cases"]) != (name in main["skipped"]), name
    assert main["skipped"]["torchfix"] == "TorchFix not installed"
    assert set(results["corpora"]["gen-2"]["cases"]) == {"libcst_parse", "snlint_cold"}
    assert "snlint_graph" in results["corpora"]["examples"]["skipped"]  # --quick: no graph rounds
    assert {t["key"] for t in results["targets"]} == TARGETS
    for t in results["targets"]:
        assert t["status"] in {"pass", "fail", "n/a"}
        assert (t["value"] is None) == (t["status"] == "n/a") or t["key"] == "fix_vs_lint"
    by_key = {t["key"]: t for t in results["targets"]}
    assert by_key["cold_vs_torchfix"]["note"] == "TorchFix not installed"
    assert [row["files"] for row in results["scaling"]] == [2, 3, 4]


FAKE_SNLINT = r"""import pathlib, sys
args = sys.argv[1:]
if "--help" in args:
    print("--no-cache --jobs INTEGER --fix --graph / --no-graph --output-format")
elif "--version" in args:
    print("snlint 0 (a stand-in)")
else:
    if "--no-cache" not in args:
        pathlib.Path(".snlint_cache").mkdir(exist_ok=True)
    if "--fix" in args:
        first = sorted(pathlib.Path(".").rglob("*.py"))[0]
        first.write_text(first.read_text() + "# fixed\n")
    sys.exit(1)
"""


def test_quick_run_with_a_cached_parallel_build_and_peers_fills_every_row(tmp_path):
    """Stand-ins for a build with a cache and --jobs, for TorchFix and for ruff: every case
    runs, every target is decided, a real corpus is measured from a copy, and the results
    section lands between the README markers and renders again from the JSON."""
    snlint = _script(tmp_path / "snlint", FAKE_SNLINT)
    peer = _script(tmp_path / "peer", "print('peer 1.0')\n")
    real = tmp_path / "real"
    (real / "pkg").mkdir(parents=True)
    (real / "pkg" / "nets.py").write_text("import torch.nn as nn\n\nclass Discriminator(nn.Module):\n    pass\n")
    (real / "train.py").write_text("from pkg.nets import Discriminator\n")
    (real / ".hidden").mkdir()
    (real / ".hidden" / "skip.py").write_text("x = 1\n")
    readme = tmp_path / "README.md"
    readme.write_text("# benchmarks\n\n<!-- results:begin -->\nthe previous results\n<!-- results:end -->\n\nafter\n")
    output = tmp_path / "results.json"
    proc = _run("--snlint", f"{sys.executable} {snlint}", "--torchfix", peer, "--ruff", peer,
                "--corpus", str(real), "--graph-repeat", "1", "--output", str(output), "--markdown", str(readme))
    assert proc.returncode == 0, proc.stderr
    results = json.loads(output.read_text(encoding="utf-8"))
    assert results["machine"]["snlint_cache"] is True and results["machine"]["snlint_jobs"] is True
    for name in ("gen-3", "real"):
        corpus = results["corpora"][name]
        assert corpus["skipped"] == {}, name
        assert {"snlint_warm", "snlint_touched", "snlint_edited", "snlint_cold_jobs1", "torchfix",
                "torchfix_one", "ruff"} \
            <= set(corpus["cases"])
        assert corpus["cases"]["snlint_fix"]["files_changed"] == 1
    assert results["corpora"]["real"]["corpus"]["files"] == 2  # the hidden folder left out
    assert (real / "pkg" / "nets.py").read_text().endswith("pass\n")  # the original untouched
    assert {t["status"] for t in results["targets"]} <= {"pass", "fail"}
    assert {t["corpus"] for t in results["targets"]} == {"gen-2", "gen-3", "gen-4", "real", "gen-2,3,4"}
    examples = results["corpora"]["examples"]
    assert set(examples["cases"]) == {"snlint_graph", "snlint_no_graph"} or examples["skipped"]

    text = readme.read_text(encoding="utf-8")
    assert text.startswith("# benchmarks\n") and text.endswith("<!-- results:end -->\n\nafter\n")
    assert "the previous results" not in text and "### Targets (issue 13)" in text
    section = text.split("<!-- results:begin -->\n", 1)[1].split("<!-- results:end -->", 1)[0]
    again = tmp_path / "again.md"
    assert _run("--from-json", str(output), "--markdown", str(again)).returncode == 0
    assert section in again.read_text(encoding="utf-8")
