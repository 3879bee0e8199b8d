"""What a fix reads of one file's names (`facts.Names`): the nodes the lowering read, and
the whole file's bindings as `scan` counted them.

A name counts for a fix only when the file binds it one way: a fix that spells a layer
through an import, or rewrites the import, must not meet a parameter or a second import
of that name somewhere else in the file.
"""

from __future__ import annotations

from typing import Mapping

from snlint import facts as F
from snlint.findings import Span
from snlint.source.scopes import Scopes


def file_names(module: str, sites: dict[Span, int], quals: dict[int, str],
               import_sites: Mapping[str, list[int]], assigned: Mapping[str, list[int]],
               scopes: Scopes) -> F.Names:
    """`sites` and `quals` as the lowering recorded them; `import_sites`: each name's
    import aliases (node indices); `assigned`: each module-level name's assigned values."""
    bound, imported = scopes.bound, scopes.imported
    scope: dict[str, str] = {}
    for name in scopes.module_names:
        if bound[name] == 1:
            scope[name] = f"{module}.{name}" if module else name
    for local, targets in imported.items():
        if not bound[local] and len(set(targets)) == 1:
            scope[local] = targets[0]
    imports = {local: found[0] for local, found in import_sites.items()
               if len(found) == 1 and len(imported.get(local, ())) == 1 and not bound[local]}
    aliases = {name: values[0] for name, values in assigned.items()
               if len(values) == 1 and bound[name] == 1 and name not in imported}
    used = frozenset(bound) | frozenset(scopes.reads) | frozenset(imported) | frozenset(scopes.mentioned)
    return F.Names(sites, quals, scope, imports, aliases, {}, dict(scopes.reads), used, complete=True)
