"""Applying fixes: per file the non-overlapping plans in one libcst pass, in rounds until
the findings the first lint announced are fixed (docs/fixes.md, "Rounds": each such
finding once, never one a fix made; overlapping fixes and those waiting on their premises
go to the next round; a result that does not compile is never kept)."""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from snlint.config import Config
from snlint.findings import Finding, applies
from snlint.fix.identity import Identity, identities
from snlint.fix.planning import Rules, names_of, plan_for
from snlint.records import dataclass

if TYPE_CHECKING:  # libcst is imported where a fix is built: a plain lint imports this module
    from snlint.edit.parsed import ParsedFile
    from snlint.edit.plan import Plan

MAX_ROUNDS = 8
Report = Callable[[str], None]


def compiles(text: str, path: str, first_line: int = 1) -> str | None:
    """None when `text` compiles as Python, else the error in one line. `first_line`: the
    line of the file `text` starts at (a stretch of it compiled alone)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as e:
        return f"{type(e).__name__}: {e.msg} (line {(e.lineno or 1) + first_line - 1})"
    except (ValueError, MemoryError, RecursionError) as e:
        return f"{type(e).__name__}: {e}"
    return None


def where(finding: Finding) -> str:
    return f"{finding.path}:{finding.line}:{finding.column}"


def checked(parsed: ParsedFile, plans: list[tuple[Finding, Plan]],
            report: Report) -> tuple[str, list[tuple[Finding, Plan]]]:
    """The text with `plans` applied, and the plans kept: when the result does not compile,
    the plans are applied one at a time and each one that breaks it is dropped and
    reported; a file CPython does not compile as it is gets no fix."""
    from snlint.edit.plan import apply_plans

    def error_in(plans: list[tuple[Finding, Plan]]) -> tuple[str, str | None]:
        text = apply_plans(parsed, [p for _, p in plans])
        return text, compiles(parsed.to_compile(text), parsed.path)

    text, error = error_in(plans)
    if error is None:
        return text, plans
    original = compiles(parsed.text, parsed.path)
    if original is not None:
        report(f"snlint: not fixing {parsed.path}: CPython does not compile it ({original})")
        return parsed.text, []
    kept: list[tuple[Finding, Plan]] = []
    text = parsed.text
    for finding, plan in plans:
        candidate, error = error_in(kept + [(finding, plan)])
        if error is None:
            kept.append((finding, plan))
            text = candidate
        else:
            report(f"snlint: dropped the {finding.code} fix for {where(finding)}: "
                   f"its result does not parse ({error})")
    return text, kept


def fix_file(parsed: ParsedFile, findings: Iterable[Finding], config: Config, unsafe: bool,
             report: Report, by_code: Rules) -> tuple[str, list[Finding]]:
    """One round on one file: the fixable findings' plans, the overlapping ones
    deferred, applied together; the new text and the findings fixed."""
    from snlint.edit.plan import Taken, signature

    planned: list[tuple[Finding, Plan]] = []
    for finding in sorted(findings, key=Finding.sort_key):
        try:
            plan = plan_for(finding, parsed, config, by_code)
        except Exception as e:  # noqa: BLE001 - a fixer's bug must not end the run
            report(f"snlint: internal error planning the {finding.code} fix for "
                   f"{where(finding)}: {type(e).__name__}: {e}")
            continue
        if plan is not None and applies(plan.applicability, unsafe):
            planned.append((finding, plan))
    if not planned:
        return parsed.text, []
    # Plans are compared (by what they do, and whether they overlap) only when there is
    # more than one: a lone plan needs no node positions.
    chosen = planned[:1]
    signatures: dict[tuple, Finding] = {}
    duplicates: list[tuple[Finding, tuple]] = []
    if len(planned) > 1:
        chosen = []
        taken = Taken(parsed)
        for finding, plan in planned:
            sig = signature(parsed, plan)
            if sig in signatures:
                duplicates.append((finding, sig))  # the same edit as a fix already chosen
                continue
            if taken.overlaps(plan):
                continue
            signatures[sig] = finding
            chosen.append((finding, plan))
            taken.add(plan)
    text, kept = checked(parsed, chosen, report)
    kept_sigs = {signature(parsed, p) for _, p in kept} if duplicates else set()
    return text, [f for f, _ in kept] + [f for f, sig in duplicates if sig in kept_sigs]


@dataclass
class Fixed:
    """One file's round as a worker sends it back: the findings it applied by their
    index in the list it was given."""

    text: str | None  # None: the file does not parse
    applied: list[int]
    messages: list[str]  # what it reports, in order


def _fix_one(path: str, text: str, findings: list[Finding], config: Config, unsafe: bool,
             by_code: Rules) -> Fixed:
    import libcst as cst

    from snlint.edit.held_out import NeedsWholeFile, held_out
    from snlint.edit.parsed import ParsedFile

    names = names_of(findings)
    held = held_out(text, findings, names)
    if held is not None:
        # The whole file when a fix needs more, or the part does not parse.
        try:
            return _fixed(ParsedFile(path, text, names, held), findings, config, unsafe, by_code)
        except (NeedsWholeFile, cst.ParserSyntaxError, RecursionError):
            pass
    try:
        parsed = ParsedFile(path, text, names)
    except (cst.ParserSyntaxError, RecursionError):
        return Fixed(None, [], [])
    return _fixed(parsed, findings, config, unsafe, by_code)


def _fixed(parsed: ParsedFile, findings: list[Finding], config: Config, unsafe: bool,
           by_code: Rules) -> Fixed:
    messages: list[str] = []
    text, applied = fix_file(parsed, findings, config, unsafe, messages.append, by_code)
    index = {id(f): i for i, f in enumerate(findings)}
    return Fixed(text, [index[id(f)] for f in applied], messages)


def fix_chunk(items: list[tuple[str, str, list[Finding]]], config: Config, unsafe: bool) -> list[Fixed]:
    """A round on each (path, text, findings), in order (a chunk of the work
    `snlint.engine.fixing.fix_each` shares with its workers)."""
    from snlint.checks.registry import fixers

    by_code = fixers()
    return [_fix_one(path, text, findings, config, unsafe, by_code) for path, text, findings in items]


def text_size(item: tuple[str, str, list[Finding]]) -> int:
    return len(item[1])


def as_sent(findings: list[Finding]) -> list[Finding]:
    """The findings of one file as a worker's round needs them: their names keep only the
    sites of the findings the graph pass reported by position (`planning._at_node`)."""
    names = names_of(findings)
    if names is None or not names.sites:
        return findings
    sites = {f.span: names.sites[f.span] for f in findings if f.node is None and f.span in names.sites}
    trimmed = replace(names, sites=sites)
    return [f.with_(names=trimmed) if f.names is names else f for f in findings]


def prepare_fixes() -> None:
    """What a round imports (libcst, the rules' fixes), before a worker is forked."""
    import snlint.edit.parsed  # noqa: F401 - libcst and what the rules' fixes use
    import snlint.edit.plan  # noqa: F401
    from snlint.checks.registry import fixers

    fixers()


@dataclass
class FixedPoint:
    texts: dict[str, str]  # path -> final text (every file given)
    fixed: Counter = field(default_factory=Counter)  # path -> fixes applied
    blocked: set[str] = field(default_factory=set)  # paths not fixed (parse errors)
    settled: bool = True
    hidden: int = 0  # unsafe fixes the first round had and `unsafe` left out
    announced: int = 0  # findings the first lint marked with a fix that applies
    # The first lint's identities (`snlint.fix.identity`), counted.
    first: Counter = field(default_factory=Counter)
    files: list = field(default_factory=list)  # each changed file's outcome (`write_fixed`)

    @property
    def fixes(self) -> int:
        return sum(f.fixes for f in self.files)

    @property
    def written(self) -> list:
        return [f for f in self.files if f.written]


Work = list[tuple[str, str, list[Finding]]]


def _discriminator(f: Finding) -> str | None:
    return f.discriminator.cls if f.discriminator is not None else None


def waiting_for_premises(wanted: list[Finding], premises: dict[str, frozenset[str]]) -> list[Finding]:
    """The findings of `wanted` whose rule stands on another rule's findings
    (`snlint.checks.registry.premises`) that `wanted` also fixes, about the same
    discriminator (any, for a finding that names none; a premise naming none, as SN501's
    SN call in a shared helper, may be any discriminator's): their fix waits a round."""
    fixing = {(f.code, _discriminator(f)) for f in wanted}
    codes = {code for code, _ in fixing}
    out = []
    for f in wanted:
        on = premises.get(f.code, ())
        disc = _discriminator(f)
        if any(((code, disc) in fixing or (code, None) in fixing) if disc is not None else code in codes
               for code in on):
            out.append(f)
    return out


class Rounds:
    """What the rounds of `--fix` know between one lint and the next
    (`snlint.engine.fixing.fixed_point`: lint, `take`, fix, `took`, lint...): each finding
    the first lint announced (by identity) is fixed at most once."""

    def __init__(self, texts: dict[str, str], *, unsafe: bool, report: Report) -> None:
        from snlint.checks.registry import premises

        self.current = dict(texts)
        self.result = FixedPoint(self.current)
        self.unsafe = unsafe
        self.report = report
        self._seen = {tuple(sorted(self.current.items()))}
        # The first lint's findings with a fix that applies, by identity, left to fix.
        self._left: Counter = Counter()
        self._failed: set[Identity] = set()
        self._pending: dict[Identity, int] = {}
        self._premises = premises()
        self._wait = True  # fixes whose premises are fixed in the same round wait for the next
        self._first = True
        self._keys: dict[int, Identity] = {}
        self._counts: Counter = Counter()
        self._waiting = False

    def _fixable(self, f: Finding) -> bool:
        return (not f.is_diagnostic and f.cell is None and f.path in self.current
                and f.path not in self.result.blocked and f.fix is not None
                and f.fix.applies(self.unsafe))

    def take(self, findings: list[Finding]) -> Work:
        """After a lint of `current`: what this round fixes, (path, text, findings) for
        each file with a finding to fix (only those are parsed)."""
        result, unsafe = self.result, self.unsafe
        keys = self._keys = identities(findings, self.current)
        if self._first:
            self._first = False
            result.first = Counter(keys.values())
            self._left = Counter(keys[id(f)] for f in findings if self._fixable(f))
            result.announced = sum(self._left.values())
            if not unsafe:
                result.hidden = sum(1 for f in findings if f.fix is not None and not f.fix.applies(False))
        # A fix that did not remove its finding (the check does not see what it wrote)
        # is not applied again: that could wrap a layer once per round.
        counts = self._counts = Counter(keys.values())
        for key, before in self._pending.items():
            if counts[key] >= before and key not in self._failed:
                self._failed.add(key)
                self.report(f"snlint: the {key[2]} fix in {key[0]} did not remove its finding "
                            f"({key[4] or '?'}); not applied again")
        self._pending = {}
        result.blocked |= {f.path for f in findings if f.code in ("SN901", "SN999") and f.path in self.current}
        # The findings this round may fix: those the first lint announced, each once.
        budget = Counter(self._left)
        wanted: list[Finding] = []
        for f in sorted(findings, key=Finding.sort_key):
            if not self._fixable(f):
                continue
            key = keys[id(f)]
            if key in self._failed or budget[key] <= 0:
                continue
            budget[key] -= 1
            wanted.append(f)
        waiting = {id(f) for f in waiting_for_premises(wanted, self._premises)} if self._wait else set()
        self._waiting = bool(waiting)
        wanted = [f for f in wanted if id(f) not in waiting]
        by_path: dict[str, list[Finding]] = {}
        for f in wanted:
            by_path.setdefault(f.path, []).append(f)
        return [(path, self.current[path], fs) for path, fs in sorted(by_path.items())]

    def took(self, work: Work, done: list[Fixed]) -> bool:
        """The round's results (`done`, one per item of `work`) taken into `current`;
        whether another lint and round follow (False: the fixes are done, or went round
        in a circle)."""
        result = self.result
        changed = False
        for (path, _, fs), fixed in zip(work, done):
            for message in fixed.messages:
                self.report(message)
            if fixed.text is None:
                result.blocked.add(path)
                continue
            for i in fixed.applied:
                key = self._keys[id(fs[i])]
                self._left[key] -= 1
                self._pending[key] = self._counts[key]
            if fixed.text != self.current[path]:
                self.current[path] = fixed.text
                result.fixed[path] += len(fixed.applied)
                changed = True
        if not changed:
            # No fix of their premises was made: theirs no longer wait.
            self._wait = False
            return self._waiting
        self._wait = True
        state = tuple(sorted(self.current.items()))
        if state in self._seen:
            self.report("snlint: fixes went round in a circle; stopped")
            result.settled = False
            return False
        self._seen.add(state)
        return True

    def settle(self, findings: list[Finding], max_rounds: int) -> None:
        """After the last round's lint: whether fixes the first lint announced are left."""
        keys = identities(findings, self.current)
        if any(self._fixable(f) and self._left[keys[id(f)]] > 0
               and keys[id(f)] not in self._failed for f in findings):
            self.report(f"snlint: fixes did not settle after {max_rounds} round{'s' if max_rounds != 1 else ''}")
            self.result.settled = False


def unchanged_on_disk(path: Path, raw: bytes) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read() == raw
    except OSError:
        return False
