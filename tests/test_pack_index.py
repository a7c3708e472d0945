"""Indexing a received pack (pack_index.py): the entries dulwich's own indexer gives,
a large whole object never held, and every malformed pack refused."""

from __future__ import annotations

import hashlib
import io
import random
import struct
import tracemalloc
import zlib
from pathlib import Path

import pytest
from dulwich.object_format import DEFAULT_OBJECT_FORMAT
from dulwich.pack import (
    OFS_DELTA,
    REF_DELTA,
    PackData,
    PackIndexer,
    UnresolvedDeltas,
    iter_sha1,
    write_pack_index_v2,
)
from dulwich.repo import Repo

from clonegate._adapters.git.pack_index import CorruptPack, PackIndex, index_pack
from clonegate._adapters.git.pack_intake import _install
from clonegate._adapters.git.worker_errors import classify
from clonegate._domain.errors import ErrorKind

from .support.packs import pack_of
from .support.repos import fast_import, git, make_large_repo

MiB = 1 << 20


def dulwich_entries(path: Path) -> list[tuple[bytes, int, int | None]]:
    data = PackData(str(path), object_format=DEFAULT_OBJECT_FORMAT)
    try:
        return sorted(PackIndexer.for_pack_data(data))
    finally:
        data.close()


@pytest.mark.parametrize(
    ("options", "kind"),
    [(("--delta-base-offset",), OFS_DELTA), ((), REF_DELTA)],
    ids=["offset deltas", "reference deltas"],
)
def test_the_entries_are_dulwich_s(tmp_path: Path, options: tuple[str, ...], kind: int) -> None:
    make_large_repo(tmp_path, "history", files=200, commits=40)
    pack = pack_of(tmp_path / "history.git", tmp_path / "all.pack", *options)
    data = PackData(str(pack), object_format=DEFAULT_OBJECT_FORMAT)
    try:
        kinds = {unpacked.pack_type_num for unpacked in data.iter_unpacked()}
    finally:
        data.close()
    assert kind in kinds  # deltas of that kind, and whole objects
    mine = list(index_pack(str(pack), DEFAULT_OBJECT_FORMAT).entries())
    assert mine == dulwich_entries(pack)
    assert len(mine) == int.from_bytes(pack.read_bytes()[8:12], "big")


def test_the_index_is_the_one_dulwich_and_git_write(tmp_path: Path) -> None:
    make_large_repo(tmp_path, "history", files=50, commits=20)
    pack = pack_of(tmp_path / "history.git", tmp_path / "all.pack", "--delta-base-offset")
    checksum = pack.read_bytes()[-20:]
    index = index_pack(str(pack), DEFAULT_OBJECT_FORMAT)
    mine, theirs = io.BytesIO(), io.BytesIO()
    index.write(mine, checksum)
    write_pack_index_v2(theirs, dulwich_entries(pack), checksum)
    assert mine.getvalue() == theirs.getvalue()
    assert index.name() == iter_sha1(sha for sha, _, _ in dulwich_entries(pack)).decode()
    (tmp_path / "all.idx").write_bytes(mine.getvalue())
    git("verify-pack", str(tmp_path / "all.idx"))  # git reads it, and checks every object


def test_offsets_past_2_gib_go_to_the_large_offset_table() -> None:
    entries = [(bytes([n]) * 20, offset, n) for n, offset in enumerate([12, 1 << 31, 5 << 32])]
    records = [sha + struct.pack(">QIB", offset, crc, 3) for sha, offset, crc in entries]
    mine, theirs = io.BytesIO(), io.BytesIO()
    PackIndex(records, 20).write(mine, bytes(20))
    write_pack_index_v2(theirs, entries, bytes(20))
    assert mine.getvalue() == theirs.getvalue()


def test_a_large_whole_object_is_hashed_as_it_streams(tmp_path: Path) -> None:
    bare = tmp_path / "data.git"
    git("init", "-q", "--bare", "-b", "main", str(bare))
    blob = random.Random(16).randbytes(16 * MiB).hex().encode()  # 32 MiB
    fast_import(
        bare,
        b"commit refs/heads/main\ncommitter F <f@example.invalid> 1700000000 +0000\n"
        b"data 1\nc\n" + f"M 644 inline data.txt\ndata {len(blob)}\n".encode() + blob + b"\n",
    )
    pack = pack_of(bare, tmp_path / "data.pack")
    tracemalloc.start()
    try:
        mine = list(index_pack(str(pack), DEFAULT_OBJECT_FORMAT).entries())
        _, mine_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        theirs = dulwich_entries(pack)
        _, theirs_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert mine == theirs
    assert theirs_peak > 32 * MiB  # dulwich holds the file whole
    assert mine_peak < 4 * MiB


# -- packs made by hand, each wrong in one way -------------------------------------------


def header(type_num: int, size: int) -> bytes:
    out = bytearray()
    byte = (type_num << 4) | (size & 15)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte, size = size & 0x7F, size >> 7
    out.append(byte)
    return bytes(out)


def blob(content: bytes, *, stated: int | None = None) -> bytes:
    return header(3, len(content) if stated is None else stated) + zlib.compress(content)


