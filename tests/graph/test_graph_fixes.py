"""A finding only the graph pass makes is at a position (the runtime records no syntax):
its fix is at the node the source pass read there, found through the source facts."""

from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("torch")

from snlint.config import Config  # noqa: E402
from snlint.engine import run  # noqa: E402

# The source cannot tell what `LAYERS.get(kind, nn.Conv2d)` builds; the built model shows
# a Conv2d there without SN, next to one with SN.
OPAQUE = '''
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm

    LAYERS = {}


    class Discriminator(nn.Module):
        def __init__(self, kind="Conv2d"):
            super().__init__()
            self.a = spectral_norm(nn.Conv2d(3, 8, 3))
            self.b = LAYERS.get(kind, nn.Conv2d)(8, 8, 3)

        def forward(self, x):
            return self.b(self.a(x))
'''


def test_a_graph_only_finding_is_fixed_at_the_call_the_source_pass_read(tmp_path):
    (tmp_path / "d.py").write_text(textwrap.dedent(OPAQUE))
    findings = [f for f in run([str(tmp_path)], Config(root=tmp_path, graph=True), fixes=True).findings
                if not f.is_diagnostic]
    assert [(f.code, f.line, f.column, f.pass_) for f in findings] == [("SN201", 12, 18, "graph")]
    assert findings[0].node is None  # a position: the runtime has no node to give
    new = findings[0].fix.edits[0].new_text
    assert "        self.b = spectral_norm(LAYERS.get(kind, nn.Conv2d)(8, 8, 3))\n" in new
    assert new.replace("spectral_norm(LAYERS.get(kind, nn.Conv2d)(8, 8, 3))",
                       "LAYERS.get(kind, nn.Conv2d)(8, 8, 3)") == textwrap.dedent(OPAQUE)
