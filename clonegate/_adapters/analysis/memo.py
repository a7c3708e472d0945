"""What an analysis worker has already worked out in this run, by content (issue 47).

A served analysis worker (ADR 0003) takes one repository after another; forks and
copies of one project share most of their files, and the same commit of a project
has the same trees. Parsing a file whose blob and context it has met, or listing a
tree it has listed, would give what it gave then, so the worker recalls it instead:

* a file's outcome (:func:`.scan.analyze_file`'s test file, no test, or the message
  of a parse error), keyed as the store's analysis cache keys it (ADR 0016: the
  blob's sha and the file's context), less the analyzer's version, which cannot
  change within a process. Read errors and memory errors are never kept: they say
  nothing of the content. A recalled outcome counts its file's bytes as read, so that
  a report does not depend on which worker took the repository;
* a tree's listing (:class:`.scan.Listing`), keyed by the root tree's sha: the
  listing reads nothing but that tree and the blobs it names. A listing with any
  error is not kept (a missing object is the clone's, not the content's).

Both are bounded (:data:`MAX_TESTS`, :data:`MAX_LISTED_FILES`), oldest out first, and
live as long as the worker (a zygote's fork starts with neither).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..._domain.inventory import ScanError, TestFile
from .results import Part, PartResult

if TYPE_CHECKING:
    from .scan import Listing

__all__ = ["LISTINGS", "MAX_LISTED_FILES", "MAX_TESTS", "OUTCOMES", "Listings", "Outcomes"]

# Tests (and files) whose outcomes a worker keeps: at most ~7 MiB (50,000 tests of
# 25-character names, measured), well under the growth that retires a served worker
# (zygote.RETIRE_GROWTH, 32 MiB).
MAX_TESTS = 50_000
# Files of the listings a worker keeps: ~0.24 KiB a file (its path, its candidacy
# memo), at most ~5 MiB.
MAX_LISTED_FILES = 20_000

Outcome = TestFile | ScanError | None
_Key = tuple[bytes, bytes]  # (blob sha, context)
# Scans the files given, keeping each one's outcome under the context given for it.
Scan = Callable[[Part, dict[tuple[str, bytes], bytes]], PartResult]


class Outcomes:
    """Files' outcomes by (blob sha, context), each with its file's size in bytes."""

    def __init__(self, max_tests: int = MAX_TESTS) -> None:
        self._max = max_tests
        self._kept: dict[_Key, tuple[Outcome, int, int]] = {}
        self._tests = 0

    def recall(self, sha: bytes, context: bytes, path: str) -> tuple[Outcome, int] | None:
        """The outcome kept for this blob in this context, made ``path``'s, and the
        file's size; None if none is kept."""
        found = self._kept.get((sha, context))
        if found is None:
            return None
        outcome, size, _ = found
        if outcome is not None and outcome.path != path:
            outcome = dataclasses.replace(outcome, path=path)
        return outcome, size

    def scan(self, part: Part, contexts: tuple[bytes, ...], scan: Scan) -> PartResult:
        """What ``scan`` gives for all of ``part`` (each file's context in ``contexts``),
        given only the files not recalled: the others' outcomes are recalled, their
        sizes counted as read, in the result a scan of all of them gives."""
        recalled: list[Outcome] = []
        new: list[tuple[str, bytes]] = []
        sizes = 0
        for (path, sha), context in zip(part, contexts, strict=True):
            found = self.recall(sha, context, path)
            if found is None:
                new.append((path, sha))
            else:
                recalled.append(found[0])
                sizes += found[1]
        scanned = scan(tuple(new), dict(zip(part, contexts, strict=True)))
        if not recalled:
            return scanned
        files = [*scanned.files, *(o for o in recalled if isinstance(o, TestFile))]
        errors = [*scanned.errors, *(o for o in recalled if isinstance(o, ScanError))]
        files.sort(key=lambda f: f.path)
        errors.sort(key=lambda e: e.path)
        return PartResult(tuple(files), tuple(errors), scanned.bytes_read + sizes, scanned.parsed)

    def keep(self, sha: bytes, context: bytes, outcome: Outcome, size: int) -> None:
        """Keep ``outcome`` of a file of ``size`` bytes; the oldest go past the bound."""
        tests = 1 + (_tests_in(outcome) if isinstance(outcome, TestFile) else 0)
        if tests > self._max or (sha, context) in self._kept:
            return
        while self._tests + tests > self._max:  # dicts keep their order: oldest first
            self._tests -= self._kept.pop(next(iter(self._kept)))[2]
        self._kept[sha, context] = (outcome, size, tests)
        self._tests += tests


class Listings:
    """Listings by root tree sha, while their files add up to at most ``max_files``."""

    def __init__(self, max_files: int = MAX_LISTED_FILES) -> None:
        self._max = max_files
        self._kept: dict[bytes, Listing] = {}

    def recall(self, tree: bytes) -> Listing | None:
        return self._kept.get(tree)

    def keep(self, tree: bytes, listing: Listing) -> None:
        if listing.errors or listing.files_scanned > self._max:
            return
        while self._kept and self._files() + listing.files_scanned > self._max:
            del self._kept[next(iter(self._kept))]
        self._kept[tree] = listing

    def _files(self) -> int:
        return sum(listing.files_scanned for listing in self._kept.values())


def _tests_in(found: TestFile) -> int:
    return len(found.tests) + sum(1 + sum(1 for _ in s.all_tests()) for s in found.suites)


# This worker's own: every job of a served worker sees what its earlier jobs kept.
OUTCOMES = Outcomes()
LISTINGS = Listings()
