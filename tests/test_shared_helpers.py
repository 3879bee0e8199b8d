"""Where a finding points when the layer is built in code the generator runs too (issue
32): at each discriminator's own line that leads to it (its call of the helper, or the
`__init__` default that picks the layer), with the shared line as a related location;
and the two source-pass gaps found in the same runs."""

from __future__ import annotations

import json

from snlint.findings import Finding, Related, Span
from snlint.report import render

# A KAIR-like generic block: 'B' makes a batch norm, whoever calls it.
BASICBLOCK = '''
    import torch.nn as nn


    def conv(in_channels=64, out_channels=64, kernel_size=3, stride=1, padding=1, bias=True, mode='CBR'):
        L = []
        for t in mode:
            if t == 'C':
                L.append(nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias=bias))
            elif t == 'B':
                L.append(nn.BatchNorm2d(out_channels))
            elif t == 'R':
                L.append(nn.ReLU(inplace=True))
            elif t == 'L':
                L.append(nn.LeakyReLU(0.2, inplace=True))
        return nn.Sequential(*L)
'''

NETWORKS = '''
    import torch.nn as nn
    from models import basicblock as B


    class Generator(nn.Module):
        def __init__(self, nc=64):
            super().__init__()
            self.body = nn.Sequential(B.conv(3, nc, mode='CBR'), B.conv(nc, 3, mode='C'))

        def forward(self, x):
            return self.body(x)


    class Discriminator_VGG_96(nn.Module):
        def __init__(self, in_nc=3, base_nc=64, ac_type='BL'):
            super().__init__()
            conv0 = B.conv(in_nc, base_nc, mode='C' + ac_type[-1])
            conv1 = B.conv(base_nc, base_nc, mode='C' + ac_type)
            self.features = nn.Sequential(conv0, conv1)
            self.classifier = nn.Linear(base_nc, 1)

        def forward(self, x):
            return self.classifier(self.features(x).mean((2, 3)))


    class Discriminator_PatchGAN(nn.Module):
        def __init__(self, in_nc=3, nc=64):
            super().__init__()
            self.body = nn.Sequential(B.conv(in_nc, nc, mode='CL'), B.conv(nc, nc, mode='CB'), B.conv(nc, 1, mode='C'))

        def forward(self, x):
            return self.body(x)
'''

KAIR = {"models/basicblock.py": BASICBLOCK, "models/networks.py": NETWORKS}


def at(findings, code: str) -> list[tuple]:
    return [(f.path, f.line, f.column) for f in findings if f.code == code]


def test_a_shared_conv_helper_gives_one_sn301_per_discriminator_at_its_own_line(lint_project):
    findings = lint_project(KAIR)
    # The `ac_type='BL'` default of the first; the `mode='CB'` call of the second.
    assert at(findings, "SN301") == [("models/networks.py", 16, 45), ("models/networks.py", 30, 65)]
    first, second = (f for f in findings if f.code == "SN301")
    assert (first.end_line, first.end_column, second.end_column) == (16, 57, 90)
    assert [f.discriminator.cls for f in (first, second)] == [
        "models/networks.py:Discriminator_VGG_96", "models/networks.py:Discriminator_PatchGAN"]
    assert first.evidence.startswith("This default picks it, in code another network runs too.")
    assert second.evidence.startswith("This call builds it, in code another network runs too.")
    assert "Generator" not in first.message + second.message


def test_the_related_location_is_the_helpers_batch_norm(lint_project):
    findings = [f for f in lint_project(KAIR) if f.code == "SN301"]
    assert {(r.path, r.span.line, r.span.column) for f in findings for r in f.related} == {
        ("models/basicblock.py", 11, 22)}
    assert all(len(f.related) == 1 for f in findings)
    assert findings[0].related[0].message == "BatchNorm2d built here, in code another network runs too"


def test_a_finding_at_a_helper_call_has_no_fix(lint_project):
    # Replacing the batch norm where the helper builds it would change the generator's.
    assert [f.fix for f in lint_project(KAIR) if f.code == "SN301"] == [None, None]


