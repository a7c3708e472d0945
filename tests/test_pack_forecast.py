"""What indexing a pack is forecast to need, on constructed packs and real clones (ADR 0014)."""

from __future__ import annotations

import hashlib
import mmap
import random
import zlib
from collections.abc import Callable
from pathlib import Path

import trio

from clonegate import CloneSettings, DulwichVCS
from clonegate._adapters.git import pack_forecast
from clonegate._adapters.git.pack_index import _first_pass, index_pack
from clonegate._adapters.workers import open_worker_pool

MiB = 1 << 20
BLOB, OFS_DELTA = 3, 6


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append(n & 0x7F | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def object_header(kind: int, size: int) -> bytes:
    out = bytearray([kind << 4 | size & 0x0F])
    size >>= 4
    while size:
        out[-1] |= 0x80
        out.append(size & 0x7F)
        size >>= 7
    return bytes(out)


def offset_back(back: int) -> bytes:
    out = bytearray([back & 0x7F])
    back >>= 7
    while back:
        back -= 1
        out.insert(0, 0x80 | back & 0x7F)
        back >>= 7
    return bytes(out)


def edit(source: int, mark: int) -> bytes:
    """A delta that copies all but the last byte of a ``source``-byte base, then
    inserts ``mark``: a result of the same size, different from its base."""
    keep = source - 1
    copy = bytes([0x80 | 0x10 | 0x20 | 0x40, keep & 0xFF, keep >> 8 & 0xFF, keep >> 16 & 0xFF])
    return varint(source) + varint(source) + copy + bytes([1, mark])


def answering(asked: list[tuple[int, ...]], *refused: int) -> Callable[[tuple[int, ...]], bool]:
    """A memory question's answers: each question recorded, the ``refused``-th ones
    (from 0) refused, the others held."""

    def need(question: tuple[int, ...]) -> bool:
        asked.append(question)
        return len(asked) - 1 not in refused

    return need


def build_pack(path: Path, objects: list[bytes | tuple[int, bytes]]) -> list[int]:
    """A pack of whole blobs (``bytes``) and offset deltas (``(index of the base,
    delta)``); the offset of each object."""
    body, offsets = bytearray(), []
    for item in objects:
        offsets.append(12 + len(body))
        if isinstance(item, bytes):
            body += object_header(BLOB, len(item)) + zlib.compress(item)
        else:
            base, delta = item
            back = offsets[-1] - offsets[base]
            body += object_header(OFS_DELTA, len(delta)) + offset_back(back)
            body += zlib.compress(delta)
    head = b"PACK" + (2).to_bytes(4, "big") + len(objects).to_bytes(4, "big")
    path.write_bytes(head + body + hashlib.sha1(head + body).digest())
    return offsets


def test_a_delta_s_header_gives_its_base_and_result_sizes() -> None:
    head = varint(96 << 20) + varint(300) + b"\x90\x01"
    assert pack_forecast.delta_header(head[:20]) == (96 << 20, 300)
    assert pack_forecast.delta_header(b"") == (0, 0)  # truncated: numbers all the same
    assert pack_forecast.delta_header(b"\xff" * 20)[0] < 1 << 70


def test_the_walk_counts_the_chain_in_flight() -> None:
    sizes = pack_forecast.DeltaSizes()
    assert sizes.walk(1000) == 0  # no delta, no walk
    # A whole object at 12 (10 MiB), a delta on it (at 100), a delta on that (at 200).
    sizes.add(100, 12, 1000, varint(10 * MiB) + varint(11 * MiB))
    sizes.add(200, 100, 1000, varint(11 * MiB) + varint(12 * MiB))
    # Another whole object (at 50, 1 MiB) with two deltas on it.
    sizes.add(300, 50, 10, varint(MiB) + varint(MiB))
    sizes.add(400, 50, 10, varint(MiB) + varint(MiB))
    # At 200: its ancestors (10 and 11 MiB), its base joined, its data, its result.
    step = 21 * MiB + 11 * MiB + 1000 + 12 * MiB
    factor, per_delta = pack_forecast.WALK_FACTOR, pack_forecast.WALK_PER_DELTA
    assert sizes.walk(5 * MiB) == 5 * MiB + int(factor * step) + per_delta * 4
    # A reference delta: its base (named by id) counts as held throughout.
    sizes.add(500, b"\x01" * 20, 10, varint(5 * MiB) + varint(MiB))
    assert sizes.walk(5 * MiB) == 5 * MiB + int(factor * (step + 5 * MiB)) + per_delta * 5
    assert sizes.recorded() == pack_forecast.FIRST_PASS_PER_DELTA * 5


def test_a_wide_tree_of_deltas_is_not_held_whole(tmp_path: Path) -> None:
    """A constructed pack: one 1 MiB blob, eight deltas on it, a delta on each of
    those. The walk holds at most a chain (the blob and one of the eight), never the
    tree's nine bases: the forecast says so (the model before issue 46 summed the
    tree's bases, 9 MiB, times 1.75)."""
    blob = random.Random(46).randbytes(MiB)
    objects: list[bytes | tuple[int, bytes]] = [blob]
    objects += [(0, edit(MiB, i)) for i in range(8)]
    objects += [(1 + i, edit(MiB, 100 + i)) for i in range(8)]
    pack = tmp_path / "wide.pack"
    build_pack(pack, objects)
    asked: list[tuple[int, ...]] = []
    index = index_pack(str(pack), _sha1(), answering(asked, 1))
    assert len(list(index.entries())) == 17  # a valid pack: every delta resolved
    size = pack.stat().st_size
    needs = [question[0] for question in asked]
    # Before the first pass, its records; past them, the bound, refusably (refused),
    # then the bound, waited for.
    bound = (pack_forecast.indexing(17, size), size)
    records = (pack_forecast.first_pass_ask(17, size), 0, True)
    assert asked[:3] == [records, (*bound, True), bound]
    first = pack_forecast.first_pass(17, size)
    # The deepest step: two ancestors (the blob, its delta), the base joined, the
    # delta's data (12 bytes) and its result: 4 MiB.
    step = 4 * MiB + len(edit(MiB, 0))
    walk = size + int(pack_forecast.WALK_FACTOR * step) + pack_forecast.WALK_PER_DELTA * 16
    assert needs[-1] == first + pack_forecast.FIRST_PASS_PER_DELTA * 16 + walk
    assert needs[-1] - first < size + 8 * MiB  # the old model: more than 16 MiB


def test_a_header_cannot_claim_more_objects_than_the_pack_has_room_for() -> None:
    per_object, base = pack_forecast.FIRST_PASS_PER_OBJECT, pack_forecast.FIRST_PASS_BASE
    assert pack_forecast.first_pass(10, 1 << 20) == base + (1 << 20) + per_object * 10
    assert pack_forecast.first_pass(1 << 32, 900) == base + 900 + per_object * 100
    # What the first pass keeps mapped is a window of the pack, not the whole pack.
    mapped = pack_forecast.first_pass(0, 1 << 30) - base
    assert mapped == pack_forecast.UNMAP_EVERY + (64 << 10)


def test_indexing_says_what_each_pass_needs_before_it_runs(tmp_path: Path) -> None:
    from .support.packs import pack_of
    from .support.repos import make_large_repo

    make_large_repo(tmp_path, "history", files=50, commits=20)
    pack = pack_of(tmp_path / "history.git", tmp_path / "all.pack", "--delta-base-offset")
    data = pack.read_bytes()
    count = int.from_bytes(data[8:12], "big")
    asked: list[tuple[int, ...]] = []
    index = index_pack(str(pack), _sha1(), answering(asked))
    assert len(list(index.entries())) == count
    first = pack_forecast.first_pass(count, len(data))
    # Before the first pass, its records and a few deltas; past them, a bound as if
    # every object were a delta; both refusably; after it, the walk's figure, from the
    # deltas met; the last two with the pack's pages the walk maps.
    records = (pack_forecast.first_pass_ask(count, len(data)), 0, True)
    bound = (pack_forecast.indexing(count, len(data)), len(data), True)
    assert asked[:2] == [records, bound]
    assert len(asked) == 3
    assert asked[2][1] == len(data)
    assert first < asked[2][0] < first + 64 * MiB  # small files: far from a whole-object forecast


def test_a_first_pass_refused_more_starts_again_holding_nothing(tmp_path: Path) -> None:
    """A pack with more deltas than the first pass asked for, whose bound is not free at
    once: the pass drops what it counted, waits for the bound, and starts again; the
    index is the one a pass with no questions makes."""
    from .support.packs import pack_of
    from .support.repos import make_large_repo

    make_large_repo(tmp_path, "history", files=50, commits=20)
    pack = pack_of(tmp_path / "history.git", tmp_path / "all.pack", "--delta-base-offset")
    size, count = pack.stat().st_size, int.from_bytes(pack.read_bytes()[8:12], "big")
    asked: list[tuple[int, ...]] = []
    index = index_pack(str(pack), _sha1(), answering(asked, 1))
    bound = (pack_forecast.indexing(count, size), size)
    records = (pack_forecast.first_pass_ask(count, size), 0, True)
    assert asked[:3] == [records, (*bound, True), bound]
    assert len(asked) == 4  # and the walk, after the second pass
    assert asked[3][1] == size
    assert list(index.entries()) == list(index_pack(str(pack), _sha1()).entries())


def test_a_first_pass_refused_its_records_asks_its_bound_first(tmp_path: Path) -> None:
    """Its host's packs need their bound (the budget refuses the first question): the
    clone asks for the bound, waiting, then passes once with no other question."""
    from .support.packs import pack_of
    from .support.repos import make_large_repo

    make_large_repo(tmp_path, "history", files=50, commits=20)
    pack = pack_of(tmp_path / "history.git", tmp_path / "all.pack", "--delta-base-offset")
    size, count = pack.stat().st_size, int.from_bytes(pack.read_bytes()[8:12], "big")
    asked: list[tuple[int, ...]] = []
    index = index_pack(str(pack), _sha1(), answering(asked, 0))
    records = (pack_forecast.first_pass_ask(count, size), 0, True)
    assert asked[:2] == [records, (pack_forecast.indexing(count, size), size)]
    assert len(asked) == 3  # and the walk
    assert list(index.entries()) == list(index_pack(str(pack), _sha1()).entries())


def test_a_pack_without_deltas_gives_back_its_walk_after_the_first_pass(tmp_path: Path) -> None:
    pack = tmp_path / "one.pack"
    build_pack(pack, [b"x" * 1000])
    asked: list[tuple[int, ...]] = []
    index_pack(str(pack), _sha1(), answering(asked))
    size = pack.stat().st_size
    # No delta: never the bound; no walk, and no pages of it either.
    assert asked == [
        (pack_forecast.first_pass_ask(1, size), 0, True),
        (pack_forecast.first_pass(1, size), 0),
    ]


def test_a_first_pass_asks_for_a_32nd_of_its_objects_as_deltas() -> None:
    per_delta = pack_forecast.FIRST_PASS_PER_DELTA
    assert pack_forecast.deltas_allowed(800, 1 << 20) == 25
    assert pack_forecast.deltas_allowed(1 << 32, 900) == 3  # 100 objects fit, at most
    ask = pack_forecast.first_pass_ask(800, 1 << 20)
    assert ask == pack_forecast.first_pass(800, 1 << 20) + per_delta * 25
    # A long history of small files (bench_memory's: 111,000 objects, a 31 MiB pack)
    # asks for a quarter of the bound it reserved before (issue 46).
    assert pack_forecast.first_pass_ask(111_000, 31 << 20) * 4 < pack_forecast.indexing(
        111_000, 31 << 20
    )


async def test_a_real_clone_forecasts_at_least_what_it_then_uses(tmp_path: Path) -> None:
    """Over a real git daemon: a full clone of a history with deltas asks for its first
    pass's records (no pages), then, past a few deltas, for the whole bound, both
    refusably, then for its walk; its measured peak is within what it held to the end; a
    clone with no on_memory asks nothing (its job says so)."""
    from .support.repos import make_large_repo
    from .support.servers import git_daemon

    served = tmp_path / "served"
    served.mkdir()
    make_large_repo(served, "history", files=200, commits=40)
    needs: list[tuple[int, int, bool]] = []

    async def on_memory(nbytes: int, pages: int = 0, /, *, refusable: bool = False) -> bool:
        needs.append((nbytes, pages, refusable))
        await trio.lowlevel.checkpoint()
        return True

    with git_daemon(served) as daemon:
        async with open_worker_pool() as pool:
            vcs = DulwichVCS(CloneSettings(depth=None, work_dir=tmp_path), pool=pool)
            source = await vcs.clone(daemon.url("history"), on_memory=on_memory)
            await source.aclose()
            plain = await vcs.clone(daemon.url("history"))
            await plain.aclose()
    (records, _, refusable), (bound, pages, past), (walk, walk_pages, counted) = needs
    assert refusable
    assert past
    assert not counted
    assert 0 < pages < bound  # the pack's pages, among the bytes
    assert 0 < walk_pages < walk
    assert pack_forecast.FIRST_PASS_BASE < records < bound < 64 * MiB
    assert pack_forecast.FIRST_PASS_BASE < walk < bound  # small objects: the bound was above
    assert source.peak_memory is not None
    assert source.peak_memory <= walk


async def test_a_real_clone_refused_its_bound_waits_for_it_and_passes_again(
    tmp_path: Path,
) -> None:
    """Over a real git daemon: the budget refuses the bound a first pass asks refusably;
    the worker asks for it again, waiting, and its clone is whole (issue 46)."""
    from .support.repos import make_large_repo
    from .support.servers import git_daemon

    served = tmp_path / "served"
    served.mkdir()
    head = make_large_repo(served, "history", files=200, commits=40)
    needs: list[tuple[int, int, bool]] = []

    async def on_memory(nbytes: int, pages: int = 0, /, *, refusable: bool = False) -> bool:
        needs.append((nbytes, pages, refusable))
        await trio.lowlevel.checkpoint()
        return len(needs) != 2  # the second: the bound, past its records

    with git_daemon(served) as daemon:
        async with open_worker_pool() as pool:
            vcs = DulwichVCS(CloneSettings(depth=None, work_dir=tmp_path), pool=pool)
            source = await vcs.clone(daemon.url("history"), on_memory=on_memory)
            try:
                assert source.commit == head  # its objects indexed, its head found
            finally:
                await source.aclose()
    assert [refusable for _, _, refusable in needs] == [True, True, False, False]
    assert needs[1][:2] == needs[2][:2]  # the same bound, then waited for


async def test_a_clone_asks_for_deltas_by_offset(tmp_path: Path) -> None:
    """Over a real git daemon (protocol v2): the pack the clone receives names each
    delta's base by its offset, which the forecast follows to the chain in flight;
    dulwich alone asks for nothing, and gets bases named by id (issue 46)."""
    from .support.repos import make_large_repo
    from .support.servers import git_daemon

    served = tmp_path / "served"
    served.mkdir()
    make_large_repo(served, "history", files=200, commits=40)
    with git_daemon(served) as daemon:
        async with open_worker_pool() as pool:
            vcs = DulwichVCS(CloneSettings(depth=None, work_dir=tmp_path), pool=pool)
            source = await vcs.clone(daemon.url("history"))
            try:
                (pack,) = source.path.rglob("*.pack")
                with pack.open("rb") as file:
                    data = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
                    with data:
                        first = _first_pass(data, _sha1())
            finally:
                await source.aclose()
    assert first.deltas  # a history of edits: deltas
    assert not first.wanted  # none named by id
    assert len(first.bases) > 0


def _sha1() -> object:
    from dulwich.object_format import DEFAULT_OBJECT_FORMAT

    return DEFAULT_OBJECT_FORMAT


async def test_a_clone_under_a_budget_leaves_no_idle_worker(tmp_path: Path) -> None:
    """An idle served worker keeps what its clone left (up to 32 MiB), which no
    reservation of a memory budget counts: under one (``on_memory``), a clone's worker
    ends with it; without one, it waits for the next clone (ADR 0003, 0014)."""
    from .support.repos import make_repo
    from .support.servers import git_daemon

    served = tmp_path / "served"
    served.mkdir()
    make_repo(served, "small")

    async def on_memory(nbytes: int, pages: int = 0, /, *, refusable: bool = False) -> bool:
        await trio.lowlevel.checkpoint()
        return True

    with git_daemon(served) as daemon:
        async with open_worker_pool() as pool:
            vcs = DulwichVCS(CloneSettings(depth=None, work_dir=tmp_path), pool=pool)
            source = await vcs.clone(daemon.url("small"), on_memory=on_memory)
            await source.aclose()
            assert pool._idle.count() == 0
            plain = await vcs.clone(daemon.url("small"))
            await plain.aclose()
            assert pool._idle.count() == 1


def test_a_worker_s_memory_question_is_believed_only_as_sane_numbers_and_a_flag() -> None:
    from clonegate._adapters.git.dulwich_vcs import memory_question

    assert memory_question((100, 40)) == (100, 40, False)
    assert memory_question((100, 40, True)) == (100, 40, True)
    assert memory_question(100) == (100, 0, False)  # a bare count has no pages
    for nonsense in [
        (40, 100),
        (-1, 0),
        (100, -1),
        (1.5, 0),
        (True, 0),
        [100, 40],
        (1, 2, 3),
        (1, 0, 1),
        (1, 0, True, 0),
        "x",
    ]:
        assert memory_question(nonsense) is None
