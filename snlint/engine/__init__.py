"""A run of snlint, and everything it keeps between runs or shares between processes.

The path of a lint, as calls (README's commands -> a printed finding):

    launch.entry -> replay.replay                   the last identical run's report, when
                                                    everything it read is as it was
                 -> cli.main -> inputs.read_inputs  the files under the paths, as text
                             -> run_cache           the last run's findings, when the
                                                    texts are the same
                             -> lint.run -> lint.lint_sources
                                  -> per_file.PerFile.results     each file's facts
                                       (cache: unchanged files; workers: the rest)
                                  -> linking.link_parts           link -> checks, part by
                                       part (workers)
                                  -> fix.attach_fixes             fixable findings marked
                                  -> run_result.finish            suppressions, cells
                             -> report.render, and the exit code

and of `--fix` (fixing.fix_paths): the files read, then rounds of lint_sources ->
fix.apply.Rounds.take (what the first lint announced) -> fixing.fix_each (in workers:
fix.apply.fix_chunk -> fix_file: each finding's plan from fix.planning.plan_for, the
overlapping ones deferred, the rest applied together and compiled by `checked`) ->
Rounds.took, until nothing is left to fix; then fix.write_fixed writes each changed file.

What is kept, and why (benchmarks/README.md has the measurements):
- `replay`: a run whose inputs are as they were answers from a record, checked by stat
  alone (the warm run);
- `run_cache`: the findings of the last run of the same files, when their texts, or the
  facts made of them, are the same (a comment added to a file);
- `cache`: each file's facts by its text (a file edited among unchanged ones);
- `lint.Reuse`: what the lints of one `--fix` share: each file's facts, each part's
  findings;
- `workers`: chunks of work shared with forked worker processes (the per-file stage, the
  link step's parts, the fix rounds).

Nothing below this package imports it. Its names are imported when first asked for, so
that a replayed run (`snlint.engine.replay`) imports nothing else of snlint.
"""

from __future__ import annotations

_LINT = frozenset({"RunResult", "Reuse", "in_cells", "lint_sources", "lint_text", "run"})


def __getattr__(name: str):
    if name in _LINT:
        from snlint.engine import lint

        return getattr(lint, name)
    raise AttributeError(f"module 'snlint.engine' has no attribute {name!r}")
