"""A deterministic corpus of GAN model and training files, for the benchmarks.

The corpus looks like a folder of GAN experiments: DCGAN model + training script pairs,
ResNet SNGAN projects whose layer helpers, blocks and networks live in separate files
(sibling imports, or a package with relative imports), BigGAN-style projects (a
hand-written SN mixin, `functools.partial` conv factories, discriminators built in loops
over channel tables), single-file WGAN-GP critics with a gradient penalty, pix2pix-style
patch discriminators with `norm_layer=` defaults, and the utility modules such repos carry
(EMA, data, metrics, configuration). About a third of the files carry one of the mistakes
snlint looks for, so the rules and the fixes do the work they do on real code.

Every template is written for this benchmark (no third-party code). The same
(n, seed) gives the same bytes: `Corpus.digest` proves it.

    python benchmarks/corpus.py --n 200 --seed 0 --out /tmp/corpus
"""

from __future__ import annotations

import argparse
import hashlib
import random
import tempfile
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_N = 200
DEFAULT_SEED = 0
MISTAKE_RATE = 0.35


@dataclass
class Corpus:
    root: Path
    files: list[str]  # paths relative to root, sorted
    kinds: dict[str, int] = field(default_factory=dict)  # project kind -> files
    planted: dict[str, int] = field(default_factory=dict)  # rule code -> files planted with it
    lines: int = 0
    bytes: int = 0
    digest: str = ""  # sha256 over (path, content) of every file

    def summary(self) -> dict:
        return {"files": len(self.files), "lines": self.lines, "bytes": self.bytes,
                "kinds": dict(sorted(self.kinds.items())),
                "planted": dict(sorted(self.planted.items())), "sha256": self.digest}


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def _fill(template: str, **parts: str) -> str:
    """Dedent `template` and replace each line that is only `@@NAME@@` with parts[NAME]
    (dedented text) indented as that line was; an empty part removes the line."""
    out = []
    for line in _d(template).splitlines(keepends=True):
        key = line.strip()
        if key.startswith("@@") and key.endswith("@@"):
            indent = line[: len(line) - len(line.lstrip())]
            part = _d(parts[key[2:-2]])
            out.append(textwrap.indent(part, indent) if part else "")
        else:
            out.append(line)
    return "".join(out)


# --------------------------------------------------------------------------- spellings


def _sn_spelling(rng: random.Random, api: str | None = None) -> tuple[str, str]:
    """(import lines placed after `import torch.nn as nn`, the SN callable's name)."""
    hook = [
        ("from torch.nn.utils import spectral_norm\n", "spectral_norm"),
        ("SN = nn.utils.spectral_norm\n", "SN"),
        ("", "nn.utils.spectral_norm"),
    ]
    param = [
        ("from torch.nn.utils.parametrizations import spectral_norm\n", "spectral_norm"),
        ("from torch.nn.utils import parametrizations\n", "parametrizations.spectral_norm"),
        ("import torch.nn.utils.parametrizations as P\n", "P.spectral_norm"),
        ("", "nn.utils.parametrizations.spectral_norm"),
    ]
    pool = hook if api == "hook" else param if api == "param" else hook + param
    return rng.choice(pool)


def _mistake(rng: random.Random, options: list[str]) -> str | None:
    return rng.choice(options) if rng.random() < MISTAKE_RATE else None


def _header(rng: random.Random, what: str, extra: str = "") -> str:
    authors = ["experiments", "the vision team", "a weekend project", "the baseline sweep",
               "reproduction notes"]
    text = f'"""{what}\n\nPart of {rng.choice(authors)}.{(" " + extra) if extra else ""}\n"""\n\n'
    return text


# --------------------------------------------------------------------------- DCGAN


def _dcgan_models(rng: random.Random, planted: Counter) -> str:
    sn_import, SN = _sn_spelling(rng)
    nz = rng.choice([64, 100, 128])
    ngf = ndf = rng.choice([16, 32, 64])
    nc = rng.choice([1, 3])
    d_name = rng.choice(["Discriminator", "NetD", "DCGANDiscriminator"])
    g_name = rng.choice(["Generator", "NetG"])
    mistake = _mistake(rng, ["SN101", "SN102", "SN201", "SN301", "SN104", "SN103"])
    if mistake:
        planted[mistake] += 1
    act = rng.choice(["nn.LeakyReLU(0.2, inplace=True)", "nn.LeakyReLU(0.2)"])
    d_layers = [f"# input is ({nc}) x 64 x 64",
                f"{SN}(nn.Conv2d(nc, ndf, 4, 2, 1, bias=False)),",
                f"{act},",
                "# state size. (ndf) x 32 x 32"]
    ch = "ndf"
    for i, mult in enumerate([2, 4, 8]):
        nxt = f"ndf * {mult}"
        conv = f"nn.Conv2d({ch}, {nxt}, 4, 2, 1, bias=False)"
        if mistake == "SN104" and i == 0:
            d_layers.append(f"{SN}({conv}, name=\"bias\"),")
        elif mistake == "SN103" and i == 1:
            d_layers.append(f"{SN}({SN}({conv})),")
        else:
            d_layers.append(f"{SN}({conv}),")
        if mistake == "SN101" and i == 1:
            d_layers.append(f"{SN}(nn.BatchNorm2d({nxt})),")
        if mistake == "SN301" and i == 2:
            d_layers.append(f"nn.BatchNorm2d({nxt}),")
        d_layers.append(f"{SN}({act})," if mistake == "SN102" and i == 0 else f"{act},")
        d_layers.append(f"# state size. ({nxt}) x {16 >> i} x {16 >> i}")
        ch = nxt
    last = f"nn.Conv2d({ch}, 1, 4, 1, 0, bias=False)"
    d_layers.append(f"{last}," if mistake == "SN201" else f"{SN}({last}),")
    init_body = rng.choice(["nn.init.normal_(m.weight.data, 0.0, 0.02)",
                            "nn.init.xavier_normal_(m.weight.data)"])
    text = (_header(rng, "DCGAN generator and discriminator for 64x64 images.")
            + "import torch\nimport torch.nn as nn\n" + sn_import + "\n\n"
            + _fill(f"""
            def weights_init(m):
                classname = m.__class__.__name__
                if classname.find("Conv") != -1 and hasattr(m, "weight"):
                    {init_body}
                elif classname.find("BatchNorm") != -1:
                    nn.init.normal_(m.weight.data, 1.0, 0.02)
                    nn.init.constant_(m.bias.data, 0)


            class {g_name}(nn.Module):
                def __init__(self, nz={nz}, ngf={ngf}, nc={nc}):
                    super().__init__()
                    self.nz = nz
                    self.main = nn.Sequential(
                        nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False),
                        nn.BatchNorm2d(ngf * 8),
                        nn.ReLU(True),
                        nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False),
                        nn.BatchNorm2d(ngf * 4),
                        nn.ReLU(True),
                        nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
                        nn.BatchNorm2d(ngf * 2),
                        nn.ReLU(True),
                        nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
                        nn.BatchNorm2d(ngf),
                        nn.ReLU(True),
                        nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
                        nn.Tanh(),
                    )

                def forward(self, z):
                    return self.main(z.view(z.size(0), self.nz, 1, 1))


            class {d_name}(nn.Module):
                def __init__(self, nc={nc}, ndf={ndf}):
                    super().__init__()
                    self.main = nn.Sequential(
                        @@LAYERS@@
                    )

                def forward(self, x):
                    return self.main(x).view(-1, 1).squeeze(1)
            """, LAYERS="\n".join(d_layers) + "\n"))
    return text, (g_name, d_name, nz, nc)


