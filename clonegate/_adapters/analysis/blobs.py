"""Reading blobs for the scan, with their size known before any byte is inflated.

A repository can hold a 1 GiB blob of zeros in a 1 MB pack: reading it to learn
that it is too big took a worker to 2 GiB. Every object in a pack starts with its
size in a header (for a delta, the size of the object it makes is the second
number at the start of the delta), so the reader looks there first and refuses
anything over the limit without inflating it (issue 14).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ..._domain.sizes import format_size

if TYPE_CHECKING:  # dulwich is imported in the worker processes only
    from dulwich.object_store import BaseObjectStore
    from dulwich.objects import ObjectID
    from dulwich.pack import Pack

__all__ = ["BlobTooLarge", "blob_reader"]

BLOB = 3  # git's object type numbers
OFS_DELTA = 6
REF_DELTA = 7
_DELTA_HEAD_BYTES = 256  # compressed bytes that always hold a delta's two size numbers


class BlobTooLarge(ValueError):
    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{size} bytes, larger than the {format_size(limit)} file limit: skipped")
        self.size = size


def blob_reader(store: BaseObjectStore, limit: int) -> Callable[[bytes], bytes]:
    """``read(hex_sha)``: the blob's content; :class:`BlobTooLarge` before reading one
    over ``limit`` bytes, ``ValueError`` for an object that is not a blob.

    Packs are asked directly, first: a fresh clone is one pack, and the store's own
    lookup hashes every object again, which the clone already did when it indexed it.
    """
    packs: list[Pack] = list(getattr(store, "packs", ()))

    def read(sha: bytes) -> bytes:
        for pack in packs:
            try:
                offset = pack.index.object_offset(cast("ObjectID", sha))
            except KeyError:
                continue
            size = size_at(pack, offset)
            if size is not None and size > limit:
                raise BlobTooLarge(size, limit)
            kind, data = pack.get_raw(cast("ObjectID", sha))
            if kind != BLOB:
                raise ValueError(f"object {sha.decode()} is not a blob")
            return data
        raw = store.get_raw(cast("ObjectID", sha))  # a loose object: its header is read
        if raw[0] != BLOB:
            raise ValueError(f"object {sha.decode()} is not a blob")
        if len(raw[1]) > limit:
            raise BlobTooLarge(len(raw[1]), limit)
        return raw[1]

    return read


def size_at(pack: Pack, offset: int) -> int | None:
    """The size of the object at ``offset`` once inflated and, for a delta, applied;
    None when the pack's bytes cannot be read that way (the caller reads the object)."""
    buffer: Any = getattr(pack.data, "_buffer", None)
    if buffer is None:
        return None
    data = buffer()
    try:
        type_num, size, at = _varint_header(data, offset)
        if type_num not in (OFS_DELTA, REF_DELTA):
            return size
        if type_num == OFS_DELTA:
            while data[at] & 0x80:  # the base's offset, a varint of its own kind
                at += 1
            at += 1
        else:
            at += 20  # the base's binary sha
        head = zlib.decompressobj().decompress(bytes(data[at : at + _DELTA_HEAD_BYTES]), 32)
        _base_size, at_result = _delta_size(head, 0)
        result_size, _ = _delta_size(head, at_result)
        return result_size
    except (IndexError, zlib.error):
        return None


def _varint_header(data: Any, at: int) -> tuple[int, int, int]:
    byte = data[at]
    type_num, size, shift = (byte >> 4) & 7, byte & 0x0F, 4
    while byte & 0x80:
        at += 1
        byte = data[at]
        size |= (byte & 0x7F) << shift
        shift += 7
    return type_num, size, at + 1


def _delta_size(head: bytes, at: int) -> tuple[int, int]:
    size = shift = 0
    while True:
        byte = head[at]
        size |= (byte & 0x7F) << shift
        shift += 7
        at += 1
        if not byte & 0x80:
            return size, at
