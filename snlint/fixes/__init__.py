"""How each rule's findings are patched: libcst planners, imported only when a fix is built.

`<name>.py` here is the planner of the rule module `snlint/checks/<name>.py`:
`fix(finding, parsed, config)` returning a plan (`snlint.edit.plan.Plan`) or None. The
rules and their `fixable` predicates stay free of libcst, so a plain lint never imports
it; `snlint.checks.registry.fixers` finds the planners by their module's name.
"""
