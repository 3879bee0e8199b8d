"""The output formats, on hand-built findings (no engine involved)."""

from __future__ import annotations

import json
import textwrap

import click
import pytest

from snlint.findings import DiscriminatorRef, Fix, Finding, Span, diagnostic
from snlint.report import render, render_stats, summary

SOURCE = textwrap.dedent("""\
    import torch.nn as nn
    from torch.nn.utils import spectral_norm
    bn = spectral_norm(nn.BatchNorm2d(3))
""")

DIFF = textwrap.dedent("""\
    --- a/d.py
    +++ b/d.py
    @@ -3 +3 @@
    -bn = spectral_norm(nn.BatchNorm2d(3))
    +bn = nn.BatchNorm2d(3)
""")


def finding(code="SN101", severity="error", span=Span(3, 6, 3, 38), path="d.py", fix=None,
            message="spectral_norm on BatchNorm2d", **kw) -> Finding:
    return Finding(code, "sn-on-normalization", severity, message, path, span, fix=fix, **kw)


SAFE = Fix("safe", "Remove the spectral_norm wrapper", DIFF)
UNSAFE = Fix("unsafe", "Replace BatchNorm2d with GroupNorm", DIFF)


# concise

def test_concise_line():
    assert render([finding()], "concise", {}) == "d.py:3:6: SN101 spectral_norm on BatchNorm2d"


def test_concise_marks_safe_fix():
    assert render([finding(fix=SAFE)], "concise", {}) == \
        "d.py:3:6: SN101 [*] spectral_norm on BatchNorm2d"


def test_concise_unsafe_fix_marked_only_with_unsafe_fixes():
    f = finding(fix=UNSAFE)
    assert "[*]" not in render([f], "concise", {})
    assert "SN101 [*] " in render([f], "concise", {}, unsafe_fixes=True)


def test_concise_notebook_cell():
    f = finding(span=Span(2, 1, 2, 5), path="nb.ipynb", cell=4)
    assert render([f], "concise", {}) == "nb.ipynb:cell 4:2:1: SN101 spectral_norm on BatchNorm2d"


def test_concise_keeps_order_one_line_each():
    a, b = finding(), finding(code="SN105", severity="warning", span=Span(1, 1, 1, 2))
    assert render([a, b], "concise", {}).splitlines() == [
        "d.py:3:6: SN101 spectral_norm on BatchNorm2d",
        "d.py:1:1: SN105 spectral_norm on BatchNorm2d",
    ]


def test_concise_multiline_message_on_one_line():
    f = diagnostic("SN901", "bad.py", "Syntax Error @ 1:7.\n  def f(:\n        ^", Span(1, 7, 1, 8))
    assert render([f], "concise", {}) == "bad.py:1:7: SN901 Syntax Error @ 1:7. def f(: ^"


def test_concise_nothing_is_empty():
    assert render([], "concise", {}) == ""


def test_concise_show_fixes_adds_fix_and_diff():
    text = render([finding(fix=SAFE)], "concise", {}, show_fixes=True)
    lines = text.splitlines()
    assert lines[1] == "  = fix (safe): Remove the spectral_norm wrapper"
    assert "      +bn = nn.BatchNorm2d(3)" in lines


def test_concise_no_color_codes_by_default():
    assert "\x1b[" not in render([finding(fix=SAFE)], "concise", {})


@pytest.mark.parametrize("severity, fg", [("error", "red"), ("warning", "yellow"), ("info", "cyan")])
def test_color_code_by_severity(severity, fg):
    text = render([finding(severity=severity)], "concise", {}, color=True)
    assert click.style("SN101", fg=fg, bold=True) in text
    assert click.unstyle(text) == "d.py:3:6: SN101 spectral_norm on BatchNorm2d"


# full

def test_full_caret_under_span():
    assert render([finding()], "full", {"d.py": SOURCE}) == textwrap.dedent("""\
        d.py:3:6: SN101 spectral_norm on BatchNorm2d
          |
        3 | bn = spectral_norm(nn.BatchNorm2d(3))
          |      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ SN101
          |""")


