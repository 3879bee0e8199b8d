"""What a rule's check hands its fix (`Finding.data`): one frozen record per kind of fact.
Here, not beside each check: the run cache reads findings back without importing the link
step the checks stand on (`snlint.engine.cache` admits this module)."""

from __future__ import annotations

from snlint.findings import record


@record
class SNCall:
    """An SN call (SN101-SN104): its API, the type and kind of the layer it wraps, whether
    an isinstance filter let the layer through, and the API of the layer's first SN (SN103)."""

    api: str | None
    layer: str | None = None
    kind: str | None = None
    from_filter: bool = False
    first_api: str | None = None


@record
class InitParam:
    """SN106: the parameter the init writes, and the classes whose layers it also reaches
    without the parametrization."""

    param: str
    shared_init: str = ""


@record
class LinkedInits:
    """SN501: the inits of `.weight` the linked program runs on layers after the SN this
    migration moves (an `apply(weights_init)` in another function included), as (node
    key, path, line); `own`: those on the layers this very call wraps (a call spelled
    `nn.utils.spectral_norm` moves alone)."""

    sites: tuple[tuple[int | None, str, int], ...] = ()
    own: tuple[tuple[int | None, str, int], ...] = ()


@record
class MissingSN:
    """SN201: the layer's type, and the SN API and callable the discriminator uses most;
    `apart`: no fix (a helper's flag turns SN off there, or code another network runs
    builds the layer)."""

    layer: str
    sn_api: str = ""
    sn_callee: str = ""
    apart: bool = False


@record
class Owners:
    """SN301's: the classes a discriminator is made of, for a site no other network builds.
    One of them named a discriminator (the local and the global discriminator inside the
    one trained on both crops) is discriminator code as the outer class is: its batch norm
    is replaced there. A generic block (`DBlock`) is not: other code may build it."""

    classes: frozenset
