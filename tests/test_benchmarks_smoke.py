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


def test_quick_run_writes_cases_and_ratios(tmp_path):
    output = tmp_path / "results.json"
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "run.py"), "--quick", "--quiet", "--output", str(output)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads(output.read_text(encoding="utf-8"))
    assert results["quick"] is True
    assert results["corpus"]["files"] == 3
    assert results["settings"]["repeat"] == 1
    expected = {"parse_floor", "engine_source", "python_startup", "precommit_snlint",
                "precommit_parse_floor"}
    assert expected <= set(results["cases"])
    for name in expected:
        case = results["cases"][name]
        assert case["runs"] == 1
        assert set(case["wall_s"]) == {"median", "min", "max", "all"}
        assert set(case["exit_codes"]) <= {0, 1}, case.get("stderr_tail")
    assert "maxrss_kb" in results["cases"]["precommit_snlint"]
    assert set(results["cases"]["engine_source"]["stages_cpu_s"]) >= {"parse", "lower", "link", "fixes"}
    for name in ("snlint_engine_over_parse_floor", "precommit_over_python_startup"):
        assert set(results["ratios"][name]) == {"cpu", "wall"}
    assert set(results["precommit"]) == {"files", "wall_s", "cpu_s", "under_one_second_wall",
                                         "under_one_second_cpu"}
    assert set(results["tracemalloc_peak_bytes"]) == {"parse_floor", "engine_source", "ratio"}
    assert results["profile"]["top_self"] and results["profile"]["top_snlint_cumulative"]
