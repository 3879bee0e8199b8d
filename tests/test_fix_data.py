"""`Finding.data`, the typed record a check hands its fix, survives the run cache: the
cache's unpickler admits `snlint.checks.fix_data` and reading it imports no rule."""

from __future__ import annotations

import io
import pickle
import subprocess
import sys

import pytest

from snlint.checks.fix_data import InitParam, LinkedInits, MissingSN, Owners, SNCall
from snlint.engine.cache import _Unpickler
from snlint.findings import Finding, Location, Span


@pytest.mark.parametrize("data", [
    SNCall("hook", "Conv2d", "conv", True, "parametrization"),
    InitParam("weight", "Generator"),
    MissingSN("Linear", "parametrization", "spectral_norm", apart=True),
    Location("train.py", Span(12, 9, 12, 20)),
    LinkedInits(((123, "d.py", 40),), ((123, "d.py", 40),)),
    Owners(frozenset({"models.py:ContextDiscriminator", "models.py:LocalDiscriminator"})),
])
def test_a_findings_data_comes_back_from_the_cache_as_it_went_in(data):
    finding = Finding("SN101", "name", "error", "message", "d.py", Span(1, 1, 1, 2), data=data)
    back = _Unpickler(io.BytesIO(pickle.dumps(finding))).load()
    assert type(back.data) is type(data) and back.data == data


def test_reading_the_records_back_imports_no_rule_module():
    blob = pickle.dumps(SNCall("hook", "Conv2d"))
    code = ("import io, pickle, sys; from snlint.engine.cache import _Unpickler; "
            f"_Unpickler(io.BytesIO({blob!r})).load(); "
            "print(sorted(m for m in sys.modules if m.startswith(('snlint.checks.', 'snlint.link'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['snlint.checks.fix_data']"
