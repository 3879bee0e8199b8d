"""The command line: `snlint [OPTIONS] [PATHS]...` (README, "Usage").

Options, not subcommands, so no path can collide with a command. Exit codes: 0 clean, 1 a
warning or error, 2 usage error or snlint could not run; no traceback reaches the user.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Iterable
from dataclasses import field
from pathlib import Path

import click

from snlint import report
from snlint.findings import Finding
from snlint.records import dataclass
from snlint.engine.replay import Recorder
from snlint.report.text import one_line, plural, printable

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
# Ended by a signal: 128 + its number, as a shell reports it (130 for Ctrl-C, as ruff).
EXIT_SIGNAL = 128
# Severities that make a run fail; info never changes the exit code.
FAILING = frozenset({"warning", "error"})


# At Python's default thresholds the cyclic collector rescans every file's facts thousands
# of times, a quarter of a run: collect less often (as mypy does).
GC_THRESHOLD = (100_000, 30, 30)


def _collect_less(ctx: click.Context) -> None:
    previous = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLD)
    ctx.call_on_close(lambda: gc.set_threshold(*previous))  # in-process callers get theirs back


def _print_version(ctx: click.Context) -> None:
    # The running copy's own string (pyproject.toml's dynamic version reads it too), not
    # whichever distribution metadata is installed.
    import snlint

    click.echo(f"snlint {snlint.__version__}")
    ctx.exit()


def _codes(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[str] | None:
    """`--select SN1,SN201 --select SN3` -> ["SN1", "SN201", "SN3"]; None when not given."""
    if not values:
        return None
    return [code.strip().upper() for value in values for code in value.split(",") if code.strip()]


def _some_codes(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[str] | None:
    # An empty `--select ""` (an unset shell variable) would turn every rule off.
    codes = _codes(ctx, param, values)
    if codes == []:
        raise click.BadParameter("no rule code given (to turn rules off, use --ignore)")
    return codes


def _finite(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    import math

    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number of seconds")
    return value


def _say(message: str) -> None:
    click.echo(printable(message), err=True)


def _fail(message: str) -> None:
    _say(f"snlint: {message}")
    sys.exit(EXIT_ERROR)


def _internal_error(exc: BaseException) -> None:
    detail = one_line(str(exc))
    _fail(f"internal error: {type(exc).__name__}" + (f": {detail}" if detail else ""))


COLOR_CHOICES = ("auto", "always", "never")


def _use_color(choice: str = "auto", terminal: bool | None = None) -> bool:
    """`auto`: FORCE_COLOR wins (as in ruff), then NO_COLOR, then whether the report's
    stream (`terminal`; default: standard output) is a terminal."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("NO_COLOR"):
        return False
    return _stdout_is_terminal() if terminal is None else terminal


def _stdout_is_terminal() -> bool:
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


