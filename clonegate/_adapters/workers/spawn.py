"""Starting a zygote process, without trio, so that a program can start one early.

A zygote spends a quarter of a second or more importing dulwich and the tree-sitter
grammars. The command line starts one (:func:`prestart`) before importing its own
heavy modules, so that both start-ups run at once on two cores; the first pool
whose preload it covers adopts it (:func:`adopt`) instead of starting another.

A zygote nobody adopts still ends with its parent: the parent holds the other end of
its control socket, and the zygote exits when that end closes.
"""

from __future__ import annotations

import json
import pickle
import socket
import subprocess
import sys

# The command line imports this module before anything else of its own (``prestart``):
# no ``dataclasses`` or ``typing`` here, which cost ~15 ms before the zygote could start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

_BOOT = (
    "import sys, json; sys.path[:] = json.loads(sys.argv[1]); "
    "from clonegate._adapters.workers.zygote import main; "
    "main(int(sys.argv[2]), sys.argv[3:])"
)
# The ``python -c`` code of the zygote; tests find worker processes by it.
ZYGOTE_MARK = "clonegate._adapters.workers.zygote"


class StartedZygote:
    """A zygote process, its control socket, and the modules it was told to preload."""

    __slots__ = ("control", "preload", "process")

    def __init__(
        self, process: subprocess.Popen[bytes], control: socket.socket, preload: tuple[str, ...]
    ) -> None:
        self.process = process
        self.control = control
        self.preload = preload


def start(preload: Sequence[str], environment: Mapping[str, str] | None = None) -> StartedZygote:
    """Start a zygote that will import ``preload``, with ``environment`` (default: this
    process's); its init is still to be written to its stdin (a pickled callable, or
    ``None``), which it reads once its imports are done."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        # With ``site``, although its path set-up is replaced by ours: -S saved ~2 ms,
        # but would skip the .pth files whose code installs import hooks (a PEP 660
        # editable install of a dependency), and the zygote could not import it.
        command = [sys.executable, "-c", _BOOT, json.dumps(sys.path), str(theirs.fileno())]
        process = subprocess.Popen(
            [*command, *preload], pass_fds=[theirs.fileno()], stdin=subprocess.PIPE, env=environment
        )
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    return StartedZygote(process, ours, tuple(preload))


_prestarted: list[StartedZygote] = []


def prestart(preload: Sequence[str], environment: Mapping[str, str] | None) -> None:
    """Start a zygote with no init now, for the first pool that will need one.

    ``environment`` is the one the pool would have given it: the command line starts
    the zygote before it has read (and removed) a token passed in the environment.
    """
    if _prestarted:
        return
    zygote = start(preload, environment)
    assert zygote.process.stdin is not None
    # The init (None, a few bytes) fits the pipe's buffer: this never blocks.
    zygote.process.stdin.write(pickle.dumps(None))
    zygote.process.stdin.close()
    _prestarted.append(zygote)


def adopt(preload: Sequence[str]) -> StartedZygote | None:
    """The prestarted zygote, if there is one and it imports everything in ``preload``."""
    if _prestarted and set(preload) <= set(_prestarted[0].preload):
        return _prestarted.pop()
    return None


def close(zygote: StartedZygote) -> None:
    """Close the parent's end of the control socket: the zygote kills its workers and exits."""
    zygote.control.close()
    if zygote.process.stdin is not None:
        zygote.process.stdin.close()
