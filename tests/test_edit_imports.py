"""snlint.edit.imports adds the imports a fix needs exactly as libcst.codemod's
AddImportsVisitor would (it replaced the codemod, which costs a quarter of a second to
import and rebuilds the whole tree twice): same text, on every kind of module top."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import MetadataWrapper

from snlint.edit.imports import add_imports
from snlint.edit.plan import ImportSpec

TOPS = {
    "empty": "",
    "code only": "x = 1\n",
    "docstring": '"""Doc."""\nimport os\n\nx = 1\n',
    "docstring alone": '"""Doc."""\n',
    "strict": "__strict__ = True\nimport os\nx = 1\n",
    "comment before code": "import os\n# the model\nclass D:\n    pass\n",
    "blank line kept": "import os\n\n\nclass D:\n    pass\n",
    "from import to merge": "from torch.nn.utils.parametrizations import weight_norm\nimport torch\n\nx = 1\n",
    "parenthesized": "from torch.nn import (\n    Conv2d,\n    Linear,\n)\n\nx = 1\n",
    "already there": "from torch.nn.utils.parametrizations import spectral_norm\nimport torch\nimport functools\n\nx = 1\n",
    "aliased": "from torch.nn.utils.parametrizations import spectral_norm as sn\nimport torch as T\nx = 1\n",
    "star": "from torch.nn import *\nx = 1\n",
    "relative": "from .layers import block\nfrom torch.nn import Conv2d\nx = 1\n",
    "nested import only": "def f():\n    from torch.nn import BatchNorm2d\n    return BatchNorm2d\n",
    "after code": "x = 1\nimport torch\n",
    "two on a line": "import os; import sys\nx = 1\n",
    "future": "from __future__ import annotations\n\nimport torch.nn as nn\n\nclass D(nn.Module):\n    pass\n",
    "try import": "try:\n    import torch\nexcept ImportError:\n    torch = None\n",
    "crlf": "import os\r\n\r\nx = 1\r\n",
    "tabs": "import os\nif True:\n\tx = 1\n",
    "dotted import": "import torch.nn\nimport torch.nn.utils\nx = 1\n",
    "merge twice": "from torch.nn import Conv2d\nfrom torch.nn import Linear\nx = 1\n",
}
SPECS = {
    "sn": [ImportSpec("torch.nn.utils.parametrizations", "spectral_norm")],
    "sn as": [ImportSpec("torch.nn.utils.parametrizations", "spectral_norm", "sn")],
    "module": [ImportSpec("torch")],
    "two from one module": [ImportSpec("torch.nn", "GroupNorm"), ImportSpec("torch.nn", "BatchNorm2d")],
    "mixed": [ImportSpec("functools"), ImportSpec("torch.nn", "GroupNorm"),
              ImportSpec("torch.nn.utils", "parametrizations"), ImportSpec("torch")],
    "module as": [ImportSpec("torch", None, "T")],
}


def codemod(text: str, specs) -> str:
    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    context = CodemodContext(wrapper=wrapper)
    for spec in specs:
        AddImportsVisitor.add_needed_import(context, spec.module, spec.obj, spec.asname)
    adder = AddImportsVisitor(context)
    with adder.resolve(wrapper):
        return adder.transform_module_impl(wrapper.module).code


@pytest.mark.parametrize("top", TOPS)
@pytest.mark.parametrize("specs", SPECS)
def test_the_same_text_as_the_codemod(top, specs):
    text = TOPS[top]
    assert add_imports(cst.parse_module(text), SPECS[specs]).code == codemod(text, SPECS[specs])


def test_a_new_import_goes_at_the_end_of_the_top_block():
    text = textwrap.dedent('''\
        """Discriminators."""
        import torch.nn as nn
        # the model
        class D(nn.Module):
            pass
        ''')
    assert add_imports(cst.parse_module(text), SPECS["sn"]).code == textwrap.dedent('''\
        """Discriminators."""
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        # the model
        class D(nn.Module):
            pass
        ''')


def test_nothing_to_add_keeps_every_byte():
    text = TOPS["already there"]
    assert add_imports(cst.parse_module(text), SPECS["sn"] + SPECS["module"]).code == text


def test_a_name_wanted_plain_and_aliased_from_one_module_is_imported_both_ways():
    # One fix binds `spectral_norm`, another re-points the alias `SN`: libcst's codemod
    # raises comparing None with "SN" here; the fix must not.
    specs = [ImportSpec("torch.nn.utils.parametrizations", "spectral_norm"),
             ImportSpec("torch.nn.utils.parametrizations", "spectral_norm", "SN")]
    assert add_imports(cst.parse_module("import os\nx = 1\n"), specs).code == (
        "import os\nfrom torch.nn.utils.parametrizations import spectral_norm, spectral_norm as SN\n\nx = 1\n")
