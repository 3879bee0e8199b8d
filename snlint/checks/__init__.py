"""The rules: one module per code (`sn101.py` ... `sn501.py`), each its check over the
linked model and, for a fixable rule, whether its fix applies, read from the source facts;
the fix's planner is in `snlint.fixes` (libcst, imported only to build a fix), and the
rule's name, severity and text live on its page in `rules/`.

Rules never parse, import project code, read files or print. They read the linked model
(`snlint.link.model.LinkedModel`: frozen records of the layers, SN applications and calls
the link step found, with what the graph pass built for each discriminator joined to it;
`snlint.checks.linked` reads the latter), judged by the verdicts both passes share
(`verdicts.py`). They never see the interpreter that computed the model. The other
modules here are views several rules share: `sn_applications.py` (SN1xx, SN501),
`couplings.py` (SN301, SN303, SN401), `emit.py` (how a finding is made), `registry.py`
(which rules exist).
"""
