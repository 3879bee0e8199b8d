"""Reading a file only when it is a regular file, and never more of it than asked.

A FIFO blocks an `open` or a `read` until a writer comes, a device can feed a read without
end, and a read of `n` bytes allocates `n` up front: so open without waiting
(O_NONBLOCK), look at what was opened (fstat), and read in pieces. Standard library only:
snlint.engine.replay reads its records with it before anything else is imported.
"""

from __future__ import annotations

import errno
import os
import stat

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_PIECE = 1 << 20


def read_regular(path: str | os.PathLike, limit: int | None = None) -> bytes:
    """The bytes of the regular file at `path`: all of them, or with `limit` at most
    `limit + 1` (so a caller sees that the file holds more than `limit`). OSError when it
    cannot be read, or is not a regular file (strerror "not a regular file")."""
    fd = os.open(path, _FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        want = info.st_size + 1 if limit is None else min(info.st_size, limit) + 1
        pieces = []
        first = os.read(fd, want)  # the whole file at once, as stat sees it
        pieces.append(first)
        got = len(first)
        # The file grew since fstat (or stat says 0, as some virtual files do): read on
        # in pieces, up to the limit.
        more = got == want
        while more and (limit is None or got <= limit):
            piece = os.read(fd, _PIECE if limit is None else min(_PIECE, limit + 1 - got))
            if not piece:
                break
            pieces.append(piece)
            got += len(piece)
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)
    finally:
        os.close(fd)
