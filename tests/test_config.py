import re
import textwrap
from pathlib import Path

import pytest

from snlint.config import Config, ConfigError, find_root, load_config


def write_pyproject(root: Path, body: str) -> None:
    (root / "pyproject.toml").write_text(textwrap.dedent(body), encoding="utf-8")


# ---------------------------------------------------------------- selection

def test_default_selection_is_every_rule_but_the_opt_in_ones(tmp_path):
    config = Config(tmp_path)
    assert [c for c in ("SN101", "SN201", "SN302", "SN501") if config.is_enabled(c, "a.py")] \
        == ["SN101", "SN201"]


def test_select_replaces_the_default_set(tmp_path):
    config = Config(tmp_path, select=["SN2"])
    assert [c for c in ("SN101", "SN201") if config.is_enabled(c, "a.py")] == ["SN201"]


def test_prefix_of_two_digits_selects_only_its_decade(tmp_path):
    config = Config(tmp_path, select=["SN30"])
    assert [c for c in ("SN301", "SN309", "SN310") if config.is_enabled(c, "a.py")] \
        == ["SN301", "SN309"]


def test_extend_select_prefix_turns_on_an_opt_in_rule(tmp_path):
    config = Config(tmp_path, extend_select=["SN3"])
    assert config.is_enabled("SN302", "a.py") is True


def test_select_all_turns_on_opt_in_rules(tmp_path):
    config = Config(tmp_path, select=["ALL"])
    assert config.is_enabled("SN501", "a.py") is True


def test_ignore_wins_over_select(tmp_path):
    config = Config(tmp_path, select=["ALL"], ignore=["SN201"])
    assert (config.is_enabled("SN201", "a.py"), config.is_enabled("SN202", "a.py")) \
        == (False, True)


def test_diagnostics_are_on_whatever_the_selection(tmp_path):
    config = Config(tmp_path, select=["SN1"])
    assert config.is_enabled("SN901", "a.py") is True


def test_ignore_prefix_silences_graph_diagnostics(tmp_path):
    config = Config(tmp_path, ignore=["SN91"])
    assert [c for c in ("SN901", "SN910", "SN913") if config.is_enabled(c, "a.py")] == ["SN901"]


# ---------------------------------------------------------------- per-file-ignores

def test_per_file_ignores_glob_on_the_path_relative_to_root(tmp_path):
    config = Config(tmp_path, per_file_ignores={"tests/*.py": ["SN201"]})
    assert (config.is_enabled("SN201", str(tmp_path / "tests" / "t.py")),
            config.is_enabled("SN201", str(tmp_path / "models" / "t.py"))) == (False, True)


def test_per_file_ignores_only_names_its_codes(tmp_path):
    config = Config(tmp_path, per_file_ignores={"tests/*.py": ["SN201"]})
    assert config.is_enabled("SN101", str(tmp_path / "tests" / "t.py")) is True


def test_per_file_ignores_star_crosses_folders_like_fnmatch(tmp_path):
    config = Config(tmp_path, per_file_ignores={"examples/*": ["SN1"]})
    assert config.is_enabled("SN101", str(tmp_path / "examples" / "gan" / "d.py")) is False


def test_per_file_ignores_double_star_matches_no_folder(tmp_path):
    config = Config(tmp_path, per_file_ignores={"**/test_*.py": ["SN201"]})
    assert config.is_enabled("SN201", str(tmp_path / "test_d.py")) is False


def test_per_file_ignores_slashless_glob_matches_the_file_name(tmp_path):
    config = Config(tmp_path, per_file_ignores={"__init__.py": ["SN201"]})
    assert config.is_enabled("SN201", str(tmp_path / "pkg" / "sub" / "__init__.py")) is False


def test_per_file_ignores_slashless_folder_name_matches_at_any_depth(tmp_path):
    config = Config(tmp_path, per_file_ignores={"tests": ["SN201"]})
    assert config.is_enabled("SN201", str(tmp_path / "pkg" / "tests" / "t.py")) is False


def test_per_file_ignores_folder_covers_the_files_below(tmp_path):
    config = Config(tmp_path, per_file_ignores={"examples/": ["SN201"]})
    assert config.is_enabled("SN201", str(tmp_path / "examples" / "dcgan.py")) is False


def test_per_file_ignores_anchored_glob_does_not_match_deeper(tmp_path):
    config = Config(tmp_path, per_file_ignores={"/models": ["SN201"]})
    assert config.is_enabled("SN201", str(tmp_path / "src" / "models" / "d.py")) is True


