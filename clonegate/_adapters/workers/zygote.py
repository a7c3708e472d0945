"""The zygote: a warm, clean process that forks the worker processes (ADR 0003).

Started by :mod:`.pool` as ``python -c`` with the parent's ``sys.path``, never from the
caller's ``__main__``: a script without a main guard runs once, in its own process.
It imports the modules the jobs need (dulwich, tree-sitter, clonegate's worker code)
once; every worker is a fork of it, so a worker starts in about 2 ms with those
modules already loaded, and shares their pages with its siblings.

A worker runs one job, sends the reply and exits, so its memory (however high one
repository took it) goes back to the system at once. A served worker
(:mod:`.served`: clones, listings, analysis parts) waits for the next job of its
kind instead, until its stream closes, a job raises or asks for an end
(:func:`end_after_reply`), or its memory grew past :data:`RETIRE_GROWTH` (resident)
or :data:`RETIRE_ADDRESS_SPACE` (reserved). Each of its jobs starts as in a fresh
worker where it counts: with its own peak and its whole memory allowance.

Nothing outlives the parent. The zygote's control socket is its lifeline: when the
parent is gone (even killed with SIGKILL) the socket reads end-of-file, and the
zygote kills its workers and exits. A worker dies with the zygote
(``PR_SET_PDEATHSIG``; the zygote forks from its only thread, so this is reliable),
and a worker's ssh child dies with the worker in the same way (``clone_worker``).
SIGINT, SIGTERM and SIGHUP sent to the whole process group (Ctrl-C, ``docker stop``,
a closed terminal) are ignored here: the parent decides how the batch ends and stops
its workers itself.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import os
import pickle
import resource
import selectors
import signal
import socket
import sys
import threading
from typing import NamedTuple, NoReturn

from . import deadline, usage, wire

_PR_SET_PDEATHSIG = 1
# A served worker whose resident memory grew this much past its start ends after
# its reply: the next job of its kind gets a fresh fork, not a big heap.
RETIRE_GROWTH = 32 << 20
# Address space a served worker may keep reserved past its start. Reserved is not
# resident: the envelope's watchdog thread leaves glibc a 64 MiB malloc arena and
# an 8 MiB stack (72 MiB, reused by the next job's thread), which cost no memory.
RETIRE_ADDRESS_SPACE = 256 << 20
_ending = False
_job_stream: socket.socket | None = None  # a worker's stream to the parent, in a job
_sending = threading.Lock()  # a job's frames, whole: a note may come from its thread


def end_after_reply() -> None:
    """Called by a job in a served worker: end the worker once this job has replied
    (for example after a failure that may have left something behind)."""
    global _ending
    _ending = True


def ask_parent(question: object) -> object:
    """Called by a job: send ``question`` to the task that runs it in the parent and
    wait for the answer (``WorkerPool.run``'s ``on_question``). In no worker (a job
    called directly, in a test), or for a caller that takes no questions: ``None``.

    The question is read with the reply's rules (clonegate's types and plain values);
    the answer, from the parent, is trusted.
    """
    if _job_stream is None:
        return None
    _send_whole(_job_stream, wire.dump(wire.Question(question)))
    return pickle.loads(_receive(_job_stream))


def tell_parent(note: object) -> None:
    """Called by a job: send ``note`` to the task that runs it in the parent
    (``WorkerPool.run``'s ``on_note``), without waiting for anything. In no worker:
    nothing. The parent reads it with the reply's rules, and may drop it."""
    if _job_stream is not None:
        _send_whole(_job_stream, wire.dump(wire.Note(note)))


def _send_whole(stream: socket.socket, payload: bytes) -> None:
    """Send one frame to the parent, whole: under the lock (a note may come from the
    clone envelope's watchdog thread) and with SIGUSR1 held back in this thread. The
    envelope's breach signal raises in the main thread; raised inside ``sendall`` after
    a partial write, it would leave half a frame, and the parent would misread every
    frame after it. A signal held back is delivered as soon as the frame is sent."""
    with _sending:
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
        try:
            stream.sendall(wire.frame(payload))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)