def test_full_shows_fix_message_and_diff():
    text = render([finding(fix=SAFE)], "full", {"d.py": SOURCE})
    assert text.splitlines()[5:] == [
        "  = fix (safe): Remove the spectral_norm wrapper",
        "      --- a/d.py",
        "      +++ b/d.py",
        "      @@ -3 +3 @@",
        "      -bn = spectral_norm(nn.BatchNorm2d(3))",
        "      +bn = nn.BatchNorm2d(3)",
    ]


def test_full_unsafe_fix_named_but_diff_hidden_without_unsafe_fixes():
    text = render([finding(fix=UNSAFE)], "full", {"d.py": SOURCE})
    assert "  = fix (unsafe, enable with --unsafe-fixes): Replace BatchNorm2d with GroupNorm" \
        in text.splitlines()
    assert "+bn" not in text


def test_full_unsafe_fix_diff_shown_with_show_fixes():
    text = render([finding(fix=UNSAFE)], "full", {"d.py": SOURCE}, show_fixes=True)
    assert "      +bn = nn.BatchNorm2d(3)" in text.splitlines()


def test_full_unsafe_fix_diff_shown_with_unsafe_fixes():
    text = render([finding(fix=UNSAFE)], "full", {"d.py": SOURCE}, unsafe_fixes=True)
    assert "  = fix (unsafe): Replace BatchNorm2d with GroupNorm" in text.splitlines()
    assert "      +bn = nn.BatchNorm2d(3)" in text.splitlines()


def test_full_marked_fix_not_built_says_how_to_see_it():
    text = render([finding(fix=Fix("unsafe")), finding(fix=Fix("safe"))], "full", {"d.py": SOURCE})
    assert "  = fix (unsafe, enable with --unsafe-fixes): --show-fixes shows it" in text.splitlines()
    assert "  = fix (safe): --show-fixes shows it" in text.splitlines()
    assert summary([finding(fix=Fix("safe")), finding(fix=Fix("unsafe"))]).splitlines()[1] == \
        "[*] 1 fixable with --fix (1 more with --unsafe-fixes)."


def test_full_multiline_span_marks_first_line_to_end():
    source = "x = spectral_norm(\n    nn.BatchNorm2d(3),\n)\n"
    f = finding(span=Span(1, 5, 3, 2))
    assert render([f], "full", {"d.py": source}).splitlines()[1:] == [
        "  |",
        "1 | x = spectral_norm(",
        "  |     ^^^^^^^^^^^^^^ SN101",
        "2 |     nn.BatchNorm2d(3),",
        "3 | )",
        "  |",
    ]


def test_full_gutter_widens_with_line_number():
    source = "\n" * 9 + "bn = spectral_norm(nn.BatchNorm2d(3))\n"
    f = finding(span=Span(10, 1, 10, 3))
    assert render([f], "full", {"d.py": source}).splitlines()[1:4] == [
        "   |",
        "10 | bn = spectral_norm(nn.BatchNorm2d(3))",
        "   | ^^ SN101",
    ]


def test_full_zero_width_span_gets_one_caret():
    f = diagnostic("SN901", "d.py", "unexpected EOF", Span(1, 1, 1, 1))
    assert render([f], "full", {"d.py": "def f(:\n"}).splitlines()[3] == "  | ^ SN901"


def test_full_counts_lines_as_python_does():
    # A form feed is not a line break for Python; CRLF is one.
    source = "a = 1\x0c\r\nbn = spectral_norm(x)\r\n"
    f = finding(span=Span(2, 6, 2, 22))
    lines = render([f], "full", {"d.py": source}).splitlines()
    assert lines[2] == "2 | bn = spectral_norm(x)"
    assert lines[3] == "  |      ^^^^^^^^^^^^^^^^ SN101"


def test_full_caret_aligned_after_tab():
    source = "if x:\n\tbn = spectral_norm(x)\n"
    f = finding(span=Span(2, 7, 2, 23))
    lines = render([f], "full", {"d.py": source}).splitlines()
    assert lines[2] == "2 |     bn = spectral_norm(x)"
    assert lines[3] == "  |          ^^^^^^^^^^^^^^^^ SN101"


