"""The safety policy (`snlint.fix.safety`): which fix is safe, decided once for the `[*]`
mark (from the facts) and for the plan `--fix` applies, so the two agree."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from snlint.checks.fix_data import InitParam, SNCall
from snlint.config import Config
from snlint.engine import lint_sources
from snlint.findings import Finding, Span
from snlint.fix.safety import decide


def finding(code: str, pass_: str = "source", data=None) -> Finding:
    return Finding(code, "name", "error", "message", "d.py", Span(1, 1, 1, 2), pass_=pass_,
                   data=data)


def config(**options) -> Config:
    return Config(root=Path("."), graph=False, **options)


@pytest.mark.parametrize("f, expected", [
    (finding("SN101", data=SNCall("parametrization")), "unsafe"),
    (finding("SN102", data=SNCall(None, "LeakyReLU", "activation")), "safe"),
    (finding("SN102", data=SNCall(None, "PReLU", "activation")), "unsafe"),
    (finding("SN102", "source+graph", SNCall(None, "Dropout", "dropout")), "unsafe"),  # it built: it had a weight
    (finding("SN103", data=SNCall("hook", first_api="parametrization")), "safe"),
    (finding("SN103", data=SNCall("parametrization", first_api="parametrization")), "unsafe"),
    (finding("SN104"), "unsafe"),
    (finding("SN105"), "unsafe"),
    (finding("SN106", data=InitParam("weight")), "safe"),
    (finding("SN106", data=InitParam("weight", "Generator")), "unsafe"),
    (finding("SN201"), "unsafe"),
], ids=lambda v: v if isinstance(v, str) else f"{v.code}-{v.data}-{v.pass_}")
def test_a_safe_fix_that_would_change_keys_or_shared_code_is_unsafe(f, expected):
    assert decide(f, "safe", config())[0] == expected


def test_the_reason_is_given_only_where_the_policy_made_the_fix_unsafe():
    assert decide(finding("SN201"), "safe", config()) == (
        "unsafe", "unsafe: a checkpoint saved before the fix no longer loads with strict=True")
    assert decide(finding("SN301"), "unsafe", config()) == ("unsafe", None)  # unsafe by its rule
    assert decide(finding("SN201"), "safe", config(extend_safe_fixes=["SN2"])) == ("safe", None)


def test_extend_safe_fixes_promotes_a_structurally_unsafe_fix_as_ruff_does():
    assert decide(finding("SN301"), "unsafe", config(extend_safe_fixes=["SN301"]))[0] == "safe"


def test_the_more_specific_selector_wins_and_unsafe_wins_a_tie():
    both = config(extend_safe_fixes=["SN105"], extend_unsafe_fixes=["SN1"])
    assert decide(finding("SN105"), "safe", both)[0] == "safe"
    assert decide(finding("SN106", data=InitParam("weight")), "safe", both)[0] == "unsafe"
    tie = config(extend_safe_fixes=["SN106"], extend_unsafe_fixes=["SN106"])
    assert decide(finding("SN106", data=InitParam("weight")), "safe", tie)[0] == "unsafe"


BUGGY = textwrap.dedent("""\
    import torch.nn as nn
    from torch.nn.utils import spectral_norm as hook_sn
    from torch.nn.utils.parametrizations import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = spectral_norm(nn.Conv2d(3, 8, 3))
            self.n = spectral_norm(nn.GroupNorm(2, 8))
            self.act = spectral_norm(nn.LeakyReLU(0.2))
            self.p = spectral_norm(nn.PReLU())
            self.b = hook_sn(hook_sn(nn.Conv2d(8, 8, 3)))
            self.c = spectral_norm(spectral_norm(nn.Conv2d(8, 8, 3)))
            self.up = spectral_norm(nn.ConvTranspose2d(8, 8, 4), dim=0)
            self.head = spectral_norm(nn.Linear(8, 1), name="bias")
            self.last = nn.Linear(8, 1)
            nn.init.orthogonal_(self.a.weight)