def test_a_helper_only_the_discriminator_runs_is_reported_where_it_builds(lint_project):
    # The engineer changes that line: it serves no other network.
    no_generator = NETWORKS.replace("mode='CBR'), B.conv(nc, 3, mode='C')", "mode='CR'), B.conv(nc, 3, mode='C')")
    findings = lint_project({**KAIR, "models/networks.py": no_generator})
    assert at(findings, "SN301") == [("models/basicblock.py", 11, 22)]
    assert findings[0].related == ()


def test_a_fastgan_like_block_function_shared_with_the_generator(lint_project):
    findings = lint_project({"models.py": '''
        import torch.nn as nn


        def upBlock(in_planes, out_planes):
            return nn.Sequential(
                nn.Upsample(scale_factor=2),
                nn.Conv2d(in_planes, out_planes, 3, 1, 1, bias=False),
                nn.BatchNorm2d(out_planes),
                nn.GLU(dim=1))


        class Generator(nn.Module):
            def __init__(self, ngf=64):
                super().__init__()
                self.feat_8 = upBlock(ngf, ngf * 2)
                self.to_rgb = nn.Conv2d(ngf, 3, 1)

            def forward(self, x):
                return self.to_rgb(self.feat_8(x))


        class Discriminator(nn.Module):
            def __init__(self, ndf=64):
                super().__init__()
                self.decoder = upBlock(ndf, ndf * 2)
                self.head = nn.Conv2d(ndf, 1, 1)

            def forward(self, x):
                return self.head(self.decoder(x))
    '''})
    assert at(findings, "SN301") == [("models.py", 26, 24)]
    [finding] = findings
    assert [(r.path, r.span.line) for r in finding.related] == [("models.py", 9)]


SHARED_CONV = '''
    import torch.nn as nn


    def conv(cin, cout, mode='CL'):
        layers = []
        for t in mode:
            if t == 'C':
                layers.append(nn.Conv2d(cin, cout, 3, 1, 1))
            elif t == 'L':
                layers.append(nn.LeakyReLU(0.2))
        return nn.Sequential(*layers)
'''

SN_NETS = '''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm
    from blocks import conv


    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(conv(3, 64), conv(64, 3, mode='C'))

        def forward(self, x):
            return self.body(x)


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = spectral_norm(nn.Conv2d(3, 64, 3, 1, 1))
            self.body = conv(64, 64)
            self.head = spectral_norm(nn.Linear(64, 1))

        def forward(self, x):
            return self.head(self.body(self.first(x)).mean((2, 3)))
'''


def test_a_conv_without_sn_in_a_shared_helper_gives_sn201_at_the_discriminators_call(lint_project):
    [finding] = lint_project({"blocks.py": SHARED_CONV, "nets.py": SN_NETS})
    assert (finding.code, finding.path, finding.line, finding.column) == ("SN201", "nets.py", 20, 21)
    assert [(r.path, r.span.line) for r in finding.related] == [("blocks.py", 9)]
    # Wrapping the call would put SN on the Sequential; wrapping the helper's conv, on the
    # generator's too.
    assert finding.fix is None


# ---------------------------------------------------------------- the report formats

RELATED = Finding("SN301", "batch-norm-in-discriminator", "error", "BatchNorm2d in D ...",
                  "models/networks.py", Span(15, 45, 15, 57),
                  related=(Related("models/basicblock.py", Span(10, 22, 10, 44), "BatchNorm2d built here"),))


def test_concise_text_ends_with_the_related_line():
    assert render([RELATED], "concise", {}).splitlines()[0] == (
        "models/networks.py:15:45: SN301 BatchNorm2d in D ... (via models/basicblock.py:10)")


def test_json_lists_the_related_locations():
    [out] = json.loads(render([RELATED], "json", {}))
    assert out["related"] == [{"path": "models/basicblock.py", "line": 10, "column": 22,
                               "message": "BatchNorm2d built here"}]