def _dcgan_train(rng: random.Random, planted: Counter, names, module: str) -> str:
    g_name, d_name, nz, nc = names
    together = rng.random() < 0.5
    d_var = rng.choice(["netD", "D", "disc"])
    g_var = rng.choice(["netG", "G", "gen"])
    loss = rng.choice(["nn.BCEWithLogitsLoss()", "nn.MSELoss()"])
    if together:
        d_step = _d(f"""
                    out = {d_var}(torch.cat([real, fake.detach()]))
                    out_real, out_fake = out[:b], out[b:]
                    errD = criterion(out_real, ones) + criterion(out_fake, zeros)
                    errD.backward()
        """)
    else:
        d_step = _d(f"""
                    out_real = {d_var}(real)
                    errD_real = criterion(out_real, ones)
                    errD_real.backward()
                    out_fake = {d_var}(fake.detach())
                    errD_fake = criterion(out_fake, zeros)
                    errD_fake.backward()
                    errD = errD_real + errD_fake
        """)
    return (_header(rng, "Train the DCGAN on random tensors (swap in a real dataset).")
            + _fill(f"""
            import argparse
            import os
            import random

            import torch
            import torch.nn as nn
            import torch.optim as optim
            from torch.utils.data import DataLoader, TensorDataset

            from {module} import {d_name}, {g_name}, weights_init


            def get_args(argv=None):
                p = argparse.ArgumentParser()
                p.add_argument("--batch-size", type=int, default={rng.choice([32, 64, 128])})
                p.add_argument("--nz", type=int, default={nz})
                p.add_argument("--epochs", type=int, default={rng.choice([5, 25, 50])})
                p.add_argument("--lr", type=float, default={rng.choice(["2e-4", "1e-4", "5e-5"])})
                p.add_argument("--beta1", type=float, default=0.5)
                p.add_argument("--out", default="runs/dcgan")
                p.add_argument("--seed", type=int, default={rng.randrange(10000)})
                return p.parse_args(argv)


            def make_loader(batch_size, n=512):
                images = torch.rand(n, {nc}, 64, 64) * 2 - 1
                labels = torch.zeros(n, dtype=torch.long)
                return DataLoader(TensorDataset(images, labels), batch_size=batch_size, shuffle=True)


            def train(args):
                random.seed(args.seed)
                torch.manual_seed(args.seed)
                device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
                os.makedirs(args.out, exist_ok=True)
                {g_var} = {g_name}(nz=args.nz).to(device)
                {g_var}.apply(weights_init)
                {d_var} = {d_name}().to(device)
                {d_var}.apply(weights_init)
                criterion = {loss}
                fixed_noise = torch.randn(64, args.nz, 1, 1, device=device)
                optD = optim.Adam({d_var}.parameters(), lr=args.lr, betas=(args.beta1, 0.999))
                optG = optim.Adam({g_var}.parameters(), lr=args.lr, betas=(args.beta1, 0.999))
                loader = make_loader(args.batch_size)
                for epoch in range(args.epochs):
                    for i, (real, _) in enumerate(loader):
                        real = real.to(device)
                        b = real.size(0)
                        ones = torch.ones(b, device=device)
                        zeros = torch.zeros(b, device=device)
                        # (1) update D: maximize log(D(x)) + log(1 - D(G(z)))
                        {d_var}.zero_grad()
                        noise = torch.randn(b, args.nz, 1, 1, device=device)
                        fake = {g_var}(noise)
                        @@D_STEP@@
                        optD.step()
                        # (2) update G: maximize log(D(G(z)))
                        {g_var}.zero_grad()
                        errG = criterion({d_var}(fake), ones)
                        errG.backward()
                        optG.step()
                        if i % 50 == 0:
                            print(f"[{{epoch}}/{{args.epochs}}][{{i}}] loss_D {{errD.item():.4f}} loss_G {{errG.item():.4f}}")
                    with torch.no_grad():
                        sample = {g_var}(fixed_noise).detach().cpu()
                    torch.save(sample, os.path.join(args.out, f"samples_{{epoch:03d}}.pt"))
                    torch.save({d_var}.state_dict(), os.path.join(args.out, "netD.pt"))
                    torch.save({g_var}.state_dict(), os.path.join(args.out, "netG.pt"))


            if __name__ == "__main__":
                train(get_args())
            """, D_STEP=d_step))


def _dcgan(rng, planted, kinds) -> dict[str, str]:
    models, names = _dcgan_models(rng, planted)
    module = rng.choice(["models", "dcgan", "nets"])
    return {f"{module}.py": models, "train.py": _dcgan_train(rng, planted, names, module)}


# --------------------------------------------------------------------------- ResNet SNGAN


