"""Editing source with libcst, for the fix planners: a parsed file with positions and
resolved names (`parsed.py`), a fix as a plan of node replacements and how plans are
applied (`plan.py`), and the small syntax helpers planners share (`syntax.py`). Nothing
here knows about rules."""
