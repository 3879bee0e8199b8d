"""Editing source with libcst, for the rules' fixes: a parsed file whose nodes are found by
the index the source pass recorded (`parsed.py`), what its names mean as the source pass
and the link step resolved them (`names.py`), a fix as a plan of node replacements and how
plans are applied (`plan.py`), and the small syntax helpers the fixes share (`syntax.py`).
Nothing here knows about rules, and nothing here resolves a name."""
