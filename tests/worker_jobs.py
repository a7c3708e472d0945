"""Jobs for tests/test_workers.py: functions of an importable module, as jobs must be."""

from __future__ import annotations

import os
import pickle
import signal
import time


def pid() -> int:
    return os.getpid()


def fail(message: str) -> None:
    raise ValueError(message)


def die() -> None:
    signal.raise_signal(signal.SIGKILL)


def allocate(size: int) -> int:
    return len(bytearray(size))


def sleep_forever() -> None:
    time.sleep(3600)


class Evil:
    """Unpickles as a call of ``os.system``: what a compromised worker could send."""

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("echo pwned",))


def hostile_reply() -> Evil:
    return Evil()


def roundtrip(value: object) -> bytes:
    return pickle.dumps(value)
