"""`--fix` and `--diff` (and `--fix` on standard input): the files read, linted and fixed
in rounds until the findings the first lint announced are fixed, then written.

    fix_paths -> fix.read_fixable                   the files, as text
              -> fixed_point: lint.lint_sources      the first lint (the graph pass too,
                                                     when asked: the texts are on disk)
                   -> fix.apply.Rounds.take          what this round fixes
                   -> fix_each -> fix.apply.fix_chunk each file's plans, applied and
                                                     compiled (in workers)
                   -> Rounds.took                    the new texts; lint them again
              -> fix.write_fixed                    each changed file, written atomically

Fixes in one file can change findings in another, so each round lints the whole project
from its texts; the lints share a `lint.Reuse` (a file's facts by its text, a part's
findings by its files' facts), so a round reads and links again only what it changed.
"""

from __future__ import annotations

import gc
import os
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

from snlint.config import Config
from snlint.engine.imported_files import imported_sources, project_files
from snlint.engine.lint import Reuse, lint_sources
from snlint.engine.per_file import jobs_for
from snlint.engine.workers import shared_map
from snlint.files import sweep_temporaries
from snlint.findings import Finding
from snlint.fix import FixOutcome, read_fixable, write_fixed, written_targets
from snlint.fix.apply import MAX_ROUNDS, Fixed, FixedPoint, Report, Rounds, Work, as_sent, fix_chunk, \
    prepare_fixes, text_size


def fix_paths(paths: list[str], config: Config, files: list[tuple[str, Path]], *, unsafe: bool = False,
              write: bool = False, report: Report, reuse: Reuse | None = None) -> FixOutcome:
    """Fix what the first lint of `files` (`discover(paths, config)`) announces (safe
    fixes; unsafe ones too with `unsafe`). With `write`, each changed file is written
    atomically, unless it changed on disk since it was read. The files they import are
    read for their facts, never fixed. `reuse`: what the lints share, kept for the
    report after them."""
    started = time.time_ns()
    if write:
        # What a run killed during its writes left beside the files (SIGKILL runs no
        # clean-up): its temporary files, whose owner is gone.
        sweep_temporaries(written_targets(files), before_ns=started)
    sources, notebooks = read_fixable(files, config)
    texts = {p: notebooks[p].python if p in notebooks else s.text for p, s in sources.items()}
    # The rounds change files, never which files there are: the tree is walked once.
    whole = [os.path.normpath(p) for p in paths] == [os.path.relpath(config.root)]
    project = [(d, a) for d, a in files if a.suffix == ".py"] if whole else project_files(config)
    try:
        result = fixed_point(texts, config, unsafe=unsafe, report=report, project=project,
                             reuse=reuse if reuse is not None else Reuse())
        return write_fixed(sources, notebooks, texts, result, write, report)
    except BaseException:
        if write:  # interrupted (Ctrl-C, SIGTERM) or failed: leave no temporary file
            sweep_temporaries(written_targets(files), own=True)
        raise


def fixed_point(texts: dict[str, str], config: Config, *, unsafe: bool, report: Report,
                max_rounds: int = MAX_ROUNDS, project: list[tuple[str, Path]] | None = None,
                reuse: Reuse | None = None) -> FixedPoint:
    """Lint, fix, lint again, while fixes of what the first lint announced remain (or
    `max_rounds`); `fix.apply.Rounds` says which. `project`: the project's files, whose
    texts the fixed ones import are read for their facts (None: `texts` alone).

    The graph pass imports the files from disk, so it joins the first lint only, while
    the texts are still what is on disk. A source finding the first lint's graph pass
    cleared is not among its findings, so no round fixes it."""
    rounds = Rounds(texts, unsafe=unsafe, report=report)
    findings = _lint(rounds.current, config, project, reuse)
    later = replace(config, graph=False) if config.graph else config
    frozen = _freeze()
    try:
        for _ in range(max_rounds):
            work = rounds.take(findings)
            # Nothing to fix imports no libcst and no planner (a hook's --fix, most commits).
            done = fix_each(work, config, unsafe=unsafe) if work else []
            if not rounds.took(work, done):
                return rounds.result
            findings = _lint(rounds.current, later, project, reuse)
        rounds.settle(findings, max_rounds)
        return rounds.result
    finally:
        if frozen:
            gc.unfreeze()


def _lint(texts: dict[str, str], config: Config, project: list[tuple[str, Path]] | None,
          reuse: Reuse | None) -> list[Finding]:
    imported = imported_sources(texts, config, files=project) if project is not None else None
    return lint_sources(texts, config, imported, reuse=reuse)


def _freeze() -> bool:
    """Set what is alive after the first lint (each file's facts, which the later rounds
    reuse, and the findings) aside from the garbage collector: a later round would
    otherwise scan all of it again at each of its collections, a quarter of a round's
    time. False when something else froze objects (they are not ours to release). No
    collection first: it would scan all of it once more to find garbage the rounds'
    end gives back to the collector anyway (`gc.unfreeze`)."""
    if gc.get_freeze_count():
        return False
    gc.freeze()
    return True


def fix_each(items: Work, config: Config, *, unsafe: bool) -> list[Fixed]:
    """A round on each (path, text, findings): each file parsed and rewritten on its own,
    in worker processes beside this one when there is enough of them (as the per-file
    stage lowers them); in order."""
    items = [(path, text, as_sent(findings)) for path, text, findings in items]
    # Imported here, before any worker starts: a forked worker has it then, instead of
    # importing it again beside this process (0.15 s of CPU each).
    prepare_fixes()
    return shared_map(partial(fix_chunk, config=config, unsafe=unsafe), items, jobs_for(config), text_size)[0]
