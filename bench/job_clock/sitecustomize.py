"""Per-process CPU of a clonegate run, for bench_batch_cpu.py only (never installed).

Put on ``PYTHONPATH`` with ``CLONEGATE_JOB_CLOCK=FILE``: every Python process imports
``sitecustomize`` at start; in the zygote (told by its preload arguments) it wraps the
job runner and the serving loop, so that each worker writes, per job, the CPU it had
used before the job (its start since the fork) and the job's own, and the zygote its own
CPU at its end. Lines are appended to FILE (O_APPEND: whole lines from every process).
"""

import os
import sys

_LOG = os.environ.get("CLONEGATE_JOB_CLOCK")


def _cpu() -> float:
    times = os.times()
    return times.user + times.system


def _write(line: str) -> None:
    assert _LOG is not None
    fd = os.open(_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def _install() -> None:
    import pickle

    from clonegate._adapters.workers import zygote

    run_job, serve = zygote._run_job, zygote.Zygote.serve
    started = _cpu()  # the zygote's CPU before its preloads

    def timed_job(conn, job, start, serving):  # type: ignore[no-untyped-def]
        try:
            function, _args = pickle.loads(job)
            name = getattr(function, "__name__", None) or type(function).__name__
        except Exception:
            name = "?"
        before = _cpu()
        try:
            return run_job(conn, job, start, serving)
        finally:
            _write(f"job {os.getpid()} {name} {before:.4f} {_cpu() - before:.4f}")

    def timed_serve(self):  # type: ignore[no-untyped-def]
        ready = _cpu()
        try:
            return serve(self)
        finally:
            times = os.times()
            workers = times.children_user + times.children_system
            _write(f"zygote {os.getpid()} {started:.4f} {ready:.4f} {_cpu():.4f} {workers:.4f}")

    setattr(zygote, "_run_job", timed_job)  # noqa: B010 (mypy: no method assignment)
    setattr(zygote.Zygote, "serve", timed_serve)  # noqa: B010


if _LOG and "clonegate._adapters.analysis.scan" in sys.argv[3:]:
    _install()
