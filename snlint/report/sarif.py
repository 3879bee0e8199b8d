"""`--output-format sarif`: SARIF 2.1.0 for code scanning (GitHub, Azure DevOps, IDEs).

One run; `tool.driver.rules` is the catalogue. Locations are URIs relative to
`%SRCROOT%` (the project root). Columns count characters (`unicodeCodePoints`).
`partialFingerprints["snlint/v1"]` hashes the code, the relative path, the finding's
anchor (its symbol, else its stripped source line) and its index among findings with the
same three, never a line number, so inserting lines above a finding keeps its alert.
A fix becomes `fixes[].artifactChanges`: one replacement per changed stretch of the file.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import quote

from snlint.catalogue import load_catalogue
from snlint.findings import Finding, Fix
from snlint.lines import LINE_BREAK, line_texts, lines_before, split_lines

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "snlint/v1"
# Where the rule pages are browsable when the package metadata names no repository.
DEFAULT_REPOSITORY = "https://github.com/snlint/snlint"

_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


# ---------------------------------------------------------------------------- the tool

def _metadata() -> tuple[str, str]:
    """(version, repository URL): the version the running package says it is (the one
    its distribution's metadata is built from), the URL from the installed metadata."""
    from importlib.metadata import PackageNotFoundError, metadata

    import snlint

    try:
        meta = metadata("snlint")
    except PackageNotFoundError:
        return snlint.__version__, DEFAULT_REPOSITORY
    repository = DEFAULT_REPOSITORY
    for entry in meta.get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("repository", "source", "homepage") and url.strip():
            repository = url.strip().rstrip("/")
            break
    return snlint.__version__, repository


def _rule_descriptor(rule, repository: str) -> dict:
    help_text = rule.body.strip("\n") + "\n"  # the front matter's facts are fields here
    descriptor = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary or rule.name},
        "fullDescription": {"text": " ".join(rule.section("What it finds").split())
                            or rule.summary or rule.name},
        "help": {"text": help_text, "markdown": help_text},
        "defaultConfiguration": {"level": _LEVEL.get(rule.severity, "warning"),
                                 "enabled": not rule.opt_in},
    }
    if not rule.is_diagnostic:  # diagnostics have no page of their own
        descriptor["helpUri"] = f"{repository}/blob/main/rules/{rule.code}.md"
    descriptor["properties"] = {"fix": rule.fix, "tags": ["spectral-normalization", "gan"]}
    return descriptor


# ---------------------------------------------------------------------------- locations

