"""Suppression comments (README, "Suppressing findings"): `# noqa` (every finding on its
line), `# noqa: SN201, SN3` (those codes and prefixes there; `# noqa:` with no code is no
directive, as in ruff) and `# snlint: disable=SN201,SN301` (the whole file; `ALL` too).
Comments are found with `tokenize`; where it gives up, lines are scanned one by one.
They never suppress SN9xx diagnostics; `ignore` / `per-file-ignores` do.
"""

from __future__ import annotations

import io
import re
from snlint.catalogue import selector_matches
from snlint.lines import LexState, line_texts
from snlint.records import dataclass
import tokenize
from collections.abc import Iterator
from dataclasses import field

_CODE = r"[A-Z]+[0-9]+"
# The `# noqa` directive (the first in a comment counts); `--add-noqa` writes the same
# grammar it reads here.
NOQA = re.compile(
    rf"#\s*(?i:noqa)(?!\w)(?P<colon>\s*:\s*(?P<codes>{_CODE}(?:[\s,]+{_CODE})*)?)?")
_SELECTOR = r"(?:SN[0-9]{0,3}|ALL)(?![\w])"
_DISABLE = re.compile(
    rf"#\s*snlint\s*:\s*disable\s*=\s*(?P<codes>{_SELECTOR}(?:[\s,]+{_SELECTOR})*)")
CODE_SEPARATOR = re.compile(r"[\s,]+")
# What every comment NOQA or _DISABLE matches contains (a cheap test of a whole text).
_MAY_SUPPRESS = re.compile(r"#\s*(?:(?i:noqa)|snlint)")


@dataclass(frozen=True)
class Suppressions:
    # line -> codes/prefixes named by its `# noqa: ...`, or None for a bare `# noqa`
    noqa: dict[int, frozenset[str] | None] = field(default_factory=dict)
    # codes/prefixes (or "ALL") named by `# snlint: disable=...` comments
    file_disabled: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, text: str) -> "Suppressions":
        # Tokenizing is most of a warm run's time; a text in which no comment could
        # match (no `# noqa`, no `# snlint: disable`) has nothing to find.
        if _MAY_SUPPRESS.search(text) is None:
            return cls()
        noqa: dict[int, frozenset[str] | None] = {}
        disabled: set[str] = set()
        for line, comment in _comments(text):
            match = NOQA.search(comment)
            if match and line not in noqa:
                if match.group("codes"):
                    noqa[line] = frozenset(CODE_SEPARATOR.split(match.group("codes")))
                elif not match.group("colon"):
                    noqa[line] = None
            for match in _DISABLE.finditer(comment):
                disabled.update(CODE_SEPARATOR.split(match.group("codes")))
        return cls(noqa, frozenset(disabled))

    def allows(self, code: str, line: int) -> bool:
        """False when a comment suppresses a finding of `code` reported on `line`."""
        if code.startswith("SN9"):
            return True
        if selector_matches(code, self.file_disabled):
            return False
        if line not in self.noqa:
            return True
        codes = self.noqa[line]
        return codes is not None and not selector_matches(code, codes)



def _comments(text: str) -> Iterator[tuple[int, str]]:
    """(line, comment text from `#`) of every comment, lines counted as Python counts
    them (\\n, \\r\\n and \\r all end a line)."""
    last_line = 0
    try:
        # newline=None: readline splits at \r and \r\n too, as the Python tokenizer does.
        for tok in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            if tok.type == tokenize.COMMENT:
                yield tok.start[0], tok.string
            last_line = max(last_line, tok.end[0])
    except (tokenize.TokenError, SyntaxError, ValueError):
        lines = line_texts(text)
        for number in range(last_line + 1, len(lines) + 1):
            comment = _comment_in_line(lines[number - 1])
            if comment is not None:
                yield number, comment


def _comment_in_line(line: str) -> str | None:
    """The comment of one line, from the first `#` outside quotes; None when none."""
    start = LexState().scan(line)
    return None if start is None else line[start:]
