"""Asking a remote for its HEAD without cloning: the worker side of ``DulwichVCS.remote_head``.

Runs in a worker process of its own, like a clone (ADR 0003, ``clone_worker``): the
same client (``_client_for``: the credential guard, the redirect rules, the CA
bundle, the ssh options), the same minimal environment, the same socket timeout and
the same transfer meter. What differs is the request: the ref listing only, as
``git ls-remote <url> HEAD`` does. dulwich's ``get_refs`` reads the advertisement
(over protocol v2, an ``ls-refs`` for the prefix ``HEAD``, so that the server lists
that one ref), then ends the conversation with a flush-pkt: no ``want`` is ever
sent, so no pack is ever asked for, and nothing is written to disk.

Exceptions never leave the worker: each becomes an ``ErrorKind`` and a message with
every secret removed.

Listings run by the hundred, so their workers are served ones (``workers.served``):
one worker lists one remote after another, each listing set up from its own job
(timeout, environment, client, credentials, meter) as in a fresh worker, and the
worker ends after any listing that failed.
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from typing import Any

from ..._domain.errors import ErrorKind
from ..._domain.urls import visible
from ..workers.zygote import end_after_reply
from .clone_job import CloneJob
from .clone_worker import _client_for, failure_of, minimal_environment
from .envelope import Breach, TransferMeter
from .worker_errors import Failure, classify, retry_after_of

__all__ = ["HeadOutcome", "head_in_worker"]

# A full object id: SHA-1 or SHA-256, as git writes them. Anything else in the
# server's place for HEAD is not a commit the caller may compare or store.
_OBJECT_ID = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class HeadOutcome:
    branch: str = ""  # the HEAD symref's branch, without refs/heads/; "" if not said
    commit: str = ""  # full hex object id
    error_kind: ErrorKind | None = None
    error_reason: str = ""
    retry_after: float | None = None  # seconds a server that pushed back asked to wait


def head_in_worker(job: CloneJob) -> HeadOutcome:
    """List ``job.url``'s HEAD; never raises.

    ``job`` is the one a clone of that URL would get (URL, credentials, timeouts,
    ssh command, CA bundle, envelope); its target, depth and ``keep`` are not used.
    """
    try:
        return _remote_head(job)
    except (Exception, Breach) as exc:  # every failure becomes data, as a clone's
        # A served worker (DulwichVCS.remote_head) serves the next listing only after
        # a clean one: a breach or an error may have left a socket or a buffer behind.
        end_after_reply()
        kind, reason = failure_of(exc, job)
        wait = retry_after_of(exc) if isinstance(exc, Exception) else None
        return HeadOutcome(error_kind=kind, error_reason=reason, retry_after=wait)


def _remote_head(job: CloneJob) -> HeadOutcome:
    # git:// and ssh have no timeout of their own in dulwich: a socket default bounds
    # the connect and every read (this process runs this one job). HTTP gets
    # urllib3's explicit timeouts from _client_for.
    socket.setdefaulttimeout(job.read_timeout)
    minimal_environment()
    client, path = _client_for(job)
    # ssh (and local) listings come through pipes and files, which only rchar sees.
    sockets = job.url.startswith(("git://", "http://", "https://"))
    meter = TransferMeter(job.envelope, pipes=not sockets)
    try:
        # The meter caps the advertisement's bytes as they arrive (a server listing
        # millions of refs is stopped at max_advertisement_bytes) and stops a listing
        # slower than the low-speed limit.
        with meter.watching():
            listing: Any = client.get_refs(os.fsencode(path), ref_prefix=[b"HEAD"])
    except Exception as exc:
        if isinstance(exc, Failure):  # classified where it happened (a 429's Retry-After)
            raise
        kind, reason = classify(
            exc, job, has_credentials=job.username is not None, mid_transfer=False
        )
        raise Failure(kind, reason) from exc
    # The count of what the client kept. Over the network that is HEAD alone (a v2
    # server lists only the prefix asked for; dulwich drops the rest of a v0
    # advertisement before returning), so there the byte cap above is what bounds a
    # huge advertisement, as in a clone. A local listing is complete, counted in full.
    meter.check_refs(len(listing.refs))
    head: bytes | None = listing.refs.get(b"HEAD")
    if not head:
        # Over protocol v2 an empty repository's HEAD is listed "unborn", without an
        # id; over v0 and locally it is not listed at all.
        raise Failure(ErrorKind.EMPTY, "the repository has no commits on its HEAD branch")
    if not _OBJECT_ID.fullmatch(head):
        raise Failure(ErrorKind.PROTOCOL, "the server listed HEAD without a valid object id")
    head_ref: bytes = listing.symrefs.get(b"HEAD", b"")
    return HeadOutcome(branch=_branch(head_ref), commit=head.decode("ascii"))


def _branch(head_ref: bytes) -> str:
    """The branch ``HEAD`` points at, as a clone would record it: "" when HEAD is
    detached or the server does not say; an invalid name is the repository's fault."""
    from dulwich.refs import Ref, check_ref_format

    if not head_ref.startswith(b"refs/heads/"):
        return ""
    if not check_ref_format(Ref(head_ref)):
        name = visible(head_ref.decode("utf-8", "replace"))[:200]
        raise Failure(
            ErrorKind.INVALID_REPOSITORY, f"the server's HEAD names an invalid branch: {name}"
        )
    return head_ref.removeprefix(b"refs/heads/").decode("utf-8", "replace")
