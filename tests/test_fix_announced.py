"""`--fix` fixes what the lint without it announced, and nothing else: a round after the
first fixes only findings the first lint had (by identity: file, rule, symbol, node
text), each once; a finding a fix made is reported after the run, never fixed in it; a
fix whose finding stands on another fixed in the same run (SN401 on SN301) is not made
when the lint after that fix no longer finds it."""

from __future__ import annotations

import re
import shutil
import subprocess
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from snlint.cli import main
from snlint.config import Config
from snlint.engine import lint_sources
from snlint.engine.fixing import fixed_point
from snlint.fix.identity import beyond, identities


def dedent(files: dict[str, str]) -> dict[str, str]:
    return {name: textwrap.dedent(text) for name, text in files.items()}


# SPADE's pattern: the discriminator normalizes its middle conv through a helper and not
# its first conv and last linear, whose weight it then initializes. Round one's two SN201
# fixes wrap those in parametrizations.spectral_norm (the API the helper uses; the file has
# no SN of its own), which makes the init an SN106: a new finding, which the old fixed
# point rewrote (on SPADE, in an init the generator shares, breaking it).
SPADE = dedent({
    "base.py": '''
        import torch.nn as nn
        from torch.nn import init


        class BaseNetwork(nn.Module):
            def init_weights(self, gain=0.02):
                def init_func(m):
                    pass

                self.apply(init_func)
    ''',
    "normalization.py": '''
        from torch.nn.utils.parametrizations import spectral_norm


        def get_norm_layer():
            def add_norm_layer(layer):
                return spectral_norm(layer)

            return add_norm_layer
    ''',
    "discriminator.py": '''
        import torch.nn as nn
        from torch.nn import init

        from base import BaseNetwork
        from normalization import get_norm_layer


        class NLayerDiscriminator(BaseNetwork):
            def __init__(self):
                super().__init__()
                norm_layer = get_norm_layer()
                self.first = nn.Conv2d(3, 64, 4, 2, 1)
                self.mid = norm_layer(nn.Conv2d(64, 128, 4, 2, 1))
                self.last = nn.Linear(128, 1)
                init.normal_(self.last.weight, 0.0, 0.02)

            def forward(self, x):
                return self.last(self.mid(self.first(x)).mean((2, 3)))
    ''',
    "generator.py": '''
        import torch.nn as nn

        from base import BaseNetwork


        class Generator(BaseNetwork):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(64, 3, 3, padding=1)

            def forward(self, z):
                return self.conv(z)
    ''',
    "train.py": '''
        from discriminator import NLayerDiscriminator
        from generator import Generator

        netD = NLayerDiscriminator()
        netD.init_weights()
        netG = Generator()
        netG.init_weights()
    ''',
})
SPADE_FIXED = SPADE["discriminator.py"].replace(
    "from normalization import get_norm_layer\n",
    "from normalization import get_norm_layer\nfrom torch.nn.utils.parametrizations import spectral_norm\n",
).replace("nn.Conv2d(3, 64, 4, 2, 1)", "spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))").replace(
    "nn.Linear(128, 1)", "spectral_norm(nn.Linear(128, 1))")

# A critic with a batch norm (SN301, unsafe fix: a per-sample norm) scored on real and
# fake apart (SN401, unsafe fix: one concatenated call). SN401 stands on SN301: once the
# norm is per-sample, scoring apart is harmless, and the training step stays as written.
BATCH_NORM = dedent({
    "nets.py": '''
        import torch.nn as nn


        class Critic(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(8, 16)
                self.n = nn.BatchNorm1d(16)
                self.b = nn.Linear(16, 1)

            def forward(self, x):
                return self.b(self.n(self.a(x)))
    ''',
    "train.py": '''
        import torch.nn.functional as F

        from nets import Critic


        def train_step(netG, netD, opt_d, real, z):
            fake = netG(z).detach()
            d_real = netD(real)
            d_fake = netD(fake)
            loss = F.relu(1 - d_real).mean() + F.relu(1 + d_fake).mean()
            opt_d.zero_grad()
            loss.backward()
            opt_d.step()


        netD = Critic()
    ''',
})

# SN103 (the outer call) and SN105 (the inner call's `dim=1`) overlap: SN105's fix waits
# for round two, where its node is a line higher (the outer call spanned three lines).
OVERLAPPING = dedent({"d.py": '''
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = spectral_norm(nn.Conv2d(3, 8, 3))
            self.twice = spectral_norm(
                spectral_norm(nn.Conv2d(8, 8, 3), dim=1)
            )
            self.head = nn.Linear(8, 1)
            self.b = spectral_norm(nn.Conv2d(8, 8, 3), dim=1)

        def forward(self, x):
            return self.head(self.b(self.twice(self.a(x))).mean((2, 3)))
'''})
OVERLAPPING_FIXED = OVERLAPPING["d.py"].replace(
    "spectral_norm(\n            spectral_norm(nn.Conv2d(8, 8, 3), dim=1)\n        )",
    "spectral_norm(nn.Conv2d(8, 8, 3))").replace(
    "nn.Linear(8, 1)", "spectral_norm(nn.Linear(8, 1))").replace(", dim=1)", ")")