def _sngan(rng, planted, kinds) -> dict[str, str]:
    package = rng.random() < 0.4
    sn_import, SN = _sn_spelling(rng)
    ch = rng.choice([32, 64])
    mistake = _mistake(rng, ["SN201", "SN201", "SN105", "SN106", "SN102"])
    if mistake:
        planted[mistake] += 1
    imp = "from ." if package else "from "
    mod_import = "from . import layers" if package else "import layers"
    sc_helper = "conv1x1" if mistake == "SN201" else "snconv1x1"
    layers = (_header(rng, "Layer helpers: every conv and linear of the discriminator goes through these.")
              + "import functools\n\nimport torch.nn as nn\n" + sn_import + "\n\n"
              + _d(f"""
            def snconv2d(*args, **kwargs):
                return {SN}(nn.Conv2d(*args, **kwargs))


            def snlinear(*args, **kwargs):
                return {SN}(nn.Linear(*args, **kwargs))


            def snembedding(*args, **kwargs):
                return {SN}(nn.Embedding(*args, **kwargs))


            def conv1x1(in_ch, out_ch):
                \"\"\"A pointwise conv without spectral norm (for the generator).\"\"\"
                return nn.Conv2d(in_ch, out_ch, 1, padding=0)


            snconv3x3 = functools.partial(snconv2d, kernel_size=3, padding=1)
            snconv1x1 = functools.partial(snconv2d, kernel_size=1, padding=0)
            """))
    gnorm = rng.choice(["nn.BatchNorm2d", "nn.InstanceNorm2d"])
    blocks = (_header(rng, "Residual blocks for the generator and the discriminator.")
              + "import torch.nn as nn\nimport torch.nn.functional as F\n\n"
              + f"{imp}layers import conv1x1, snconv1x1, snconv3x3\n\n\n"
              + _d(f"""
            class GBlock(nn.Module):
                def __init__(self, in_ch, out_ch, upsample=True):
                    super().__init__()
                    self.upsample = upsample
                    self.b1 = {gnorm}(in_ch)
                    self.c1 = nn.Conv2d(in_ch, out_ch, 3, padding=1)
                    self.b2 = {gnorm}(out_ch)
                    self.c2 = nn.Conv2d(out_ch, out_ch, 3, padding=1)
                    self.c_sc = conv1x1(in_ch, out_ch)

                def forward(self, x):
                    h = F.relu(self.b1(x))
                    if self.upsample:
                        h = F.interpolate(h, scale_factor=2)
                        x = F.interpolate(x, scale_factor=2)
                    h = self.c2(F.relu(self.b2(self.c1(h))))
                    return h + self.c_sc(x)


            class OptimizedDBlock(nn.Module):
                \"\"\"The first discriminator block: no ReLU before the first conv.\"\"\"

                def __init__(self, in_ch, out_ch):
                    super().__init__()
                    self.c1 = snconv3x3(in_ch, out_ch)
                    self.c2 = snconv3x3(out_ch, out_ch)
                    self.c_sc = snconv1x1(in_ch, out_ch)

                def forward(self, x):
                    h = F.avg_pool2d(self.c2(F.relu(self.c1(x))), 2)
                    return h + self.c_sc(F.avg_pool2d(x, 2))


            class DBlock(nn.Module):
                def __init__(self, in_ch, out_ch, downsample=False):
                    super().__init__()
                    self.downsample = downsample
                    self.learnable_sc = in_ch != out_ch or downsample
                    self.c1 = snconv3x3(in_ch, out_ch)
                    self.c2 = snconv3x3(out_ch, out_ch)
                    if self.learnable_sc:
                        self.c_sc = {sc_helper}(in_ch, out_ch)

                def shortcut(self, x):
                    if self.learnable_sc:
                        x = self.c_sc(x)
                        if self.downsample:
                            x = F.avg_pool2d(x, 2)
                    return x

                def forward(self, x):
                    h = self.c2(F.relu(self.c1(F.relu(x))))
                    if self.downsample:
                        h = F.avg_pool2d(h, 2)
                    return h + self.shortcut(x)
            """))
    d_name = rng.choice(["ResNetDiscriminator", "SNDiscriminator", "ProjectionDiscriminator"])
    g_name = rng.choice(["ResNetGenerator", "Generator"])
    n_blocks = rng.choice([2, 3])
    block_lines = "".join(f"DBlock(ch, ch{', downsample=True' if i == 0 else ''}),\n"
                          for i in range(n_blocks))
    extra_init = ""
    if mistake == "SN106":
        extra_init = "nn.init.xavier_uniform_(self.linear.weight)\n"
    if mistake == "SN102":
        extra_init = f"self.act = {SN}(nn.PReLU())\n"
    head = "layers.snlinear(ch, 1)"
    if mistake == "SN106":
        head = "nn.utils.parametrizations.spectral_norm(nn.Linear(ch, 1))"
    stem = "nn.ConvTranspose2d(z_dim, ch, 4, 1, 0)"
    stem_line = (f"{SN}({stem}, dim=0)" if mistake == "SN105"
                 else rng.choice([stem, f"{SN}({stem})"]))
    nets = (_header(rng, "SNGAN networks for 32x32 images (hinge loss, ResNet blocks).")
            + "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
            + (sn_import if mistake in ("SN105", "SN102") else "") + "\n"
            + f"{mod_import}\n{imp}blocks import DBlock, GBlock, OptimizedDBlock\n\n\n"
            + _fill(f"""
            class {g_name}(nn.Module):
                def __init__(self, z_dim=128, ch={ch * 2}):
                    super().__init__()
                    self.z_dim = z_dim
                    self.stem = {stem_line}
                    self.blocks = nn.Sequential(GBlock(ch, ch), GBlock(ch, ch), GBlock(ch, ch))
                    self.out = nn.Sequential(nn.BatchNorm2d(ch), nn.ReLU(), nn.Conv2d(ch, 3, 3, padding=1), nn.Tanh())

                def forward(self, z):
                    h = self.stem(z.view(-1, self.z_dim, 1, 1))
                    return self.out(self.blocks(h))


            class {d_name}(nn.Module):
                def __init__(self, ch={ch}, n_classes=0):
                    super().__init__()
                    self.blocks = nn.Sequential(
                        OptimizedDBlock(3, ch),
                        @@BLOCKS@@
                    )
                    self.linear = {head}
                    self.embed = layers.snembedding(n_classes, ch) if n_classes > 0 else None
                    @@EXTRA@@

                def forward(self, x, y=None):
                    h = F.relu(self.blocks(x)).sum(dim=(2, 3))
                    out = self.linear(h)
                    if y is not None and self.embed is not None:
                        out = out + (self.embed(y) * h).sum(dim=1, keepdim=True)
                    return out
            """, BLOCKS=block_lines, EXTRA=extra_init))
    nets_mod = "nets"
    train = (_header(rng, "Hinge-loss training with n_dis critic steps per generator step.")
             + _d(f"""
            import copy

            import torch
            import torch.nn.functional as F

            {imp}{nets_mod} import {d_name}, {g_name}


            def hinge_d(real_scores, fake_scores):
                return F.relu(1.0 - real_scores).mean() + F.relu(1.0 + fake_scores).mean()


            def hinge_g(fake_scores):
                return -fake_scores.mean()


            @torch.no_grad()
            def ema_update(target, source, decay=0.999):
                for p_t, p_s in zip(target.parameters(), source.parameters()):
                    p_t.lerp_(p_s, 1.0 - decay)


            def train(steps={rng.choice([1000, 50000, 100000])}, batch_size={rng.choice([64, 128])}, n_dis={rng.choice([1, 2, 5])}, device="cpu"):
                G = {g_name}().to(device)
                D = {d_name}().to(device)
                G_ema = copy.deepcopy(G).eval()
                opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.0, 0.9))
                opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.0, 0.9))
                for step in range(steps):
                    for _ in range(n_dis):
                        real = torch.rand(batch_size, 3, 32, 32, device=device) * 2 - 1
                        z = torch.randn(batch_size, G.z_dim, device=device)
                        with torch.no_grad():
                            fake = G(z)
                        loss_d = hinge_d(D(real), D(fake))
                        opt_d.zero_grad(set_to_none=True)
                        loss_d.backward()
                        opt_d.step()
                    z = torch.randn(batch_size, G.z_dim, device=device)
                    loss_g = hinge_g(D(G(z)))
                    opt_g.zero_grad(set_to_none=True)
                    loss_g.backward()
                    opt_g.step()
                    ema_update(G_ema, G)
                    if step % 1000 == 0:
                        print(step, float(loss_d), float(loss_g))
                return G_ema


            if __name__ == "__main__":
                train()
            """))
    files = {"layers.py": layers, "blocks.py": blocks, "nets.py": nets, "train.py": train}
    if package:
        files["__init__.py"] = f'"""SNGAN experiment package."""\n\nfrom .nets import {d_name}, {g_name}\n'
    return files


