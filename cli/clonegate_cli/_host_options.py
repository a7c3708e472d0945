"""`analyze`'s limits per host (issue 43): --host-limit, --adaptive, --host-rate.

Their defaults are the use case's (``UseCaseConfig``: written once there, ADR 0017).
The worker has a cluster-wide ``--host-limit`` of its own (``_cluster.py``).
"""

from __future__ import annotations

from typing import Annotated

import typer

from clonegate import Option, UseCaseConfig, with_adaptive, with_host_limit, with_host_rate

from ._run import usage_error

__all__ = [
    "AdaptiveOption",
    "HostLimitOption",
    "HostRateOption",
    "host_options",
]

_USE_CASE = UseCaseConfig()

HostLimitOption = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="Clones at once from one host (at most -j); with --adaptive, the most it "
        "goes back up to.  [default: -j]",
        show_default=False,
        metavar="K",
    ),
]
AdaptiveOption = Annotated[
    bool,
    typer.Option(
        "--adaptive/--no-adaptive",
        help="Lower a host's limit when it pushes back (429, 503 with Retry-After, resets), "
        "raise it again as its clones succeed.",
    ),
]
HostRateOption = Annotated[
    str | None,
    typer.Option(
        help="Clone attempts per host at most, spaced evenly: N/s, N/min or N/h (e.g. 30/min).",
        show_default=False,
        metavar="RATE",
    ),
]
ADAPTIVE = _USE_CASE.adaptive


def host_options(host_limit: int | None, adaptive: bool, host_rate: str | None) -> list[Option]:
    """The use case's options for these flags; a usage error (exit 2) naming the flag."""
    options = [with_adaptive(adaptive)]
    if host_limit is not None:
        options.append(with_host_limit(host_limit))
    if host_rate is not None:
        try:
            options.append(with_host_rate(host_rate))
        except ValueError as exc:
            raise usage_error(f"--host-rate: {exc}") from None
    return options
