"""A SAGAN-style discriminator for 32x32 images, assembled from blocks.py and layers.py.

Corrected version of examples/helpers_project: every conv and linear layer is
spectrally normalized, and the init reaches the parameter that is trained.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parametrizations

import layers
from blocks import DBlock


class Discriminator(nn.Module):
    def __init__(self, ch=64):
        super().__init__()
        self.block1 = DBlock(3, ch)  # 32 -> 16
        # self-attention at 16x16
        self.query = layers.snconv2d(ch, ch // 8, 1)
        self.key = layers.snconv2d(ch, ch // 8, 1)
        self.value = layers.snconv2d(ch, ch, 1)
        self.attn_proj = layers.snconv2d(ch, ch, 1)
        self.gamma = nn.Parameter(torch.zeros(1))
        self.block2 = DBlock(ch, ch * 2)  # 16 -> 8
        self.out = parametrizations.spectral_norm(nn.Conv2d(ch * 2, ch * 2, 3, padding=1))
        nn.init.xavier_uniform_(self.out.parametrizations.weight.original)
        self.linear = layers.snlinear(ch * 2, 1)

    def attention(self, x):
        n, c, h, w = x.shape
        q = self.query(x).flatten(2)  # (n, c/8, hw)
        k = self.key(x).flatten(2)
        v = self.value(x).flatten(2)  # (n, c, hw)
        attn = F.softmax(q.transpose(1, 2) @ k, dim=-1)  # (n, hw, hw)
        o = (v @ attn.transpose(1, 2)).view(n, c, h, w)
        return x + self.gamma * self.attn_proj(o)

    def forward(self, x):
        h = self.block2(self.attention(self.block1(x)))
        h = F.relu(self.out(F.relu(h)))
        return self.linear(h.sum(dim=(2, 3)))


if __name__ == "__main__":
    D = Discriminator()
    print(D(torch.randn(4, 3, 32, 32)).shape)  # torch.Size([4, 1])