def test_full_caret_aligned_after_wide_characters():
    source = "名前 = spectral_norm(x)\n"
    f = finding(span=Span(1, 6, 1, 22))
    assert render([f], "full", {"d.py": source}).splitlines()[3] == \
        "  |        ^^^^^^^^^^^^^^^^ SN101"


def test_full_without_source_shows_header_only():
    assert render([finding()], "full", {}) == "d.py:3:6: SN101 spectral_norm on BatchNorm2d"


def test_full_line_past_end_of_source_shows_header_only():
    f = finding(span=Span(40, 1, 40, 2))
    assert render([f], "full", {"d.py": SOURCE}) == "d.py:40:1: SN101 spectral_norm on BatchNorm2d"


def test_full_notebook_cell_shows_header():
    f = finding(path="nb.ipynb", cell=2, span=Span(1, 1, 1, 4))
    assert render([f], "full", {"nb.ipynb": "{}"}) == \
        "nb.ipynb:cell 2:1:1: SN101 spectral_norm on BatchNorm2d"


def test_full_names_discriminator():
    ref = DiscriminatorRef("models/d.py:NetD", "name")
    text = render([finding(discriminator=ref)], "full", {"d.py": SOURCE})
    assert "  = discriminator: models/d.py:NetD (by name)" in text.splitlines()


def test_full_blank_line_between_findings():
    a, b = finding(span=Span(1, 1, 1, 7)), finding(span=Span(3, 1, 3, 3))
    blocks = render([a, b], "full", {"d.py": SOURCE}).split("\n\n")
    assert [block.splitlines()[0] for block in blocks] == [
        "d.py:1:1: SN101 spectral_norm on BatchNorm2d",
        "d.py:3:1: SN101 spectral_norm on BatchNorm2d",
    ]


def test_full_control_characters_not_sent_to_terminal():
    f = finding(span=Span(1, 1, 1, 2))
    assert "\x1b" not in render([f], "full", {"d.py": "x = '\x1b[2J'\n"})


def test_full_color_only_when_asked():
    text = render([finding(fix=SAFE)], "full", {"d.py": SOURCE}, color=True)
    assert "\x1b[" in text
    assert click.unstyle(text) == render([finding(fix=SAFE)], "full", {"d.py": SOURCE})


# json

def test_json_array_of_contract_objects():
    ref = DiscriminatorRef("d.py:NetD", "training code")
    f = finding(fix=SAFE, symbol="NetD.main.1", discriminator=ref)
    text = render([f], "json", {})
    assert text.startswith('[\n  {\n    "code": "SN101"')
    assert json.loads(text) == [{
        "code": "SN101", "name": "sn-on-normalization", "severity": "error",
        "message": "spectral_norm on BatchNorm2d", "path": "d.py", "line": 3, "column": 6,
        "end_line": 3, "end_column": 38, "cell": None, "pass": "source",
        "symbol": "NetD.main.1", "discriminator": {"class": "d.py:NetD", "evidence": "training code"},
        "fix": {"applicability": "safe", "message": "Remove the spectral_norm wrapper", "diff": DIFF},
        "evidence": {"discriminator": "NetD: used as a discriminator by the training code", "detail": None},
    }]


def test_json_includes_diagnostics():
    f = diagnostic("SN901", "bad.py", "invalid syntax", Span(1, 7, 1, 8))
    [obj] = json.loads(render([f], "json", {}))
    assert (obj["code"], obj["severity"], obj["pass"], obj["fix"]) == ("SN901", "error", "source", None)


def test_json_empty_is_empty_array():
    assert json.loads(render([], "json", {})) == []


def test_json_ignores_color():
    assert "\x1b" not in render([finding()], "json", {}, color=True)


def test_json_lines_one_compact_object_per_line():
    a, b = finding(), finding(code="SN105", severity="warning")
    lines = render([a, b], "json-lines", {}).split("\n")
    assert [json.loads(line)["code"] for line in lines] == ["SN101", "SN105"]
    assert lines[0] == json.dumps(a.to_dict(), separators=(",", ":"))


def test_json_lines_empty_is_empty():
    assert render([], "json-lines", {}) == ""


def test_unknown_format_raises():
    with pytest.raises(ValueError, match="xml"):
        render([], "xml", {})


# summary