# --------------------------------------------------------------------------- BigGAN-style


def _biggan(rng, planted, kinds) -> dict[str, str]:
    ch = rng.choice([16, 32])
    n_classes = rng.choice([10, 100])
    mistake = _mistake(rng, ["SN201", "SN301", "SN101"])
    if mistake:
        planted[mistake] += 1
    layers = (_header(rng, "Layers with a hand-written spectral norm (power iteration kept in buffers).")
              + _d("""
            import torch
            import torch.nn as nn
            import torch.nn.functional as F


            def _l2normalize(v, eps=1e-12):
                return v / (v.norm() + eps)


            class SpectralNormMixin:
                \"\"\"Mix into a layer with a `weight`: `sn_weight()` is the weight over its
                largest singular value, estimated by power iteration (one step per call).\"\"\"

                def init_sn(self, n_rows, n_power_iterations=1, eps=1e-12):
                    self.n_power_iterations = n_power_iterations
                    self.sn_eps = eps
                    self.register_buffer("sn_u", _l2normalize(torch.randn(n_rows)))
                    self.register_buffer("sn_sigma", torch.ones(1))

                def sn_weight(self):
                    w = self.weight.view(self.weight.size(0), -1)
                    u = self.sn_u
                    with torch.no_grad():
                        for _ in range(self.n_power_iterations):
                            v = _l2normalize(w.t() @ u, self.sn_eps)
                            u = _l2normalize(w @ v, self.sn_eps)
                        if self.training:
                            self.sn_u.copy_(u)
                    sigma = torch.dot(u, w @ v)
                    if self.training:
                        with torch.no_grad():
                            self.sn_sigma.fill_(sigma.item())
                    return self.weight / sigma


            class SNConv2d(nn.Conv2d, SpectralNormMixin):
                def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                             bias=True, n_power_iterations=1):
                    nn.Conv2d.__init__(self, in_channels, out_channels, kernel_size, stride, padding, bias=bias)
                    self.init_sn(out_channels, n_power_iterations)

                def forward(self, x):
                    return F.conv2d(x, self.sn_weight(), self.bias, self.stride, self.padding)


            class SNLinear(nn.Linear, SpectralNormMixin):
                def __init__(self, in_features, out_features, bias=True, n_power_iterations=1):
                    nn.Linear.__init__(self, in_features, out_features, bias)
                    self.init_sn(out_features, n_power_iterations)

                def forward(self, x):
                    return F.linear(x, self.sn_weight(), self.bias)


            class SNEmbedding(nn.Embedding, SpectralNormMixin):
                def __init__(self, num_embeddings, embedding_dim, n_power_iterations=1):
                    nn.Embedding.__init__(self, num_embeddings, embedding_dim)
                    self.init_sn(num_embeddings, n_power_iterations)

                def forward(self, y):
                    return F.embedding(y, self.sn_weight())


            class ClassConditionalBN(nn.Module):
                \"\"\"Batch norm whose gain and bias come from the class embedding (generator only).\"\"\"

                def __init__(self, num_features, cond_dim, which_linear=nn.Linear):
                    super().__init__()
                    self.bn = nn.BatchNorm2d(num_features, affine=False)
                    self.gain = which_linear(cond_dim, num_features)
                    self.bias = which_linear(cond_dim, num_features)

                def forward(self, x, y):
                    gain = (1 + self.gain(y)).view(y.size(0), -1, 1, 1)
                    bias = self.bias(y).view(y.size(0), -1, 1, 1)
                    return self.bn(x) * gain + bias


            class Attention(nn.Module):
                def __init__(self, ch, which_conv=SNConv2d):
                    super().__init__()
                    self.ch = ch
                    self.theta = which_conv(ch, ch // 8, kernel_size=1, padding=0, bias=False)
                    self.phi = which_conv(ch, ch // 8, kernel_size=1, padding=0, bias=False)
                    self.g = which_conv(ch, ch // 2, kernel_size=1, padding=0, bias=False)
                    self.o = which_conv(ch // 2, ch, kernel_size=1, padding=0, bias=False)
                    self.gamma = nn.Parameter(torch.tensor(0.0))

                def forward(self, x):
                    n, c, h, w = x.shape
                    theta = self.theta(x).view(n, c // 8, h * w)
                    phi = F.max_pool2d(self.phi(x), 2).view(n, c // 8, h * w // 4)
                    g = F.max_pool2d(self.g(x), 2).view(n, c // 2, h * w // 4)
                    beta = F.softmax(torch.bmm(theta.transpose(1, 2), phi), -1)
                    o = self.o(torch.bmm(g, beta.transpose(1, 2)).view(n, c // 2, h, w))
                    return x + self.gamma * o
            """))
    sc = ("nn.Conv2d(in_ch, out_ch, kernel_size=1, padding=0)" if mistake == "SN201"
          else "which_conv(in_ch, out_ch, kernel_size=1, padding=0)")
    norm_line = "self.norm = nn.BatchNorm2d(out_ch)\n" if mistake == "SN301" else ""
    conv1 = "self.norm(self.conv1(h))" if mistake == "SN301" else "self.conv1(h)"
    sn_norm = ("self.out_norm = nn.utils.spectral_norm(nn.LayerNorm(out_chs[-1]))\n"
               if mistake == "SN101" else "")
    attn_res = rng.choice([16, 8])
    mults = rng.choice([[1, 2, 4], [1, 2, 4, 4], [2, 4, 8]])
    d_name = rng.choice(["Discriminator", "BigGANDiscriminator"])
    model = (_header(rng, "BigGAN-style generator and discriminator, built from channel tables.")
             + _fill(f"""
            import functools

            import torch
            import torch.nn as nn
            import torch.nn.functional as F

            import layers


            class GBlock(nn.Module):
                def __init__(self, in_ch, out_ch, which_conv, which_bn):
                    super().__init__()
                    self.conv1 = which_conv(in_ch, out_ch)
                    self.conv2 = which_conv(out_ch, out_ch)
                    self.conv_sc = which_conv(in_ch, out_ch, kernel_size=1, padding=0)
                    self.bn1 = which_bn(in_ch)
                    self.bn2 = which_bn(out_ch)

                def forward(self, x, y):
                    h = F.interpolate(F.relu(self.bn1(x, y)), scale_factor=2)
                    h = self.conv2(F.relu(self.bn2(self.conv1(h), y)))
                    return h + self.conv_sc(F.interpolate(x, scale_factor=2))


            class DBlock(nn.Module):
                def __init__(self, in_ch, out_ch, which_conv=layers.SNConv2d, preactivation=True,
                             downsample=None):
                    super().__init__()
                    self.preactivation = preactivation
                    self.downsample = downsample
                    self.conv1 = which_conv(in_ch, out_ch)
                    self.conv2 = which_conv(out_ch, out_ch)
                    self.learnable_sc = in_ch != out_ch or downsample is not None
                    if self.learnable_sc:
                        self.conv_sc = {sc}
                    @@NORM@@

                def forward(self, x):
                    h = F.relu(x) if self.preactivation else x
                    h = self.conv2(F.relu({conv1}))
                    if self.downsample is not None:
                        h = self.downsample(h)
                    sc = x
                    if self.learnable_sc:
                        sc = self.conv_sc(sc)
                        if self.downsample is not None:
                            sc = self.downsample(sc)
                    return h + sc


            def d_arch(ch={ch}, mults={mults!r}, attention_at={attn_res}):
                in_chs = [3] + [ch * m for m in mults[:-1]]
                out_chs = [ch * m for m in mults]
                resolutions = [32 // (2 ** i) for i in range(1, len(mults) + 1)]
                return in_chs, out_chs, resolutions, attention_at


            class {d_name}(nn.Module):
                def __init__(self, ch={ch}, n_classes={n_classes}):
                    super().__init__()
                    self.which_conv = functools.partial(layers.SNConv2d, kernel_size=3, padding=1)
                    self.which_linear = layers.SNLinear
                    in_chs, out_chs, resolutions, attention_at = d_arch(ch)
                    self.blocks = nn.ModuleList()
                    for i, (cin, cout, res) in enumerate(zip(in_chs, out_chs, resolutions)):
                        down = nn.AvgPool2d(2) if res >= 4 else None
                        self.blocks.append(DBlock(cin, cout, which_conv=self.which_conv,
                                                  preactivation=i > 0, downsample=down))
                        if res == attention_at:
                            self.blocks.append(layers.Attention(cout, self.which_conv))
                    @@SN_NORM@@
                    self.linear = self.which_linear(out_chs[-1], 1)
                    self.embed = layers.SNEmbedding(n_classes, out_chs[-1])

                def forward(self, x, y=None):
                    h = x
                    for block in self.blocks:
                        h = block(h)
                    h = torch.sum(F.relu(h), [2, 3])
                    out = self.linear(h)
                    if y is not None:
                        out = out + torch.sum(self.embed(y) * h, 1, keepdim=True)
                    return out


            class Generator(nn.Module):
                def __init__(self, ch={ch}, z_dim=120, n_classes={n_classes}, shared_dim=128):
                    super().__init__()
                    self.z_dim = z_dim
                    self.which_conv = functools.partial(layers.SNConv2d, kernel_size=3, padding=1)
                    self.which_bn = functools.partial(layers.ClassConditionalBN, cond_dim=shared_dim + z_dim,
                                                      which_linear=layers.SNLinear)
                    self.shared = nn.Embedding(n_classes, shared_dim)
                    self.linear = layers.SNLinear(z_dim, 4 * ch * 4 * 4)
                    self.blocks = nn.ModuleList([GBlock(4 * ch, 4 * ch, self.which_conv, self.which_bn)
                                                 for _ in range(3)])
                    self.out = nn.Sequential(nn.BatchNorm2d(4 * ch), nn.ReLU(), self.which_conv(4 * ch, 3))
                    self.ch = ch

                def forward(self, z, y):
                    cond = torch.cat([self.shared(y), z], 1)
                    h = self.linear(z).view(z.size(0), 4 * self.ch, 4, 4)
                    for block in self.blocks:
                        h = block(h, cond)
                    return torch.tanh(self.out(h))
            """, NORM=norm_line, SN_NORM=sn_norm))
    train = (_header(rng, "Class-conditional training loop with accumulation and EMA.")
             + _d(f"""
            import torch
            import torch.nn.functional as F

            from model import {d_name}, Generator


            def discriminator_loss(d_real, d_fake):
                return torch.mean(F.relu(1.0 - d_real)) + torch.mean(F.relu(1.0 + d_fake))


            def generator_loss(d_fake):
                return -torch.mean(d_fake)


            def run(iters={rng.choice([100, 1000])}, batch_size={rng.choice([16, 32])}, n_classes={n_classes}, accumulate=2):
                G, D = Generator(n_classes=n_classes), {d_name}(n_classes=n_classes)
                opt_g = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.0, 0.999))
                opt_d = torch.optim.Adam(D.parameters(), lr=4e-4, betas=(0.0, 0.999))
                for it in range(iters):
                    opt_d.zero_grad()
                    for _ in range(accumulate):
                        x = torch.rand(batch_size, 3, 32, 32) * 2 - 1
                        y = torch.randint(0, n_classes, (batch_size,))
                        z = torch.randn(batch_size, G.z_dim)
                        with torch.no_grad():
                            fake = G(z, y)
                        scores = D(torch.cat([x, fake]), torch.cat([y, y]))
                        d_real, d_fake = torch.split(scores, [batch_size, batch_size])
                        (discriminator_loss(d_real, d_fake) / accumulate).backward()
                    opt_d.step()
                    opt_g.zero_grad()
                    z = torch.randn(batch_size, G.z_dim)
                    y = torch.randint(0, n_classes, (batch_size,))
                    generator_loss(D(G(z, y), y)).backward()
                    opt_g.step()


            if __name__ == "__main__":
                run()
            """))
    return {"layers.py": layers, "model.py": model, "train.py": train}


