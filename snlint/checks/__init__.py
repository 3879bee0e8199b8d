"""The rules: one module per code (`sn101.py` ... `sn501.py`), each its check over the
linked project and its fix planner side by side; the rule's name, severity and text live
on its page in `rules/`.

Rules never parse, import project code, read files or print. They read the link step's
facts (`snlint.link`) and what the graph pass built for each discriminator
(`snlint.checks.linked`), judged by the verdicts both passes share (`verdicts.py`). The
other modules here are views several rules share: `sn_applications.py` (SN1xx, SN501),
`couplings.py` (SN301, SN303, SN401), `members.py` (a module's layers), `emit.py` (how a
finding is made), `registry.py` (which rules exist).
"""