def _stderr_is_terminal() -> bool:
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def _reader_left() -> None:
    """`snlint | head`: the reader left; stop writing quietly instead of a traceback at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _note(text: str, recorded: bool = True) -> None:
    """A line on standard error that a replayed run says again when `recorded`."""
    own = _own_process()
    if recorded and own is not None and own.recorder is not None:
        own.recorder.noted(text + "\n")
    try:
        click.echo(text, err=True)
    except OSError:
        pass


def _emit(text: str, color: bool = False) -> None:
    text = printable(text)
    own = _own_process()
    if own is not None and own.recorder is not None:
        # What click writes: the text and a newline (escapes stripped without colour:
        # a text that has any is left to click, unrecorded).
        own.recorder.wrote(text + "\n")
        own.recorder.spoiled |= not color and "\x1b" in text
    try:
        click.echo(text, color=color)
    except BrokenPipeError:
        _reader_left()
        sys.exit(EXIT_FINDINGS)


def exit_code(findings: Iterable[Finding], exit_zero: bool = False, *, fixes: int = 0,
              exit_non_zero_on_fix: bool = False) -> int:
    """`fixes`: what --fix made, which fails the run with `exit_non_zero_on_fix`."""
    if exit_non_zero_on_fix and fixes:
        return EXIT_FINDINGS
    failing = any(f.severity in FAILING for f in findings)
    return EXIT_FINDINGS if failing and not exit_zero else EXIT_CLEAN


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--select", multiple=True, callback=_some_codes, metavar="CODES",
              help="Rules to enable, replacing the default set: codes, prefixes (SN3) or ALL. "
                   "Comma-separated; may repeat.")
@click.option("--extend-select", multiple=True, callback=_codes, metavar="CODES",
              help="Rules to enable in addition to the selected ones.")
@click.option("--ignore", multiple=True, callback=_codes, metavar="CODES",
              help="Rules to disable (SN9xx diagnostics too, e.g. SN91).")
@click.option("--graph/--no-graph", default=None,
              help="Run the graph pass: build the discriminators with torch (imports "
                   "and runs the project's code; needs snlint[graph]). Default: off, or "
                   "the `graph` setting.")
@click.option("--graph-timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              callback=_finite,
              metavar="SECONDS", help="Time limit for importing and building a module.")
@click.option("--output-format", type=click.Choice(report.FORMATS), default=None,
              help="Default: full on a terminal, else concise.")
@click.option("--output-file", "-o", type=click.Path(dir_okay=False, path_type=str), default=None,
              metavar="PATH", help="Write the report to PATH instead of standard output.")
@click.option("--color", type=click.Choice(COLOR_CHOICES), default="auto", show_default=True,
              help="Colours in the text formats: auto (on a terminal, FORCE_COLOR and NO_COLOR "
                   "honoured), always or never.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--exit-non-zero-on-fix", is_flag=True,
              help="Exit 1 when --fix changed something, even if no finding remains.")
@click.option("--statistics", is_flag=True, help="Show counts per rule instead of the findings.")
@click.option("--force-exclude", is_flag=True, default=None,
              help="Apply exclude patterns to paths given on the command line too.")
@click.option("--list-rules", is_flag=True, help="List the rules and exit.")
@click.option("--show-settings", is_flag=True,
              help="Print the configuration that applies to the first path, and exit.")
@click.option("--show-files", is_flag=True, help="Print the files that would be linted, and exit.")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False, path_type=str),
              default=None, metavar="PATH",
              help="Read the settings from this file (a pyproject.toml's [tool.snlint], or "
                   "a snlint.toml) instead of the project's configuration file.")
@click.option("--explain", metavar="CODE", help="Print the page of a rule and exit.")
@click.option("--stdin-filename", metavar="PATH",
              help="Lint standard input as the file PATH (its configuration applies; "
                   "source pass only). `-` as the path reads standard input too.")
@click.option("--add-noqa", is_flag=True,
              help="Write `# noqa: CODE` on every reported line, and exit.")
@click.option("--fix", is_flag=True,
              help="Apply the safe fixes (the unsafe ones too with --unsafe-fixes), then "
                   "report what remains. On standard input, write the fixed source to "
                   "standard output and the report to standard error.")
@click.option("--fix-only", is_flag=True,
              help="Apply the fixes as --fix does, report nothing of what remains, and exit 0 "
                   "(1 with --exit-non-zero-on-fix when something was fixed).")
@click.option("--unsafe-fixes", is_flag=True,
              help="Make unsafe fixes available: marked fixable, shown, and applied by "
                   "--fix and --diff.")
@click.option("--extend-safe-fixes", multiple=True, callback=_codes, metavar="CODES",
              help="Rules whose unsafe fixes count as safe (applied by --fix alone).")
@click.option("--extend-unsafe-fixes", multiple=True, callback=_codes, metavar="CODES",
              help="Rules whose safe fixes count as unsafe (applied only with --unsafe-fixes).")
@click.option("--diff", is_flag=True,
              help="Print the fixes as unified diffs on standard output and write nothing; "
                   "exit 1 when there is a diff.")
@click.option("--show-fixes", is_flag=True, help="Show each finding's fix and its diff.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, metavar="N",
              help="Processes that parse files (default: one per core; 1: no workers). "
                   "Workers start only when there are enough files to pay for them, on Linux.")
@click.option("--no-cache", is_flag=True,
              help="Neither read nor write the per-file cache (.snlint_cache in the project root).")
@click.option("--cache-dir", type=click.Path(file_okay=False), envvar="SNLINT_CACHE_DIR",
              default=None, metavar="DIR",
              help="Where the per-file cache lives (env SNLINT_CACHE_DIR; default: the "
                   "`cache-dir` setting, else .snlint_cache in the project root).")
@click.option("-q", "--quiet", is_flag=True,
              help="Print the findings and nothing else: no summary lines, no progress, "
                   "no warnings.")
@click.option("-s", "--silent", is_flag=True,
              help="Print nothing (errors aside); the exit code still tells.")
@click.option("-V", "--version", is_flag=True, expose_value=False, is_eager=True,
              callback=lambda ctx, param, value: _print_version(ctx) if value else None,
              help="Show the version and exit.")
def main(**options) -> None:
    """Audit PyTorch GAN code for spectral-normalization and batch-coupling mistakes."""
    try:
        _main(**options)
    except KeyboardInterrupt as exc:
        # Not click's "Aborted!" and exit 1, the code for findings: CI must tell an
        # interrupted run from one that found something.
        _interrupted(getattr(exc, "signum", signal.SIGINT))


class Terminated(KeyboardInterrupt):
    """SIGTERM (or SIGHUP) in the main process: unwinds as Ctrl-C does, cleaning up."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _interrupted(signum: int) -> None:
    name = "interrupted" if signum == signal.SIGINT else f"terminated ({signal.Signals(signum).name})"
    try:
        click.echo(f"snlint: {name}", err=True)
    except (OSError, ValueError):
        pass
    _finish(EXIT_SIGNAL + int(signum))


