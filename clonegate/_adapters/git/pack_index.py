"""Indexing a received pack with each whole object inflated once (ADR 0003).

dulwich's ``PackIndexer`` walks a pack twice: a first pass inflates every object to
find where the next one starts, a second inflates every object again to hash it,
holding each one whole (a pack with a 96 MiB data file took 170 MiB). Here
the first pass hashes the whole (non-delta) objects as they are inflated, a window
at a time, and keeps none of them; only the deltas and the objects they are built
on go through dulwich's delta-chain walk. A shallow clone is nearly all whole
objects, so its pack is inflated about once instead of twice, and a large file
that is no delta's base never sits in memory.

Every check of the walk is kept: each object inflates to exactly its stated size,
its id is the hash of what it inflates to, every delta resolves within the pack
(``UnresolvedDeltas`` otherwise: a thin pack, for the caller), and the index
lists as many objects as the header announced. And more: a type git knows, a size
within 64 bits, a delta's base at the start of an object, nothing between the last
object and the checksum. What the first pass refuses is :class:`CorruptPack`; the
delta walk raises dulwich's own errors (``ApplyDeltaError``); the worker reports
both as ``invalid_repository``.
"""

from __future__ import annotations

import array
import binascii
import bisect
import hashlib
import mmap
import struct
import sys
import zlib
from collections.abc import Callable, Iterator
from typing import IO, Any, NamedTuple, overload

from dulwich.objects import object_header
from dulwich.pack import OFS_DELTA, REF_DELTA, PackData, PackIndexer, UnpackedObject

from . import pack_forecast

__all__ = ["CorruptPack", "PackIndex", "index_pack"]

# Bytes fed to zlib at a time: a bound on what one object holds while it is hashed,
# and on the copy zlib makes of the input past an object's end (``unused_data``).
_WINDOW = 64 * 1024
_WHOLE_TYPES = frozenset({1, 2, 3, 4})  # commit, tree, blob, tag
# Pages of the pack read this far behind are unmapped as the pass goes on: they stay
# in the page cache, but do not count as the worker's memory (its peak, ADR 0014).
_UNMAP_EVERY = pack_forecast.UNMAP_EVERY

# Each object indexed is one bytes record: its id, then these (a tuple per object
# took 33 MiB for a 111,000-object pack, the records take 8).
_RECORD = struct.Struct(">QIB")  # offset, CRC32 of its packed bytes, type (whole ones)
# A delta's data starts with its base's size and its result's, two varints of at
# most 10 bytes each: the first pass keeps that much of each delta.
_DELTA_HEAD = 20


class _FirstPass(NamedTuple):
    whole: list[bytes]  # records
    deltas: list[UnpackedObject]
    bases: set[int]  # offsets that offset deltas are built on
    wanted: set[bytes]  # ids that reference deltas are built on
    announced: int  # objects the header announced
    sizes: pack_forecast.DeltaSizes


class CorruptPack(ValueError):
    """The pack is not what it says it is (the repository's fault: ``invalid_repository``)."""