# SN on a Sequential (SN102): its fix moves SN onto the conv inside (unsafe). Once the
# safe SN201 fix wraps that conv, SN102's fix is a safe removal: a fix another fix made
# safe, which plain --fix does not make.
CONTAINER = dedent({"d.py": '''
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = spectral_norm(nn.Conv2d(3, 8, 3))
            self.seq = spectral_norm(nn.Sequential(nn.Conv2d(8, 8, 3), nn.LeakyReLU(0.2)))
            self.b = spectral_norm(nn.Conv2d(8, 8, 3), dim=1)

        def forward(self, x):
            return self.b(self.seq(self.a(x)))
'''})

PROJECTS = {"spade": SPADE, "batch_norm": BATCH_NORM, "overlapping": OVERLAPPING, "container": CONTAINER}


def config(**options) -> Config:
    # These tests are about rounds, not about which fix is safe: the fixes that change
    # state_dict keys count as safe here, as in a project with no checkpoint to keep.
    options.setdefault("extend_safe_fixes", ["SN103", "SN105", "SN201"])
    return Config(root=Path("."), graph=False, cache=False, **options)


def run_rounds(files: dict[str, str], *, unsafe: bool = False, **options):
    cfg = config(**options)
    problems: list[str] = []
    result = fixed_point(dict(files), cfg, unsafe=unsafe,
                         report=problems.append)
    return result, problems


def changed(result, files: dict[str, str]) -> dict[str, str]:
    return {p: t for p, t in result.texts.items() if t != files[p]}


# identity --------------------------------------------------------------------------------

def test_a_finding_keeps_its_identity_when_its_node_moves():
    files = OVERLAPPING
    moved = {"d.py": "import os\n\n" + files["d.py"]}
    before, after = (lint_sources(f, config()) for f in (files, moved))
    assert [f.line for f in before if f.code == "SN105"] == [11, 14]
    assert [f.line for f in after if f.code == "SN105"] == [13, 16]
    assert sorted(identities(before, files).values()) == sorted(identities(after, moved).values())


def test_findings_with_the_same_node_text_in_two_symbols_are_two_identities():
    found = lint_sources(OVERLAPPING, config())
    keys = [key for f, key in zip(found, identities(found, OVERLAPPING).values()) if f.code == "SN105"]
    assert keys == [("d.py", 0, "SN105", "Discriminator.twice", "dim=1"),
                    ("d.py", 0, "SN105", "Discriminator.b", "dim=1")]


def test_a_finding_at_a_node_a_fix_rewrote_is_another_identity():
    found = lint_sources(CONTAINER, config())
    after = {"d.py": CONTAINER["d.py"].replace("Sequential(nn.Conv2d(8, 8, 3)",
                                               "Sequential(spectral_norm(nn.Conv2d(8, 8, 3))")}
    again = lint_sources(after, config())
    [seq] = [key for f, key in zip(found, identities(found, CONTAINER).values()) if f.code == "SN102"]
    [seq_after] = [key for f, key in zip(again, identities(again, after).values()) if f.code == "SN102"]
    assert seq[:4] == seq_after[:4] == ("d.py", 0, "SN102", "Discriminator.seq")
    assert seq != seq_after
    # ...but it is not a finding the fixes made: the first lint had SN102 on that symbol.
    assert beyond(again, after, Counter(identities(found, CONTAINER).values())) == []


# rounds ----------------------------------------------------------------------------------

def test_spade_a_later_round_does_not_fix_the_finding_round_one_made():
    result, problems = run_rounds(SPADE)
    assert changed(result, SPADE) == {"discriminator.py": SPADE_FIXED}
    assert (result.announced, sum(result.fixed.values())) == (2, 2)
    assert result.settled and problems == []
    after = lint_sources(result.texts, config())
    assert [(f.code, f.path, f.line) for f in after] == [("SN106", "discriminator.py", 17)]
    assert [(f.code, f.line) for f in beyond(after, result.texts, result.first)] == [("SN106", 17)]


def test_fixes_that_overlapped_in_round_one_are_made_where_their_node_moved():
    result, problems = run_rounds(OVERLAPPING)
    assert result.texts["d.py"] == OVERLAPPING_FIXED
    assert (result.announced, sum(result.fixed.values())) == (4, 4)
    assert problems == []


