"""The link step of a run: the project's facts -> link -> graph pass -> join -> seal ->
checks -> findings, part by part (`snlint.link.groups`), in this process and workers.
Apart from the engine so that a run imports it while the per-file stage's workers lower
files, and a run the run cache answers never does.
"""

from __future__ import annotations

import os
from functools import partial
from typing import TYPE_CHECKING, Mapping

from snlint import facts as F
from snlint.catalogue import Rule, load_catalogue
from snlint.checks.cleared import checks_only_adding
from snlint.checks.emit import Emitter
from snlint.checks.registry import fixers
from snlint.config import Config
from snlint.engine.per_file import Extracted, internal, jobs_for
from snlint.engine.workers import shared_map
from snlint.facts import FileFacts, Names
from snlint.findings import Finding, Span, diagnostic
from snlint.graph.diagnostics import GraphRun
from snlint.link import link
from snlint.link.seal import seal
from snlint.link.groups import groups, uses_registries
from snlint.link.index import ProjectIndex
from snlint.link.join import join
from snlint.link.named_classes import class_names, names
from snlint.link.names import Definitions, resolved
from snlint.link.options import DeclaredOptions, undefaulted_options
from snlint.shipped_configs import config_options, per_config

if TYPE_CHECKING:
    from snlint.engine.lint import Reuse

__all__ = ["link_parts", "named"]


def link_parts(facts: list[FileFacts], extracted: Mapping[str, Extracted], sources: dict[str, str],
               config: Config, graph_run: GraphRun | None, reuse: Reuse | None) -> list[Finding]:
    """The project's findings from the link step on (`_link_parts`), each naming the
    shipped configurations it holds for when it holds for some only (`snlint.shipped_configs`).
    Files that cannot reach one another (`snlint.link.groups`) are linked apart."""
    rules = load_catalogue()  # once a run, not once a part
    whole = len(facts) < 2 or uses_registries(facts)
    parts = [facts] if whole else groups(facts, {path: e.modules or () for path, e in extracted.items()})
    # Linked whole, a project decides within each part what a part decides alone (which
    # classes are alternatives beside the one in use): the same findings either way.
    part_of = {f.path: i for i, part in enumerate(parts) for f in part}
    shipped = config_options(DeclaredOptions(facts)(), undefaulted_options(facts))
    own = None
    if shipped and config.graph and reuse is None:
        # Each shipped configuration links the project again, graph pass included: one
        # session for all of them builds a discriminator they leave alike once, not once
        # a configuration (unreported seconds, three times over for two files).
        from snlint.engine.lint import Reuse

        reuse = own = Reuse()
    try:
        findings = _link_parts(facts, parts, None if whole else part_of, sources, config, rules,
                               graph_run, reuse)
        if not shipped:
            return findings

        def relink(declaring: str) -> tuple[list[Finding], set[str]]:
            # The part that declares the option, as the first link did, else the whole project.
            part = next((p for p in parts if any(f.path == declaring for f in p)), None)
            if part is not None and len(parts) > 1 and not config.graph:
                # Its own options: they are read with the chosen file in place of the default.
                found, _, bare, _ = _link_part(part, sources, config, rules, assume_sole=False,
                                               options=DeclaredOptions(facts))
                if not bare:
                    return found, {f.path for f in part}
            return _link_part(facts, sources, config, rules, reuse=reuse if config.graph else None,
                              part_of=part_of)[0], {f.path for f in facts}

        return per_config(findings, shipped, relink)
    finally:
        if own is not None:
            own.close()


def _link_parts(facts: list[FileFacts], parts: list[list[FileFacts]], part_of: dict[str, int] | None,
                sources: dict[str, str], config: Config, rules: dict[str, Rule],
                graph_run: GraphRun | None, reuse: Reuse | None) -> list[Finding]:
    """The project's findings: its `parts` (None `part_of`: one part) linked in this
    process and workers, a part a lint of the same command linked with the same facts
    not again (the rounds of `--fix`). The graph pass builds the project's discriminators
    together: with it, the project is one part."""
    if part_of is None or config.graph:
        return _noted(_link_part(facts, sources, config, rules, graph_run, reuse, part_of=part_of),
                      graph_run)
    options = DeclaredOptions(facts)
    sizes = {f.path: len(sources.get(f.path, "")) for f in facts}
    known = reuse.parts(config) if reuse is not None else {}
    # A file has the same facts object while its text is the same; the project's options
    # and the literals its calls pass to a part's parameters reach the part too.
    declared = tuple(sorted((dest, repr(o["value"]), o["where"]) for dest, o in options().items())) \
        if reuse is not None else ()
    literals = {lit for f in facts for lit in f.keyword_literals} if reuse is not None else set()
    keys = [(declared, _passed_to(part, literals), *(id(f) for f in part)) for part in parts]
    todo = [(key, part) for key, part in zip(keys, parts) if key not in known]
    done, _ = shared_map(partial(_link_chunk, sources=sources, config=config, rules=rules, options=options), todo,
                         jobs_for(config), lambda item: sum(sizes.get(f.path, 0) for f in item[1]))
    for (key, part), found in zip(todo, done):
        known[key] = (part, *found)
    linked = [known[key] for key in keys]
    # "The project's only discriminator class" is the project's: when there is one (or
    # one of several the configuration builds by name, `snlint.link.named_classes`), and
    # a call through a bare name was left for it, it reaches across parts.
    candidates = frozenset().union(*(candidates for _, _, candidates, _, _ in linked))
    if any(bare for _, _, _, bare, _ in linked) and \
            (len(candidates) == 1 or _named(candidates, class_names(facts))):
        return _noted(_link_part(facts, sources, config, rules, part_of=part_of), graph_run)
    if graph_run is not None:
        graph_run.discriminators.update(*(buildable for *_, buildable in linked))
    return [f for _, found, _, _, _ in linked for f in found]


