"""What a worker's reply may make the parent do: build clonegate's types and plain
values, and nothing else (wire.ReplyUnpickler; a worker handles hostile repositories)."""

from __future__ import annotations

import datetime
import pickle
from pathlib import PurePosixPath

import pytest

from clonegate._adapters.analysis.results import ScanResult
from clonegate._adapters.workers import wire
from clonegate._domain.inventory import Inventory

CALLED: list[object] = []


def _record(*args: object) -> None:  # what a hostile reply would like the parent to run
    CALLED.append(args)


def _reduce(module: bytes, name: bytes, argument: bytes) -> bytes:
    """A protocol-4 pickle that names ``module.name`` and calls it with one string."""
    return (
        b"\x80\x04\x8c" + bytes([len(module)]) + module
        + b"\x8c" + bytes([len(name)]) + name + b"\x93"
        + b"\x8c" + bytes([len(argument)]) + argument + b"\x85R."
    )  # fmt: skip


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("builtins", "eval"),
        ("builtins", "getattr"),
        ("builtins", "type"),
        # A dotted name walks attributes: wire's own `pickle` module, then its `loads`.
        ("clonegate._adapters.workers.wire", "pickle.loads"),
        ("clonegate._adapters.workers.wire", "importlib"),
        # Classes reachable from a clonegate module but defined elsewhere.
        ("clonegate._adapters.redis.semaphore", "Redis"),
        ("clonegate._adapters.workers.pool", "AsyncIterator"),
        ("clonegate._adapters.workers.pool", "NoSuchName"),  # no such attribute
        ("clonegate._no_such_module", "Reply"),
        ("clonegate._adapters.workers.spawn", "subprocess"),  # a module
        ("os", "system"),
    ],
)
def test_a_reply_cannot_name_a_function_or_a_foreign_class(module: str, name: str) -> None:
    payload = _reduce(module.encode(), name.encode(), b"x")
    with pytest.raises(pickle.UnpicklingError, match="refused"):
        wire.load_reply(payload)


def test_a_reply_cannot_call_through_named() -> None:
    # Named calls what it names: a reply that builds one and calls it (REDUCE) would
    # run any function of any module in the parent.
    named = wire.Named(__name__, "_record")
    payload = pickle.dumps(wire.Reply(value=named), protocol=pickle.HIGHEST_PROTOCOL)
    with pytest.raises(pickle.UnpicklingError, match="refused"):
        wire.load_reply(payload)
    assert CALLED == []


def test_what_workers_send_back_still_loads() -> None:
    result = ScanResult(Inventory((), ()), 3, 10, {"python": 2}, parsed=1)
    values = [
        result,
        OSError(2, "gone"),
        ValueError("bad"),
        PurePosixPath("/tmp/x"),
        datetime.datetime(2026, 11, 22, tzinfo=datetime.UTC),
        {"a": [1, 2.5, None, b"x", (True,)]},
    ]
    for value in values:
        reply = wire.Reply(value=value, job_peak_bytes=5, serving=True)
        loaded = wire.load_reply(wire.dump(reply))
        assert isinstance(loaded, wire.Reply)
        assert type(loaded.value) is type(value)
        assert str(loaded.value) == str(value)
        assert loaded.job_peak_bytes == 5
        assert loaded.serving
