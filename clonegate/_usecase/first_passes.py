"""Which hosts' packs need their whole bound in their first pass, learned in a run
(ADR 0014, "A first pass asks for its records")."""

from __future__ import annotations

__all__ = ["FirstPasses"]


class FirstPasses:
    """A first pass asks for its records and a few deltas first, and for the bound of
    the whole indexing only past them; where memory is short that second question is
    refused, and the pass is done again from the start. A host whose last pack went
    past them is *dense*: its next clones ask for their bound first (what their first
    question's refusal tells them), but for one clone in :attr:`PROBE_EVERY`, which
    asks for its records and says again what the host's packs are."""

    # A delta-heavy history went a quarter of its pass past its records before its
    # bound was refused (issue 46): probing one clone in four costs a sixteenth of a
    # pass per clone at most, and finds a host whose packs changed within four clones.
    PROBE_EVERY = 4

    def __init__(self) -> None:
        self._dense: dict[str, int] = {}  # dense host -> clones told since its probe

    def bound_first(self, host: str) -> bool:
        """Whether the next clone of ``host`` asks for its bound first; counted."""
        told = self._dense.get(host)
        if told is None:
            return False
        if told + 1 >= self.PROBE_EVERY:
            self._dense[host] = 0
            return False  # the probe
        self._dense[host] = told + 1
        return True

    def learned(self, host: str, *, dense: bool) -> None:
        """A first pass of ``host`` asked only for its records (``dense`` False), or
        went past them."""
        if dense:
            self._dense.setdefault(host, 0)
        else:
            self._dense.pop(host, None)
