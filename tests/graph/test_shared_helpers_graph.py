"""Both passes agree where a finding points when a batch norm is built in a helper the
generator runs too (issue 32): one finding per discriminator at its own line, confirmed
by the built model, never a second one at the helper's line; and a feature network that
keeps itself in eval mode through its own `train()` has no SN301 from either pass."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

pytest.importorskip("torch")

from snlint.cli import main  # noqa: E402
from projects import write_project  # noqa: E402
from test_shared_helpers import FROZEN_FEATURES, KAIR  # noqa: E402


def lint_json(root, monkeypatch, *args: str) -> tuple[int, list[dict]]:
    monkeypatch.chdir(root)
    result = CliRunner().invoke(main, [".", "--output-format", "json", *args])
    return result.exit_code, json.loads(result.stdout)


def test_a_helper_built_batch_norm_is_one_finding_per_discriminator_with_the_graph_pass(tmp_path, monkeypatch):
    write_project(tmp_path, KAIR)
    _, found = lint_json(tmp_path, monkeypatch, "--graph")
    assert [(o["code"], o["path"], o["line"], o["pass"]) for o in found] == [
        ("SN301", "models/networks.py", 16, "source+graph"),
        ("SN301", "models/networks.py", 30, "source+graph")]
    assert [[(r["path"], r["line"]) for r in o["related"]] for o in found] == [
        [("models/basicblock.py", 11)], [("models/basicblock.py", 11)]]


def test_a_feature_network_kept_in_eval_by_its_own_train_has_no_sn301_in_either_pass(tmp_path, monkeypatch):
    write_project(tmp_path, {"nets.py": FROZEN_FEATURES})
    assert lint_json(tmp_path, monkeypatch, "--no-graph") == (0, [])
    assert lint_json(tmp_path, monkeypatch, "--graph") == (0, [])