def test_a_fix_another_fix_made_safe_is_not_made():
    result, _ = run_rounds(CONTAINER)
    assert result.texts["d.py"] == CONTAINER["d.py"].replace(
        "Sequential(nn.Conv2d(8, 8, 3)", "Sequential(spectral_norm(nn.Conv2d(8, 8, 3))").replace(
        ", dim=1)", ")")
    assert (result.announced, sum(result.fixed.values())) == (2, 2)
    after = lint_sources(result.texts, config())
    assert [(f.code, f.line, f.fix.applicability) for f in after] == [("SN102", 10, "safe")]


def test_sn401_is_not_rewritten_when_the_same_run_fixes_its_batch_norm():
    result, problems = run_rounds(BATCH_NORM, unsafe=True)
    assert changed(result, BATCH_NORM) == {
        "nets.py": BATCH_NORM["nets.py"].replace("nn.BatchNorm1d(16)", "nn.GroupNorm(1, 16)")}
    assert (result.announced, sum(result.fixed.values())) == (2, 1)
    assert problems == []


def test_sn401_is_rewritten_when_the_batch_norm_fix_is_not_made(monkeypatch):
    # SN301's planner refuses (a reason its mark did not see): SN401 waits one round for
    # it, then, its premise standing, is made.
    from snlint.checks import sn301

    monkeypatch.setattr(sn301, "fix", lambda finding, payload, parsed: None)
    result, _ = run_rounds(BATCH_NORM, unsafe=True)
    assert changed(result, BATCH_NORM) == {"train.py": BATCH_NORM["train.py"].replace(
        "    d_real = netD(real)\n    d_fake = netD(fake)\n",
        "    d_real, d_fake = netD(torch.cat([real, fake])).split([real.size(0), fake.size(0)])\n"
    ).replace("from nets import Critic\n", "from nets import Critic\nimport torch\n")}
    assert sum(result.fixed.values()) == 1


def test_sn401_is_rewritten_when_its_batch_norm_is_not_fixed_in_the_run():
    # Without --select SN301 its fix is not this run's: SN401 is made in round one.
    result, _ = run_rounds(BATCH_NORM, unsafe=True, select=["SN4"])
    assert list(changed(result, BATCH_NORM)) == ["train.py"]
    assert "netD(torch.cat([real, fake]))" in result.texts["train.py"]


# the command line ---------------------------------------------------------------------------

def write(root: Path, files: dict[str, str]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    # As `config()` above: the rounds, not the safety policy, are under test.
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n\n"
                                         "[tool.snlint]\nextend-safe-fixes = ['SN103', 'SN105', 'SN201']\n")
    for name, text in files.items():
        (root / name).write_text(text)


def snlint(root: Path, monkeypatch, *args: str):
    monkeypatch.chdir(root)
    return CliRunner().invoke(main, ["--no-graph", "--no-cache", "--output-format", "concise", *args, "."])


@pytest.mark.parametrize("unsafe", [False, True])
@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_fix_never_fixes_more_than_the_lint_announced(tmp_path, monkeypatch, name, unsafe):
    flags = ["--unsafe-fixes"] if unsafe else []
    write(tmp_path, PROJECTS[name])
    lint = snlint(tmp_path, monkeypatch, *flags)
    marked = sum(1 for line in lint.stdout.splitlines() if re.match(r"\S+:\d+:\d+: SN\d+ \[\*\]", line))
    found = re.search(r"\[\*\] (\d+) fixable with --fix", lint.stdout)
    assert marked == (int(found.group(1)) if found else 0)
    fixed = snlint(tmp_path, monkeypatch, "--fix", *flags)
    done = re.search(r"Fixed (\d+) findings?", fixed.stderr)
    count = int(done.group(1)) if done else 0
    expected = {("spade", False): (2, 2), ("spade", True): (2, 2),
                ("batch_norm", False): (0, 0), ("batch_norm", True): (2, 1),
                ("overlapping", False): (4, 4), ("overlapping", True): (4, 4),
                ("container", False): (2, 2), ("container", True): (3, 2)}
    assert (marked, count) == expected[name, unsafe]


def test_fix_shows_the_finding_its_fixes_made_and_says_it_was_not_fixed(tmp_path, monkeypatch):
    write(tmp_path, SPADE)
    result = snlint(tmp_path, monkeypatch, "--fix")
    assert (tmp_path / "discriminator.py").read_text() == SPADE_FIXED
    assert (tmp_path / "base.py").read_text() == SPADE["base.py"]
    assert result.stderr == "Fixed 2 findings in 1 file.\n"
    lines = result.stdout.splitlines()
    assert lines[0].startswith("discriminator.py:17:9: SN106 [*] ")
    assert lines[1:] == ["Found 3 findings (2 fixed, 1 remaining: 1 warning).",
                         "1 finding appeared because of the fixes and was not fixed: review it.",
                         "[*] 1 fixable with --fix."]


