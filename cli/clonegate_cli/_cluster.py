"""The cluster mode's commands: submit, worker, results, status, limit (ADR 0015)."""

from __future__ import annotations

import dataclasses
import inspect
import sys
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

import trio
import typer

# The Redis adapter (coredis: 0.2 s of imports) is reached through `clonegate.cluster`'s lazy
# attributes when a cluster command runs, never when the module is imported: `analyze`
# registers these commands too, and its first result must not wait for coredis.
import clonegate
from clonegate import RepositoryReport, cluster, visible

from ._clone_options import CloneFlags, check_verbosity
from ._cluster_hosts import AdaptiveOption, HostLimitOption, HostRateOption, host_options
from ._cluster_jobs import show_jobs
from ._output import (
    summary_line,
    summary_of,
    thrash_text,
    write_json,
    write_jsonl,
    write_table,
)
from ._redis_session import (
    RedisOption,
    RedisPasswordFileOption,
    RedisPatienceOption,
    connect,
    error,
    run_with_redis,
)
from ._run import (
    EXIT_USAGE,
    Format,
    configure_logging,
    results_stdout,
    usage_error,
)
from ._setup import help_of
from ._store_options import CACHE_SIZE, StoreFlags, with_store
from ._typer_options import (
    CacheSizeOption,
    DbOption,
    ForceOption,
    IncrementalOption,
    QuietOption,
    VerboseOption,
    clone_options,
)

if TYPE_CHECKING:
    from clonegate.cluster import Redis, RunStatus

__all__ = ["register"]

GLOBAL_LIMIT = "clones"  # the cluster limit's semaphore; per-host ones are "host:HOST"

_LEASE_HELP = help_of(cluster.ClusterSettings, "lease")
LeaseOption = Annotated[
    float,
    typer.Option(
        min=0.1,
        help=f"{_LEASE_HELP[:-1]}, if Redis holds no lease yet (as --cluster-limit).",
        metavar="S",
    ),
]
_CLUSTER = cluster.ClusterSettings()
# The use case's cluster worker's own default (its keyword, checked by a test).
_MAX_DELIVERIES: int = inspect.signature(cluster.ClusterWorker).parameters["max_deliveries"].default


@clone_options
def worker(
    ctx: typer.Context,
    redis: RedisOption = None,
    redis_password_file: RedisPasswordFileOption = None,
    redis_patience: RedisPatienceOption = cluster.Patience.DEFAULT,
    cluster_limit: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Clones at once in the whole cluster, if Redis holds no limit yet "
            "(else Redis's applies: see `clonegate limit`).",
            metavar="M",
        ),
    ] = None,
    host_limit: HostLimitOption = None,
    adaptive: AdaptiveOption = False,
    host_rate: HostRateOption = None,
    lease: LeaseOption = _CLUSTER.lease,
    claim_idle: Annotated[
        float,
        typer.Option(min=0.1, help=help_of(cluster.ClusterSettings, "claim_idle"), metavar="S"),
    ] = _CLUSTER.claim_idle,
    max_deliveries: Annotated[
        int,
        typer.Option(
            min=1,
            help="Workers lost while holding a job before it is dead-lettered (one of them "
            "must have run it alone).",
            metavar="N",
        ),
    ] = _MAX_DELIVERIES,
    exit_when_done: Annotated[
        bool, typer.Option(help="Exit once no job is queued or running anywhere.")
    ] = False,
    db: DbOption = None,
    incremental: IncrementalOption = False,
    force: ForceOption = False,
    cache_size: CacheSizeOption = CACHE_SIZE,
    *,
    clone: CloneFlags,
    verbose: VerboseOption = False,
    quiet: QuietOption = False,
) -> None:
    """Take jobs from the queue and run them, under the cluster-wide limits; each
    report goes to its run's results before the job is acknowledged.

    With --db, this worker also keeps its reports and analysis cache in its own store
    (one run per worker session): --incremental reuses what this worker found before.
    """
    url = connect(redis, redis_password_file)
    setup = clone.setup(ctx)
    check_verbosity(verbose, quiet)
    try:
        store = StoreFlags.of(db, incremental, force, cache_size)
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    configure_logging(verbose, quiet)  # escaped: messages quote what servers sent

    def say(line: str) -> None:
        if not quiet:
            typer.echo(line, err=True)

    async def main(client: Redis[str]) -> int:
        # One patience for the client: an outage is one story, whoever meets it.
        patience = cluster.Patience(redis_patience)
        stored = with_store(store, setup)
        async with trio.open_nursery() as nursery:
            limits: list[clonegate.Option] = []
            semaphore = partial(
                cluster.RedisSemaphore,
                client,
                lease=lease,
                nursery=nursery,
                patience=patience,
            )
            if cluster_limit is not None:
                limits.append(clonegate.with_global_limiter(semaphore(GLOBAL_LIMIT, cluster_limit)))
            limits += host_options(
                semaphore, client, patience, host_limit=host_limit, adaptive=adaptive,
                host_rate=host_rate, jobs=clone.jobs,
            )  # fmt: skip
            queue = cluster.RedisWorkQueue(client, claim_idle=claim_idle, patience=patience)
            async with stored.open(*limits) as use_case:
                work = cluster.ClusterWorker(queue, use_case, max_deliveries=max_deliveries)
                say(f"worker {queue.consumer}: waiting for jobs")
                totals = await work.run(exit_when_done=exit_when_done)
            say(
                f"worker {queue.consumer}: {totals.reported} reports written, "
                f"{totals.superseded} already reported, {totals.dead_lettered} dead-lettered, "
                f"{totals.retried} put back after infrastructure errors"
                + thrash_text(totals.memory_thrash)
            )
            nursery.cancel_scope.cancel()
        return 0

    raise typer.Exit(run_with_redis(url, main))