# --------------------------------------------------------------------------- WGAN-GP


def _wgangp(rng, planted, kinds) -> dict[str, str]:
    dim = rng.choice([32, 64])
    mistake = _mistake(rng, ["SN303", "SN301", "SN401"])
    if mistake:
        planted[mistake] += 1
    norm = "nn.BatchNorm2d" if mistake else rng.choice(["nn.InstanceNorm2d", "none", "nn.GroupNorm"])
    block_norm = {"none": "", "nn.GroupNorm": "nn.GroupNorm(1, out_ch),\n",
                  "nn.InstanceNorm2d": "nn.InstanceNorm2d(out_ch, affine=True),\n",
                  "nn.BatchNorm2d": "nn.BatchNorm2d(out_ch),\n"}[norm]
    stddev = rng.random() < 0.3
    critic_name = rng.choice(["Critic", "WGANCritic", "DCritic"])
    if mistake in ("SN401", "SN301"):
        # separate real and generated batches through a critic with batch statistics
        d_step = """
            real_scores = critic(real)
            fake_scores = critic(fake)
            loss_c = fake_scores.mean() - real_scores.mean()
        """
        if mistake == "SN301":
            d_step = _d(d_step) + "loss_c = loss_c + lambda_gp * gradient_penalty(critic, real, fake)\n"
    else:
        d_step = """
            scores = critic(torch.cat([real, fake]))
            real_scores, fake_scores = scores.chunk(2)
            gp = gradient_penalty(critic, real, fake)
            loss_c = fake_scores.mean() - real_scores.mean() + lambda_gp * gp
        """
    stddev_cls = """
        class MinibatchStdDev(nn.Module):
            \"\"\"Append the mean standard deviation over the batch as an extra channel.\"\"\"

            def forward(self, x):
                std = x.std(dim=0, unbiased=False).mean()
                return torch.cat([x, std.expand(x.size(0), 1, x.size(2), x.size(3))], dim=1)


    """ if stddev else ""
    last_in = "dim * 4 + 1" if stddev else "dim * 4"
    name = f"wgan_gp_{rng.choice(['mnist', 'cifar', 'celeba'])}.py"
    text = (_header(rng, "WGAN-GP: a critic without batch statistics and a gradient penalty.")
            + _fill(f"""
        import torch
        import torch.nn as nn
        from torch import autograd


        def block(in_ch, out_ch):
            return nn.Sequential(
                nn.Conv2d(in_ch, out_ch, 4, 2, 1),
                @@NORM@@
                nn.LeakyReLU(0.2),
            )


        @@STDDEV@@
        class {critic_name}(nn.Module):
            def __init__(self, in_ch=3, dim={dim}):
                super().__init__()
                self.net = nn.Sequential(
                    block(in_ch, dim),
                    block(dim, dim * 2),
                    block(dim * 2, dim * 4),
                    @@STDDEV_LAYER@@
                    nn.Conv2d({last_in}, 1, 4, 1, 0),
                )

            def forward(self, x):
                return self.net(x).view(x.size(0), -1).mean(1)


        class Generator(nn.Module):
            def __init__(self, z_dim=100, dim={dim}):
                super().__init__()
                self.fc = nn.Linear(z_dim, dim * 4 * 4 * 4)
                self.net = nn.Sequential(
                    nn.BatchNorm2d(dim * 4), nn.ReLU(True),
                    nn.ConvTranspose2d(dim * 4, dim * 2, 4, 2, 1), nn.BatchNorm2d(dim * 2), nn.ReLU(True),
                    nn.ConvTranspose2d(dim * 2, dim, 4, 2, 1), nn.BatchNorm2d(dim), nn.ReLU(True),
                    nn.ConvTranspose2d(dim, 3, 4, 2, 1), nn.Tanh(),
                )
                self.dim = dim

            def forward(self, z):
                return self.net(self.fc(z).view(z.size(0), self.dim * 4, 4, 4))


        def gradient_penalty(critic, real, fake):
            alpha = torch.rand(real.size(0), 1, 1, 1, device=real.device)
            mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
            scores = critic(mixed)
            grads = autograd.grad(outputs=scores, inputs=mixed, grad_outputs=torch.ones_like(scores),
                                  create_graph=True, retain_graph=True)[0]
            return ((grads.flatten(1).norm(2, dim=1) - 1) ** 2).mean()


        def main(iters={rng.choice([200, 2000, 20000])}, batch_size=64, n_critic=5, lambda_gp=10.0):
            critic, gen = {critic_name}(), Generator()
            opt_c = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))
            opt_g = torch.optim.Adam(gen.parameters(), lr=1e-4, betas=(0.0, 0.9))
            for it in range(iters):
                for _ in range(n_critic):
                    real = torch.rand(batch_size, 3, 32, 32) * 2 - 1
                    fake = gen(torch.randn(batch_size, 100)).detach()
                    @@D_STEP@@
                    opt_c.zero_grad()
                    loss_c.backward()
                    opt_c.step()
                loss_g = -critic(gen(torch.randn(batch_size, 100))).mean()
                opt_g.zero_grad()
                loss_g.backward()
                opt_g.step()
                if it % 100 == 0:
                    print(f"iter {{it}}: critic {{loss_c.item():.3f}} generator {{loss_g.item():.3f}}")


        if __name__ == "__main__":
            main()
        """, NORM=block_norm, STDDEV=stddev_cls, STDDEV_LAYER="MinibatchStdDev(),\n" if stddev else "",
                    D_STEP=d_step))
    return {name: text}


