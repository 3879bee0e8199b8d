"""The graph-pass tests build real torch modules; without torch the folder is skipped
(the graph pass is optional). Shared helpers are in graph_helpers.py."""

import importlib.util

import pytest

if importlib.util.find_spec("torch") is None:  # pragma: no cover - torch-less installs
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture(autouse=True)
def _seeded_torch():
    """Modules built in a test draw their weights from torch's global generator. Seeded per
    test, a test's verdict does not depend on which tests ran before it in the process."""
    import torch

    torch.manual_seed(0)
