"""The graph-pass tests build real torch modules; without torch the folder is skipped
(the graph pass is optional). Shared helpers are in graph_helpers.py."""

import importlib.util

if importlib.util.find_spec("torch") is None:  # pragma: no cover - torch-less installs
    collect_ignore_glob = ["test_*.py"]
