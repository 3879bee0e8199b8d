"""A discriminator configured by strings: the layer types come from a config table at
run time (`getattr(nn, ...)`), which only the graph pass sees built."""

import torch
import torch.nn as nn
from torch.nn.utils.parametrizations import spectral_norm

CONFIG = {"norm": "BatchNorm2d", "widths": [64, 128]}


def norm_from_config(channels):
    return getattr(nn, CONFIG["norm"])(channels)


class ConfigDiscriminator(nn.Module):
    def __init__(self, in_ch=3):
        super().__init__()
        layers = []
        for width in CONFIG["widths"]:
            layers += [spectral_norm(nn.Conv2d(in_ch, width, 4, 2, 1)),
                       norm_from_config(width),
                       nn.LeakyReLU(0.2)]
            in_ch = width
        self.features = nn.Sequential(*layers)
        self.head = spectral_norm(nn.Linear(in_ch, 1))

    def forward(self, x):
        return self.head(self.features(x).mean(dim=(2, 3)))


if __name__ == "__main__":
    print(ConfigDiscriminator()(torch.randn(4, 3, 32, 32)).shape)
