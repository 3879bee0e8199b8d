"""The configurations a project ships: a finding that holds for some of them only says which.

A training script that loads its options from a file named by an option (`--opt`
defaulting to `options/train_batch.json`) builds the discriminator that file chooses; its
siblings (`options/train_instance.json`) may choose other norms. The link step is run
again with each sibling in place of the default (`configvalues.CHOSEN`), reading files,
running nothing, and a finding some files give names them ("with options/train_batch.json").
Siblings: files of the default's kind in its own folder whose name starts as the
default's does up to its first `_` or `-`, at most `MAX_CONFIGS`.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Any, Callable

from snlint.findings import Finding
from snlint.link.configvalues import CHOSEN, LOADED, noted

MAX_CONFIGS = 8
MAX_LINKS = 12
# (option's dest, its default as written or None, [(shown, absolute path), ...], declaring file)
Shipped = tuple[str, "str | None", list[tuple[str, str]], str]
# An option with no default that names the option file, and the folders, under the working
# directory (where the script's relative paths are opened from), that ship such files.
OPTION_FILE_NAMES = frozenset({"opt", "opts", "option", "options", "config", "configs", "cfg",
                               "conf", "config_file", "cfg_file", "config_path", "opt_path",
                               "options_file", "yaml", "json"})
SHIPPED_FOLDERS = ("options", "configs", "config")
_KINDS = ((".json",), (".yaml", ".yml"))


def config_options(declared: dict[str, dict[str, Any]], undefaulted: dict[str, str] | None = None
                   ) -> list[Shipped]:
    """A `Shipped` for each option whose default is a configuration file with siblings,
    and for each option named like an option file's (`--opt`) that has no default: the
    files of the project's `options`, `configs` or `config` folder."""
    found: list[Shipped] = []
    for dest, where in sorted((undefaulted or {}).items()):
        if dest not in OPTION_FILE_NAMES:
            continue
        for folder in SHIPPED_FOLDERS:
            if os.path.isdir(noted(folder)):
                for kind in _KINDS:
                    names = _siblings(folder, kind)
                    if 2 <= len(names) <= MAX_CONFIGS:
                        found.append((dest, None, [(os.path.join(folder, n), os.path.abspath(os.path.join(folder, n)))
                                                   for n in names], where.rsplit(":", 1)[0]))
    for dest, option in declared.items():
        value = option["value"]
        if not isinstance(value, str):
            continue
        kind = next((k for k in _KINDS if value.lower().endswith(k)), None)
        if kind is None:
            continue
        declaring = option["where"].rsplit(":", 1)[0]
        folder = _folder(value, declaring)
        if folder is None:
            continue
        names = _siblings(folder, kind, _prefix(os.path.basename(value)))
        if len(names) < 2 or len(names) > MAX_CONFIGS:
            continue  # one file is the default itself; many are not all trained with
        written = os.path.dirname(value)
        found.append((dest, value, [(os.path.join(written, n) if written else n, os.path.join(folder, n))
                                    for n in names], declaring))
    return found


def _siblings(folder: str, kind: tuple[str, ...], prefix: str = "") -> list[str]:
    try:
        names = os.listdir(noted(folder))
    except OSError:
        return []  # an unreadable folder ships nothing snlint can read
    return sorted(n for n in names
                  if n.lower().endswith(kind) and n.startswith(prefix) and os.path.isfile(os.path.join(folder, n)))


def _prefix(name: str) -> str:
    """`train_` of `train_batch.json`: a folder that also holds `test_batch.json` keeps
    the options of another script (inference) beside the training ones."""
    match = re.match(r"[A-Za-z]+[_-]", name)
    return match.group(0) if match else ""


def _folder(value: str, declaring: str) -> str | None:
    # As `configvalues._file` resolves the path the script opens.
    for candidate in (value, os.path.join(os.path.dirname(declaring), value)):
        if os.path.isfile(noted(candidate)):
            return os.path.dirname(os.path.abspath(candidate))
    return None


def per_config(findings: list[Finding], options: list[Shipped],
               link: Callable[[str], tuple[list[Finding], set[str]]]) -> list[Finding]:
    """`findings` with each finding that holds for some of the shipped configurations only
    naming them, and those the other configurations give added. `link(path)` links the
    part of the project holding `path` again and gives the paths it covered. For an option
    without a default, what the first link found that no shipped file gives is dropped."""
    budget = MAX_LINKS
    for dest, default, files, declaring in options:
        if len(files) > budget:
            continue  # each file links the project again: a run pays for MAX_LINKS at most
        budget -= len(files)
        runs: dict[str, list[Finding]] = {}
        covered: set[str] = set()
        for shown, path in files:
            loaded: set[str] = set()
            chosen = CHOSEN.set({**(CHOSEN.get() or {}), dest: shown})
            seen = LOADED.set(loaded)
            try:
                found, covered = link(declaring)
            finally:
                LOADED.reset(seen)
                CHOSEN.reset(chosen)
            if os.path.abspath(path) not in loaded:
                if shown == default:
                    break  # the training code does not load the default: not a config option
                continue  # a path the code changes before it opens it
            runs[shown] = [f for f in found if not f.code.startswith("SN9")]
        else:
            if len(runs) >= 2:
                findings = _named(findings, runs, covered if default is None else set())
    return findings


def _key(f: Finding) -> tuple:
    return f.code, f.path, f.line, f.column


def _named(findings: list[Finding], runs: dict[str, list[Finding]], undecided: set[str]) -> list[Finding]:
    """`undecided`: the files where a finding no run gives is dropped (the first link read
    no file for the option there)."""
    holds: dict[tuple, list[str]] = {}
    first: dict[tuple, Finding] = {}
    for shown, found in runs.items():
        for f in found:
            if shown not in holds.setdefault(_key(f), []):
                holds[_key(f)].append(shown)
            first.setdefault(_key(f), f)
    out = []
    for f in findings:
        which = holds.get(_key(f))
        if f.code.startswith("SN9") or (which is None and f.path not in undecided):
            out.append(f)  # a diagnostic, or a finding the configurations do not decide
        elif which is None:
            continue
        else:
            out.append(_with(f, which, len(runs)))
    # A finding only other files give; one every file gives and the first link did not is
    # that link's to decide (it read the project whole).
    given = {_key(f) for f in findings}
    out.extend(_with(first[k], which, len(runs)) for k, which in holds.items()
               if k not in given and len(which) < len(runs))
    return out


def _with(f: Finding, which: list[str], total: int) -> Finding:
    if len(which) == total:
        return f  # every configuration: the code's own mistake
    return replace(f, message=f"{f.message} (with {', '.join(which)})")