_MAIN_PID = os.getpid()


def _on_termination(signum: int, frame) -> None:
    if os.getpid() != _MAIN_PID:  # a forked worker: the main process cleans up
        os._exit(EXIT_SIGNAL + signum)
    raise Terminated(signum)


def _catch_termination() -> None:
    """SIGTERM and SIGHUP end the run as Ctrl-C does (clean-up, then 128 + the signal)."""
    global _MAIN_PID
    _MAIN_PID = os.getpid()
    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is None:
            continue
        try:
            if signal.getsignal(signum) is signal.SIG_DFL:
                signal.signal(signum, _on_termination)
        except (OSError, ValueError):  # not the main thread
            pass


def _main(paths: tuple[str, ...], select: list[str] | None, extend_select: list[str] | None,
          ignore: list[str] | None, graph: bool | None, graph_timeout: float | None,
          output_format: str | None, exit_zero: bool, statistics: bool,
          force_exclude: bool | None, list_rules: bool, explain: str | None,
          stdin_filename: str | None = None, add_noqa: bool = False, fix: bool = False,
          unsafe_fixes: bool = False, extend_safe_fixes: list[str] | None = None,
          extend_unsafe_fixes: list[str] | None = None, diff: bool = False, show_fixes: bool = False,
          jobs: int | None = None, no_cache: bool = False, cache_dir: str | None = None,
          quiet: bool = False, silent: bool = False, output_file: str | None = None,
          color: str = "auto", exit_non_zero_on_fix: bool = False, fix_only: bool = False,
          show_settings: bool = False, show_files: bool = False,
          config_path: str | None = None) -> None:
    _collect_less(click.get_current_context())
    quiet = quiet or silent
    fix = fix or fix_only
    # The report goes to a file, or to standard error when the fixed source of standard
    # input takes standard output.
    stdin = stdin_filename is not None or "-" in paths
    to_stderr = stdin and fix and not diff
    terminal = False if output_file is not None else \
        _stderr_is_terminal() if to_stderr else _stdout_is_terminal()
    fmt = output_format or ("full" if terminal else "concise")
    # A report file holds no escape codes, whatever the environment says.
    color = fmt in report.TEXT_FORMATS and output_file is None and _use_color(color, terminal)

    if list_rules:
        _output(_rule_list(fmt) + "\n", output_file, color)
        return
    if explain is not None:
        text = _explanation(explain, fmt)
        if fmt in report.TEXT_FORMATS:
            from snlint.report.markdown import terminal_page

            text = terminal_page(text, color)
        _output(text + "\n", output_file, color)
        return

    if stdin:
        if add_noqa:
            _fail("--add-noqa writes files; it cannot be used with standard input")
        for path in paths:
            if path != "-":
                _say(f"snlint: warning: ignoring {path}: linting standard input")
        paths = (stdin_filename or "-",)
    paths = paths or (".",)
    missing = [path for path in paths if not stdin and not os.path.lexists(path)]
    for path in missing:
        _say(f"snlint: path not found: {path}")
    if missing:
        sys.exit(EXIT_ERROR)

    try:
        from snlint.config import ConfigError, find_root, load_config
    except Exception as exc:  # a broken install: say so in one line
        _internal_error(exc)

    try:
        own = _own_process()
        root = find_root(list(paths), own.looked_at if own is not None else None)
        settings = os.path.abspath(config_path) if config_path is not None else None
        config = load_config(root, settings=None if settings is None else Path(settings),
                             select=select, extend_select=extend_select, ignore=ignore,
                             extend_safe_fixes=extend_safe_fixes,
                             extend_unsafe_fixes=extend_unsafe_fixes,
                             graph=graph, graph_timeout=graph_timeout,
                             force_exclude=force_exclude, jobs=jobs,
                             cache=False if no_cache else None,
                             cache_dir=os.path.abspath(cache_dir) if cache_dir else None)
    except ConfigError as exc:
        _fail(one_line(str(exc)))
    except Exception as exc:
        _internal_error(exc)

    if show_settings:
        _output(_settings_text(paths[0], config, settings) + "\n", output_file)
        _finish(EXIT_CLEAN)
    if show_files:
        if not stdin:
            from snlint.files import discover

            listed = sorted(str(absolute) for _, absolute in discover(list(paths), config))
            if listed or output_file is not None:
                _output("".join(f"{path}\n" for path in listed), output_file)
            if not listed and not quiet:
                _no_files(paths)
        _finish(EXIT_CLEAN)

    if config.graph and not stdin:
        _require_torch(asked_on_command_line=graph is True, root=config.root, settings=settings)

    reuse = None
    walked = None
    fixed = None  # what --fix did (snlint.fix.apply.FixedPoint)
    fixes_made = 0
    if stdin and (fix or diff):
        _fix_stdin(paths[0], config, fmt=fmt, color=color, unsafe=unsafe_fixes, diff=diff,
                   exit_zero=exit_zero, quiet=quiet, silent=silent, fix_only=fix_only,
                   exit_non_zero_on_fix=exit_non_zero_on_fix, output_file=output_file,
                   statistics=statistics, show_fixes=show_fixes)
    if fix or diff:
        from snlint.files import discover

        # The tree is walked once: the rounds change files, never which files there are.
        walked = discover(list(paths), config)
        # What the --fix rounds read, for the report after them: only the files the
        # fixes changed are read again.
        reuse, fixed, fixes_made = _apply_fixes(list(paths), config, unsafe=unsafe_fixes, diff=diff,
                                                exit_zero=exit_zero, files=walked, quiet=quiet,
                                                output_file=output_file)
        if fix_only:
            reuse.close()
            if not walked and not quiet:
                _no_files(paths)
            _finish(exit_code((), fixes=fixes_made, exit_non_zero_on_fix=exit_non_zero_on_fix))

    # A fix is built (parsed, rewritten, compiled, diffed) only for an output that shows
    # it; otherwise the findings only carry whether a fix exists, for `[*]` and the count.
    fixes = not add_noqa and (show_fixes or (fmt in report.FIX_FORMATS and not statistics))
    # Only a run that may leave a replay record (snlint.engine.replay) notes what it reads: the
    # source pass alone, with the cache, over the whole project, building no fix.
    recordable = own is not None and own.recorder is not None \
        and not (stdin or fix or diff or add_noqa or fixes or output_file or silent) \
        and not config.graph and config.cache \
        and [os.path.normpath(p) for p in paths] == [os.path.relpath(config.root)]
    looked_at = own.looked_at if recordable else None
    try:
        if stdin:
            from snlint.stdin import lint_stdin

            result = lint_stdin(sys.stdin.buffer.read(), paths[0], config, fixes=fixes)
        else:
            from snlint.report.progress import ProgressLine

            # What the --fix rounds left alive (each file's facts) outlives the report's
            # lint: the collector need not scan it at each of that lint's collections.
            frozen = reuse is not None and not gc.get_freeze_count()
            if frozen:
                gc.freeze()
            progress = None if quiet else ProgressLine(sys.stderr, _stderr_is_terminal())
            try:
                result, inputs, run_cache = _answered(list(paths), config, fixes, reuse, looked_at, walked)
                if result is None:
                    from snlint.engine import run

                    result = run(list(paths), config, progress=progress, fixes=fixes,
                                 reuse=reuse, inputs=inputs, run_cache=run_cache,
                                 steps=progress.phase if progress is not None else None)
            finally:
                if progress is not None:
                    progress.finish()
                if frozen:
                    gc.unfreeze()
                if reuse is not None:
                    reuse.close()  # the graph-pass workers the --fix rounds kept
        findings = list(result.findings)
        if add_noqa:
            from snlint.noqa import write_noqa

            added = write_noqa(findings, result.sources, config.max_file_size, report=_say)
            _say(f"Added {plural(added, 'noqa directive')}.")
            sys.exit(EXIT_CLEAN)
        out = _report(findings, result, fmt, color=color, root=config.root,
                      unsafe=unsafe_fixes, quiet=quiet, statistics=statistics,
                      show_fixes=show_fixes, fixes=fixes_made, outcome=fixed)
    except Exception as exc:
        _internal_error(exc)

    _output(out, output_file, color, silent=silent)
    if not stdin:
        if not result.files and not quiet:
            _no_files(paths)
        _graph_lines(result, config, quiet)
    code = exit_code(findings, exit_zero, fixes=fixes_made,
                     exit_non_zero_on_fix=exit_non_zero_on_fix)
    # A failure of snlint itself (SN999) is found again next run, as the run cache does.
    if recordable and not result.graph and not any(f.code == "SN999" for f in findings):
        _record(own, config, code, run_cache.entry())
    _finish(code)