def main(control_fd: int, preload: list[str], first: str = "") -> None:
    """``first``, ``"FD:N"``: the stream of the parent's first job (``spawn.start``),
    whose worker is forked once the first N entries of ``preload`` are in."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    # No cyclic collection while the preloads import: ~70 collections, ~10 ms before
    # the first clone could fork (issue 47), of objects that live as long as the zygote.
    gc.disable()
    zygote = Zygote(socket.socket(fileno=control_fd))
    first_fd, _, first_after = first.partition(":")
    after = int(first_after) if first else -1
    for index, entry in enumerate(preload):
        if index == after:
            # The first clone starts now, its modules in, while the rest (the
            # grammars, for analyses) load beside it (ADR 0003, issue 47).
            zygote.fork_first(int(first_fd))
        # "package.module" is imported; "package.module:function" is imported, then
        # the function called (a warm-up that every worker would otherwise repeat).
        name, _, function = entry.partition(":")
        module = importlib.import_module(name)
        if function:
            getattr(module, function)()
    if after >= len(preload):
        zygote.fork_first(int(first_fd))
    init = pickle.loads(sys.stdin.buffer.read())  # from the parent: trusted
    if init is not None:
        init()
    sys.stdin.close()
    os.close(0)
    os.open(os.devnull, os.O_RDONLY)  # fd 0 again, so no later file takes it
    # Objects made so far live as long as the zygote: keeping them out of the cyclic
    # GC's generations means a worker's collections do not touch (and copy) their pages.
    # No collection first: after the imports it found 6 objects to free and took ~9 ms
    # of the first result's wait.
    gc.freeze()
    gc.enable()
    zygote.serve()
    # Its workers are dead and reaped (serve's end), and nothing is left to flush or
    # close: the interpreter's teardown of dulwich and the grammars would only delay
    # the parent, which waits for this exit (about 10 ms of a run's exit).
    os._exit(0)


class Zygote:
    def __init__(self, control: socket.socket) -> None:
        self._control = control
        self._children: set[int] = set()
        self._wake_r, self._wake_w = os.pipe()
        for fd in (self._wake_r, self._wake_w):
            os.set_blocking(fd, False)

    def serve(self) -> None:
        # SIGCHLD only writes a byte to the wake-up pipe; the loop reaps.
        signal.set_wakeup_fd(self._wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        selector = selectors.DefaultSelector()
        selector.register(self._control, selectors.EVENT_READ)
        selector.register(self._wake_r, selectors.EVENT_READ)
        try:
            self._control.send(wire.READY.pack(b"R", usage.address_space()))
            self._reap()  # a first job's worker may have ended before SIGCHLD was heard
            while True:
                for key, _ in selector.select():
                    if key.fileobj is self._control:
                        request = self._control.recv(wire.FORK.size)
                        if not request:
                            return  # the parent is gone
                        self._fork(*wire.FORK.unpack(request)[1:])
                    else:
                        _drain(self._wake_r)
                        self._reap()
        except OSError:
            return  # the parent is gone mid-message
        finally:
            self._end_workers()  # whatever ends the zygote ends its workers first

    def _end_workers(self) -> None:
        for pid in self._children:
            os.kill(pid, signal.SIGKILL)
        for pid in self._children:
            os.waitpid(pid, 0)

    def _fork(self, request_id: int, allowance: int, serve: bool) -> None:
        # Out of file descriptors (EMFILE) or processes (EAGAIN) is this request's
        # failure, told to the parent; only a broken control socket ends the zygote.
        try:
            parent_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        except OSError as exc:
            self._failed(request_id, exc)
            return
        self._start(request_id, worker_end, parent_end, allowance, serve)

    def fork_first(self, stream_fd: int) -> None:
        """Fork the worker of the parent's first job, on the stream the parent made
        (it holds the other end, where it writes the job's allowance and the job:
        :data:`wire.FIRST`); told to the parent as request :data:`wire.FIRST_REQUEST`."""
        try:
            self._start(wire.FIRST_REQUEST, socket.socket(fileno=stream_fd), None, None, False)
        except OSError:  # the parent is gone already (a command that failed fast)
            self._end_workers()
            os._exit(0)

    def _start(
        self,
        request_id: int,
        worker_end: socket.socket,
        parent_end: socket.socket | None,
        allowance: int | None,
        serve: bool,
    ) -> None:
        ends = [end for end in (worker_end, parent_end) if end is not None]
        try:
            cell = deadline.Cell.create()  # the job's lease deadline, shared (deadline.py)
        except OSError as exc:
            for end in ends:
                end.close()
            self._failed(request_id, exc)
            return
        me = os.getpid()
        try:
            pid = os.fork()
        except OSError as exc:
            for end in ends:
                end.close()
            os.close(cell)
            self._failed(request_id, exc)
            return
        if pid == 0:
            if parent_end is not None:
                parent_end.close()
            self._control.close()
            for fd in (self._wake_r, self._wake_w):
                os.close(fd)
            _worker(worker_end, me, allowance, serve, cell)
        self._children.add(pid)
        worker_end.close()
        try:
            pidfd = os.pidfd_open(pid)
        except OSError as exc:
            # Without its pidfd the parent could not kill it: it goes (and is reaped).
            if parent_end is not None:
                parent_end.close()
            os.close(cell)
            os.kill(pid, signal.SIGKILL)
            self._failed(request_id, exc)
            return
        passed = [pidfd, cell] if parent_end is None else [parent_end.fileno(), pidfd, cell]
        try:
            socket.send_fds(self._control, [wire.FORKED.pack(b"W", request_id, pid)], passed)
        finally:
            if parent_end is not None:
                parent_end.close()
            os.close(pidfd)
            os.close(cell)

    def _failed(self, request_id: int, exc: OSError) -> None:
        self._control.send(wire.FORK_FAILED.pack(b"E", request_id, exc.errno or 0))

    def _reap(self) -> None:
        while self._children:
            pid, status, rusage = os.wait4(-1, os.WNOHANG)
            if pid == 0:
                return
            self._children.discard(pid)
            self._control.send(wire.EXITED.pack(b"X", pid, status, rusage.ru_maxrss))


def _worker(
    conn: socket.socket, zygote: int, allowance: int | None, serve: bool, cell_fd: int
) -> NoReturn:
    """A forked worker: one job, one reply, then exit (``serve``: the next job, until
    one of the ends in the module docstring). Never returns into the zygote's loop.
    ``allowance`` None: a first job's worker, which reads its allowance and ``serve``
    from the stream, ahead of the job (:data:`wire.FIRST`)."""
    global _job_stream
    status = 70  # EX_SOFTWARE, if anything below fails
    _job_stream = conn
    gc.enable()  # a first job's worker is forked while the zygote imports, collector off
    try:
        cell = deadline.Cell(cell_fd)
        os.close(cell_fd)
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != zygote:  # the zygote died before prctl took effect
            os._exit(status)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        usage.first_to_go()
        if allowance is None:
            allowance, serve = wire.FIRST.unpack(_exactly(conn, wire.FIRST.size))
        start = _Start(usage.resident(), usage.address_space())  # the zygote's pages this fork maps
        if allowance:
            # The hard cap: the allowance, and for a served worker the most it may keep
            # from earlier jobs (past RETIRE_ADDRESS_SPACE it is retired, see _run_job).
            limit = start.address_space + allowance + (RETIRE_ADDRESS_SPACE if serve else 0)
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        while True:
            try:
                job = _receive(conn)
            except EOFError:
                if status == 0:  # a served worker's stream closed between jobs: done
                    break
                raise
            status = 70
            # Under the deadline the parent wrote before sending the job (its thread
            # first: the job's allowance counts from the address space with it).
            with deadline.watching(cell):
                if serve:
                    _new_job(allowance)
                serving = _run_job(conn, job, start, serve)
            status = 0
            if not serving:
                break
    except BaseException:
        pass  # the parent sees the worker end without a reply
    finally:
        sys.stdout.flush()
        os._exit(status)


class _Start(NamedTuple):
    resident: int
    address_space: int


def _new_job(allowance: int) -> None:
    """Give a served worker's next job what a fresh worker's would get: its own peak
    (the kernel's high-water mark of resident memory, which ``ru_maxrss`` reads, is
    reset to the present size) and its whole allowance above the present address
    space (the soft limit; the hard one, set at the fork, bounds it)."""
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
    except OSError:
        # No reset (an old kernel, no procfs): the peak is the worker's since it
        # started, which overstates this job's, never understates it.
        pass
    if allowance:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        soft = min(hard, usage.address_space() + allowance)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _run_job(conn: socket.socket, job: bytes, start: _Start, serve: bool) -> bool:
    """Run one job and send its reply; whether this worker waits for another."""
    try:
        function, args = pickle.loads(job)
    except Exception as exc:  # e.g. a function of the caller's __main__, never imported here
        function, args = _cannot_load, (f"{type(exc).__name__}: {exc}",)
    value, error = None, None
    try:
        value = function(*args)
    except BaseException as exc:  # the parent decides what an exception means
        error = exc
    peak = usage.job_peak(start.resident)
    serving = serve and error is None and not _ending
    serving = serving and usage.resident() - start.resident < RETIRE_GROWTH
    serving = serving and usage.address_space() - start.address_space < RETIRE_ADDRESS_SPACE
    reply = wire.Reply(value, error, peak, serving)
    try:
        payload = wire.dump(reply)
    except Exception as exc:  # an exception (or value) that cannot be pickled
        message = f"{type(reply.error or exc).__name__}: {reply.error or exc}"
        # A reply too large to pickle under the memory cap is the job running out.
        failure = MemoryError if isinstance(exc, MemoryError) else RuntimeError
        payload = wire.dump(wire.Reply(error=failure(message), job_peak_bytes=peak))
        serving = False
    _send_whole(conn, payload)
    return serving


def _cannot_load(reason: str) -> None:
    raise RuntimeError(
        f"a worker cannot load this job ({reason}); jobs must be functions of importable "
        "modules: workers never import the program's __main__"
    )


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass  # empty


def _receive(conn: socket.socket) -> bytes:
    header = _exactly(conn, wire.LENGTH.size)
    return _exactly(conn, wire.LENGTH.unpack(header)[0])


def _exactly(conn: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = conn.recv(min(size - len(chunks), 1 << 20))
        if not chunk:
            raise EOFError
        chunks += chunk
    return bytes(chunks)
