"""The parent side stays torch-free, and facts survive the trip through JSON."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("torch")

from snlint.graph.facts import GraphTarget, LeafFacts, Site, SNState, TargetFacts  # noqa: E402


def test_parent_modules_never_import_torch():
    code = "import snlint, snlint.graph, snlint.graph.runner, snlint.graph_pass, snlint.link.join, snlint.checks.registry, snlint.checks.sn301"
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", code],
                            capture_output=True, text=True, check=True)
    imported = [line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()]
    assert not [name for name in imported if name.split(".")[0] == "torch"]
    assert "snlint.live_audit" not in imported


def test_target_facts_round_trip_through_json():
    site = Site("/p/d.py", 3, 5, 3, 20)
    facts = TargetFacts(
        GraphTarget("/p/d.py", "d.py", "D", {"ndf": 64}, "/p"),
        modules=[LeafFacts("blocks.0.c", "Conv2d", "torch.nn.modules.conv.Conv2d", "conv",
                           (3, 3), (8, 3, 3, 3),
                           [SNState("parametrization", "weight", 0, site, (8, 3, 3, 3), site)],
                           site, 4, True, False, site, None, False)],
        trace_ok=True, batch_norm_calls=[site, None],
        batch_reductions=[("`.std()`", site), ("`mean()`", None)],
        probe={"ran": True, "coupled": True, "reason": "", "input_shape": [4, 3, 32, 32]},
        error_site=site, seconds=0.5,
    )
    assert TargetFacts.from_dict(json.loads(json.dumps(facts.to_dict()))) == facts