def _relative(path: str, root: Path) -> tuple[Path, str | None]:
    """The absolute path, and the root-relative one (None outside the root)."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute, absolute.relative_to(root).as_posix()
    except ValueError:
        return absolute, None


def artifact_location(path: str, root: Path) -> dict:
    """`{"uri", "uriBaseId"}` relative to the root, or an absolute file URI."""
    absolute, relative = _relative(path, root)
    if relative is None:
        return {"uri": absolute.as_uri()}
    # A file name need not be UTF-8 (Python holds its odd bytes as surrogates): the URI
    # percent-encodes the name's bytes as they are on disk, as `as_uri` does.
    return {"uri": quote(os.fsencode(relative), safe="/"), "uriBaseId": SRCROOT}


def _region(span) -> dict:
    return {"startLine": span.line, "startColumn": span.column, "endLine": span.end_line,
            "endColumn": span.end_column}


# ---------------------------------------------------------------------------- fingerprints

def _line_text(sources: Mapping[str, str], finding: Finding) -> str:
    text = sources.get(finding.path)
    if text is None or finding.cell is not None:  # a cell's lines are not the file's
        return ""
    lines = line_texts(text)
    return lines[finding.line - 1].strip() if 0 < finding.line <= len(lines) else ""


def fingerprints(findings: list[Finding], sources: Mapping[str, str], root: Path) -> list[str]:
    """The `snlint/v1` fingerprint of each finding, in order."""
    seen: Counter = Counter()
    out = []
    for finding in findings:
        anchor = finding.symbol or _line_text(sources, finding)
        absolute, relative = _relative(finding.path, root)
        key = (finding.code, relative or absolute.as_posix(), anchor)
        index = seen[key]
        seen[key] += 1
        payload = "\0".join([*key, str(index)])
        out.append(hashlib.sha256(payload.encode("utf-8", "surrogateescape")).hexdigest())
    return out


# ---------------------------------------------------------------------------- fixes

def _position(block: str, offset: int, first_line: int) -> tuple[int, int]:
    """(line, column) of character `offset` in `block`, a text starting at column 1 of
    `first_line`."""
    before = block[:offset]
    breaks = list(LINE_BREAK.finditer(before))
    if not breaks:
        return first_line, offset + 1
    return first_line + len(breaks), offset - breaks[-1].end() + 1


def replacements(old: str, new: str) -> list[dict]:
    """The SARIF replacements that turn `old` into `new`: one per changed stretch of
    lines, each trimmed to the characters that differ. Regions are in `old`."""
    old_lines, new_lines = split_lines(old), split_lines(new)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    out = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        deleted, inserted = "".join(old_lines[i1:i2]), "".join(new_lines[j1:j2])
        prefix = len(os.path.commonprefix([deleted, inserted]))
        # Never split a \r\n: a position between its two characters is no column.
        if 0 < prefix < len(deleted) and deleted[prefix - 1] == "\r" and deleted[prefix] == "\n":
            prefix -= 1
        room = min(len(deleted), len(inserted)) - prefix
        suffix = 0
        while suffix < room and deleted[-1 - suffix] == inserted[-1 - suffix]:
            suffix += 1
        end = len(deleted) - suffix
        if 0 < end < len(deleted) and deleted[end - 1] == "\r" and deleted[end] == "\n":
            end += 1
            suffix -= 1
        start_line, start_column = _position(deleted, prefix, i1 + 1)
        end_line, end_column = _position(deleted, end, i1 + 1)
        out.append({
            "deletedRegion": {"startLine": start_line, "startColumn": start_column,
                              "endLine": end_line, "endColumn": end_column},
            "insertedContent": {"text": inserted[prefix:len(inserted) - suffix]},
        })
    return out


def _replacements(old: str, edit) -> list[dict]:
    """`replacements(old, edit.new_text)`, made from the lines the edit changes alone when
    it says which (a file's many fixes, each compared whole, would be quadratic)."""
    if edit.end is None or edit.base != old:
        return replacements(old, edit.new_text)
    start, end = edit.start, edit.end
    low = max(old.rfind("\n", 0, start), old.rfind("\r", 0, start)) + 1
    high = end
    if high and old[high - 1] not in "\r\n":
        found = LINE_BREAK.search(old, high)
        high = found.end() if found else len(old)
    found = replacements(old[low:high], old[low:start] + edit.text + old[end:high])
    before = lines_before(old, low)
    for change in found:
        region = change["deletedRegion"]
        region["startLine"] += before
        region["endLine"] += before
    return found


def sarif_fix(fix: Fix, sources: Mapping[str, str], root: Path) -> dict | None:
    """`fix` as a SARIF fix, or None when its edits change nothing we can place."""
    changes = []
    for edit in fix.edits:
        old = sources.get(edit.path)
        if old is None:
            continue
        found = _replacements(old, edit)
        if found:
            changes.append({"artifactLocation": artifact_location(edit.path, root),
                            "replacements": found})
    if not changes:
        return None
    return {"description": {"text": f"{fix.message} ({fix.applicability})"},
            "artifactChanges": changes}


# ---------------------------------------------------------------------------- the log

def _result(finding: Finding, index: int | None, fingerprint: str,
            sources: Mapping[str, str], root: Path) -> dict:
    properties = {
        "symbol": finding.symbol,
        "pass": finding.pass_,
        "discriminator": finding.discriminator.to_dict() if finding.discriminator else None,
    }
    if finding.evidence_of() is not None:
        # Why the finding holds, beyond its one-line message (`Finding.evidence_of`).
        properties["evidence"] = finding.evidence_of()
    region = _region(finding)
    if finding.cell is not None:
        # The region points into the .ipynb file's own text (the JSON string of the
        # source line); the cell and the line and column within it are properties.
        properties |= {"cell": finding.cell, "cellLine": finding.line, "cellColumn": finding.column}
        region = None if finding.file_span is None else _region(finding.file_span)
    result = {"ruleId": finding.code}
    if index is not None:
        result["ruleIndex"] = index
    result |= {
        "level": _LEVEL.get(finding.severity, "warning"),
        "message": {"text": finding.message},
        "locations": [{"physicalLocation": {
            "artifactLocation": artifact_location(finding.path, root),
            **({"region": region} if region is not None else {}),
        }}],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
        "properties": properties,
    }
    if finding.related:
        result["relatedLocations"] = [{
            "id": i,
            "physicalLocation": {
                "artifactLocation": artifact_location(r.path, root),
                "region": _region(r.span),
            },
            **({"message": {"text": r.message}} if r.message else {}),
        } for i, r in enumerate(finding.related, 1)]
    # A cell finding's fix edits the cells' joined text, not the .ipynb file: no regions.
    fix = (sarif_fix(finding.fix, sources, root)
           if finding.fix is not None and finding.cell is None else None)
    if fix is not None:
        result["fixes"] = [fix]
    if finding.cleared_by is not None:
        # Shown wrong by the graph pass: a code-scanning alert closed, with the reason.
        result["suppressions"] = [{"kind": "external", "justification": finding.cleared_by.evidence}]
    return result


def sarif_log(findings: Iterable[Finding], sources: Mapping[str, str],
              root: Path | None = None) -> dict:
    root = Path(os.path.abspath(root if root is not None else os.getcwd()))
    root_uri = root.as_uri()  # a folder's: ends with a slash
    root_uri += "" if root_uri.endswith("/") else "/"
    findings = list(findings)
    version, repository = _metadata()
    rules = load_catalogue()
    descriptors = [_rule_descriptor(rule, repository) for _, rule in sorted(rules.items())]
    index = {d["id"]: i for i, d in enumerate(descriptors)}
    prints = fingerprints(findings, sources, root)
    results = [_result(f, index.get(f.code), fp, sources, root)
               for f, fp in zip(findings, prints)]
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "snlint",
                "version": version,
                "semanticVersion": version,
                "informationUri": repository,
                "rules": descriptors,
            }},
            "originalUriBaseIds": {SRCROOT: {"uri": root_uri}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def render_sarif(findings: Iterable[Finding], sources: Mapping[str, str],
                 root: Path | None = None) -> str:
    return json.dumps(sarif_log(findings, sources, root), indent=2)