NO_FILES = "warning: No Python files found under the given path(s)"


def _no_files(paths: Iterable[str]) -> None:
    """ruff's warning: a run over a wrong folder must not pass in silence. When every path
    named a Python file, --force-exclude dropped them, which is no mistake."""
    from snlint.files import SUFFIXES

    if not all(Path(p).suffix in SUFFIXES and os.path.isfile(p) for p in paths):
        _note(NO_FILES)


def _report(findings: list[Finding], result, fmt: str, *, color: bool, root, unsafe: bool,
            quiet: bool, statistics: bool = False, show_fixes: bool = False, fixes: int = 0,
            outcome=None) -> str:
    """The report and ruff's closing lines (text formats only), each ended by a newline
    (a blank line between them in `full`). `fixes`: what --fix made (`outcome`)."""
    if statistics:
        text = report.render_stats(findings, fmt, unsafe_fixes=unsafe)
    else:
        text = report.render(findings, fmt, result.sources, color=color, root=root,
                             show_fixes=show_fixes, unsafe_fixes=unsafe, cleared=result.cleared)
    # No file left to lint (all excluded, as a pre-commit hook may see): say nothing.
    closing = ("" if quiet or statistics or fmt not in report.TEXT_FORMATS
               or not (result.files or findings)
               else report.summary(findings, unsafe_fixes=unsafe,
                                   **_after_fixes(fixes, outcome, findings, result.sources)))
    out = text + ("\n" if fmt == "full" and closing else "") + "\n" if text else ""
    return out + (closing + "\n" if closing else "")