# --------------------------------------------------------------------------- pix2pix patch


def _patch(rng, planted, kinds) -> dict[str, str]:
    mistake = _mistake(rng, ["SN301", "SN301", "SN201"])
    if mistake:
        planted[mistake] += 1
    default_norm = "nn.BatchNorm2d" if mistake == "SN301" else rng.choice(
        ["nn.InstanceNorm2d", "nn.Identity"])
    sn_import, SN = _sn_spelling(rng)
    use_sn = rng.random() < 0.6 or mistake == "SN201"
    w = (lambda c: f"{SN}({c})") if use_sn else (lambda c: c)
    first = w("nn.Conv2d(input_nc, ndf, kernel_size=kw, stride=2, padding=padw)")
    last_conv = "nn.Conv2d(ndf * nf_mult, 1, kernel_size=kw, stride=1, padding=padw)"
    last = last_conv if mistake == "SN201" else w(last_conv)
    mid = w("nn.Conv2d(ndf * nf_mult_prev, ndf * nf_mult, kernel_size=kw, stride=2, padding=padw, bias=use_bias)")
    mid2 = w("nn.Conv2d(ndf * nf_mult_prev, ndf * nf_mult, kernel_size=kw, stride=1, padding=padw, bias=use_bias)")
    d_name = rng.choice(["NLayerDiscriminator", "PatchDiscriminator", "PatchGANDiscriminator"])
    ndf = rng.choice([32, 64])
    return {"networks.py": (
        _header(rng, "Image-to-image networks: a PatchGAN discriminator and norm-layer helpers.")
        + "import functools\n\nimport torch\nimport torch.nn as nn\n" + sn_import + "\n\n"
        + _d(f"""
        def get_norm_layer(norm_type="instance"):
            if norm_type == "batch":
                return functools.partial(nn.BatchNorm2d, affine=True, track_running_stats=True)
            if norm_type == "instance":
                return functools.partial(nn.InstanceNorm2d, affine=False, track_running_stats=False)
            if norm_type == "none":
                return lambda num_features: nn.Identity()
            raise NotImplementedError(f"normalization layer [{{norm_type}}] is not found")


        class {d_name}(nn.Module):
            \"\"\"Classifies overlapping patches as real or fake.\"\"\"

            def __init__(self, input_nc=6, ndf={ndf}, n_layers=3, norm_layer={default_norm}):
                super().__init__()
                if type(norm_layer) == functools.partial:
                    use_bias = norm_layer.func == nn.InstanceNorm2d
                else:
                    use_bias = norm_layer == nn.InstanceNorm2d
                kw = 4
                padw = 1
                sequence = [{first}, nn.LeakyReLU(0.2, True)]
                nf_mult = 1
                for n in range(1, n_layers):
                    nf_mult_prev = nf_mult
                    nf_mult = min(2 ** n, 8)
                    sequence += [
                        {mid},
                        norm_layer(ndf * nf_mult),
                        nn.LeakyReLU(0.2, True),
                    ]
                nf_mult_prev = nf_mult
                nf_mult = min(2 ** n_layers, 8)
                sequence += [
                    {mid2},
                    norm_layer(ndf * nf_mult),
                    nn.LeakyReLU(0.2, True),
                ]
                sequence += [{last}]
                self.model = nn.Sequential(*sequence)

            def forward(self, x):
                return self.model(x)


        class GANLoss(nn.Module):
            def __init__(self, gan_mode="lsgan", target_real_label=1.0, target_fake_label=0.0):
                super().__init__()
                self.register_buffer("real_label", torch.tensor(target_real_label))
                self.register_buffer("fake_label", torch.tensor(target_fake_label))
                self.gan_mode = gan_mode
                if gan_mode == "lsgan":
                    self.loss = nn.MSELoss()
                elif gan_mode == "vanilla":
                    self.loss = nn.BCEWithLogitsLoss()
                else:
                    self.loss = None

            def forward(self, prediction, target_is_real):
                if self.gan_mode == "wgangp":
                    return -prediction.mean() if target_is_real else prediction.mean()
                target = self.real_label if target_is_real else self.fake_label
                return self.loss(prediction, target.expand_as(prediction))


        def define_D(input_nc, ndf={ndf}, n_layers=3, norm="instance"):
            return {d_name}(input_nc, ndf, n_layers, norm_layer=get_norm_layer(norm))
        """))}


