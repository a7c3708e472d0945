"""``RedisWorkQueue``: the cluster mode's jobs and results on Redis Streams (ADR 0015).

Keys, all under the hash tag ``{clonegate}`` (one slot in a Redis Cluster):
  jobs               stream of jobs (run, index, url, key); consumer group "workers"
  runs               zset: run id -> created (server ms)
  run:ID:meta        hash: created, lines, submitted, done, status:<status> counts,
                     complete (0 while a submission is queuing jobs; absent: complete)
  run:ID:keys        set of the run's repository keys (submission deduplicates on it)
  run:ID:reported    set of the keys that have their report (one report per key)
  run:ID:results     stream of reports (index, key, worker, report JSON)
  run:ID:running     hash: key -> "worker since(ms) deliveries"
  run:ID:retries     hash: key -> "retries due(ms) reason", until the key's report
  dead               stream of dead-lettered jobs
  retry              zset: jobs put back after an infrastructure error, by when due (ms)
  alone              hash: job id -> its first delivery that ran alone on its worker
"""

from __future__ import annotations

import json
import logging
import random
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

import trio

from ..._domain.jobs import Job, Retry
from ..._domain.listed import Listed
from ..._domain.patience import Patience
from ..._domain.report_json import listed_from_json, report_from_json, to_json
from ..._domain.reports import RepositoryReport
from ..._domain.urls import parse_repo_url, redact
from .cluster_settings import CLUSTER_DEFAULTS
from .connection import Redis, redis_call
from .queue_scripts import FINISH, IDLE, RECLAIM, RENEW, RETRY, START, STATUS, SUBMIT, THRASH

__all__ = ["RedisWorkQueue", "Retrying", "RunStatus", "Running"]

logger = logging.getLogger("clonegate")

TAG = "{clonegate}"
JOBS, RUNS, DEAD, GROUP = f"{TAG}:jobs", f"{TAG}:runs", f"{TAG}:dead", "workers"
RETRY_DUE, ALONE = f"{TAG}:retry", f"{TAG}:alone"
RETRY_DELAY = (1.0, 300.0)  # seconds: the first retry's backoff, doubling up to the second
REASON_LENGTH = 300  # characters of an infrastructure error kept for `status`
SUBMIT_BATCH = 500
LONGEST_BLOCK = 5.0  # seconds a read waits for new jobs, with a client of no reply bound


@dataclass(frozen=True, slots=True)
class Running:
    key: str
    worker: str
    seconds: float  # since it started (by the Redis server's clock)
    deliveries: int


@dataclass(frozen=True, slots=True)
class Retrying:
    key: str
    retries: int  # times put back after an infrastructure error
    due: float  # seconds until it is queued again (by the Redis server's clock; <= 0: it is)
    reason: str  # the last error, redacted


@dataclass(frozen=True, slots=True)
class RunStatus:
    run: str
    lines: int  # URLs submitted, duplicates included
    submitted: int  # jobs (distinct repositories)
    done: int
    by_status: dict[str, int]
    running: tuple[Running, ...]
    complete: bool  # every job of its submissions is queued (False: one runs or died)
    finished: bool  # complete, and every job has its report
    elapsed: float  # seconds from its creation to its last report, or to now if unfinished
    # Jobs put back after infrastructure errors, and not reported since (running or not).
    retrying: tuple[Retrying, ...] = ()
    # Stretches of memory thrash on a worker while one of its jobs ran (ADR 0014).
    memory_thrash: int = 0

    @property
    def queued(self) -> int:
        return self.submitted - self.done - len(self.running)

    @property
    def waiting_to_retry(self) -> tuple[Retrying, ...]:
        """The retrying jobs that nobody runs now (queued again, or in their backoff)."""
        running = {r.key for r in self.running}
        return tuple(r for r in self.retrying if r.key not in running)


def _key(run: str, part: str) -> str:
    return f"{TAG}:run:{run}:{part}"