def _output(text: str, output_file: str | None, color: bool = False, *,
            silent: bool = False) -> None:
    """The command's output (`text`: lines each ended by a newline, or nothing): to
    --output-file in UTF-8 when given, else to standard output."""
    if output_file is not None:
        _write_file(output_file, printable(text).encode("utf-8"))
    elif text and not silent:
        _emit(text[:-1], color)


def _write_file(path: str, *pieces: bytes) -> None:
    try:
        with open(path, "wb") as handle:
            handle.writelines(pieces)
    except OSError as exc:
        _fail(f"cannot write {path}: {exc.strerror or exc}")


def _settings_text(path: str, config, settings: str | None) -> str:
    """--show-settings: where the configuration of `path` comes from, and each setting
    resolved, as the configuration file spells it."""
    import json

    from snlint.config import _KEYS, config_file

    source = settings or config_file(config.root)
    lines = [f"Resolved settings for: {os.path.abspath(path)}",
             f"Settings path: {source if source is not None else '(none: defaults)'}",
             f"root = {json.dumps(str(config.root))}"]
    for key, name in sorted(_KEYS.items()):
        # TOML's dates and times, in `models`, as their text.
        lines.append(f"{key} = {json.dumps(getattr(config, name), sort_keys=True, default=str)}")
    # The rules that apply to the path: the selection, ignores and per-file-ignores resolved.
    enabled = [code for code in sorted(_catalogue()) if config.is_enabled(code, path)]
    lines.append(f"enabled = {json.dumps(enabled)}")
    return "\n".join(lines)


