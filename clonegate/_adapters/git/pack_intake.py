"""Receiving a pack: written to disk once, each whole object inflated once (ADR 0003).

dulwich's own ``fetch`` spools the pack, copies it out of the spool while checking
it, indexes it, then inflates every object a second time to find the bases a thin
pack refers to, and only then writes the index: the delta chains are walked twice,
and a full clone took 2-4x git's time. A fresh clone asks for no object it already
has, so the server sends a complete (not thin) pack; here it goes straight into a
file in the pack directory, its trailing checksum is compared with the SHA-1 of what
was received (computed as it arrived), :func:`.pack_index.index_pack` computes every
object's id from its content, and the index is written. What is skipped is only the
search for missing bases, which a complete pack has none of: a pack that does refer
to objects outside itself (an update of a kept clone, which does say what it has)
fails indexing with ``UnresolvedDeltas`` and goes through dulwich's thin-pack path.
"""

from __future__ import annotations

import math
import os
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import dulwich.client
from dulwich.errors import ChecksumMismatch
from dulwich.pack import UnresolvedDeltas

from .envelope import TransferMeter, _patched
from .pack_index import CorruptPack, index_pack

# A clone tells its parent the pack bytes it received (the display's figure, issue 44)
# once it has this many more than in its last note AND this long has passed since it:
# at most one note per 256 KiB of pack (bounded by the envelope's byte limit) and
# four a second, whatever the server sends. A transfer that stalls sends one more,
# with what came since (:meth:`ReceivedNotes.flush`): its figure is not left behind.
# A stall's note needs new bytes, a watchdog tick with none, 0.25 s since the last
# note, and a note of 256 KiB more since the last stall's: at most two per 256 KiB.
NOTE_EVERY_BYTES = 256 << 10
NOTE_EVERY_SECONDS = 0.25