class PackIndex:
    """What a pack's ``.idx`` holds: each object's id, offset and CRC32, by id."""

    def __init__(self, records: list[bytes], id_size: int) -> None:
        records.sort()  # by id (then offset: an object packed twice is listed twice)
        self._records = records
        self._id_size = id_size

    def entries(self) -> Iterator[tuple[bytes, int, int]]:
        """(id, offset, CRC32) of each object, by id: what dulwich's indexer yields."""
        size = self._id_size
        for record in self._records:
            offset, crc, _type = _RECORD.unpack_from(record, size)
            yield record[:size], offset, crc

    def name(self) -> str:
        """The pack's name, as dulwich makes it: the SHA-1 of the sorted ids (git now
        names a pack after its checksum; either is a valid name)."""
        size, hasher = self._id_size, hashlib.sha1()
        for record in self._records:
            hasher.update(record[:size])
        return hasher.hexdigest()

    def write(self, file: IO[bytes], pack_checksum: bytes) -> None:
        """Write the index, version 2, as ``git index-pack`` does: a table at a time,
        each built in one buffer (no object per entry), hashed as it is written."""
        size, records = self._id_size, self._records
        hasher = hashlib.sha1() if len(pack_checksum) == 20 else hashlib.sha256()

        def put(block: bytes | bytearray | array.array[int]) -> None:
            hasher.update(block)
            file.write(block)

        put(b"\377tOc" + struct.pack(">L", 2))
        # Objects whose id starts with a byte at most i, for each i.
        fanout = [bisect.bisect_left(records, bytes([i + 1])) for i in range(255)]
        put(struct.pack(">256L", *fanout, len(records)))
        for start, end in ((0, size), (size + 8, size + 12)):  # the ids, then the CRC32s
            column = bytearray()
            for record in records:
                column += record[start:end]
            put(column)
        offsets, large = array.array("I"), array.array("Q")  # 4 and 8 bytes
        for record in records:
            (offset,) = struct.unpack_from(">Q", record, size)
            if offset < 1 << 31:
                offsets.append(offset)
            else:
                offsets.append(1 << 31 | len(large))
                large.append(offset)
        for table in (offsets, large):
            if sys.byteorder == "little":
                table.byteswap()  # network order, as git writes it
            put(table)
        put(pack_checksum)
        file.write(hasher.digest())


def index_pack(
    path: str, object_format: Any, need: Callable[[tuple[int, ...]], object] | None = None
) -> PackIndex:
    """The index of the pack at ``path``.

    ``need``, if given, is told how many bytes of memory the indexing will use in
    all from then on (the caller's clone included), and how many of them are the
    pack's pages the walk maps (reclaimable), as ``(nbytes, pages)``, or ``(nbytes,
    pages, True)`` for a question that may be refused (a false answer). A memory
    budget reserves them (ADR 0014); it may block until they are. Before the first
    pass, refusably, what that pass needs if few of the objects are deltas
    (``pack_forecast.deltas_allowed``: the pack's header says how many objects, not
    how many are deltas); refused (its host's packs need more), the bound of the
    whole indexing instead, then the pass. A pass that meets more deltas asks for
    that bound, refusably (its records are in what it holds); refused, it drops
    what it counted, waits for the bound and starts again: it never waits with
    records its reservation does not hold. After the pass, what the walk needs, or
    the pass's own figure without deltas.

    Raises ``dulwich.pack.UnresolvedDeltas`` for a delta whose base is not in the
    pack, :class:`CorruptPack` for a pack that is not what it says.
    """
    with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        announced, pack_bytes = int.from_bytes(data[8:12], "big"), len(data)
        if need is None:
            first = _first_pass(data, object_format)
        else:
            first = _asked_pass(data, object_format, need)
    records = first.whole
    first_pass = pack_forecast.first_pass(announced, pack_bytes)
    if need is not None:
        walk = first.sizes.walk(pack_bytes)
        pages = pack_bytes if walk else 0  # the walk maps the whole pack
        need((first_pass + first.sizes.recorded() + walk, pages))
    if first.deltas:
        records.extend(_resolve(path, object_format, first))
    if len(records) != first.announced:
        found = len(records)
        raise CorruptPack(f"the pack announces {first.announced} objects, {found} were found")
    return PackIndex(records, object_format.oid_length)


def _asked_pass(
    data: mmap.mmap, object_format: Any, need: Callable[[tuple[int, ...]], object]
) -> _FirstPass:
    """The first pass, having asked ``need`` for its memory (see :func:`index_pack`)."""
    announced, pack_bytes = int.from_bytes(data[8:12], "big"), len(data)
    bound = (pack_forecast.indexing(announced, pack_bytes), pack_bytes)
    first = None
    if need((pack_forecast.first_pass_ask(announced, pack_bytes), 0, True)):
        allowed = pack_forecast.deltas_allowed(announced, pack_bytes)
        first = _first_pass(data, object_format, allowed, lambda: bool(need((*bound, True))))
    if first is None:  # its bound first, or refused past its records (dropped by now)
        need(bound)
        first = _first_pass(data, object_format)
    return first