# --------------------------------------------------------------------------- utilities


_UTILS = {
    "ema.py": _d('''
        """Exponential moving average of a model's parameters and buffers."""

        import copy

        import torch


        class EMA:
            def __init__(self, model, decay=0.999, warmup=1000):
                self.shadow = copy.deepcopy(model).eval()
                for p in self.shadow.parameters():
                    p.requires_grad_(False)
                self.decay = decay
                self.warmup = warmup
                self.steps = 0

            @torch.no_grad()
            def update(self, model):
                self.steps += 1
                decay = 0.0 if self.steps < self.warmup else self.decay
                for s, p in zip(self.shadow.parameters(), model.parameters()):
                    s.mul_(decay).add_(p.detach(), alpha=1 - decay)
                for s, b in zip(self.shadow.buffers(), model.buffers()):
                    s.copy_(b)

            def state_dict(self):
                return {"shadow": self.shadow.state_dict(), "steps": self.steps}
    '''),
    "data.py": _d('''
        """Datasets for the experiments: random images of a fixed size, class labels."""

        import torch
        from torch.utils.data import Dataset


        class RandomImages(Dataset):
            def __init__(self, n=1024, size=32, channels=3, n_classes=10, seed=0):
                g = torch.Generator().manual_seed(seed)
                self.images = torch.rand(n, channels, size, size, generator=g) * 2 - 1
                self.labels = torch.randint(0, n_classes, (n,), generator=g)

            def __len__(self):
                return len(self.images)

            def __getitem__(self, i):
                return self.images[i], self.labels[i]


        def infinite(loader):
            while True:
                for batch in loader:
                    yield batch
    '''),
    "metrics.py": _d('''
        """Cheap sample statistics used as a sanity check between FID runs."""

        import math

        import torch


        def feature_stats(features):
            mu = features.mean(0)
            centered = features - mu
            cov = centered.t() @ centered / max(features.size(0) - 1, 1)
            return mu, cov


        def frechet_distance(mu1, cov1, mu2, cov2):
            diff = mu1 - mu2
            eig = torch.linalg.eigvals(cov1 @ cov2).real.clamp(min=0)
            return float(diff.dot(diff) + cov1.trace() + cov2.trace() - 2 * eig.sqrt().sum())


        def inception_like_score(probs, splits=10):
            scores = []
            for part in probs.chunk(splits):
                py = part.mean(0, keepdim=True)
                kl = (part * (part.clamp_min(1e-12).log() - py.clamp_min(1e-12).log())).sum(1)
                scores.append(math.exp(kl.mean().item()))
            return sum(scores) / len(scores)
    '''),
    "config.py": _d('''
        """Experiment configuration (plain data: no torch here)."""

        from dataclasses import dataclass, field


        @dataclass
        class TrainConfig:
            dataset: str = "cifar10"
            image_size: int = 32
            batch_size: int = 64
            lr_g: float = 2e-4
            lr_d: float = 2e-4
            betas: tuple = (0.0, 0.9)
            n_dis: int = 5
            total_steps: int = 100_000
            sample_every: int = 1000
            tags: list = field(default_factory=list)


        PRESETS = {
            "sngan_cifar": TrainConfig(),
            "dcgan_celeba": TrainConfig(dataset="celeba", image_size=64, n_dis=1, betas=(0.5, 0.999)),
            "biggan_small": TrainConfig(batch_size=256, lr_d=4e-4, lr_g=1e-4, n_dis=2),
        }
    '''),
    "checkpoint.py": _d('''
        """Save and restore training state; maps the key names of older checkpoints."""

        import os

        import torch

        LEGACY_KEYS = {"weight_orig": "parametrizations.weight.original"}


        def save(path, step, **modules):
            state = {name: m.state_dict() for name, m in modules.items()}
            state["step"] = step
            tmp = path + ".tmp"
            torch.save(state, tmp)
            os.replace(tmp, path)


        def migrate(state_dict):
            out = {}
            for key, value in state_dict.items():
                for old, new in LEGACY_KEYS.items():
                    if key.endswith(old):
                        key = key[: -len(old)] + new
                out[key] = value
            return out


        def load(path, **modules):
            state = torch.load(path, map_location="cpu")
            for name, m in modules.items():
                m.load_state_dict(migrate(state[name]))
            return state["step"]
    '''),
}


