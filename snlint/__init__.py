"""snlint: a static auditor for spectral normalization and batch coupling in PyTorch GANs."""

__version__ = "0.1.0"


def __getattr__(name: str):
    # snlint.audit imports torch: load it only when asked for, so the source path never does.
    if name == "audit":
        from snlint.live_audit import audit

        globals()["audit"] = audit
        return audit
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
