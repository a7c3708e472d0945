"""How much memory indexing a received pack needs, known before it needs it (ADR 0014).

A clone under a memory budget reserves a little while its pack streams to disk (a
few buffers), and asks for the rest when the pack is on disk: before the first pass,
a bound of the whole indexing from the object count in the pack's header
(:func:`indexing`), and after it, what it counted: the first pass's records and, if
the pack has deltas, dulwich's delta walk (which maps the whole pack and holds the
bases of the chain in flight whole while a delta is applied). A repository's size
is not the question: a 111,000-object history of small files needs ~20 MiB, a 96
MiB data file stored as one delta ~440 MiB, and each says so before it uses it.

The constants were measured per phase on five shapes of pack (issue 46,
``bench/bench_forecast.py``, bench/README.md): a record costs the first pass ~81
bytes, a delta ~380 in all; the walk ~220 bytes per delta, the pages of the pack
it reads, and 1.32x the bytes of the chain in flight (the data file's delta).
"""

from __future__ import annotations

__all__ = [
    "DeltaSizes",
    "delta_header",
    "deltas_allowed",
    "first_pass",
    "first_pass_ask",
    "indexing",
]

# The dulwich client, its buffers, the refs, and the zygote's pages a worker writes
# to: what any clone has (measured 3.8 MiB without the zygote's, which take ~4).
FIRST_PASS_BASE = 8 << 20
# The first pass unmaps the pack behind itself every UNMAP_EVERY bytes: at most that
# much of it (and a 64 KiB window) is mapped at once.
UNMAP_EVERY = 4 << 20
FIRST_PASS_PER_OBJECT = 96  # a record: 72 bytes of bytes object, its list slot (81)
# A delta costs the first pass more: its UnpackedObject, list slot and the entries
# here (measured ~300 beyond a record's).
FIRST_PASS_PER_DELTA = 320
# The walk: dulwich's pending entries and the delta's record (measured ~220 bytes);
# the bytes of the chain in flight, its base joined and its result (measured 1.32x).
WALK_PER_DELTA = 320
WALK_FACTOR = 1.5
# The first pass asks for its records and this share of its objects as deltas; past
# that share it asks for the whole bound (:func:`indexing`), refusably: refused, it has
# done its pass that far for nothing. A delta-heavy history reached an eighth after a
# fifth of its pass; at -j 4 in a cgroup where one clone fits, three of four passes
# went that far for nothing (issue 46).
ALLOWED_DELTAS = 1 / 32
# The smallest object a pack can hold: a header byte and an empty zlib stream (8 bytes).
_SMALLEST_OBJECT = 9


def first_pass(announced: int, pack_bytes: int) -> int:
    """Bytes a clone needs, in all, to index a pack of ``pack_bytes`` that announces
    ``announced`` objects: never more objects than the pack has room for, so that a
    header that lies costs no more than the truth could."""
    objects = min(announced, pack_bytes // _SMALLEST_OBJECT)
    mapped = min(pack_bytes, UNMAP_EVERY + (64 << 10))
    return FIRST_PASS_BASE + mapped + FIRST_PASS_PER_OBJECT * objects


def deltas_allowed(announced: int, pack_bytes: int) -> int:
    """Deltas the first pass may meet within :func:`first_pass_ask`."""
    return int(ALLOWED_DELTAS * min(announced, pack_bytes // _SMALLEST_OBJECT))


def first_pass_ask(announced: int, pack_bytes: int) -> int:
    """Bytes a clone needs, in all, for the first pass over a pack that holds no more
    deltas than :func:`deltas_allowed`: what it asks before that pass (issue 46). A pack
    that holds more says so before the pass needs more, and the pass asks again."""
    allowed = deltas_allowed(announced, pack_bytes)
    return first_pass(announced, pack_bytes) + FIRST_PASS_PER_DELTA * allowed


def indexing(announced: int, pack_bytes: int) -> int:
    """Bytes a clone needs, in all, to index a pack of ``pack_bytes`` that announces
    ``announced`` objects, as if each were a delta: all but the walk's application of
    one delta (the chain in flight), which only the first pass can tell.

    Asked once a first pass meets more deltas than it asked for, refusably: refused,
    the pass drops what it counted, waits for this bound holding little (its opening
    figure), and starts again. A clone never waits
    half-way with a first pass's records in hand, uncounted if it must give its
    reservation back (ADR 0014), and a pack with few deltas never reserves this (4-8x
    what it needs: two clones of a long history then ran one at a time)."""
    objects = min(announced, pack_bytes // _SMALLEST_OBJECT)
    deltas = (FIRST_PASS_PER_DELTA + WALK_PER_DELTA) * objects
    return first_pass(announced, pack_bytes) + deltas + pack_bytes


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
    on it, those built on them), depth first, from a stack of deltas to apply, each
    with its base: a base is held while some delta built on it waits on the stack,
    and all of those wait below the delta at hand, so what is held at once is the
    delta's ancestors (its chain), never its tree's other branches. Applying it adds
    its data, its base joined into one buffer, and its result. A reference delta
    names its base by id, which the first pass does not map to a chain: those bases
    count as if held throughout.
    """

    def __init__(self) -> None:
        self.count = 0
        self._step = 0  # the most one delta's application holds: see add()
        # A delta's offset -> bytes of its ancestors (its base, the base's base...).
        self._chain: dict[int, int] = {}
        self.bases: set[int] = set()  # offsets of objects some offset delta is built on
        self._named: dict[bytes, int] = {}  # reference deltas' bases -> their size

    def add(self, offset: int, base: int | bytes, size: int, head: bytes | bytearray) -> None:
        """A delta at ``offset``, of ``size`` bytes of data starting with ``head``,
        built on the object at offset ``base`` (an offset delta) or with id ``base``."""
        source, target = delta_header(head)
        self.count += 1
        if isinstance(base, bytes):
            self._named.setdefault(base, source)
            chain = source
        else:
            # The pack puts a base before its deltas: its chain is known by now (a
            # whole object's is empty).
            self.bases.add(base)
            chain = source + self._chain.get(base, 0)
        self._chain[offset] = chain
        self._step = max(self._step, chain + source + size + target)

    def recorded(self) -> int:
        """Bytes the first pass holds for the deltas met so far, beyond their objects'."""
        return FIRST_PASS_PER_DELTA * self.count

    def walk(self, pack_bytes: int) -> int:
        """Bytes the delta walk of a pack of ``pack_bytes`` may add to the first pass's:
        the pack's pages (it maps the whole pack and reads every delta and base), the
        deltas' entries, and the most that applying one delta holds."""
        if not self.count:
            return 0
        held = self._step + sum(self._named.values())
        return pack_bytes + int(WALK_FACTOR * held) + WALK_PER_DELTA * self.count