def stored(data: bytes, *, final: bool = False) -> bytes:
    """A zlib "stored" (uncompressed) deflate block: its bytes are where one chooses."""
    return bytes([final]) + struct.pack("<HH", len(data), 0xFFFF ^ len(data)) + data


def one_too_many_at_a_window_end(stated: int) -> bytes:
    """A blob stated as ``stated`` bytes whose first window (``stated`` + 64 bytes)
    ends just as byte ``stated`` + 1 has come out, and more follows."""
    head = b"\x78\x01" + stored(b"a" * (stated + 1)) + stored(b"") * 11 + b"\x00"
    assert len(head) == stated + 64
    more = b"b" * 60000
    rest = struct.pack("<HH", len(more), 0xFFFF ^ len(more)) + more + stored(b"", final=True)
    content = b"a" * (stated + 1) + more
    stream = head + rest + struct.pack(">I", zlib.adler32(content))
    assert zlib.decompress(stream) == content
    return header(3, stated) + stream


def pack(*objects: bytes, count: int | None = None, tail: bytes = b"") -> bytes:
    body = b"PACK" + (2).to_bytes(4, "big") + (count or len(objects)).to_bytes(4, "big")
    body += b"".join(objects) + tail
    return body + hashlib.sha1(body).digest()


def index(tmp_path: Path, data: bytes) -> list[tuple[bytes, int, int]]:
    path = tmp_path / "made.pack"
    path.write_bytes(data)
    return list(index_pack(str(path), DEFAULT_OBJECT_FORMAT).entries())


def test_a_pack_made_by_hand_indexes_as_git_hashes_it(tmp_path: Path) -> None:
    entries = index(tmp_path, pack(blob(b"hello\n"), blob(b"")))
    ids = {sha.hex() for sha, _offset, _crc in entries}
    assert ids == {
        "ce013625030ba8dba906f756967f9e9ca394464a",  # git hash-object of "hello\n"
        "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",  # the empty blob
    }


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"PAKC" + bytes(8), "not a pack"),
        (pack(blob(b"hello\n", stated=3)), "more than its stated size"),
        (pack(one_too_many_at_a_window_end(100)), "more than its stated size"),
        (pack(b"\xb0" + b"\xff" * 10 + b"\x01" + zlib.compress(b"")), "impossible size"),
        (pack(header(6, 3) + b"\xff" * 4000 + b"\x01" + zlib.compress(b"abc")), "outside the pack"),
        (pack(blob(b"hello\n", stated=9)), "less than its stated size"),
        (pack(blob(b"hello\n"), count=2), "ends inside an object header"),
        (pack(blob(b"hello\n"), tail=b"extra"), "data after its last object"),
        (pack(header(5, 3) + zlib.compress(b"abc")), "unknown type 5"),
        (pack(header(6, 3) + b"\x7f" + zlib.compress(b"abc")), "base outside the pack"),
        (pack(header(3, 6) + b"not zlib at all"), "compressed data is invalid"),
        (pack(blob(b"hello\n"), header(6, 3) + b"\x03" + zlib.compress(b"abc")), "middle of"),
        (pack(header(3, 6) + zlib.compress(b"hello\n")[:-6]), "ends inside an object"),
    ],
    ids=[
        "magic",
        "larger",
        "one byte too many at a window's end",
        "a size past 64 bits",
        "an endless base offset",
        "smaller",
        "fewer objects",
        "trailing bytes",
        "unknown type",
        "offset before the pack",
        "not zlib",
        "base inside an object",
        "truncated",
    ],
)
def test_a_malformed_pack_is_refused(tmp_path: Path, data: bytes, says: str) -> None:
    with pytest.raises(CorruptPack, match=says):
        index(tmp_path, data)


def test_a_delta_on_an_object_not_in_the_pack_is_a_thin_pack(tmp_path: Path) -> None:
    # A reference delta on an id the pack does not hold: the caller completes it.
    delta = header(7, 4) + bytes(20) + zlib.compress(b"\x01\x01\x01x")
    with pytest.raises(UnresolvedDeltas):
        index(tmp_path, pack(blob(b"hello\n"), delta))


class _Limits:
    connect_timeout = read_timeout = 1.0
    max_memory = max_file_size = 1 << 30


def test_a_fresh_clone_refuses_a_delta_on_a_base_it_cannot_have(tmp_path: Path) -> None:
    # The server was told the clone has nothing: no thin-pack completion is tried.
    repo = Repo.init_bare(str(tmp_path / "fresh.git"), mkdir=True)
    data = pack(blob(b"hello\n"), header(7, 4) + bytes(20) + zlib.compress(b"\x01\x01\x01x"))
    incoming = tmp_path / "fresh.git" / "objects" / "pack" / "incoming.pack"
    incoming.write_bytes(data)
    with pytest.raises(CorruptPack, match="neither in the pack nor in the clone"):
        _install(repo.object_store, str(incoming), data[-20:], thin_allowed=False)
    kind, _reason = classify(
        CorruptPack("the pack announces 404 objects, 403 were found"),
        _Limits(),
        has_credentials=False,
        mid_transfer=True,
    )
    assert kind is ErrorKind.INVALID_REPOSITORY  # not "repository not found" for a 404