def test_summary_counts_by_severity():
    fs = [finding(), finding(), finding(severity="warning")]
    assert summary(fs, unsafe_fixes=False) == "Found 3 findings (2 errors, 1 warning)."


def test_summary_singular_and_info():
    assert summary([finding(severity="info")], False) == "Found 1 finding (1 info)."


def test_summary_fixable():
    fs = [finding(fix=SAFE), finding(fix=SAFE), finding()]
    assert summary(fs, False).splitlines()[1] == "[*] 2 fixable with --fix."


def test_summary_unsafe_fixes_hidden_without_unsafe_fixes():
    fs = [finding(fix=SAFE), finding(fix=UNSAFE)]
    assert summary(fs, False).splitlines()[1] == \
        "[*] 1 fixable with --fix (1 more with --unsafe-fixes)."
    assert summary(fs, True).splitlines()[1] == "[*] 2 fixable with --fix."


def test_summary_only_hidden_fixes():
    fs = [finding(fix=UNSAFE), finding(fix=UNSAFE)]
    assert summary(fs, False).splitlines()[1] == \
        "No fixes available (2 with --unsafe-fixes)."


def test_summary_clean():
    assert summary([], False) == "All checks passed!"


# statistics

def test_statistics_most_frequent_first():
    fs = [finding(code="SN201", fix=SAFE), finding(), finding(code="SN201"), finding(code="SN105")]
    assert render_stats(fs, "concise").splitlines() == [
        "2  SN201  sn-on-normalization [*]",
        "1  SN101  sn-on-normalization",
        "1  SN105  sn-on-normalization",
    ]


def test_statistics_json():
    rows = json.loads(render_stats([finding(), finding()], "json"))
    assert rows == [{"code": "SN101", "name": "sn-on-normalization", "count": 2, "fixable": False}]


def test_terminal_page_styles_headings_and_drops_fences():
    from snlint.report.markdown import terminal_page

    page = "# SN101 x\n\n## Example\n```python\nx = 1\n```\nUse `y`.\n"
    styled = terminal_page(page, color=True)
    assert "```" not in styled
    assert "\x1b[" in styled and "    x = 1" in styled


def test_terminal_page_is_plain_markdown_without_color():
    from snlint.report.markdown import terminal_page

    page = "# SN101 x\n```python\nx = 1\n```\n"
    assert terminal_page(page, color=False) == page


# evidence: the one-line message's why, in the formats that have room for it

EVIDENCED = dict(message="BatchNorm2d in Critic normalizes with the statistics of the current batch",
                 evidence="When real and generated samples arrive in separate batches, those "
                          "statistics alone tell them apart.",
                 discriminator=DiscriminatorRef("nets.py:Critic", "training code",
                                                "called on real and generated samples in train()"))


def test_concise_keeps_the_evidence_out_of_the_line():
    assert render([finding(code="SN301", **EVIDENCED)], "concise", {}) == (
        "d.py:3:6: SN301 BatchNorm2d in Critic normalizes with the statistics of the current batch")


def test_concise_show_fixes_adds_the_evidence():
    text = render([finding(code="SN301", **EVIDENCED)], "concise", {}, show_fixes=True)
    assert text.splitlines()[1:] == [
        "  = discriminator: nets.py:Critic (by training code; called on real and generated samples in train())",
        "  = evidence: When real and generated samples arrive in separate batches, those statistics "
        "alone tell them apart."]


def test_full_shows_the_evidence_under_the_source():
    text = render([finding(code="SN301", **EVIDENCED)], "full", {"d.py": SOURCE})
    assert text.splitlines()[-1] == (
        "  = evidence: When real and generated samples arrive in separate batches, those "
        "statistics alone tell them apart.")


def test_json_evidence_is_the_discriminator_and_the_detail():
    [obj] = json.loads(render([finding(code="SN301", **EVIDENCED)], "json", {}))
    assert obj["evidence"] == {
        "discriminator": "Critic: used as a discriminator by the training code; called on real "
                         "and generated samples in train()",
        "detail": "When real and generated samples arrive in separate batches, those statistics "
                  "alone tell them apart."}
    [plain] = json.loads(render([finding()], "json", {}))
    assert plain["evidence"] is None