@overload
def _first_pass(data: mmap.mmap, object_format: Any) -> _FirstPass: ...
@overload
def _first_pass(
    data: mmap.mmap, object_format: Any, allowed: int, more: Callable[[], bool]
) -> _FirstPass | None: ...
def _first_pass(
    data: mmap.mmap,
    object_format: Any,
    allowed: int | None = None,
    more: Callable[[], bool] | None = None,
) -> _FirstPass | None:
    """Inflate every object once: hash the whole ones, note the deltas (and their base).

    Past ``allowed`` deltas, ``more()`` says whether the pass may go on; ``None`` if it
    may not (what it counted is dropped)."""
    if len(data) < 12 or data[:4] != b"PACK" or int.from_bytes(data[4:8], "big") not in (2, 3):
        raise CorruptPack("not a pack (version 2 or 3)")
    count = int.from_bytes(data[8:12], "big")
    hash_func, id_size = object_format.hash_func, object_format.oid_length
    whole: list[bytes] = []
    deltas: list[UnpackedObject] = []
    wanted: set[bytes] = set()
    sizes = pack_forecast.DeltaSizes()
    with memoryview(data) as view:
        # The trailing checksum is not an object's: it was verified as it arrived.
        reader = _Reader(data, view, len(data) - id_size)
        for _ in range(count):
            start = reader.pos
            type_num, size = reader.object_header()
            hasher, head = None, None
            base: int | bytes = b""
            if type_num == OFS_DELTA:
                back = reader.offset_back(start)
                head, base = bytearray(), start - back
                deltas.append(UnpackedObject(OFS_DELTA, delta_base=back, offset=start))
            elif type_num == REF_DELTA:
                base = reader.take(id_size)
                wanted.add(base)
                head = bytearray()
                deltas.append(UnpackedObject(REF_DELTA, delta_base=base, offset=start))
            elif type_num in _WHOLE_TYPES:
                hasher = hash_func(object_header(type_num, size))
            else:
                raise CorruptPack(f"an object of unknown type {type_num}")
            with view[start : reader.pos] as object_header_bytes:
                crc = binascii.crc32(object_header_bytes)
            crc = reader.inflate(size, hasher, crc, head)
            if hasher is not None:
                whole.append(hasher.digest() + _RECORD.pack(start, crc, type_num))
            elif head is not None:
                sizes.add(start, base, size, head)
                if more is not None and allowed is not None and sizes.count > allowed:
                    if not more():
                        return None
                    more = None  # the whole bound is held: no other question
        if reader.pos != reader.end:
            raise CorruptPack("the pack has data after its last object")
    return _FirstPass(whole, deltas, sizes.bases, wanted, count, sizes)


