"""`--fix` and `--diff`: the files read, linted and fixed in rounds until the findings
the first lint announced are fixed, then written. Fixes in one file can change findings
in another, so each round lints the whole project; the lints share a `lint.Reuse`, so a
round reads and links again only what it changed.
"""

from __future__ import annotations

import gc
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

from snlint.config import Config
from snlint.engine.imported_files import imported_sources
from snlint.engine.lint import Reuse, lint_sources
from snlint.engine.per_file import jobs_for
from snlint.engine.run_cache import project_files, walked_files
from snlint.engine.workers import shared_map
from snlint.files import sweep_temporaries
from snlint.findings import Finding
from snlint.fix import read_fixable, write_fixed, written_targets
from snlint.fix.apply import MAX_ROUNDS, Fixed, FixedPoint, Report, Rounds, Work, as_sent, fix_chunk, \
    prepare_fixes, text_size


def fix_paths(paths: list[str], config: Config, files: list[tuple[str, Path]], *, unsafe: bool = False,
              write: bool = False, report: Report, reuse: Reuse | None = None) -> FixedPoint:
    """Fix what the first lint of `files` announces (unsafe fixes too with `unsafe`); with
    `write`, write each changed file atomically, unless it changed on disk since it was
    read. `reuse`: what the lints share, kept for the report after them."""
    started = time.time_ns()
    if write:
        # The temporary files a run killed during its writes left (SIGKILL runs no clean-up).
        sweep_temporaries(written_targets(files), before_ns=started)
    sources, notebooks, texts = read_fixable(files, config)
    # The rounds change files, never which files there are: the tree is walked once.
    project = walked_files(paths, files, config)
    if project is None:
        project = project_files(config)
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
    `max_rounds`). `project`: the project's files, those the fixed ones import read for
    their facts (None: `texts` alone). The graph pass imports the files from disk, so it
    joins the first lint only."""
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
    """Set what is alive after the first lint (the facts the later rounds reuse) aside
    from the garbage collector, which would scan it again at each collection. False when
    something else froze objects (they are not ours to release)."""
    if gc.get_freeze_count():
        return False
    gc.freeze()
    return True


def fix_each(items: Work, config: Config, *, unsafe: bool) -> list[Fixed]:
    """A round on each (path, text, findings): each file rewritten on its own, in workers
    when there is enough of them; in order."""
    items = [(path, text, as_sent(findings)) for path, text, findings in items]
    # Imported before any worker forks, so that none imports it again.
    prepare_fixes()
    return shared_map(partial(fix_chunk, config=config, unsafe=unsafe), items, jobs_for(config), text_size)[0]
