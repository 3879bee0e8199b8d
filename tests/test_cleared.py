"""What the graph pass may clear, decided without torch: how the worker says it chose a
class's arguments, whether those are the project's, and where a cleared finding shows."""

from __future__ import annotations

import inspect
import json

import pytest

from snlint.findings import Cleared, Finding, Span
from snlint.graph.build import Plan, resolve
from snlint.link.join import NOTHING_PASSED, may_clear
from snlint.report import render
from test_sarif import validate


def init(in_ch, ndf=64, norm="batch"):
    pass


PARAMS = list(inspect.signature(init).parameters.values())


@pytest.mark.parametrize("plan, arguments", [
    (Plan("with the [tool.snlint.models] arguments", kwargs={"in_ch": 3}, source="configured"), "configured"),
    (Plan("as in t.py:3", [3], {"norm": "instance"}, source="project"), "project"),
    (Plan("as in t.py:3", [3, {"$": "unknown"}], source="project"), "guessed"),  # a site value unread
    (Plan("", source="defaults"), "guessed"),  # in_ch has no default: guessed
    (Plan("with the [tool.snlint.models] arguments", kwargs={}, source="configured"), "guessed"),
])
def test_the_worker_says_how_the_arguments_that_built_a_class_were_chosen(plan, arguments):
    assert resolve(PARAMS, plan).arguments() == arguments


def test_a_class_whose_parameters_all_have_defaults_is_built_with_its_defaults():
    params = list(inspect.signature(lambda ndf=64: None).parameters.values())
    assert resolve(params, Plan("")).arguments() == "defaults"


ONE_SITE = json.dumps([[3], {"norm": "instance"}], sort_keys=True)
OTHER_SITE = json.dumps([[3], {"norm": "batch"}], sort_keys=True)


@pytest.mark.parametrize("arguments, passed, clears", [
    ("configured", {ONE_SITE, OTHER_SITE}, True),  # the user said which
    ("project", {ONE_SITE}, True),
    ("project", {ONE_SITE, OTHER_SITE}, False),  # built as one site, another builds it otherwise
    ("defaults", set(), True),  # no site builds it: its defaults are all there is
    ("defaults", {NOTHING_PASSED}, True),
    ("defaults", {NOTHING_PASSED, ONE_SITE}, False),
    ("guessed", set(), False),
    ("", set(), False),
])
def test_only_a_class_built_with_the_project_arguments_may_clear(arguments, passed, clears):
    assert may_clear(arguments, passed) is clears


REPORTED = Finding("SN401", "separate-real-fake-batches", "error", "separate calls", "train.py",
                   Span(11, 12, 11, 19), symbol="<module>")
CLEARED = Finding("SN301", "batch-norm-in-discriminator", "error", "BatchNorm2d", "d.py", Span(12, 19, 12, 34),
                  symbol="Discriminator.bn",
                  cleared_by=Cleared("graph", "BatchNorm2d Discriminator.bn is kept in eval mode in the built "
                                              "Discriminator (built as in train.py:4)"))


def test_concise_output_leaves_a_cleared_finding_out():
    assert render([REPORTED], "concise", {}, cleared=[CLEARED]) == "train.py:11:12: SN401 separate calls"


def test_json_lists_a_cleared_finding_with_its_evidence_and_severity():
    found = json.loads(render([REPORTED], "json", {}, cleared=[CLEARED]))
    assert [(o["code"], o["severity"], o.get("cleared_by")) for o in found] == [
        ("SN301", "error", {"pass": "graph", "evidence": CLEARED.cleared_by.evidence}),
        ("SN401", "error", None),
    ]


def test_sarif_gives_a_cleared_finding_as_a_suppressed_result(tmp_path):
    log = json.loads(render([REPORTED], "sarif", {}, root=tmp_path, cleared=[CLEARED]))
    validate(log)
    assert [(r["ruleId"], r.get("suppressions")) for r in log["runs"][0]["results"]] == [
        ("SN401", None),
        ("SN301", [{"kind": "external", "justification": CLEARED.cleared_by.evidence}]),
    ]


def test_a_construction_read_also_with_its_arguments_unknown_counts_once_as_known():
    from types import SimpleNamespace

    from snlint.findings import Location
    from snlint.link.join import site_arguments
    from snlint.link.values import ConstV

    def built(line: int, *args, run_alone: bool = False):
        frame = SimpleNamespace(name="Model.__init__" if run_alone else "<module>", parent=None)
        return SimpleNamespace(call=Location("train.py", Span(line, 5, line, 20)), args=list(args),
                               kwargs={}, frame=frame)

    unread = object()  # no value snlint can send: an unknown argument
    script, alone = built(9, ConstV(64)), built(9, unread, run_alone=True)
    assert site_arguments([script, alone]) == {json.dumps([[64], {}])}
    # Unknown at a construction of its own: another argument set.
    assert len(site_arguments([script, built(12, unread)])) == 2


def test_a_source_finding_the_joined_rules_lost_without_evidence_comes_back_as_found(monkeypatch):
    # Whatever made the joined run lose it, a built class that may not clear (built with
    # guessed sizes) shows nothing: the source finding is reported as the source pass found it.
    from types import MappingProxyType, SimpleNamespace

    from snlint.checks import cleared
    from snlint.checks.emit import Emitter
    from snlint.findings import DiscriminatorRef
    from snlint.link.model import LinkedModel

    lost = Finding("SN301", "batch-norm-in-discriminator", "error", "BatchNorm2d", "d.py", Span(12, 19, 12, 34),
                   discriminator=DiscriminatorRef("d.py:Discriminator", "name"))
    runtime = SimpleNamespace(ref=lost.discriminator, may_clear=False)
    monkeypatch.setattr(cleared, "run_checks", lambda model, emit: ([] if model.runtime else [lost], []))
    model = LinkedModel(runtime=MappingProxyType({"d.Discriminator": runtime}))
    assert cleared.checks_only_adding(model, Emitter({})) == ([lost], [])
