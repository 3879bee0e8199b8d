"""What a run builds and drops is freed by reference counting, not left in cycles for the
cyclic collector: a fixed file's libcst tree, and the functions the link step calls. A
cycle through a closure that calls itself holds everything it closes over (the link
model of a whole part) until a collection scans it."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from snlint.config import Config
from snlint.engine import lint_sources

NETS = """\
import torch.nn as nn
from torch.nn.utils.parametrizations import spectral_norm


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))
        self.body = nn.Sequential(spectral_norm(nn.Conv2d(64, 128, 4, 2, 1)), nn.LeakyReLU(0.2))
        self.head = nn.Conv2d(128, 1, 4, 1, 0)

    def forward(self, x):
        return self.head(self.body(self.c1(x)))
"""


@pytest.fixture
def saved_garbage():
    """What the collector finds from here on, kept in `gc.garbage` for the test to read."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield gc.garbage
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def test_a_parsed_file_is_freed_when_dropped():
    from snlint.edit.parsed import ParsedFile

    enabled = gc.isenabled()
    gc.disable()
    try:
        parsed = ParsedFile("d.py", NETS)
        assert parsed.names.parsed.text == NETS
        gone = weakref.ref(parsed)
        del parsed
        assert gone() is None
    finally:
        if enabled:
            gc.enable()


def test_the_link_step_leaves_no_function_in_a_cycle(saved_garbage, tmp_path: Path):
    config = Config(root=tmp_path, graph=False, jobs=1)
    findings = lint_sources({str(tmp_path / "d.py"): NETS}, config)
    assert [f.code for f in findings] == ["SN201"]
    gc.collect()
    assert [f.__qualname__ for f in saved_garbage if type(f).__name__ == "function"] == []