def test_fix_counts_a_finding_a_fix_changed_as_remaining_not_new(tmp_path, monkeypatch):
    write(tmp_path, CONTAINER)
    result = snlint(tmp_path, monkeypatch, "--fix")
    assert result.stdout.splitlines()[1:] == ["Found 3 findings (2 fixed, 1 remaining: 1 error).",
                                              "[*] 1 fixable with --fix."]


def test_diff_shows_exactly_what_fix_writes(tmp_path, monkeypatch):
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    shown, fixed = tmp_path / "shown", tmp_path / "fixed"
    for root in (shown, fixed):
        write(root, SPADE)
    diff = snlint(shown, monkeypatch, "--diff")
    assert diff.exit_code == 1
    assert diff.stderr == "Would fix 2 findings.\n"
    snlint(fixed, monkeypatch, "--fix")
    (shown / "fix.patch").write_bytes(diff.stdout_bytes)
    subprocess.run(["git", "init", "-q", "."], cwd=shown, check=True)
    subprocess.run(["git", "apply", "fix.patch"], cwd=shown, check=True)
    for name in SPADE:
        assert (shown / name).read_text() == (fixed / name).read_text(), name
    assert (fixed / "discriminator.py").read_text() == SPADE_FIXED


def test_a_fix_waits_only_for_its_premises_about_the_same_discriminator():
    from snlint.findings import DiscriminatorRef, Finding, Span
    from snlint.fix.apply import waiting_for_premises

    def finding(code: str, cls: str | None) -> Finding:
        ref = DiscriminatorRef(cls, "name") if cls is not None else None
        return Finding(code, code.lower(), "error", "", "d.py", Span(1, 1, 1, 2), discriminator=ref)

    bn_a, sep_a, sep_b, sep_none = (finding("SN301", "d.py:A"), finding("SN401", "d.py:A"),
                                    finding("SN401", "d.py:B"), finding("SN401", None))
    premises = {"SN401": frozenset({"SN301"})}
    assert waiting_for_premises([bn_a, sep_a, sep_b, sep_none], premises) == [sep_a, sep_none]
    assert waiting_for_premises([sep_a, sep_b], premises) == []


HELPER_SN = dedent({
    "blocks.py": """
        import torch.nn as nn
        from torch.nn.utils import spectral_norm


        def conv2d(*args, **kwargs):
            return spectral_norm(nn.Conv2d(*args, **kwargs))
        """,
    "disc.py": """
        import torch.nn as nn
        from blocks import conv2d


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = conv2d(3, 8, 4, 2, 1)
                self.proj = nn.Linear(8, 8)

            def forward(self, x):
                return self.proj(self.main(x).mean((2, 3)))
        """,
})


def test_sn201_wraps_with_the_api_the_same_runs_sn501_fix_migrates_the_discriminator_to():
    # The helper's hook SN becomes parametrizations SN in the same run: a layer SN201's
    # fix wraps must not keep the legacy API (a new SN501 left, two APIs in one model).
    result, problems = run_rounds(HELPER_SN, unsafe=True, select=["SN201", "SN501"])
    assert result.texts["disc.py"] == HELPER_SN["disc.py"].replace(
        "from blocks import conv2d\n",
        "from blocks import conv2d\nfrom torch.nn.utils.parametrizations import spectral_norm\n",
    ).replace("self.proj = nn.Linear(8, 8)", "self.proj = spectral_norm(nn.Linear(8, 8))")
    assert "parametrizations import spectral_norm" in result.texts["blocks.py"]
    assert problems == []
    assert [f.code for f in lint_sources(result.texts, config(select=["SN201", "SN501"]))] == []


def test_a_premise_that_names_no_discriminator_holds_for_every_discriminator():
    from snlint.findings import DiscriminatorRef, Finding, Span
    from snlint.fix.apply import waiting_for_premises

    def finding(code: str, cls: str | None) -> Finding:
        ref = DiscriminatorRef(cls, "name") if cls is not None else None
        return Finding(code, code.lower(), "info", "", "d.py", Span(1, 1, 1, 2), discriminator=ref)

    migrate, missing = finding("SN501", None), finding("SN201", "d.py:A")
    premises = {"SN201": frozenset({"SN501"})}
    assert waiting_for_premises([migrate, missing], premises) == [missing]
    assert waiting_for_premises([missing], premises) == []
