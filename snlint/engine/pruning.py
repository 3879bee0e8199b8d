"""Folders snlint fills with entries of its own (the run cache's runs, replay's records):
at most so many are kept, the least recently written (or used) go first."""

from __future__ import annotations

import os


def keep_newest(folder: str | os.PathLike, count: int) -> None:
    """Remove the entries of `folder` past the `count` most recently modified. An entry
    another run removed first, or one that cannot be removed, is left to it."""
    entries = list(os.scandir(folder))
    if len(entries) <= count:
        return
    entries.sort(key=lambda e: e.stat().st_mtime_ns)
    for entry in entries[: len(entries) - count]:
        try:
            os.unlink(entry.path)
        except OSError:
            continue
