"""A run of snlint, and everything it keeps between runs or shares between processes.

The path of a lint, as calls:

    launch.entry -> replay.replay                   the last identical run's report, when
                                                    everything it read is as it was
                 -> cli.main -> inputs.read_inputs  the files under the paths, as text
                             -> run_cache           the last run's findings, when the
                                                    texts (or their facts) are the same
                             -> lint.run -> lint.lint_sources
                                  -> per_file.PerFile.results     each file's facts
                                       (cache: unchanged files; workers: the rest)
                                  -> linking.link_parts           link -> checks, part by
                                       part (workers)
                                  -> fix.attach_fixes             fixable findings marked
                                  -> run_result.finish            suppressions, cells
                             -> report.render, and the exit code

and of `--fix` (fixing.fix_paths): rounds of lint_sources -> fix.apply.Rounds.take ->
fixing.fix_each (fix.apply.fix_chunk in workers) -> Rounds.took, until nothing is left to
fix; then fix.write_fixed. The lints of one command share a `lint.Reuse` (each file's
facts, each part's findings). benchmarks/README.md measures each layer.

Nothing below this package imports it. Its names are imported when first asked for, so
that a replayed run imports nothing else of snlint.
"""

from __future__ import annotations

_LINT = frozenset({"RunResult", "Reuse", "in_cells", "lint_sources", "lint_text", "run"})


def __getattr__(name: str):
    if name in _LINT:
        from snlint.engine import lint

        return getattr(lint, name)
    raise AttributeError(f"module 'snlint.engine' has no attribute {name!r}")
