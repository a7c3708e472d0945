"""The transfer meter's own set-up and tear-down, in this process (ADR 0003).

A clone worker serves one job after another: whatever the meter installs for a
clone (socket and dulwich hooks, its SIGUSR1 handler) must be gone after it, however
the clone ended, or the next clone counts into this one's meter.
"""

from __future__ import annotations

import signal
import socket
from typing import Any

import dulwich.client
import dulwich.protocol
import pytest
import urllib3.response

from clonegate._adapters.git.envelope import Breach, Envelope, TransferMeter
from clonegate._domain.errors import ErrorKind


def _installed() -> tuple[Any, ...]:
    return (
        signal.getsignal(signal.SIGUSR1),
        socket.socket.recv,
        socket.socket.recv_into,
        dulwich.client._read_side_band64k_data,
        dulwich.protocol.Protocol.read_pkt_line,
        urllib3.response.HTTPResponse.read,
    )


def test_a_breach_signalled_as_the_transfer_ends_still_uninstalls_everything(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = _installed()
    meter = TransferMeter(Envelope())

    def watch_until_stopped(main: int) -> None:
        # The watchdog finds a breach just as the transfer ends: its signal reaches
        # the main thread while the meter tears down.
        meter._stop.wait()
        meter._pending = Breach(ErrorKind.TOO_SLOW, "found as the transfer ended")
        signal.pthread_kill(main, signal.SIGUSR1)

    monkeypatch.setattr(meter, "_watch", watch_until_stopped)
    with pytest.raises(Breach) as raised, meter.watching():
        pass
    assert raised.value.reason == "found as the transfer ended"  # still this clone's
    assert _installed() == before
