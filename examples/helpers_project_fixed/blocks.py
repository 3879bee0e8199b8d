"""Residual blocks built from the helpers in layers.py."""

import torch.nn as nn
import torch.nn.functional as F

from layers import snconv2d


class DBlock(nn.Module):
    """Pre-activation residual block that halves the resolution."""

    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.c1 = snconv2d(in_ch, out_ch, 3, padding=1)
        self.c2 = snconv2d(out_ch, out_ch, 3, padding=1)
        self.c_sc = snconv2d(in_ch, out_ch, 1)

    def forward(self, x):
        h = self.c2(F.relu(self.c1(x)))
        return F.avg_pool2d(h, 2) + F.avg_pool2d(self.c_sc(x), 2)