def test_json_has_no_related_key_without_one():
    [out] = json.loads(render([RELATED.with_(related=())], "json", {}))
    assert "related" not in out


def test_sarif_carries_related_locations(tmp_path, monkeypatch):
    from test_sarif import validate

    monkeypatch.chdir(tmp_path)
    log = json.loads(render([RELATED], "sarif", {}, root=tmp_path))
    validate(log)
    [result] = log["runs"][0]["results"]
    assert result["relatedLocations"] == [{
        "id": 1,
        "physicalLocation": {"artifactLocation": {"uri": "models/basicblock.py", "uriBaseId": "%SRCROOT%"},
                             "region": {"startLine": 10, "startColumn": 22, "endLine": 10, "endColumn": 44}},
        "message": {"text": "BatchNorm2d built here"}}]


# ---------------------------------------------------------------- source-pass gaps

CRITIC_STEP = '''
    import torch
    import torch.nn as nn


    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(784, 256), nn.BatchNorm1d(256), nn.LeakyReLU(0.2), nn.Linear(256, 1))

        def forward(self, x):
            return self.net(x)


    def critic_step(critic, netG, real, z, opt):
        fake = netG(z).detach()
        loss = critic(fake).mean() - critic(real).mean()
        alpha = torch.rand(real.size(0), 1)
        mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        grad, = torch.autograd.grad(critic(mixed).sum(), mixed, create_graph=True)
        loss = loss + 10 * ((grad.norm(2, dim=1) - 1) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
'''

OTHER_DISCRIMINATOR = '''
    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(64, 1, 4))

        def forward(self, x):
            return self.net(x)
'''


def test_an_uncalled_training_helper_is_judged_on_the_class_defined_beside_it(lint_project):
    findings = lint_project({"wgan.py": CRITIC_STEP, "dcgan.py": OTHER_DISCRIMINATOR})
    assert [(f.code, f.path, f.line) for f in findings] == [
        ("SN301", "wgan.py", 9), ("SN401", "wgan.py", 17), ("SN303", "wgan.py", 20)]
    assert all(f.discriminator.cls == "wgan.py:Critic" for f in findings)


def test_no_class_is_assumed_where_the_helpers_file_defines_two(lint_project):
    both = CRITIC_STEP + OTHER_DISCRIMINATOR.replace("import torch.nn as nn\n", "")
    assert [f.code for f in lint_project({"wgan.py": both})] == ["SN301"]


FROZEN_FEATURES = '''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    class FeatureNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1), nn.BatchNorm2d(64), nn.ReLU())
            for p in self.parameters():
                p.requires_grad = False

        def train(self, mode=True):
            return super().train(False)

        def forward(self, x):
            return self.features(x)


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.feat = FeatureNet()
            self.head = spectral_norm(nn.Conv2d(64, 1, 3))

        def forward(self, x):
            return self.head(self.feat(x))
'''


def test_a_feature_network_that_keeps_itself_in_eval_mode_has_no_sn301(lint):
    assert lint(FROZEN_FEATURES) == []


def test_a_train_override_that_passes_the_mode_on_keeps_its_sn301(lint):
    findings = lint(FROZEN_FEATURES.replace("super().train(False)", "super().train(mode)"))
    assert [(f.code, f.line) for f in findings] == [("SN301", 9)]


def test_full_text_names_the_related_line_and_why():
    out = render([RELATED], "full", {})
    assert "  = via models/basicblock.py:10:22: BatchNorm2d built here" in out.splitlines()


def test_github_annotation_ends_with_the_related_line():
    assert render([RELATED], "github", {}).endswith("BatchNorm2d in D ... (via models/basicblock.py:10)")


def test_a_fix_for_a_finding_in_shared_code_is_never_safe():
    from snlint.fix.safety import SHARED, breaks

    assert breaks(RELATED.with_(code="SN201", name="missing-sn")) == SHARED
