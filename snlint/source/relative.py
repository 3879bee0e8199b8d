"""Relative imports, resolved against the importing module."""

from __future__ import annotations


def resolve_relative(module: str, is_package: bool, level: int, name: str) -> str:
    parts = module.split(".") if module else []
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    base = ".".join(parts)
    if base and name:
        return f"{base}.{name}"
    return base or name
