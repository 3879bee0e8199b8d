"""SN501's fix: move every call of the hook API in the file to the parametrizations API."""

from __future__ import annotations

from snlint.config import Config
from snlint.edit.parsed import ParsedFile
from snlint.edit.plan import Plan
from snlint.findings import Finding
from snlint.fixes.sn_migration import migrate


def fix(finding: Finding, parsed: ParsedFile, config: Config) -> Plan | None:
    return migrate(finding, parsed, whole_file=True)