def test_per_file_ignores_relative_display_path_resolved_from_cwd(tmp_path, monkeypatch):
    (tmp_path / "models").mkdir()
    monkeypatch.chdir(tmp_path / "models")
    config = Config(tmp_path, per_file_ignores={"models/*.py": ["SN201"]})
    assert config.is_enabled("SN201", "d.py") is False


def test_per_file_ignores_path_outside_root_uses_display_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = Config(tmp_path / "project", per_file_ignores={"tests/*.py": ["SN201"]})
    assert (config.relative_path("./elsewhere/tests/t.py"),
            config.is_enabled("SN201", "elsewhere/tests/t.py")) == ("elsewhere/tests/t.py", True)


def test_per_file_ignores_can_silence_a_diagnostic(tmp_path):
    config = Config(tmp_path, per_file_ignores={"generated/*": ["SN9"]})
    assert config.is_enabled("SN901", str(tmp_path / "generated" / "x.py")) is False


def test_glob_character_class(tmp_path):
    config = Config(tmp_path, per_file_ignores={"d[0-9].py": ["SN201"]})
    assert (config.is_enabled("SN201", str(tmp_path / "d1.py")),
            config.is_enabled("SN201", str(tmp_path / "dx.py"))) == (False, True)


# ---------------------------------------------------------------- discriminators

def test_discriminator_references_are_kept_as_given(tmp_path):
    config = Config(tmp_path, discriminators=["models/nets.py:NLayerDiscriminator"],
                    not_discriminators=["models/nets.py:DiscriminatorLoss"])
    assert (config.discriminators, config.not_discriminators) == (
        ["models/nets.py:NLayerDiscriminator"], ["models/nets.py:DiscriminatorLoss"])


# ---------------------------------------------------------------- find_root

def test_find_root_is_the_nearest_folder_with_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "models" / "gan").mkdir(parents=True)
    assert find_root([str(tmp_path / "models" / "gan" / "d.py")]) == tmp_path


def test_find_root_stops_at_a_git_folder(tmp_path):
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "sub" / ".git").mkdir(parents=True)
    assert find_root([str(tmp_path / "sub")]) == tmp_path / "sub"


def _markers_above(tmp_path) -> bool:
    # tmp_path has no pyproject.toml/.git above it in a hermetic test run.
    return any((p / "pyproject.toml").exists() or (p / ".git").exists() for p in tmp_path.parents)


def test_find_root_without_markers_is_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "work" / "a").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work")
    if _markers_above(tmp_path):
        pytest.skip("a marker sits above tmp_path")
    assert find_root(["a/d.py"]) == tmp_path / "work"


