"""Starting a zygote process, without trio, so that a program can start one early.

A zygote spends a quarter of a second or more importing dulwich and the tree-sitter
grammars. The command line starts one (:func:`prestart`) before importing its own
heavy modules, so that both start-ups run at once on two cores; the first pool
whose preload it covers adopts it (:func:`adopt`) instead of starting another.

It may also start the program's first job before the program knows it will run it
(``first_after``, :func:`send_first`): the command line's first clone, read from its
raw arguments (issue 47). The pool that adopts the zygote hands that job's worker to
the caller whose job is the same (``WorkerPool.claim_first``), and kills it before
running any other job; a program that ends without adopting it calls
:func:`end_unadopted`.

A zygote nobody adopts still ends with its parent: the parent holds the other end of
its control socket, and the zygote exits when that end closes.
"""

from __future__ import annotations

import socket
import subprocess
import sys

# The command line imports this module before anything else of its own (``prestart``):
# no ``dataclasses`` or ``typing`` here, which cost ~15 ms before the zygote could start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

_BOOT = (
    "import sys; n = int(sys.argv[1]); sys.path[:] = sys.argv[2 : 2 + n]; "
    "from clonegate._adapters.workers.zygote import main; "
    "main(int(sys.argv[2 + n]), sys.argv[4 + n :], sys.argv[3 + n])"
)
# ``pickle.dumps(None)`` in protocol 0, which any unpickler reads: ``pickle`` (and the
# ``re`` it imports) is not loaded before the zygote starts.
NO_INIT = b"N."
# The ``python -c`` code of the zygote; tests find worker processes by it.
ZYGOTE_MARK = "clonegate._adapters.workers.zygote"


class FirstJob:
    """A job sent to a zygote before its pool exists (:func:`send_first`): its stream,
    and once sent, the job (for a caller to compare with its own), its kind of served
    worker (``None``: not served), its allowance and the directory it writes in (removed
    if nobody runs it). The pool adds the worker's pid, pidfd and cell, from the zygote.
    ``state``: "open" (sent or not), "claimed" (a caller runs it), "ended" (killed)."""

    __slots__ = ("allowance", "cell", "job", "kind", "leftover", "pid", "pidfd", "state", "stream")

    def __init__(self, stream: socket.socket) -> None:
        self.stream = stream
        self.job: object = None  # None: nothing sent (yet)
        self.kind: str | None = None
        self.allowance = 0
        self.leftover: str | None = None
        self.pid: int | None = None
        self.pidfd: int | None = None
        self.cell: int | None = None
        self.state = "open"


class StartedZygote:
    """A zygote process, its control socket, the modules it was told to preload, and
    the stream of its first job, if it was started with one."""

    __slots__ = ("control", "first", "preload", "process")

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        control: socket.socket,
        preload: tuple[str, ...],
        first: FirstJob | None = None,
    ) -> None:
        self.process = process
        self.control = control
        self.preload = preload
        self.first = first


def start(
    preload: Sequence[str],
    environment: Mapping[str, str] | None = None,
    first_after: int | None = None,
) -> StartedZygote:
    """Start a zygote that will import ``preload``, with ``environment`` (default: this
    process's); its init is still to be written to its stdin (a pickled callable, or
    ``None``), which it reads once its imports are done. ``first_after``: it forks the
    worker of a first job (``StartedZygote.first``) once that many preloads are in."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    passed = [theirs]
    first = None
    try:
        first_spec = ""
        if first_after is not None:
            mine, worker = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            first = FirstJob(mine)
            passed.append(worker)
            first_spec = f"{worker.fileno()}:{first_after}"
        # With ``site``, although its path set-up is replaced by ours: -S saved ~2 ms,
        # but would skip the .pth files whose code installs import hooks (a PEP 660
        # editable install of a dependency), and the zygote could not import it.
        # The path as arguments of their own: no ``json`` (and ``re``) to load first.
        path = [str(len(sys.path)), *sys.path]
        command = [sys.executable, "-c", _BOOT, *path, str(theirs.fileno())]
        process = subprocess.Popen(
            [*command, first_spec, *preload],
            pass_fds=[end.fileno() for end in passed],
            stdin=subprocess.PIPE,
            env=environment,
        )
    except BaseException:
        ours.close()
        if first is not None:
            first.stream.close()
        raise
    finally:
        for end in passed:
            end.close()
    return StartedZygote(process, ours, tuple(preload), first)


_prestarted: list[StartedZygote] = []


def prestart(
    preload: Sequence[str], environment: Mapping[str, str] | None, first_after: int | None = None
) -> None:
    """Start a zygote with no init now, for the first pool that will need one.

    ``environment`` is the one the pool would have given it: the command line starts
    the zygote before it has read (and removed) a token passed in the environment.
    ``first_after``: with a stream for a first job (:func:`send_first`), whose worker
    it forks once that many of ``preload`` are in.
    """
    if _prestarted:
        return
    zygote = start(preload, environment, first_after)
    assert zygote.process.stdin is not None
    # The init (None, a few bytes) fits the pipe's buffer: this never blocks.
    zygote.process.stdin.write(NO_INIT)
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


def send_first(
    job: object, payload: bytes, allowance: int, kind: str | None, leftover: str
) -> None:
    """Send the prestarted zygote's first worker ``payload`` (the pickled job, as
    ``WorkerPool.run`` sends it), with ``allowance`` and whether it is served
    (``kind``); ``job`` is what a caller compares its own with, ``leftover`` the
    directory it writes in. Small: the stream's buffer takes it without blocking."""
    from . import wire  # not before the zygote starts: it loads dataclasses

    first = _prestarted[0].first if _prestarted else None
    if first is None or first.job is not None:
        raise RuntimeError("no prestarted zygote waits for a first job")
    first.stream.sendall(wire.FIRST.pack(allowance, kind is not None) + wire.frame(payload))
    first.job, first.kind, first.allowance, first.leftover = job, kind, allowance, leftover


def drop_first() -> None:
    """No first job after all: its worker reads the stream's end and exits."""
    first = _prestarted[0].first if _prestarted else None
    if first is not None and first.job is None:
        first.state = "ended"
        first.stream.close()


def end_unadopted() -> None:
    """At a program's end: a prestarted zygote that no pool adopted, and that was sent
    a first job, is stopped and waited for (it kills and reaps its workers first, a
    few milliseconds), and the directory of that job removed. Without a first job,
    nothing is done: the zygote ends with this process anyway, and has nothing to
    remove."""
    if not _prestarted or _prestarted[0].first is None or _prestarted[0].first.job is None:
        return
    zygote = _prestarted.pop()
    close(zygote)
    try:
        zygote.process.wait(timeout=_END_SECONDS)
    except subprocess.TimeoutExpired:  # pragma: no cover  (a zygote that does not answer)
        zygote.process.kill()
        zygote.process.wait()
    import shutil  # only here: not before the zygote starts

    first = zygote.first
    assert first is not None
    assert first.leftover is not None
    first.state = "ended"
    first.stream.close()
    shutil.rmtree(first.leftover, ignore_errors=True)


# How long a zygote may take to kill its workers and exit (it reads its control
# socket once its imports are done: a fraction of a second on a busy machine).
_END_SECONDS = 10.0