def results(
    run: Annotated[str, typer.Argument(metavar="RUN_ID")],
    redis: RedisOption = None,
    redis_password_file: RedisPasswordFileOption = None,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Wait until every job has its report.")
    ] = False,
    output_format: Annotated[
        Format, typer.Option("--format", metavar="table|json|jsonl")
    ] = Format.jsonl,
    redis_patience: RedisPatienceOption = cluster.Patience.DEFAULT,
) -> None:
    """Print a run's reports (one per job) and a summary. Exit 1 if any failed."""
    results_stdout()  # closed: nowhere to print them
    url = connect(redis, redis_password_file)

    async def main(client: Redis[str]) -> int:
        reports: list[RepositoryReport] = []
        queue = cluster.RedisWorkQueue(client, patience=cluster.Patience(redis_patience))
        if await queue.status(run) is None:
            error(f"no run {run!r} in Redis")
            return EXIT_USAGE
        async for report in queue.results(run, follow=follow, waiting=_say_waiting):
            reports.append(report)
            if output_format is Format.jsonl:
                write_jsonl(sys.stdout, report)
        found = await queue.status(run)
        if found is not None and not found.complete:
            typer.echo(
                f"clonegate: warning: run {visible(run)}: its submission did not finish, "
                "these are not all its jobs",
                err=True,
            )
        summary = summary_of(reports, found.elapsed if found else 0.0)  # by Redis's clock
        if found is not None:  # the workers' memory thrashed while they ran its jobs
            summary = dataclasses.replace(summary, memory_thrash=found.memory_thrash)
        if output_format is Format.json:
            write_json(sys.stdout, reports, summary)
        elif output_format is Format.table:
            write_table(sys.stdout, reports, summary)
        else:
            typer.echo(summary_line(summary), err=True)
        return 0 if summary.ok == summary.repositories else 1

    raise typer.Exit(run_with_redis(url, main))


def _say_waiting(found: RunStatus) -> None:
    missing = found.submitted - found.done
    typer.echo(
        f"run {visible(found.run)}: waiting for workers ({missing} of {found.submitted} jobs "
        "without a report"
        + ("" if found.complete else ", and for the submission to finish")
        + "; `clonegate status` shows who runs what)",
        err=True,
    )


