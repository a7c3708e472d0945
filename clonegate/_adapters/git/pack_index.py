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
lists every object the header announced, once. And more: a type git knows, a
delta's base at the start of an object, nothing between the last object and the
checksum; anything else is :class:`CorruptPack`.
"""

from __future__ import annotations

import binascii
import mmap
import zlib
from typing import Any, NamedTuple

from dulwich.objects import object_header
from dulwich.pack import OFS_DELTA, REF_DELTA, PackData, PackIndexer, UnpackedObject

__all__ = ["CorruptPack", "index_pack"]

# Bytes fed to zlib at a time: a bound on what one object holds while it is hashed,
# and on the copy zlib makes of the input past an object's end (``unused_data``).
_WINDOW = 64 * 1024
_WHOLE_TYPES = frozenset({1, 2, 3, 4})  # commit, tree, blob, tag
# Pages of the pack read this far behind are unmapped as the pass goes on: they stay
# in the page cache, but do not count as the worker's memory (its peak, ADR 0014).
_UNMAP_EVERY = 16 << 20

Entry = tuple[bytes, int, int]  # object id, offset, CRC32 of its packed bytes
_Whole = tuple[bytes, int, int, int]  # an entry, and the object's type


class _FirstPass(NamedTuple):
    whole: list[_Whole]
    deltas: list[UnpackedObject]
    bases: set[int]  # offsets that offset deltas are built on
    wanted: set[bytes]  # ids that reference deltas are built on
    announced: int  # objects the header announced


class CorruptPack(ValueError):
    """The pack is not what it says it is (the repository's fault: ``invalid_repository``)."""


def index_pack(path: str, object_format: Any) -> list[Entry]:
    """The index entries of the pack at ``path``, sorted by object id.

    Raises ``dulwich.pack.UnresolvedDeltas`` for a delta whose base is not in the
    pack, :class:`CorruptPack` for a pack that is not what it says.
    """
    with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        first = _first_pass(data, object_format)
    entries = {offset: (sha, offset, crc) for sha, offset, crc, _type in first.whole}
    if first.deltas:
        entries.update(_resolve(path, object_format, first))
    if len(entries) != first.announced:
        found = len(entries)
        raise CorruptPack(f"the pack announces {first.announced} objects, {found} were found")
    return sorted(entries.values())


def _first_pass(data: mmap.mmap, object_format: Any) -> _FirstPass:
    """Inflate every object once: hash the whole ones, note the deltas (and their base)."""
    if len(data) < 12 or data[:4] != b"PACK" or int.from_bytes(data[4:8], "big") not in (2, 3):
        raise CorruptPack("not a pack (version 2 or 3)")
    count = int.from_bytes(data[8:12], "big")
    hash_func, id_size = object_format.hash_func, object_format.oid_length
    whole: list[_Whole] = []
    deltas: list[UnpackedObject] = []
    bases: set[int] = set()
    wanted: set[bytes] = set()
    with memoryview(data) as view:
        # The trailing checksum is not an object's: it was verified as it arrived.
        reader = _Reader(data, view, len(data) - id_size)
        for _ in range(count):
            start = reader.pos
            byte = reader.byte()
            type_num, size, shift = (byte >> 4) & 7, byte & 15, 4
            while byte & 0x80:
                byte = reader.byte()
                size |= (byte & 0x7F) << shift
                shift += 7
            hasher = None
            if type_num == OFS_DELTA:
                byte = reader.byte()
                back = byte & 0x7F
                while byte & 0x80:
                    byte = reader.byte()
                    back = ((back + 1) << 7) | (byte & 0x7F)
                if not 12 <= start - back < start:
                    raise CorruptPack(f"the delta at {start} names a base outside the pack")
                bases.add(start - back)
                deltas.append(UnpackedObject(OFS_DELTA, delta_base=back, offset=start))
            elif type_num == REF_DELTA:
                base = reader.take(id_size)
                wanted.add(base)
                deltas.append(UnpackedObject(REF_DELTA, delta_base=base, offset=start))
            elif type_num in _WHOLE_TYPES:
                hasher = hash_func(object_header(type_num, size))
            else:
                raise CorruptPack(f"unknown object type {type_num} at {start}")
            with view[start : reader.pos] as object_header_bytes:
                crc = binascii.crc32(object_header_bytes)
            crc = reader.inflate(size, hasher, crc)
            if hasher is not None:
                whole.append((hasher.digest(), start, crc, type_num))
        if reader.pos != reader.end:
            raise CorruptPack("the pack has data after its last object")
    return _FirstPass(whole, deltas, bases, wanted, count)


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

    def take(self, size: int) -> bytes:
        if self.pos + size > self.end:
            raise CorruptPack("the pack ends inside an object header")
        self.pos += size
        return bytes(self.view[self.pos - size : self.pos])

    def inflate(self, size: int, hasher: Any, crc: int) -> int:
        """Inflate the zlib stream here, a window at a time, into ``hasher`` (if any);
        move past it; the CRC32 of the object's packed bytes."""
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
                if inflater.unconsumed_tail:
                    raise CorruptPack("an object inflates to more than its stated size")
                got += len(out)
                if hasher is not None:
                    hasher.update(out)
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


def _resolve(path: str, object_format: Any, first: _FirstPass) -> dict[int, Entry]:
    """Index entries of the deltas, from dulwich's delta-chain walk over the deltas and
    the whole objects they are built on (inflated again: their contents were not kept)."""
    starts = {offset for _sha, offset, _crc, _type in first.whole}
    starts.update(d.offset for d in first.deltas if d.offset is not None)
    if not first.bases <= starts:
        raise CorruptPack("a delta names a base in the middle of another object")
    data = PackData(path, object_format=object_format)
    try:
        walker = PackIndexer(None, object_format.hash_func, object_format=object_format)
        walker.set_pack_data(data)
        for sha, offset, _crc, type_num in first.whole:
            if offset in first.bases or sha in first.wanted:
                walker.record(UnpackedObject(type_num, offset=offset))
        for delta in first.deltas:
            walker.record(delta)
        entries = {}
        for sha, offset, crc in walker:  # UnresolvedDeltas: a base not in the pack
            if crc is None:  # never: PackIndexer computes every CRC32
                raise CorruptPack(f"no CRC32 for the object at {offset}")
            entries[offset] = (bytes(sha), offset, crc)
        return entries
    finally:
        data.close()
