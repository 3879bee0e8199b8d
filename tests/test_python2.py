"""Python 2 files keep their SN901 and are read as Python 2 for the rest
(snlint.source.python2): a line-for-line Python 3 rendering, used only when it parses."""

from __future__ import annotations

import ast

import pytest

from snlint.source.python2 import as_python3
from projects import lint_in as lint


def parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


@pytest.mark.parametrize("py2, py3", [
    ("print x", "print(x)"),
    ("print 'a #1', x", "print('a #1', x)"),
    ("print x,", 'print(x, end=" ")'),
    ("print >>sys.stderr, 'no'", "print('no', file=sys.stderr)"),
    ("print", "print()"),
    ("if x: print y  # note", "if x: print(y)  # note"),
    ("try:\n    f()\nexcept ValueError, e:\n    pass", "try:\n    f()\nexcept ValueError as e:\n    pass"),
    ("raise ValueError, 'bad'", "raise ValueError('bad')"),
    ("if a <> b:\n    pass", "if a != b:\n    pass"),
    ("y = `x`", "y = repr(x)"),
    ("os.chmod(p, 0755)", "os.chmod(p, 0o755)"),
    ("n = 10L", "n = 10"),
    ("if x:\n\tif y:\n\t        z = 1", "if x:\n        if y:\n                z = 1"),
    ("x = x.cuda(async=True)", "x = x.cuda(_sync=True)"),
    ("f(a, async = True)", "f(a, _sync = True)"),
])
def test_python2_lines_are_rendered_line_for_line(py2, py3):
    assert as_python3(py2, parses) == py3


def test_python3_and_what_cannot_be_rendered_give_nothing():
    assert as_python3("print(x)\n", parses) is None  # nothing to change
    assert as_python3("print x\ndef f(:\n", parses) is None  # still does not parse


def test_a_python2_training_script_keeps_its_sn901_and_its_sn401(tmp_path):
    # DCPDN: `if lambdaIMG <> 0:` in the script that holds the training step.
    findings = lint(tmp_path, {"nets.py": '''
        import torch.nn as nn

        class D(nn.Module):
            def __init__(self):
                super(D, self).__init__()
                self.conv = nn.Conv2d(6, 64, 4, 2, 1)
                self.bn = nn.BatchNorm2d(64)

            def forward(self, x):
                return self.bn(self.conv(x))
    ''', "train.py": '''
        import torch
        import torch.nn as nn
        from nets import D

        netD, netG = D(), nn.Conv2d(3, 3, 1)
        for i, (real, cond) in enumerate(torch.utils.data.DataLoader([])):
            d_real = netD(torch.cat([cond, real], 1))
            fake = netG(cond)
            d_fake = netD(torch.cat([cond, fake.detach()], 1))
            if i <> 0:
                print 'step', i
    '''})
    assert [(f.code, f.path, f.line) for f in findings] == [
        ("SN301", "nets.py", 8), ("SN401", "train.py", 8), ("SN901", "train.py", 11)]
    assert findings[2].message.endswith("(read as Python 2 for its other findings; not fixed)")


def test_a_training_script_with_async_keyword_arguments_keeps_its_sn401(tmp_path):
    # Synthetic2Realistic: `.cuda(self.gpu_ids[0], async=True)`, valid Python until 3.7.
    findings = lint(tmp_path, {"train.py": '''
        import torch
        import torch.nn as nn

        class D(nn.Module):
            def __init__(self):
                super(D, self).__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.bn = nn.BatchNorm2d(64)

            def forward(self, x):
                return self.bn(self.conv(x))

        netD, netG = D(), nn.Conv2d(3, 3, 1)
        for real in torch.utils.data.DataLoader([]):
            real = real.cuda(0, async=True)
            d_real = netD(real)
            d_fake = netD(netG(real).detach())
    '''})
    assert [(f.code, f.line) for f in findings] == [("SN301", 9), ("SN901", 16), ("SN401", 17)]