""")


@pytest.mark.parametrize("options", [{}, {"extend_safe_fixes": ["SN1"]},
                                     {"extend_unsafe_fixes": ["ALL"]}], ids=str)
def test_the_mark_and_the_built_fix_agree(options):
    cfg = config(**options)
    marked = {(f.code, f.line): f.fix.applicability for f in lint_sources({"d.py": BUGGY}, cfg)
              if f.fix is not None}
    built = {(f.code, f.line): f.fix.applicability
             for f in lint_sources({"d.py": BUGGY}, cfg, fixes=True) if f.fix is not None}
    assert marked == built
    if not options:
        assert sorted(k for k, v in built.items() if v == "safe") == [
            ("SN102", 11), ("SN103", 13), ("SN106", 18)]


WEIGHTS_INIT = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm


    def weights_init(m):
        if m.__class__.__name__.find("Conv") != -1:
            nn.init.normal_(m.weight.data, 0.0, 0.02)


    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.ConvTranspose2d(8, 3, 4)


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = spectral_norm(nn.Conv2d(3, 8, 4))


    netD = Discriminator()
    netD.apply(weights_init)
""")


def sn106(sources: dict[str, str]):
    found = [f for f in lint_sources(sources, config(), fixes=True) if f.code == "SN106"]
    assert len(found) == 1
    return found[0].fix


def test_an_init_only_the_discriminator_runs_is_fixed_safely():
    fix = sn106({"d.py": WEIGHTS_INIT})
    assert fix.applicability == "safe"
    assert "+        nn.init.normal_(m.parametrizations.weight.original.data, 0.0, 0.02)\n" in fix.diff


def test_an_init_the_generator_runs_too_is_guarded_and_unsafe():
    text = WEIGHTS_INIT + "netG = Generator()\nnetG.apply(weights_init)\n"
    fix = sn106({"d.py": text})
    assert fix.applicability == "unsafe"
    assert fix.message.endswith("; unsafe: the init also runs for Generator, whose layers lack "
                                "the parametrization")
    assert ('+        nn.init.normal_((m.parametrizations.weight.original if '
            'nn.utils.parametrize.is_parametrized(m, "weight") else m.weight).data, 0.0, 0.02)\n'
            ) in fix.diff


def test_the_guard_imports_parametrize_where_the_file_cannot_name_it():
    text = textwrap.dedent("""\
        from torch.nn import Conv2d, ConvTranspose2d, Module, init
        from torch.nn.utils.parametrizations import spectral_norm


        def weights_init(m):
            if isinstance(m, (Conv2d, ConvTranspose2d)):
                init.normal_(m.weight, 0.0, 0.02)


        class Generator(Module):
            def __init__(self):
                super().__init__()
                self.conv = ConvTranspose2d(8, 3, 4)


        class Discriminator(Module):
            def __init__(self):
                super().__init__()
                self.conv = spectral_norm(Conv2d(3, 8, 4))


        netD, netG = Discriminator(), Generator()
        netD.apply(weights_init)
        netG.apply(weights_init)
    """)
    fix = sn106({"d.py": text})
    assert fix.applicability == "unsafe"
    assert "+from torch.nn.utils import parametrize\n" in fix.diff
    assert ('+        init.normal_((m.parametrizations.weight.original if '
            'parametrize.is_parametrized(m, "weight") else m.weight), 0.0, 0.02)\n') in fix.diff


def test_extend_safe_fixes_on_the_command_line_lets_plain_fix_write(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from snlint.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.py").write_text(BUGGY)
    plain = CliRunner().invoke(main, ["--no-graph", "--no-cache", "--fix", "--select", "SN105", "d.py"])
    assert (tmp_path / "d.py").read_text() == BUGGY
    assert plain.stdout.splitlines()[-1] == "No fixes available (1 with --unsafe-fixes)."
    moved = CliRunner().invoke(main, ["--no-graph", "--no-cache", "--fix", "--select", "SN105",
                                      "--extend-safe-fixes", "SN105", "d.py"])
    assert moved.stderr == "Fixed 1 finding in 1 file.\n"
    assert "        self.up = spectral_norm(nn.ConvTranspose2d(8, 8, 4))\n" in (tmp_path / "d.py").read_text()


def test_an_unknown_code_on_the_command_line_exits_2():
    from click.testing import CliRunner

    from snlint.cli import main

    result = CliRunner().invoke(main, ["--no-graph", "--extend-unsafe-fixes", "SN777", "."])
    assert result.exit_code == 2
    assert "unknown rule code 'SN777' in --extend-unsafe-fixes" in result.stderr