def _utility(rng, planted, kinds) -> dict[str, str]:
    name = rng.choice(sorted(_UTILS))
    return {name: _UTILS[name]}


# --------------------------------------------------------------------------- assembly

# (kind, weight, files it makes, maker); a kind making k files is only drawn while at
# least k files remain to make.
_KINDS = [
    ("dcgan", 25, 2, _dcgan),
    ("sngan", 20, 5, _sngan),  # 4 files, or 5 as a package
    ("biggan", 15, 3, _biggan),
    ("wgangp", 15, 1, _wgangp),
    ("patch", 10, 1, _patch),
    ("util", 15, 1, _utility),
]


def generate_files(n: int = DEFAULT_N, seed: int = DEFAULT_SEED) -> tuple[dict[str, str], Counter, Counter]:
    """relpath -> text for n files, plus files per kind and planted codes."""
    rng = random.Random(seed)
    files: dict[str, str] = {}
    kinds: Counter = Counter()
    planted: Counter = Counter()
    index = 0
    while len(files) < n:
        remaining = n - len(files)
        pool = [k for k in _KINDS if k[2] <= remaining]
        kind, _, _, make = rng.choices(pool, weights=[k[1] for k in pool])[0]
        made = make(rng, planted, kinds)
        for name, text in made.items():
            files[f"{kind}_{index:03d}/{name}"] = text
        kinds[kind] += len(made)
        index += 1
    return dict(sorted(files.items())), kinds, planted


def generate(n: int = DEFAULT_N, seed: int = DEFAULT_SEED, out: Path | str | None = None) -> Corpus:
    """Write the corpus into `out` (a new temporary folder when None) and describe it."""
    root = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="snlint-corpus-"))
    root.mkdir(parents=True, exist_ok=True)
    files, kinds, planted = generate_files(n, seed)
    digest = hashlib.sha256()
    lines = size = 0
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        path.write_bytes(data)
        digest.update(rel.encode("utf-8") + b"\0" + data + b"\0")
        lines += text.count("\n")
        size += len(data)
    return Corpus(root, list(files), dict(kinds), dict(planted), lines, size, digest.hexdigest())


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=DEFAULT_N, help="number of files (default 200)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--out", help="folder to write into (default: a new temporary folder)")
    args = p.parse_args(argv)
    corpus = generate(args.n, args.seed, args.out)
    print(corpus.root)
    for key, value in corpus.summary().items():
        print(f"  {key}: {value}")


if __name__ == "__main__":
    main()