def test_find_root_without_markers_outside_the_working_directory_is_the_paths_folder(
        tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    if _markers_above(tmp_path):
        pytest.skip("a marker sits above tmp_path")
    assert find_root([str(tmp_path / "a" / "d.py")]) == tmp_path / "a"
    assert find_root([str(tmp_path / "a")]) == tmp_path / "a"


def test_find_root_run_from_the_filesystem_root_is_not_the_filesystem_root(tmp_path, monkeypatch):
    # `/` holds every path, and a run from it would walk (and cache into) the machine.
    (tmp_path / "a").mkdir()
    monkeypatch.chdir("/")
    if _markers_above(tmp_path):
        pytest.skip("a marker sits above tmp_path")
    assert find_root([str(tmp_path / "a")]) == tmp_path / "a"


# ---------------------------------------------------------------- load_config

def test_load_config_without_pyproject_is_the_default(tmp_path):
    assert load_config(tmp_path) == Config(tmp_path)


def test_load_config_reads_kebab_case_keys(tmp_path):
    write_pyproject(tmp_path, """
        [tool.snlint]
        extend-select = ["SN302"]
        per-file-ignores = {"tests/*" = ["SN201"]}
        not-discriminators = ["m.py:Loss"]
        max-file-size = 1000
        norm-replacement = "instancenorm"
        graph = false
        graph-timeout = 5
        force-exclude = true

        [tool.snlint.models."m.py:D"]
        kwargs = {ch = 64}
    """)
    config = load_config(tmp_path)
    assert (config.extend_select, config.per_file_ignores, config.not_discriminators,
            config.max_file_size, config.norm_replacement, config.graph,
            config.graph_timeout, config.models, config.force_exclude) == (
        ["SN302"], {"tests/*": ["SN201"]}, ["m.py:Loss"], 1000, "instancenorm", False,
        5.0, {"m.py:D": {"kwargs": {"ch": 64}}}, True)


def test_load_config_ignores_other_tools(tmp_path):
    write_pyproject(tmp_path, """
        [tool.ruff]
        line-length = 100
    """)
    assert load_config(tmp_path) == Config(tmp_path)


def test_cli_override_replaces_the_file_value(tmp_path):
    write_pyproject(tmp_path, """
        [tool.snlint]
        graph-timeout = 5
    """)
    assert load_config(tmp_path, graph_timeout=30.0, graph=None).graph_timeout == 30.0


def test_cli_none_keeps_the_file_value(tmp_path):
    write_pyproject(tmp_path, """
        [tool.snlint]
        graph = false
    """)
    assert load_config(tmp_path, graph=None).graph is False


def test_cli_select_starts_the_selection_afresh(tmp_path):
    write_pyproject(tmp_path, """
        [tool.snlint]
        extend-select = ["SN501"]
        ignore = ["SN3"]
    """)
    config = load_config(tmp_path, select=["SN302"])
    assert (config.select, config.extend_select, config.ignore) == (["SN302"], [], [])


def test_cli_ignore_adds_to_the_file_ignore(tmp_path):
    write_pyproject(tmp_path, """
        [tool.snlint]
        ignore = ["SN3"]
    """)
    assert load_config(tmp_path, ignore=["SN201"]).ignore == ["SN3", "SN201"]


def test_cli_codes_may_be_comma_separated(tmp_path):
    assert load_config(tmp_path, select=["SN1,SN201", "SN3"]).select == ["SN1", "SN201", "SN3"]


# ---------------------------------------------------------------- configuration errors

CODE_HELP = "(expected ALL, or SN followed by up to three digits, e.g. SN3, SN301)"


def config_error(make) -> str:
    with pytest.raises(ConfigError) as error:
        make()
    assert error.value.message == str(error.value)
    return error.value.message


@pytest.mark.parametrize(("options", "message"), [
    pytest.param({"select": ["SN3011"]}, f"invalid rule code 'SN3011' in select {CODE_HELP}",
                 id="invalid-code-in-select"),
    pytest.param({"ignore": ["sn301"]}, f"invalid rule code 'sn301' in ignore {CODE_HELP}",
                 id="lowercase-code"),
    pytest.param({"per_file_ignores": {"tests/*": ["E501"]}},
                 f"invalid rule code 'E501' in per-file-ignores 'tests/*' {CODE_HELP}",
                 id="invalid-code-in-per-file-ignores-names-the-glob"),
    pytest.param({"discriminators": ["models/nets.py"]},
                 "invalid class reference 'models/nets.py' in discriminators "
                 '(expected "path/relative/to/root.py:ClassName")',
                 id="discriminator-reference-without-class"),
])
def test_invalid_option_is_a_config_error_naming_it(tmp_path, options, message):
    assert config_error(lambda: Config(tmp_path, **options)) == message


def test_invalid_glob_is_a_config_error(tmp_path):
    # After the colon, the re module's own words (they vary between Python versions).
    message = config_error(lambda: Config(tmp_path, exclude=["gen[z-a].py"]))
    assert re.fullmatch(r"invalid glob 'gen\[z-a\]\.py': .+", message), message


def test_invalid_cli_code_is_a_config_error(tmp_path):
    assert config_error(lambda: load_config(tmp_path, extend_select=["XYZ"])) == (
        f"invalid rule code 'XYZ' in --extend-select {CODE_HELP}")


# (the [tool.snlint] table, the message after "<root>/pyproject.toml: ")
PYPROJECT_ERRORS = [
    pytest.param('selct = ["SN1"]',
                 "unknown key 'selct' in [tool.snlint] (did you mean 'select'?)",
                 id="unknown-key-naming-it"),
    pytest.param("per_file_ignores = {}",
                 "unknown key 'per_file_ignores' in [tool.snlint] "
                 "(did you mean 'per-file-ignores'?)",
                 id="snake-case-key-suggests-the-kebab-case-one"),
    pytest.param('select = "SN1"',
                 "[tool.snlint] select must be a list of strings, got 'SN1'",
                 id="wrong-value-type"),
    pytest.param('ignore = ["E501"]',
                 f"invalid rule code 'E501' in [tool.snlint] ignore {CODE_HELP}",
                 id="invalid-code"),
    pytest.param('per-file-ignores = {"tests/*" = ["E501"]}',
                 f"invalid rule code 'E501' in [tool.snlint] per-file-ignores 'tests/*' {CODE_HELP}",
                 id="invalid-code-in-per-file-ignores"),
    pytest.param('norm-replacement = "layernorm"',
                 "[tool.snlint] norm-replacement must be one of groupnorm, instancenorm, "
                 "identity, got 'layernorm'",
                 id="norm-replacement-outside-the-allowed-values"),
]


@pytest.mark.parametrize(("table", "message"), PYPROJECT_ERRORS)
def test_pyproject_error_names_the_file_and_the_key(tmp_path, table, message):
    write_pyproject(tmp_path, f"[tool.snlint]\n{table}\n")
    pyproject = tmp_path / "pyproject.toml"
    assert config_error(lambda: load_config(tmp_path)) == f"{pyproject}: {message}"


def test_invalid_toml_is_a_config_error(tmp_path):
    # After "invalid TOML: ", tomllib's own words.
    write_pyproject(tmp_path, "[tool.snlint\n")
    message = config_error(lambda: load_config(tmp_path))
    assert message.startswith(f"{tmp_path / 'pyproject.toml'}: invalid TOML: "), message


# ---------------------------------------------------------------- fix safety

def test_extend_safe_fixes_from_pyproject_and_the_cli_add_up(tmp_path):
    write_pyproject(tmp_path, """
        [tool.snlint]
        extend-safe-fixes = ["SN105"]
        extend-unsafe-fixes = ["SN106"]
    """)
    config = load_config(tmp_path, extend_safe_fixes="SN201,SN1")
    assert (config.extend_safe_fixes, config.extend_unsafe_fixes) == (["SN105", "SN201", "SN1"], ["SN106"])


def test_an_unknown_code_in_extend_safe_fixes_is_a_config_error_naming_the_key(tmp_path):
    write_pyproject(tmp_path, """
        [tool.snlint]
        extend-safe-fixes = ["SN199"]
    """)
    with pytest.raises(ConfigError, match=r"unknown rule code 'SN199' in \[tool.snlint\] extend-safe-fixes"):
        load_config(tmp_path)


def test_a_malformed_code_in_extend_unsafe_fixes_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match=r"invalid rule code 'E501' in extend-unsafe-fixes"):
        Config(tmp_path, extend_unsafe_fixes=["E501"])