class _Reader:
    """A position in the mapped pack, which never goes past ``end``."""

    def __init__(self, data: mmap.mmap, view: memoryview, end: int) -> None:
        self.data, self.view, self.end = data, view, end
        self.pos = 12
        self._unmapped = 0  # pages before this are no longer mapped

    def byte(self) -> int:
        if self.pos >= self.end:
            raise CorruptPack("the pack ends inside an object header")
        self.pos += 1
        return self.data[self.pos - 1]

    def object_header(self) -> tuple[int, int]:
        """An object's type and inflated size, from its variable-length header."""
        byte = self.byte()
        type_num, size, shift = (byte >> 4) & 7, byte & 15, 4
        while byte & 0x80:
            if shift >= 64:  # as git: a size past 64 bits is no size
                raise CorruptPack("an object header states an impossible size")
            byte = self.byte()
            size |= (byte & 0x7F) << shift
            shift += 7
        return type_num, size

    def offset_back(self, start: int) -> int:
        """How far before ``start`` (the delta's own offset) an offset delta's base is."""
        byte = self.byte()
        back = byte & 0x7F
        while byte & 0x80 and back < start:  # past the pack's start: stop reading
            byte = self.byte()
            back = ((back + 1) << 7) | (byte & 0x7F)
        if not 12 <= start - back < start:
            raise CorruptPack("an offset delta names a base outside the pack")
        return back

    def take(self, size: int) -> bytes:
        if self.pos + size > self.end:
            raise CorruptPack("the pack ends inside an object header")
        self.pos += size
        return bytes(self.view[self.pos - size : self.pos])

    def inflate(self, size: int, hasher: Any, crc: int, head: bytearray | None = None) -> int:
        """Inflate the zlib stream here, a window at a time, into ``hasher`` (if any)
        and its first bytes into ``head`` (if any); move past it; the CRC32 of the
        object's packed bytes."""
        inflater = zlib.decompressobj()
        got = 0
        # A small object's stream is read in one window of about its size.
        span = min(_WINDOW, size + 64)
        while not inflater.eof:
            # Each window is released before the next, and on the way out of an error:
            # the mapping can only be closed once no view of it is left.
            with self.view[self.pos : min(self.end, self.pos + span)] as window:
                if not window:
                    raise CorruptPack("the pack ends inside an object")
                # One byte more than is left, so that an object larger than it says shows.
                try:
                    out = inflater.decompress(window, size - got + 1)
                except zlib.error as exc:
                    raise CorruptPack(f"an object's compressed data is invalid ({exc})") from None
                got += len(out)
                # Checked on what came out, not only on what zlib kept back: a window
                # may end just as the one byte too many did.
                if got > size or inflater.unconsumed_tail:
                    raise CorruptPack("an object inflates to more than its stated size")
                if hasher is not None:
                    hasher.update(out)
                elif head is not None and len(head) < _DELTA_HEAD:
                    head += out[: _DELTA_HEAD - len(head)]
                used = len(window) - len(inflater.unused_data)
                with window[:used] as packed:
                    crc = binascii.crc32(packed, crc)
            self.pos += used
            span = _WINDOW
            if self.pos - self._unmapped >= _UNMAP_EVERY:
                done = self.pos - self.pos % mmap.PAGESIZE
                self.data.madvise(mmap.MADV_DONTNEED, self._unmapped, done - self._unmapped)
                self._unmapped = done
        if got != size:
            raise CorruptPack("an object inflates to less than its stated size")
        return crc & 0xFFFFFFFF


def _resolve(path: str, object_format: Any, first: _FirstPass) -> list[bytes]:
    """Records of the deltas, from dulwich's delta-chain walk over the deltas and the
    whole objects they are built on (inflated again: their contents were not kept)."""
    size = object_format.oid_length
    whole = {_RECORD.unpack_from(r, size)[0]: r for r in first.whole}  # by offset
    if not first.bases <= whole.keys() | {d.offset for d in first.deltas}:
        raise CorruptPack("a delta names a base in the middle of another object")
    walked_bases = set()
    data = PackData(path, object_format=object_format)
    try:
        walker = PackIndexer(None, object_format.hash_func, object_format=object_format)
        walker.set_pack_data(data)
        for offset, record in whole.items():
            if offset in first.bases or record[:size] in first.wanted:
                walked_bases.add(offset)
                walker.record(UnpackedObject(record[-1], offset=offset))
        del whole
        for delta in first.deltas:
            walker.record(delta)
        records = []
        for sha, offset, crc in walker:  # UnresolvedDeltas: a base not in the pack
            if offset in walked_bases:
                continue  # a whole object: recorded by the first pass
            if crc is None:  # never: PackIndexer computes every CRC32
                raise CorruptPack(f"no CRC32 for the object at {offset}")
            records.append(bytes(sha) + _RECORD.pack(offset, crc, 0))
        return records
    finally:
        data.close()
