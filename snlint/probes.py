"""What a run looked at, as it was: the probes a replay record keeps (`snlint.engine.replay`)
and compares at the next run. Standard library only: a replay reads them first."""

from __future__ import annotations

import os

# What a probe compares: a file's whole stat; whether a path is there; a folder's entries
# (names, less the dot-folders a walk skips: a folder's modification time would also move
# when snlint makes its .snlint_cache, and names need no clock to compare).
STATE, EXISTS, LISTING = 0, 1, 2
# snlint's own files: compared as STATE is, but not held to the racy window (a checkout
# being edited is what this module's own tests run from, seconds after an edit).
OWN = 3


def state(path: str, kind: int):
    """What a probe of `path` records: for STATE (and OWN), the stat's identity, size and
    times; for EXISTS, whether it is there; for LISTING, the folder's entries (None when
    absent)."""
    try:
        if kind == LISTING:
            with os.scandir(path) as entries:
                return tuple(sorted(e.name for e in entries if not (e.name[0] == "." and e.is_dir())))
        info = os.stat(path)
    except OSError:
        return None if kind != EXISTS else False
    if kind == EXISTS:
        return True
    return (info.st_mode, info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def note(looked_at: dict[str, tuple[int, object]] | None, path: str, kind: int = STATE) -> None:
    """Note in `looked_at` (when keeping one) that a run depends on `path`, as it is now."""
    if looked_at is not None:
        looked_at[path] = (kind, state(path, kind))
