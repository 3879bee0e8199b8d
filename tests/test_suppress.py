import textwrap

from snlint.suppress import Suppressions


def parse(text: str) -> Suppressions:
    return Suppressions.parse(textwrap.dedent(text))


def test_bare_noqa_suppresses_every_code_on_its_line():
    s = parse("""\
        x = 1  # noqa
        y = 2
    """)
    assert (s.allows("SN201", 1), s.allows("SN301", 1), s.allows("SN201", 2)) == (False, False, True)


def test_noqa_with_codes_suppresses_only_those():
    s = parse("x = 1  # noqa: SN201, SN301\n")
    assert (s.allows("SN201", 1), s.allows("SN301", 1), s.allows("SN101", 1)) == (False, False, True)


def test_noqa_codes_may_be_space_separated_without_space_after_colon():
    s = parse("x = 1  # noqa:SN201 SN301\n")
    assert (s.allows("SN201", 1), s.allows("SN301", 1)) == (False, False)


def test_noqa_prefix_suppresses_its_family():
    s = parse("x = 1  # noqa: SN3\n")
    assert (s.allows("SN301", 1), s.allows("SN201", 1)) == (False, True)


def test_noqa_keyword_is_case_insensitive():
    s = parse("x = 1  # NOQA: SN201\ny = 2  # NoQa\n")
    assert (s.allows("SN201", 1), s.allows("SN101", 2)) == (False, False)


def test_noqa_for_other_tools_does_not_suppress_snlint():
    s = parse("x = 1  # noqa: E501\n")
    assert s.allows("SN201", 1) is True


def test_noqa_mixing_tools_suppresses_the_snlint_code():
    s = parse("x = 1  # noqa: E501,SN201\n")
    assert s.allows("SN201", 1) is False


def test_noqa_colon_without_codes_suppresses_nothing():
    s = parse("x = 1  # noqa: because reasons\n")
    assert s.allows("SN201", 1) is True


def test_noqa_after_another_comment_counts():
    s = parse("x = 1  # type: ignore # noqa: SN201\n")
    assert s.allows("SN201", 1) is False


def test_noqa_followed_by_explanation_keeps_its_codes():
    s = parse("x = 1  # noqa: SN201 shortcut is deliberate\n")
    assert (s.allows("SN201", 1), s.allows("SN101", 1)) == (False, True)


def test_word_starting_with_noqa_is_not_a_directive():
    s = parse("x = 1  # noqaxyz\n")
    assert s.allows("SN201", 1) is True


def test_noqa_inside_a_string_is_not_a_comment():
    s = parse("""\
        x = "# noqa"
        y = '''
        # noqa
        '''
    """)
    assert (s.allows("SN201", 1), s.allows("SN201", 3)) == (True, True)


def test_file_level_disable_applies_to_every_line():
    s = parse("""\
        # snlint: disable=SN201,SN301
        x = 1
    """)
    assert (s.allows("SN201", 2), s.allows("SN301", 40), s.allows("SN101", 2)) == (False, False, True)


def test_file_level_disable_anywhere_in_the_file():
    s = parse("""\
        x = 1
        y = 2  # snlint: disable=SN2
    """)
    assert s.allows("SN201", 1) is False


def test_file_level_disable_in_a_string_does_nothing():
    s = parse('doc = "# snlint: disable=SN201"\n')
    assert s.allows("SN201", 1) is True


def test_file_level_disable_all():
    s = parse("# snlint: disable=ALL\n")
    assert s.allows("SN501", 9) is False


def test_file_level_disable_stops_at_a_non_code():
    s = parse("# snlint: disable=SN201 all of these are fine\n")
    assert s.file_disabled == frozenset({"SN201"})


def test_comments_never_suppress_diagnostics():
    s = parse("""\
        # snlint: disable=ALL
        x = (  # noqa
    """)
    assert s.allows("SN901", 2) is True


def test_lines_count_carriage_returns_as_python_does():
    s = Suppressions.parse("a = 1\rb = 2  # noqa\rc = 3\r")
    assert s.noqa == {2: None}


def test_noqa_maps_lines_to_codes_and_bare_directives():
    s = parse("""\
        a = 1  # noqa
        b = 2
        c = 3  # noqa: SN201,SN3
    """)
    assert s.noqa == {1: None, 3: frozenset({"SN201", "SN3"})}


def test_unclosed_string_falls_back_to_a_line_scan():
    # tokenize stops at the unclosed string; the lines after it are scanned one by one.
    s = parse("""\
        x = 1  # noqa: SN101
        s = \"\"\"
        y = 2  # noqa: SN201
    """)
    assert s.noqa == {1: frozenset({"SN101"}), 3: frozenset({"SN201"})}


def test_indentation_error_falls_back_after_the_last_good_line():
    s = parse("""\
        def f():
                x = 1  # noqa: SN101
            y = 2  # noqa: SN201
        z = '# noqa'
    """)
    assert s.noqa == {2: frozenset({"SN101"}), 3: frozenset({"SN201"})}


def test_empty_text_has_no_suppressions():
    assert Suppressions.parse("") == Suppressions()