def _noted(linked: tuple[list[Finding], frozenset[str], bool, frozenset[str]],
           graph_run: GraphRun | None) -> list[Finding]:
    """A link's findings, its buildable discriminators noted in `graph_run`."""
    found, _, _, buildable = linked
    if graph_run is not None:
        graph_run.discriminators |= buildable
    return list(found)


def _passed_to(part: list[FileFacts], literals: set[tuple[str, object]]) -> tuple:
    """The (keyword, literal) pairs the project's calls pass to a parameter with a literal
    default of a method in `part` (`Interpreter.passed_otherwise`)."""
    if not literals:
        return ()
    params = {p.name for f in part for _, cls in f.classes for _, m in cls.methods for p in m.params
              if isinstance(p.default, F.Const)}
    return tuple(sorted((lit for lit in literals if lit[0] in params), key=repr))


def _named(candidates: frozenset[str], given: dict[str, tuple[str, int]]) -> bool:
    """Whether a `class_name` string names a candidate (`snlint.link.named_classes`)."""
    return any(names(q, name) for q in candidates for name in given)


def _link_chunk(chunk: list[tuple[tuple, list[FileFacts]]], *, sources: dict[str, str],
                config: Config, rules: dict[str, Rule],
                options: DeclaredOptions) -> list[tuple[list[Finding], frozenset[str], bool, frozenset[str]]]:
    return [_link_part(part, sources, config, rules, assume_sole=False, options=options) for _, part in chunk]


def _link_part(facts: list[FileFacts], sources: dict[str, str], config: Config, rules: dict[str, Rule],
               graph_run: GraphRun | None = None, reuse: Reuse | None = None,
               assume_sole: bool = True, options: DeclaredOptions | None = None,
               part_of: dict[str, int] | None = None,
               ) -> tuple[list[Finding], frozenset[str], bool, frozenset[str]]:
    """The findings of one part of the project (or of the whole): link -> graph pass ->
    join -> seal -> checks; its discriminator candidates, whether a call through a bare
    name was left without a class (`assume_sole`), and its buildable discriminators."""
    findings: list[Finding] = []
    project = None
    try:
        project = link(facts, config.discriminators, config.not_discriminators, config.root, assume_sole, options,
                       part_of)
        for path, message in project.errors:
            # Calls into calls deeper than the interpreter follows: the rest is unseen.
            findings.append(diagnostic("SN904", path, f"{message} (findings there may be missed)"))
        findings.extend(over_budget(project))
        # The graph pass reports only its SN91x diagnostics; its facts reach the findings
        # through the rules, which read them beside the source's in one sealed model.
        graph_diagnostics: list[Finding] = []
        if config.graph and project.discriminators:
            try:
                # Imported only for a run that builds discriminators (a tenth of the imports).
                from snlint.graph_pass import graph_pass

                graph_diagnostics, built = graph_pass(
                    project, config, only=set(sources), graph_run=graph_run,
                    session=reuse.graph if reuse is not None else None)
                displays = {os.path.abspath(f.path): f.path for f in facts}
                join(project, built, displays.get)
            except Exception as e:  # noqa: BLE001 - the source findings still stand
                graph_diagnostics, project.runtime = [], {}
                findings.append(internal(project.discriminators[0].file.path, e, "graph"))
        found, failures = checks_only_adding(seal(project), Emitter(rules))
        findings.extend(found + graph_diagnostics)
        for family, error in failures:
            findings.append(internal(facts[0].path if facts else "<project>", error, family))
    except Exception as e:  # noqa: BLE001
        findings.append(internal(facts[0].path if facts else "<project>", e))
    if project is None:
        return findings, frozenset(), False, frozenset()
    buildable = frozenset(f"{d.file.path}:{d.cls.qualname}" for d in project.buildable(set(sources)))
    return findings, project.candidates, project.bare_calls, buildable


def over_budget(project) -> list[Finding]:
    """SN920 for each entry point the analysis budget cut short (read with less precision)."""
    out = []
    for path, what, span, budget in project.over_budget:
        at = Span(span.line, span.column, span.line, span.column)
        out.append(diagnostic("SN920", path, f"read with less precision: {what} exceeded the analysis "
                                             f"budget ({budget:,} statements interpreted)", at))
    return out


def named(findings: list[Finding], facts: list[FileFacts]) -> list[Finding]:
    """The findings a fix may exist for, each with its file's names as the link step
    resolves them, so that a fix names things the way the finding was decided."""
    codes = fixers()
    if not any(f.code in codes for f in findings):
        return findings
    definitions = Definitions(ProjectIndex(facts))
    files = {f.path: f for f in facts}
    names: dict[str, Names] = {}
    out = []
    for f in findings:
        file = files.get(f.path)
        if f.code in codes and file is not None:
            if f.path not in names:
                names[f.path] = resolved(definitions, file)
            f = f.with_(names=names[f.path])
        out.append(f)
    return out
