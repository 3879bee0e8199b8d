"""A fix parses its file with libcst's parser without validating the nodes it makes
(`snlint.edit.parsed.parse_module`): the same tree, and validation back afterwards."""

from __future__ import annotations

import libcst as cst
import pytest

from snlint.edit.parsed import parse_module

SOURCE = '''\
import torch.nn as nn


class D(nn.Module):
    def __init__(self, width: int = 64) -> None:
        super().__init__()
        self.conv = nn.utils.spectral_norm(nn.Conv2d(3, width, 4, 2, 1))  # a comment

    def forward(self, x):
        return [y ** 2 for y in (x, -x) if y is not None][0] @ x
'''


def test_the_tree_is_libcsts():
    tree = parse_module(SOURCE)
    assert tree.deep_equals(cst.parse_module(SOURCE))
    assert tree.code == SOURCE


def test_nodes_made_afterwards_are_validated():
    parse_module(SOURCE)
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")


def test_validation_is_back_after_a_parse_error():
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("def f(:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
