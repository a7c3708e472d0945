"""`analyze`'s limits per host (issue 43): --host-limit, --adaptive, --host-rate.

Their defaults are the use case's (``UseCaseConfig``: written once there, ADR 0017);
their declarations are in ``_typer_options``.
The worker has a cluster-wide ``--host-limit`` of its own (``_cluster.py``).
"""

from __future__ import annotations

from clonegate import Option, UseCaseConfig, with_adaptive, with_host_limit, with_host_rate

from ._run import usage_error

__all__ = ["ADAPTIVE", "host_options"]

_USE_CASE = UseCaseConfig()

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