def _job_fields(entry: str | Listed) -> tuple[str, str, str]:
    """What a job keeps of line ``entry``, parsed once: the URL without its credentials,
    the key that deduplicates it within a run (text that is no URL: itself, twice; the
    worker's report says why it is none), and a listed repository's listing as JSON
    ('' for a URL line: ADR 0023)."""
    listing = json.dumps(to_json(entry), separators=(",", ":")) if isinstance(entry, Listed) else ""
    url = entry.clone_url if isinstance(entry, Listed) else entry
    try:
        parsed = parse_repo_url(url, allow_local=True)
    except ValueError:
        return url.strip(), url.strip(), listing
    return parsed.without_credentials, parsed.key, listing


class RedisWorkQueue:
    """Jobs and reports of the cluster mode, in Redis (see the module's key list).

    ``consumer`` names this worker in the consumer group (and in ``status``);
    ``claim_idle`` is how long a job may go unrenewed before another worker takes it.
    ``patience`` rides out Redis being unavailable (pass the client's one, shared with
    its semaphores; by default one of its own): every request here may be sent again.
    """

    def __init__(
        self,
        redis: Redis[str],
        *,
        where: str = "Redis",
        consumer: str = "",
        claim_idle: float = CLUSTER_DEFAULTS.claim_idle,
        retry_delay: tuple[float, float] = RETRY_DELAY,
        patience: Patience | None = None,
    ) -> None:
        self._redis = redis
        self.patience = patience or Patience()
        self._where = where
        self.consumer = consumer or secrets.token_hex(6)
        self.claim_idle = claim_idle
        self.retry_delay = retry_delay  # (first, longest) backoff after infrastructure errors
        # A blocking read's reply must come within the client's reply bound
        # (open_redis's reply_timeout): it blocks for at most half of it.
        bound = redis.connection_pool.connection_kwargs.get("stream_timeout")
        self._longest_block = bound / 2 if bound else LONGEST_BLOCK
        self._scripts = {
            name: redis.register_script(text)
            for name, text in (
                ("submit", SUBMIT),
                ("start", START),
                ("finish", FINISH),
                ("renew", RENEW),
                ("retry", RETRY),
                ("reclaim", RECLAIM),
                ("idle", IDLE),
                ("status", STATUS),
                ("thrash", THRASH),
            )
        }

    async def _call(self, request: Callable[[], Awaitable[Any]]) -> Any:
        """Send ``request()``, again while Redis is unavailable (patience): every
        script here is idempotent (ADR 0015), and jobs a read delivered in a reply that
        was lost stay pending, for a reclaim after ``claim_idle``."""
        return await self.patience.call(lambda: redis_call(self._where, request()))

    async def _script(self, name: str, keys: list[str], args: list[Any]) -> Any:
        return await self._call(lambda: self._scripts[name](keys=keys, args=args))

    # -- submitting and reading (the `submit`, `results` and `status` commands)

    @staticmethod
    def new_run_id() -> str:
        return secrets.token_hex(6)

    async def submit(
        self, urls: Iterable[str | Listed], run: str | None = None
    ) -> tuple[str, int, int]:
        """Queue ``urls`` as jobs of ``run`` (a new run id if None), one per repository:
        a URL naming a repository already in the run is skipped. A :class:`Listed` is
        its clone URL, its listing carried to the worker and onto its report. Credentials
        in a URL are never sent to Redis: workers use their own (--token, --netrc).
        Returns (run id, jobs added, duplicates skipped). The run is incomplete from
        before its first job to its last (a stopped submission leaves it so: ADR 0015)."""
        run = run or self.new_run_id()
        keys = [JOBS, RUNS, _key(run, "meta"), _key(run, "keys")]
        await self._script("submit", keys, [run, "0"])
        added = duplicates = 0
        batch: list[Any] = [run, ""]
        for index, url in enumerate(urls):
            batch += [index, *_job_fields(url)]
            if len(batch) > 4 * SUBMIT_BATCH:
                got = await self._script("submit", keys, batch)
                added, duplicates, batch = added + got[0], duplicates + got[1], [run, ""]
        batch[1] = "1"
        got = await self._script("submit", keys, batch)
        return run, added + got[0], duplicates + got[1]

    async def status(self, run: str) -> RunStatus | None:
        """The run's counts and who runs what, since when; None for an unknown run."""
        keys = [_key(run, part) for part in ("meta", "running", "results", "retries")]
        now, meta_flat, running_flat, last, retries_flat = await self._script("status", keys, [])
        meta = dict(zip(meta_flat[::2], meta_flat[1::2], strict=True))
        if not meta:
            return None
        running = []
        for key, value in zip(running_flat[::2], running_flat[1::2], strict=True):
            worker, since, deliveries = value.rsplit(" ", 2)
            running.append(Running(key, worker, (int(now) - int(since)) / 1000, int(deliveries)))
        submitted, done = int(meta.get("submitted", 0)), int(meta.get("done", 0))
        complete = meta.get("complete", "1") == "1"  # a run from before the flag: complete
        # Both ends by the Redis server's clock: the last report's stream id is its time.
        finished = complete and done >= submitted
        end = int(last.split("-")[0]) if finished and last else int(now)
        return RunStatus(
            run=run,
            lines=int(meta.get("lines", 0)),
            submitted=submitted,
            done=done,
            by_status={
                k.removeprefix("status:"): int(v)
                for k, v in meta.items()
                if k.startswith("status:")
            },
            running=tuple(sorted(running, key=lambda r: -r.seconds)),
            complete=complete,
            finished=finished,
            elapsed=(end - int(meta.get("created", end))) / 1000,
            retrying=tuple(
                sorted(_retrying(retries_flat, int(now)), key=lambda r: (-r.retries, r.key))
            ),
            memory_thrash=int(meta.get("memory_thrash", 0)),
        )

    async def runs(self) -> list[str]:
        """Every run id, oldest first."""
        return list(await self._call(lambda: self._redis.zrange(RUNS, 0, -1)))

    async def results(
        self,
        run: str,
        *,
        follow: bool = False,
        waiting: Callable[[RunStatus], None] | None = None,
    ) -> AsyncIterator[RepositoryReport]:
        """The run's reports in the order they were written; with ``follow``, waits for
        more until the run's submission is complete and every job has its report,
        calling ``waiting`` once, the first time it has to wait."""
        last, final = "0-0", False
        while True:
            read = partial(self._redis.xread, {_key(run, "results"): last}, count=500)
            entries = await self._call(read)
            batch = next(iter(entries.values())) if entries else ()
            for entry in batch:
                last = entry.identifier
                yield report_from_json(json.loads(entry.field_values["report"]))
            if batch:
                continue
            if final:
                return
            status = await self.status(run)
            if not follow or status is None or status.finished:
                # One more read: a report and its job's end are written together, so
                # what ended between the empty read and this status is read now.
                final = True
                continue
            if waiting is not None:
                waiting(status)
                waiting = None
            await trio.sleep(0.2)  # polling: the results stream has no "run finished" event

    # -- the worker's side (clonegate._domain.jobs.JobQueue)

    async def take(self, n: int, wait: float) -> list[Job]:
        found, *fields = await self._reclaim(claim=True)
        if found:
            return [_job(fields)]
        return await self._read(n, wait)

    async def take_new(self, n: int, wait: float) -> list[Job] | None:
        found, *_ = await self._reclaim(claim=False)
        return None if found else await self._read(n, wait)

    async def _reclaim(self, *, claim: bool) -> list[Any]:
        """Queue the due retries again, then claim (or only look for) one job idle past
        claim_idle."""
        args = [self.consumer, _ms(self.claim_idle), int(claim)]
        return list(await self._script("reclaim", [JOBS, RETRY_DUE, ALONE], args))

    async def _read(self, n: int, wait: float) -> list[Job]:
        # Always a BLOCK of 1 ms or more: Redis takes BLOCK 0 as "wait for ever" (issue 39).
        block = _ms(min(wait, self._longest_block))
        entries = await self._call(
            lambda: self._redis.xreadgroup(GROUP, self.consumer, {JOBS: ">"}, count=n, block=block)
        )
        jobs = []
        for entry in next(iter(entries.values())) if entries else ():
            f = entry.field_values
            values = [entry.identifier, 1, f["run"], f["index"], f["url"], f["key"]]
            counts = [f.get("retries", 0), f.get("deaths", 0), f.get("alone")]
            jobs.append(_job([*values, *counts, f.get("listed", "")]))
        return jobs

    async def start(self, job: Job, *, alone: bool = False) -> bool:
        keys = [JOBS, _key(job.run, "reported"), _key(job.run, "running"), ALONE]
        args = [job.id, job.key, self.consumer, job.deliveries, int(alone)]
        return self._held(job, await self._script("start", keys, args), "not started")

    async def renew(self, jobs: list[Job]) -> list[Job]:
        args: list[Any] = [self.consumer]
        for job in jobs:
            args += [job.id, job.deliveries]
        lost = await self._script("renew", [JOBS], args)
        return [jobs[int(i)] for i in lost]

    async def finish(self, job: Job, report: RepositoryReport) -> bool:
        keys = [
            JOBS,
            _key(job.run, "reported"),
            _key(job.run, "results"),
            _key(job.run, "running"),
            _key(job.run, "meta"),
            DEAD,
            ALONE,
            _key(job.run, "retries"),
        ]
        dead = "1" if report.error is not None and report.error.kind == "dead_letter" else "0"
        document = json.dumps(to_json(report))
        args = [job.id, job.key, job.index, self.consumer, report.status, document, dead]
        args.append(job.deliveries)
        return self._held(job, await self._script("finish", keys, args), "report dropped")

    async def retry(self, job: Job, reason: str) -> Retry | None:
        keys = [JOBS, _key(job.run, "running"), RETRY_DUE, ALONE, _key(job.run, "retries")]
        first, longest = self.retry_delay
        reason = " ".join(redact(reason).split())[:REASON_LENGTH]  # one line, for status
        jitter = 1 - random.random() / 2  # spreads the retries of one outage apart
        args = [job.id, job.key, self.consumer, job.deliveries, reason]
        args += [_ms(first), _ms(longest), f"{jitter:.6f}"]
        outcome = await self._script("retry", keys, args)
        if not isinstance(outcome, list):
            self._held(job, outcome, "not put back")
            return None
        return Retry(int(outcome[0]), int(outcome[1]) / 1000)

    def _held(self, job: Job, outcome: int, otherwise: str) -> bool:
        """A fenced script's outcome (1 done, 0 reported already, -1 not this worker's
        delivery) as whether it was done; logs a job another worker took over."""
        if int(outcome) < 0:
            logger.warning("job %s (%s): %s, another worker has it", job.id, job.url, otherwise)
        return int(outcome) > 0

    async def note_thrash(self, runs: list[str], stretches: int) -> None:
        if not runs:  # a script with no key has no slot in a Redis Cluster
            await trio.lowlevel.checkpoint()
            return
        await self._script("thrash", [_key(run, "meta") for run in runs], [stretches])

    async def idle(self) -> bool:
        return bool(await self._script("idle", [JOBS, RETRY_DUE], []))


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def _job(fields: list[Any]) -> Job:
    """A job from the queue's fields: id, deliveries, run, index, url, key, retries,
    deaths before this entry, died alone before ('1'), listing (JSON, '' if none)."""
    id, deliveries, run, index, url, key, retries, deaths, alone, listing = fields
    return Job(
        str(id), str(run), int(index), str(url), str(key), int(deliveries),
        int(retries), int(deaths), alone == "1", _listed(str(url), listing),
    )  # fmt: skip


def _listed(url: str, listing: object) -> Listed | None:
    """A job's listing, or None: none was queued, or what Redis holds is not one (then
    the repository still runs, from its URL, and a warning says what was lost)."""
    if not listing:
        return None
    try:
        return listed_from_json(json.loads(str(listing)))
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        logger.warning("the listing of %s in the queue is unreadable (%s): left out", url, exc)
        return None


def _retrying(flat: list[str], now: int) -> Iterable[Retrying]:
    for key, value in zip(flat[::2], flat[1::2], strict=True):
        retries, due, reason = value.split(" ", 2)
        yield Retrying(key, int(retries), (int(due) - now) / 1000, reason)
