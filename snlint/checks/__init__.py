"""The rules: one module per code (`sn101.py` ... `sn501.py`), each its check over the
linked model and, for a fixable rule, its fix: `fix_input` decides from the source facts
whether and how the fix edits the file (a typed payload), and `fix` carries that out on
the parsed file (libcst, imported only there); the rule's name, severity and text live
on its page in `rules/`.

Checks never parse, import project code, read files or print (a fix edits the file its
caller parsed). They read the linked model
(`snlint.link.model.LinkedModel`: frozen records of the layers, SN applications and calls
the link step found, with what the graph pass built for each discriminator joined to it;
`snlint.checks.linked` reads the latter), judged by the verdicts both passes share
(`verdicts.py`). They never see the interpreter that computed the model. The other
modules here are views several rules share: `sn_applications.py` (SN1xx, SN501),
`couplings.py` (SN301, SN303, SN401), `unwrap_sn.py` (the fix of SN101-SN103),
`sn_migration.py` (of SN107 and SN501), `at_node.py` (the facts a fix decides from),
`emit.py` (how a finding is made), `registry.py` (which rules exist).
"""
