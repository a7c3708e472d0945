"""`clonegate submit`: queue a list for the cluster's workers (ADR 0015), its sources
listed here, once, each listed repository queued with its listing (ADR 0023)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import trio
import typer

from clonegate import cluster, visible
from clonegate.sources import Listed

from ._input import read_list
from ._listing import Listing, ListingFlags, listing_options
from ._redis_session import (
    RedisOption,
    RedisPasswordFileOption,
    RedisPatienceOption,
    connect,
    run_with_redis,
)
from ._run import EXIT_FAILED, EXIT_INTERRUPTED

if TYPE_CHECKING:
    from clonegate.cluster import Redis

__all__ = ["submit"]


@listing_options
def submit(
    urls: Annotated[list[str] | None, typer.Argument(show_default=False, metavar="URL")] = None,
    redis: RedisOption = None,
    redis_password_file: RedisPasswordFileOption = None,
    from_file: Annotated[
        str | None,
        typer.Option(
            "--from-file", help="Read URLs and sources from PATH, or - for stdin.", metavar="PATH"
        ),
    ] = None,
    run: Annotated[
        str | None, typer.Option(help="Add to this run instead of a new one.", metavar="ID")
    ] = None,
    redis_patience: RedisPatienceOption = cluster.Patience.DEFAULT,
    *,
    listing: ListingFlags,
) -> None:
    """Queue repositories for the workers; prints the run id first.

    One job per repository in a run (URLs are compared normalized). Credentials in
    URLs are not sent to Redis: workers use their own --token or --netrc. Sources
    (github:org/NAME...) are listed here, once, before anything is queued; each job
    carries its listing to its report. The run is complete once every job is queued; `status`
    shows one stopped half-way as incomplete (submit the list again with --run ID
    to finish it).
    """
    url = connect(redis, redis_password_file)
    try:
        entries = read_list(urls or [], from_file)
    except KeyboardInterrupt:  # Ctrl-C while a list is read from stdin
        raise typer.Exit(EXIT_INTERRUPTED) from None
    listed = Listing.of(entries, listing)
    if listing.dry_run:
        from ._dry_run import dry_run

        raise typer.Exit(dry_run(listed, None, None))
    run_id = run or cluster.RedisWorkQueue.new_run_id()
    typer.echo(run_id)  # first: a submission stopped half-way can still be named

    async def main(client: Redis[str]) -> int:
        try:
            lines = await _listed_entries(listed)
            queue = cluster.RedisWorkQueue(client, patience=cluster.Patience(redis_patience))
            _, added, duplicates = await queue.submit(lines, run_id)
        except trio.Cancelled:
            typer.echo(
                f"run {visible(run_id)}: submission stopped, the run is incomplete "
                f"(submit the list again with --run {visible(run_id)} to finish it)",
                err=True,
            )
            raise
        typer.echo(f"queued {added} jobs ({duplicates} duplicates) as run {run_id}", err=True)
        return EXIT_FAILED if listed.problems else 0

    raise typer.Exit(run_with_redis(url, main))


async def _listed_entries(listed: Listing) -> list[str | Listed]:
    """Every entry of the list, its sources listed (all of them: the jobs go to Redis in
    one submission, complete or marked incomplete); a listing's problems on stderr. A
    listed repository is queued with its listing, which its report carries."""
    if not listed.sources:
        return [str(entry) for entry in listed.entries]
    listed.say = lambda line, warning: typer.echo(line, err=True)
    async with listed.feed().open() as entries:
        return [entry async for entry in entries]