def _fix_stdin(display: str, config, *, fmt: str, color: bool, unsafe: bool, diff: bool,
               exit_zero: bool, quiet: bool, silent: bool, fix_only: bool,
               exit_non_zero_on_fix: bool, output_file: str | None, statistics: bool = False,
               show_fixes: bool = False) -> None:
    """`--fix` / `--diff` on standard input, as ruff for editors: --diff prints the diff;
    --fix writes the fixed source to standard output and the report (as `--statistics` and
    `--show-fixes` ask for it on files) to standard error."""
    from snlint.stdin import fix_stdin, lint_stdin

    def say(message: str) -> None:
        if not silent:
            _say(message)

    try:
        data, fixed = fix_stdin(sys.stdin.buffer.read(), display, config, unsafe=unsafe, report=say)
    except Exception as exc:
        _internal_error(exc)
    if diff:
        _show_diff(fixed, quiet=quiet, exit_zero=exit_zero, output_file=output_file)
    _write_bytes(data)
    if fix_only:
        if fixed.fixes and not quiet:
            say(f"Fixed {plural(fixed.fixes, 'finding')}.")
        _finish(exit_code((), fixes=fixed.fixes, exit_non_zero_on_fix=exit_non_zero_on_fix))
    try:
        result = lint_stdin(data, display, config,
                            fixes=show_fixes or (fmt in report.FIX_FORMATS and not statistics))
        findings = list(result.findings)
        out = _report(findings, result, fmt, color=color, root=config.root, unsafe=unsafe,
                      quiet=quiet, statistics=statistics, show_fixes=show_fixes,
                      fixes=fixed.fixes, outcome=fixed)
    except Exception as exc:
        _internal_error(exc)
    if output_file is not None:
        _output(out, output_file)
    elif out and not silent:
        click.echo(printable(out), err=True, nl=False, color=color)
    _finish(exit_code(findings, exit_zero, fixes=fixed.fixes,
                      exit_non_zero_on_fix=exit_non_zero_on_fix))


def _show_diff(outcome, *, quiet: bool, exit_zero: bool, output_file: str | None) -> None:
    """--diff: each changed file's diff, the count line, and exit (1 when there is a diff)."""
    _write_bytes(*(item.diff for item in outcome.files), output_file=output_file)
    if not quiet:
        more = f" ({outcome.hidden} more with --unsafe-fixes)" if outcome.hidden else ""
        count = outcome.fixes
        _say(f"Would fix {plural(count, 'finding')}{more}." if count else f"No fixes to apply{more}.")
    _finish(EXIT_FINDINGS if outcome.files and not exit_zero else EXIT_CLEAN)


def _write_bytes(*pieces: bytes, output_file: str | None = None) -> None:
    """Bytes on standard output (or to `output_file`) as they are (a fixed source or a diff
    is in its file's encoding, so it applies to the file as it is)."""
    if output_file is not None:
        _write_file(output_file, *pieces)
        return
    sys.stdout.flush()
    try:
        for data in pieces:
            sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        _reader_left()


