"""The runner reports progress to its caller: as each target starts, while it runs, and
at the end."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from graph_helpers import write  # noqa: E402

from snlint.graph import GraphTarget, run_graph  # noqa: E402
from snlint.graph.runner import TICK  # noqa: E402

SLOW = '''
import time
import torch.nn as nn


class SlowDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        time.sleep({seconds})
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc(x)


class QuickDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc(x)
'''


def test_progress_reports_each_target_ticks_while_it_runs_and_ends_with_none(tmp_path):
    path = write(tmp_path, "d.py", SLOW.format(seconds=4 * TICK))
    targets = [GraphTarget(str(path), "d.py", cls, None, str(tmp_path))
               for cls in ("SlowDiscriminator", "QuickDiscriminator")]
    calls = []
    results = run_graph(targets, timeout=60,
                        progress=lambda n, total, t: calls.append((n, total, t and t.class_name)))
    assert [r.status for r in results] == ["ok", "ok"]
    distinct = list(dict.fromkeys(calls))
    assert distinct == [(1, 2, "SlowDiscriminator"), (2, 2, "QuickDiscriminator"), (2, 2, None)]
    # The slow build (and the worker's torch import before it) kept the clock ticking.
    assert calls.count((1, 2, "SlowDiscriminator")) >= 4
    assert calls[-1] == (2, 2, None)