# ---------------------------------------------------------------- snlint.toml, .snlint.toml

def test_find_root_stops_at_a_snlint_toml(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "sub" / "pkg").mkdir(parents=True)
    (tmp_path / "sub" / "snlint.toml").write_text("")
    assert find_root([str(tmp_path / "sub" / "pkg" / "d.py")]) == tmp_path / "sub"


def test_config_file_order_is_dot_snlint_then_snlint_then_pyproject(tmp_path):
    from snlint.config import config_file

    assert config_file(tmp_path) is None
    for name in ("pyproject.toml", "snlint.toml", ".snlint.toml"):
        (tmp_path / name).write_text("")
        assert config_file(tmp_path) == tmp_path / name


def test_snlint_toml_settings_are_top_level_keys(tmp_path):
    (tmp_path / "snlint.toml").write_text('ignore = ["SN105"]\n[models]\n"m.py:D" = { n = 1 }\n')
    config = load_config(tmp_path)
    assert (config.ignore, config.models) == (["SN105"], {"m.py:D": {"n": 1}})


def test_snlint_toml_is_read_instead_of_pyproject(tmp_path):
    write_pyproject(tmp_path, '[tool.snlint]\nignore = ["SN201"]\n')
    (tmp_path / "snlint.toml").write_text('ignore = ["SN105"]\n')
    assert load_config(tmp_path).ignore == ["SN105"]


def test_invalid_toml_in_dot_snlint_toml_names_the_file(tmp_path):
    (tmp_path / ".snlint.toml").write_text("ignore = [\n")
    with pytest.raises(ConfigError, match=re.escape(f"{tmp_path / '.snlint.toml'}: invalid TOML: ")):
        load_config(tmp_path)


def test_unknown_key_in_snlint_toml_has_a_hint(tmp_path):
    (tmp_path / "snlint.toml").write_text('extend_select = ["SN501"]\n')
    with pytest.raises(ConfigError) as error:
        load_config(tmp_path)
    assert str(error.value) == (f"{tmp_path / 'snlint.toml'}: unknown key 'extend_select' "
                                "(did you mean 'extend-select'?)")


def test_settings_file_given_is_read_instead_and_must_exist(tmp_path):
    (tmp_path / "snlint.toml").write_text('ignore = ["SN105"]\n')
    other = tmp_path / "other.toml"
    other.write_text('ignore = ["SN301"]\n')
    assert load_config(tmp_path, settings=other).ignore == ["SN301"]
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path, settings=tmp_path / "missing.toml")