def status(
    run: Annotated[str | None, typer.Argument(metavar="[RUN_ID]")] = None,
    redis: RedisOption = None,
    redis_password_file: RedisPasswordFileOption = None,
    redis_patience: RedisPatienceOption = cluster.Patience.DEFAULT,
) -> None:
    """Show runs (queued, in progress with worker and time, done, failed) and the
    cluster limit's holders and waiters."""
    url = connect(redis, redis_password_file)

    async def main(client: Redis[str]) -> int:
        patience = cluster.Patience(redis_patience)
        queue = cluster.RedisWorkQueue(client, patience=patience)
        for run_id in [run] if run else await queue.runs():
            found = await queue.status(run_id)
            if found is None:
                error(f"no run {run_id!r} in Redis")
                return EXIT_USAGE
            statuses = ", ".join(f"{k} {v}" for k, v in sorted(found.by_status.items()))
            typer.echo(
                f"run {run_id}: {found.submitted} jobs: {found.queued} queued, "
                f"{len(found.running)} in progress, {found.done} done"
                + (f" ({statuses})" if statuses else "")
                + thrash_text(found.memory_thrash)
                + ("" if found.complete else "; submission incomplete (stopped or running)")
            )
            show_jobs(found)
        await _show_limit(client, patience)
        return 0

    raise typer.Exit(run_with_redis(url, main))


async def _show_limit(client: Any, patience: cluster.Patience) -> None:
    async with trio.open_nursery() as nursery:
        stats = await cluster.RedisSemaphore(
            client, GLOBAL_LIMIT, 1, nursery=nursery, patience=patience
        ).statistics()
    if stats.limit < 0:
        if stats.held or stats.waiters:  # reset while in use
            typer.echo(f"cluster limit {stats.held}/none held (reset: the next worker sets it)")
    else:
        typer.echo(f"cluster limit {stats.held}/{stats.limit} held, lease {stats.lease:g} s")
    for holder in stats.holders:
        typer.echo(f"  holder {holder.id} weight {holder.weight}, lease {holder.lease_left:.1f} s")
    for waiter in stats.waiters:
        typer.echo(f"  waiter #{waiter.rank + 1} {waiter.id} weight {waiter.weight}")


def limit(
    new_limit: Annotated[
        int | None, typer.Argument(min=0, show_default=False, metavar="[LIMIT]")
    ] = None,
    redis: RedisOption = None,
    redis_password_file: RedisPasswordFileOption = None,
    lease: Annotated[
        float | None,
        typer.Option(
            min=0.1,
            show_default=False,
            help="Seconds a cluster permit lasts without a heartbeat (default: keep Redis's).",
            metavar="S",
        ),
    ] = None,
    host: Annotated[
        str | None, typer.Option(help="The per-host limit of HOST instead.", metavar="HOST")
    ] = None,
    reset: Annotated[
        bool,
        typer.Option(
            "--reset",
            help="Forget the limit and lease in Redis: the next worker to clone stores its "
            "own --cluster-limit (or --host-limit) and --lease.",
        ),
    ] = False,
    redis_patience: RedisPatienceOption = cluster.Patience.DEFAULT,
) -> None:
    """Show the cluster limit (or one host's), or change it for every worker, now:
    running clones finish, waiting ones start under the new limit, in order."""
    url = connect(redis, redis_password_file)
    if reset and (new_limit is not None or lease is not None):
        raise usage_error("--reset takes no LIMIT or --lease")
    name = f"host:{host}" if host else GLOBAL_LIMIT

    async def main(client: Redis[str]) -> int:
        async with trio.open_nursery() as nursery:
            semaphore = cluster.RedisSemaphore(
                client, name, new_limit or 1, nursery=nursery,
                patience=cluster.Patience(redis_patience),
            )  # fmt: skip
            if reset:
                previous, _ = await semaphore.reset()
                typer.echo(f"{visible(name)}: limit {_stored(previous)} forgotten")
            elif new_limit is not None:
                previous, _ = await semaphore.configure(new_limit, lease)
                typer.echo(
                    f"{visible(name)}: limit {_stored(previous)} -> {new_limit}, "
                    f"lease {semaphore.lease:g} s"
                )
            else:
                stats = await semaphore.statistics()
                stored = f"{stats.limit}, lease {stats.lease:g} s" if stats.limit >= 0 else "none"
                typer.echo(f"{visible(name)}: limit {stored}, {stats.held} held")
            nursery.cancel_scope.cancel()
        return 0

    raise typer.Exit(run_with_redis(url, main))


def _stored(limit: int) -> str:
    return str(limit) if limit >= 0 else "none"


def register(app: typer.Typer) -> None:
    from ._cluster_submit import submit

    for command in (submit, worker, results, status, limit):
        app.command()(command)
