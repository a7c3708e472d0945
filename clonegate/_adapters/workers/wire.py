"""What crosses between clonegate and its worker processes: length-prefixed pickles.

A job goes out as ``(function, args)``; a result comes back as a :class:`Reply`. The
parent reads a reply with :class:`ReplyUnpickler`, which builds only clonegate's own
types and plain Python values: a worker handles other people's repositories, and a
pickle that could name any callable would make a compromised worker a compromised
parent.
"""

from __future__ import annotations

import array
import importlib
import io
import pickle
import socket
import struct
from dataclasses import dataclass
from typing import Any

# A frame is its length, then the pickle.
LENGTH = struct.Struct("!Q")
# The control channel (parent <-> zygote) carries fixed messages; see zygote.py.
# b"F", request id, address-space allowance in bytes (0: none), serve (see served.py)
FORK = struct.Struct("!cQQ?")
# b"W", request id, pid; the ancillary data holds 3 fds: the worker's stream, its
# pidfd and its deadline cell (deadline.py)
FORKED = struct.Struct("!cQi")
EXITED = struct.Struct("!ciiq")  # b"X", pid, wait status, peak RSS in KiB
FORK_FAILED = struct.Struct("!cQi")  # b"E", request id, errno (EMFILE: out of descriptors)
READY = struct.Struct("!cq")  # b"R", the zygote's own address-space size in bytes
# The request id of the worker the zygote forks for the parent's first job, before its
# last preloads (spawn.start): its b"W" holds 2 fds, the pidfd and the cell, since the
# parent made the stream. On that stream the parent writes FIRST, then the job.
FIRST_REQUEST = 0
FIRST = struct.Struct("!Q?")  # address-space allowance in bytes (0: none), serve

# Modules whose classes a reply may name. Everything else fails to load.
_TRUSTED_MODULES = ("builtins", "datetime", "pathlib", "collections", "copyreg", "_codecs")
# The only functions a reply may name: what pickle's own older protocols rebuild with.
_TRUSTED_FUNCTIONS = frozenset({("copyreg", "_reconstructor"), ("_codecs", "encode")})


@dataclass(frozen=True, slots=True)
class Reply:
    """What one job gave: its value, or the exception it raised; the most resident
    memory the worker had above what it started with (what the job itself took); and
    whether the worker now waits for another job (a served worker that goes on)."""

    value: Any = None
    error: BaseException | None = None
    job_peak_bytes: int = 0
    serving: bool = False


@dataclass(frozen=True, slots=True)
class Question:
    """A running job's question to its caller (``zygote.ask_parent``): the caller
    answers with one frame, a pickle of anything, and the job goes on."""

    value: Any = None


@dataclass(frozen=True, slots=True)
class Note:
    """A running job's news for its caller (``zygote.tell_parent``): no answer, the job
    goes on at once. A job sends few (a clone's bytes received, rate-limited there)."""

    value: Any = None


@dataclass(frozen=True, slots=True)
class Named:
    """A job's function named by its module and attribute, imported where it runs.

    The parent sends such a job without importing the module that does the work (the
    zygote has preloaded it): a first result does not wait for the parent to load
    what only workers use (issue 14).
    """

    module: str
    name: str

    @property
    def __name__(self) -> str:  # named like the function it stands for (logs, tests)
        return self.name

    def __call__(self, *args: object) -> Any:
        return getattr(importlib.import_module(self.module), self.name)(*args)


class ReplyUnpickler(pickle.Unpickler):
    """Loads clonegate's types and plain values only (see the module docstring).

    A reply may name a class, never a function or another callable: pickle calls what
    it names (REDUCE), in this process. The class must be defined in an allowed module,
    not only reachable from one (``Popen`` imported into a clonegate module is
    subprocess's), and the name must be plain (a dotted one walks attributes:
    ``wire`` then ``pickle.loads``). :class:`Named` calls what it names, so it is
    refused, as are ``type`` and ``super``.
    """

    def find_class(self, module: str, name: str) -> Any:
        if "." not in name and _allowed(module):
            try:
                found = super().find_class(module, name)
            except (ImportError, AttributeError):  # a name no allowed module has
                raise pickle.UnpicklingError(f"refused: {module}.{name}") from None
            if (module, name) in _TRUSTED_FUNCTIONS:
                return found
            if (
                isinstance(found, type)
                and _allowed(found.__module__)
                and found not in (type, super, Named)
            ):
                return found
        raise pickle.UnpicklingError(f"refused: {module}.{name}")


def _allowed(module: str) -> bool:
    return module == "clonegate" or module.startswith("clonegate.") or module in _TRUSTED_MODULES


def load_reply(data: bytes) -> Reply | Question | Note:
    """A worker's frame: its job's reply, or a question or a note the job sends before it."""
    reply = ReplyUnpickler(io.BytesIO(data)).load()
    if not isinstance(reply, (Reply, Question, Note)):
        raise pickle.UnpicklingError("not a reply")
    return reply


def frame(payload: bytes) -> bytes:
    return LENGTH.pack(len(payload)) + payload


def take_frame(buffer: bytearray) -> bytes | None:
    """The first whole frame's payload in ``buffer``, removed from it; None (and
    ``buffer`` unchanged) while the frame is not whole yet."""
    if len(buffer) < LENGTH.size:
        return None
    end = LENGTH.size + LENGTH.unpack_from(buffer)[0]
    if len(buffer) < end:
        return None
    payload = bytes(buffer[LENGTH.size : end])
    del buffer[:end]
    return payload


def dump(obj: object) -> bytes:
    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


FD_SPACE = socket.CMSG_SPACE(3 * array.array("i").itemsize)  # a FORKED message's fds


def fds_of(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    fds = array.array("i")
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
    return list(fds)