def _require_torch(*, asked_on_command_line: bool, root, settings: str | None = None) -> None:
    """Exit 2 when the graph pass is asked for and torch cannot be imported: a CI job must
    not pass on the source pass alone without a word."""
    from snlint.config import config_file
    from snlint.graph.runner import torch_importable

    if torch_importable():
        return
    settings = settings or config_file(Path(root)) or Path(root, "pyproject.toml")
    asked = "--graph" if asked_on_command_line else f"graph = true (in {settings})"
    _fail(f"{asked} needs torch, which {sys.executable} cannot import: "
          f"pip install 'snlint[graph]'" + ("" if asked_on_command_line else ", or run with --no-graph"))


@dataclass
class OwnProcess:
    """The context's `obj` when the command runs as its own process (snlint.launch): its
    replay record (snlint.engine.replay) and what the answer depends on."""

    recorder: Recorder | None
    looked_at: dict[str, tuple[int, object]] = field(default_factory=dict)


def run_own_process(recorder: Recorder | None) -> None:
    _catch_termination()
    main(prog_name="snlint", obj=OwnProcess(recorder))


def _own_process() -> OwnProcess | None:
    ctx = click.get_current_context(silent=True)
    obj = ctx.obj if ctx is not None else None
    return obj if isinstance(obj, OwnProcess) else None


def _record(own: OwnProcess, config, code: int, entry) -> None:
    """Leave the record the next identical run replays when all it read is unchanged:
    besides the walk's files, the data files and folders its run cache `entry` read."""
    from snlint.engine.cache import Cache
    from snlint.files import replace_file
    from snlint.engine.replay import LISTING, STATE, note, own_files

    own_files(own.looked_at)
    for path, _ in entry.data if entry is not None else ():
        note(own.looked_at, path, LISTING if os.path.isdir(path) else STATE)
    # An upgrade may say or match otherwise; libcst counts where the run imported it
    # (a file only it parses, whether a tab-indented file may be fixed).
    for name in ("click", "pathspec", "libcst"):
        path = getattr(sys.modules.get(name), "__file__", None)
        if path:
            note(own.looked_at, path)
    own.recorder.save(str(Cache.for_root(config.root, config.cache_dir).directory),  # type: ignore[union-attr]
                      own.looked_at, code, lambda path, data: replace_file(Path(path), data))


def _finish(code: int) -> None:
    """Exit with `code`. In a process of its own without tearing down what the run built
    (freeing it costs a fifth of a run; mypy's `hard_exit`); in-process (tests) or under a
    profiler or tracer, normally."""
    if _own_process() is not None and sys.getprofile() is None and sys.gettrace() is None:
        # A graph pass's fork server is waited for, so that its time and memory (torch,
        # the built models) count as this command's for `time` and wait4, as a child's do.
        forkserver = sys.modules.get("snlint.graph.forkserver")
        if forkserver is not None:
            forkserver.SERVERS.close()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    sys.exit(code)


def _answered(paths: list[str], config, fixes: bool, reuse,
              looked_at: dict[str, tuple[int, object]] | None = None, walked=None):
    """(result, inputs, run cache): the result is the run cache's when nothing changed
    (the source pass is not imported), else None. `walked`: the files --fix found."""
    from snlint.engine.run_cache import RunCache
    from snlint.engine.run_result import finish, unsuppressed
    from snlint.files import discover
    from snlint.inputs import read_inputs

    # The walk notes what it looked at, for a replay record (`looked_at`).
    inputs = read_inputs(paths, config, discover(paths, config, looked_at) if walked is None else walked)
    run_cache = None if reuse is not None else RunCache.for_run(
        config, inputs, graph=config.graph, fixes=fixes)
    found = run_cache.unchanged(inputs.sources) if run_cache is not None else None
    if found is None:
        return None, inputs, run_cache
    return finish(unsuppressed(found, inputs.sources), inputs, config,
                  discriminators=run_cache.entry().discriminators), inputs, run_cache


