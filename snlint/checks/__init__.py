"""The rules: one module per code (`sn101.py` ... `sn501.py`), each its check over the
linked model and, for a fixable rule, its fix (`registry.py`); the rule's name, severity
and text live on its page in `rules/`. Checks never parse, import project code, read
files or print; they read the linked model (`snlint.link.model.LinkedModel`, with what
the graph pass built joined to it) through the verdicts both passes share (`verdicts.py`).
The other modules are views several rules share: `sn_applications.py`, `couplings.py`,
`unwrap_sn.py` and `sn_migration.py` (shared fixes), `at_node.py` (the facts a fix
decides from), `fix_data.py` (what a check hands its fix), `emit.py`, `linked.py`."""
