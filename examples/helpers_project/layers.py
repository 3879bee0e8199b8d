"""Layer helpers shared by the blocks and the discriminator."""

import torch.nn as nn
from torch.nn.utils.parametrizations import spectral_norm


def snconv2d(*args, **kwargs):
    return spectral_norm(nn.Conv2d(*args, **kwargs))


def snlinear(*args, **kwargs):
    return spectral_norm(nn.Linear(*args, **kwargs))


def conv1x1(in_ch, out_ch):
    """A plain pointwise conv (no SN)."""
    return nn.Conv2d(in_ch, out_ch, 1)