def _graph_lines(result, config, quiet: bool) -> None:
    """What the graph pass did with each class, and whether it ran, on standard error:
    stdout keeps only the report (JSON and SARIF stay parseable)."""
    from snlint.graph.diagnostics import graph_note, graph_summary, installed

    if result.graph and not quiet:
        from snlint.link.roots import locate_module

        text = graph_summary(result.graph, locate=lambda name: locate_module(name, config.root),
                             is_installed=installed)
        if text:
            _note(text, recorded=False)
    text = graph_note(len(result.discriminators), asked=config.graph, quiet=quiet,
                      terminal=_stderr_is_terminal())
    if text:
        _note(text)


def _after_fixes(fixes: int, outcome, findings: list[Finding], sources: dict[str, str]) -> dict:
    """`report.summary`'s `fixed` and `new`: the fixes made, and how many findings after
    them the first lint did not have (`snlint.fix.identity`): the fixes made them."""
    if not fixes:
        return {}
    from snlint.fix.identity import beyond

    return {"fixed": fixes, "new": len(beyond(findings, sources, outcome.first))}


def _apply_fixes(paths: list[str], config, *, unsafe: bool, diff: bool, exit_zero: bool, files: list,
                 quiet: bool, output_file: str | None):
    """`--diff`: print the diffs and exit. `--fix`: write the fixed files; return what the
    rounds read (`snlint.engine.Reuse`), for the lint after them, what they did, and the
    fixes written."""
    try:
        from snlint.engine.fixing import fix_paths
        from snlint.engine.lint import Reuse

        reuse = Reuse()
        outcome = fix_paths(paths, config, files, unsafe=unsafe, write=not diff, reuse=reuse,
                            report=_say)
    except Exception as exc:
        _internal_error(exc)
    if diff:
        reuse.close()
        _show_diff(outcome, quiet=quiet, exit_zero=exit_zero, output_file=output_file)
    written = outcome.written
    count = sum(item.fixes for item in written)
    if count and not quiet:
        _say(f"Fixed {plural(count, 'finding')} in {plural(len(written), 'file')}.")
    return reuse, outcome, count


def _catalogue() -> dict:
    from snlint.catalogue import load_catalogue

    try:
        return load_catalogue()
    except FileNotFoundError as exc:
        _fail(str(exc))
    except Exception as exc:
        _internal_error(exc)


def _rule_row(rule) -> dict:
    return {"code": rule.code, "name": rule.name, "severity": rule.severity, "fix": rule.fix,
            "default": "off" if rule.opt_in else "on", "summary": rule.summary}


def _rule_list(fmt: str) -> str:
    rows = [_rule_row(rule) for _, rule in sorted(_catalogue().items())]
    if fmt not in report.TEXT_FORMATS:
        from snlint.report.json import render_rows

        return render_rows(rows, fmt)
    columns = ("code", "name", "severity", "fix", "default", "summary")
    widths = {c: max([len(c)] + [len(row[c]) for row in rows]) for c in columns[:-1]}
    lines = ["  ".join(c.upper().ljust(widths.get(c, 0)) for c in columns).rstrip()]
    for row in rows:
        lines.append("  ".join(row[c].ljust(widths.get(c, 0)) for c in columns).rstrip())
    return "\n".join(lines)


def _explanation(code: str, fmt: str) -> str:
    code = code.strip().upper()
    rules = _catalogue()
    rule = rules.get(code)
    if rule is None:
        _fail(f"unknown rule code: {code} (see snlint --list-rules)")
    if fmt not in report.TEXT_FORMATS:
        import json

        row = _rule_row(rule) | {"explanation": rule.page}
        return json.dumps(row, indent=2) if fmt == "json" else json.dumps(row, separators=(",", ":"))
    return _page_text(rule)


def _page_text(rule) -> str:
    """The page as Markdown, its front matter turned into one line under the title."""
    body = rule.body.strip("\n")
    default = "Off by default (opt-in)" if rule.opt_in else "On by default"
    facts = f"Severity: {rule.severity}. Fix: {rule.fix}. {default}."
    title, _, rest = body.partition("\n")
    if title.startswith("# "):
        return f"{title}\n\n{facts}\n\n{rest.lstrip(chr(10))}".rstrip("\n")
    return f"{facts}\n\n{body}"
