"""What the analysis workers send back, and how candidates are split among them.

Light on purpose: the parent process unpickles these, and a first result should not
wait for the parent to import the parsers, the grammars and every framework's
definition (about 20 ms, issue 14) only to read a finished scan. :mod:`.scan`, which
makes them, runs in the workers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..._domain.inventory import Inventory, ScanError, TestFile

if TYPE_CHECKING:
    from .scan import Listing

__all__ = ["MIN_FILES_PER_PART", "Part", "PartResult", "ScanResult", "split"]

Part = tuple[tuple[str, bytes], ...]  # (path, blob sha), in path order

# Below this many candidate files per part, another process costs more than it saves:
# each part opens the repository and its pack index again (bench/README.md).
MIN_FILES_PER_PART = 100


def split(candidates: Part, processes: int, min_files: int = MIN_FILES_PER_PART) -> list[Part]:
    """At most ``processes`` parts of at least ``min_files`` files each (one part if fewer).

    Files are dealt out in turn, not cut into runs: candidates are in path order, so
    a run would give one part all the Go files and another all the Python ones, and
    the languages do not cost the same to parse.
    """
    count = max(1, min(processes, len(candidates) // min_files))
    return [candidates[i::count] for i in range(count)]


@dataclass(frozen=True, slots=True)
class PartResult:
    """What one part gave: ``parsed`` files were read and handed to ``analyze_file``.

    Encoded (``scan_part(..., encode=True)``), ``values`` holds, in the part's order,
    each file's cache value (:mod:`.cache_keys`), or None for a file that could not be
    read; ``files`` is then empty and ``errors`` holds only the read errors. One
    bytes object a file is what crosses the process boundary instead of the objects.
    """

    files: tuple[TestFile, ...]
    errors: tuple[ScanError, ...]
    bytes_read: int
    parsed: int = 0
    values: tuple[bytes | None, ...] = ()


@dataclass(frozen=True, slots=True)
class ScanResult:
    """A commit's inventory and counts; ``parsed``: the files read and parsed for it;
    ``unread``/``unread_conventions``: test files of languages and frameworks not read
    (:class:`.unread.UnreadFiles`)."""

    inventory: Inventory
    files_scanned: int
    bytes_read: int
    files_per_language: dict[str, int]
    parsed: int = 0
    unread: dict[str, int] = field(default_factory=dict)
    unread_conventions: dict[str, int] = field(default_factory=dict)

    @classmethod
    def merge(cls, listing: Listing, parts: Iterable[PartResult]) -> ScanResult:
        """Parts scanned in any order give the inventory one scan would: files in path order."""
        results = list(parts)
        files = sorted((f for r in results for f in r.files), key=lambda f: f.path)
        found = [*listing.errors, *(e for r in results for e in r.errors)]
        errors = sorted(found, key=lambda e: e.path)
        return cls(
            inventory=Inventory(tuple(files), tuple(errors)),
            files_scanned=listing.files_scanned,
            bytes_read=sum(r.bytes_read for r in results),
            files_per_language=listing.files_per_language,
            parsed=sum(r.parsed for r in results),
            unread=listing.unread.by_language,
            unread_conventions=listing.unread.by_convention,
        )
