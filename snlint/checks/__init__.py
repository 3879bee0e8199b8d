"""The rules: one module per code (`sn101.py` ... `sn501.py`, found by `registry.py`), and
the views and fixes several rules share (`docs/architecture.md`). Checks never parse,
import project code, read files or print: they read the linked model."""