class ReceivedNotes:
    """Called with the pack bytes received so far after each piece; passes them on to
    ``tell`` (``zygote.tell_parent``) rarely: see :data:`NOTE_EVERY_BYTES`. The first
    note goes out at the first 256 KiB, or at the first stall; a clone of a few KiB
    that never stalls says nothing. Notes are 0.25 s apart at least, on ``clock``."""

    def __init__(
        self, tell: Callable[[int], object], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._tell, self._clock = tell, clock
        self._told = 0  # bytes in the last note
        self._at = -math.inf  # when it was sent, on ``clock``
        self._latest = self._seen = 0  # bytes so far; as the last flush saw them
        self._after_stall = False  # the last note was a stall's
        self._lock = threading.Lock()  # flush() runs in the envelope's watchdog thread
        self.notes = 0

    def __call__(self, received: int) -> None:
        self._latest = received
        if received - self._told >= NOTE_EVERY_BYTES:
            self._send(received, stall=False)

    def flush(self) -> None:
        """Called now and then (each tick of the envelope's watchdog): once the figure
        stood still since the last call (a stall), the bytes not told yet, under the
        same 0.25 s; then no other stall note before a note of 256 KiB more, so that
        notes stay bounded by bytes too (two per 256 KiB at most)."""
        latest = self._latest
        stalled, self._seen = latest == self._seen, latest
        if stalled:
            self._send(latest, stall=True)

    def _send(self, received: int, *, stall: bool) -> None:
        with self._lock:
            now = self._clock()
            if received <= self._told or now - self._at < NOTE_EVERY_SECONDS:
                return
            if stall and self._after_stall:
                return
            self._told, self._at, self._after_stall = received, now, stall
            self.notes += 1
            self._tell(received)


def fetch_into(
    client: Any,
    path: str,
    repo: Any,
    determine_wants: Callable[..., Any],
    depth: int | None,
    meter: TransferMeter,
    need: Callable[[tuple[int, ...]], object] | None = None,
    notes: ReceivedNotes | None = None,
) -> Any:
    """``client.fetch(path, repo, ...)``, with the pack written once and indexed once.

    ``meter`` watches the transfer (and only the transfer: indexing after it is not
    a slow server) and counts every piece of pack data. ``need`` hears how much
    memory indexing will use, before it does (:func:`.pack_index.index_pack`);
    ``notes`` the pack bytes received so far, after each piece and at each tick of
    the meter's watchdog (:class:`ReceivedNotes`).
    Returns dulwich's ``FetchPackResult``.
    """
    store = repo.object_store
    # A repository with no pack yet (a fresh clone) has no base for a thin pack.
    has_objects = bool(store.packs)
    fd, incoming = tempfile.mkstemp(prefix="incoming-", suffix=".pack", dir=store.pack_dir)
    try:
        with os.fdopen(fd, "wb") as sink:
            checksum = _TrailingChecksum(store.object_format)

            def write(data: bytes) -> int:
                meter.count_pack(len(data))
                if notes is not None:
                    notes(meter.pack_bytes)
                checksum.update(data)
                return sink.write(data)

            meter.ticked = notes.flush if notes is not None else None
            with meter.watching(), _patched(_OFFSET_DELTAS):
                result = client.fetch_pack(
                    path,
                    determine_wants,
                    repo.get_graph_walker(),
                    write,
                    depth=depth,
                    ref_prefix=[b"HEAD"],
                )
        if os.path.getsize(incoming):
            checksum.verify()
            _install(store, incoming, checksum.digest, thin_allowed=has_objects, need=need)
    finally:
        if os.path.exists(incoming):
            os.unlink(incoming)
    repo.update_shallow(result.new_shallow, result.new_unshallow)
    return result


def _asking_for_offset_deltas(proto: Any, *args: Any, **kwargs: Any) -> Any:
    """dulwich's ``_handle_upload_pack_head``, with ``ofs-delta`` among the fetch
    arguments in protocol v2 (in v1 it is a capability dulwich sends already).

    dulwich 1.2 omits it in v2, and a server then sends every delta with its base
    named by id: the first pass cannot tell which chain such a delta extends, so the
    forecast of the walk must count every named base as held throughout (a 7x
    overestimate on a project's full history, issue 46). With offsets, it counts the
    chain in flight, exactly; the pack is smaller too.
    """
    version = kwargs.get("protocol_version", args[5] if len(args) > 5 else None)
    if version == 2:
        proto.write_pkt_line(b"ofs-delta\n")
    return _HANDLE_UPLOAD_PACK_HEAD(proto, *args, **kwargs)


_HANDLE_UPLOAD_PACK_HEAD = dulwich.client._handle_upload_pack_head
_OFFSET_DELTAS = {(dulwich.client, "_handle_upload_pack_head"): _asking_for_offset_deltas}


class _TrailingChecksum:
    """The pack's checksum, computed as it arrives: the hash of everything but the last
    ``oid_length`` bytes, which must equal them. One pass over data already in hand,
    instead of reading the whole pack again through a mapping."""

    def __init__(self, object_format: Any) -> None:
        self._hash = object_format.hash_func()
        self._size = object_format.oid_length
        self._tail = b""

    def update(self, data: bytes) -> None:
        data = self._tail + data
        self._hash.update(data[: -self._size])
        self._tail = data[-self._size :]

    def verify(self) -> None:
        if self._hash.digest() != self._tail:
            raise ChecksumMismatch(self._tail, self._hash.digest())

    @property
    def digest(self) -> bytes:
        """The pack's checksum (once :meth:`verify` passed)."""
        return self._tail


def _install(
    store: Any,
    incoming: str,
    checksum: bytes,
    *,
    thin_allowed: bool,
    need: Callable[[tuple[int, ...]], object] | None = None,
) -> None:
    """Index the pack at ``incoming`` and move both files into the pack directory."""
    try:
        index = index_pack(incoming, store.object_format, need)
    except UnresolvedDeltas:
        if not thin_allowed:  # the server was told we have nothing
            raise CorruptPack("a delta's base is neither in the pack nor in the clone") from None
        # A thin pack: dulwich completes it with the bases the repository has.
        with open(incoming, "rb") as pack:
            store.add_thin_pack(pack.read, None)
        return
    base = os.path.join(store.pack_dir, "pack-" + index.name())
    with open(base + ".idx", "wb") as file:
        index.write(file, checksum)
    os.rename(incoming, base + ".pack")
