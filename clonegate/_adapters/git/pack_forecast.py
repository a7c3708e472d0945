"""How much memory indexing a received pack needs, known before it needs it (ADR 0014).

A clone under a memory budget reserves a little while its pack streams to disk (a
few buffers), and asks for the rest when the pack is on disk and what it holds can
be counted: before the first pass (which keeps a record per object, the count is in
the pack's header) and, if the pack has deltas, before dulwich's delta walk (which
holds bases whole while their deltas are applied). A repository's size is not the
question: a 111,000-object history of small files needs ~20 MiB, a 96 MiB data file
stored as one delta needs ~440 MiB, and each says so before it uses it.

The constants were measured (bench/README.md, `bench_memory.py`'s section): the first
pass takes a few MiB plus 150-170 bytes per object (more per delta); the walk about 1.5x
the bytes of the objects it holds at once, plus 1.6 KiB per delta (dulwich's pending
entries).
"""

from __future__ import annotations

__all__ = ["DeltaSizes", "delta_header", "first_pass"]

FIRST_PASS_BASE = 8 << 20  # the dulwich client, its buffers, the refs: what any clone has
FIRST_PASS_PER_OBJECT = 192  # a record (69 bytes), its list slot and id
# A delta costs the first pass more: its UnpackedObject, list slot and base entry
# (~290 bytes), and its entries here. The pass asks again every ASK_EVERY deltas.
FIRST_PASS_PER_DELTA = 448
ASK_EVERY = 4096
WALK_FACTOR = 1.75  # measured 1.52x on the data file's delta: the rest is margin
WALK_PER_DELTA = 2048  # measured 1.6 KiB per delta on 53,032 objects
# The smallest object a pack can hold: a header byte and an empty zlib stream (8 bytes).
_SMALLEST_OBJECT = 9


def first_pass(announced: int, pack_bytes: int) -> int:
    """Bytes a clone needs, in all, to index a pack of ``pack_bytes`` that announces
    ``announced`` objects: never more objects than the pack has room for, so that a
    header that lies costs no more than the truth could."""
    objects = min(announced, pack_bytes // _SMALLEST_OBJECT)
    return FIRST_PASS_BASE + FIRST_PASS_PER_OBJECT * objects


def delta_header(head: bytes | bytearray) -> tuple[int, int]:
    """The (base size, result size) a delta's data starts with (two varints); what a
    truncated or malformed header gives is still a number, which the walk then
    refuses, and which the forecast's caller bounds."""
    sizes, pos = [], 0
    for _ in range(2):
        size = shift = 0
        while pos < len(head) and shift < 64:
            byte = head[pos]
            pos += 1
            size |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        sizes.append(size)
    return sizes[0], sizes[1]


class DeltaSizes:
    """The deltas of a pack, as the first pass meets them, summed up for a forecast of
    dulwich's walk.

    The walk resolves one tree of deltas at a time (a whole object, the deltas built
    on it, those built on them), depth first, and keeps each base that still has
    deltas pending whole: at most the bases of one tree, plus the delta at hand, its
    base joined and its result. A reference delta names its base by id, which the
    first pass does not map to a tree: those bases count as if held throughout.
    """

    def __init__(self) -> None:
        self.count = 0
        self._largest = 0  # the largest delta at hand: its data, base and result
        self._root: dict[int, int] = {}  # a delta's offset -> its tree's whole object
        self.bases: set[int] = set()  # offsets of objects some offset delta is built on
        self._trees: dict[int, int] = {}  # a tree's whole object -> bytes of its bases
        self._named: dict[bytes, int] = {}  # reference deltas' bases -> their size

    def add(self, offset: int, base: int | bytes, size: int, head: bytes | bytearray) -> None:
        """A delta at ``offset``, of ``size`` bytes of data starting with ``head``,
        built on the object at offset ``base`` (an offset delta) or with id ``base``."""
        source, target = delta_header(head)
        self.count += 1
        self._largest = max(self._largest, size + source + target)
        if isinstance(base, bytes):
            self._named.setdefault(base, source)
            return
        # The pack puts a base before its deltas: its tree is known by now.
        root = self._root.get(base, base)
        self._root[offset] = root
        if base not in self.bases:
            self.bases.add(base)
            self._trees[root] = self._trees.get(root, 0) + source

    def recorded(self) -> int:
        """Bytes the first pass holds for the deltas met so far, beyond their objects'."""
        return FIRST_PASS_PER_DELTA * self.count

    def walk(self) -> int:
        """Bytes the delta walk may add to the first pass's."""
        if not self.count:
            return 0
        held = max(self._trees.values(), default=0) + sum(self._named.values())
        return int(WALK_FACTOR * (held + self._largest)) + WALK_PER_DELTA * self.count
