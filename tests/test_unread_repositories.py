"""The unread count on real repositories (issue 40, ADR 0004): depth-1 bundles of
libraries whose tests the analyzer does not read, each reported as not read instead of
a plain zero.

The expected counts were made apart from the code, from each commit's file list and
each convention written as a regular expression, and checked by hand:
``git ls-tree -r --name-only HEAD | grep -cE '(^|/)spec/.*_spec\\.rb$'`` (httparty, read
since issue 41: its 608 examples are the lines of those files that ``grep -cE
'^\\s*(it|specify|example|scenario|xit|fit|pending|skip)(\\s|\\(|$)'`` counts),
``'(^|/)tests?/.*Test\\.php$'`` (guzzle/psr7), ``'(^|/)Tests/.*\\.swift$'``
(apple/swift-argument-parser), ``'^test/Scrutor.Tests/.*(Tests?|Test[0-9])\\.cs$'``
with ``Scrutor.Tests.csproj`` referencing ``xunit.v3`` (khellang/Scrutor; its
``TestBase.cs`` and ``ServiceCollectionExtensions.cs`` are helpers; read since issue
41: its 80 ``[Fact]``/``[Theory]`` methods, counted by ``grep -cE '^\\s*\\[(Fact|Theory)'``
on its four test files), and p-map's file
list read whole (sindresorhus/p-map: ``test.js`` is read by the JavaScript reader, its
``test-multiple-pmapskips-performance.js`` is one AVA runs and is not read).

Since issue 41, PHP is read: guzzle/psr7 reports nothing unread and its 388 test
methods, as ``phpunit --list-tests-xml`` lists them (Debian phpunit 9.6.7): 387 in its
unit suite, 1 in its integration suite (``tests/Integration``, which the unit suite
excludes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clonegate._adapters.analysis.scan import scan_commit

from .support.repos import git

BUNDLES = Path(__file__).parent / "fixtures" / "unread"

# bundle, commit, unread per language, per convention, tests the analyzer reads
REPOSITORIES = [
    (
        "httparty",
        "2daba91bf3f61de2676a2e906f4d3181ebadea83",
        {},  # read since issue 41: RSpec's 19 spec files
        {},
        608,
    ),
    (
        "psr7",
        "45b30f99ac27b5ca93cb4831afe16285f57b8221",
        {},
        {},
        388,
    ),
    (
        "swift-argument-parser",
        "2f77f2fccb6e84fecff338c37b199e33e7dfd119",
        {},  # read since issue 41: XCTest and Swift Testing (its corpus truth: 555)
        {},
        555,
    ),
    (
        "Scrutor",
        "7f315dab5b0f7134a6be58941db1da8c904507e2",
        {},
        {},
        80,
    ),
    (
        "p-map",
        "bc26cf03f81292325236a1188063dac8e7a4de0f",
        {"ava": 1},
        {"test-*.{js,mjs,cjs}": 1},
        50,
    ),
]


@pytest.mark.parametrize(
    ("name", "commit", "languages", "conventions", "tests"),
    REPOSITORIES,
    ids=[r[0] for r in REPOSITORIES],
)
def test_a_real_repository_says_what_was_not_read(
    tmp_path: Path,
    name: str,
    commit: str,
    languages: dict[str, int],
    conventions: dict[str, int],
    tests: int,
) -> None:
    bare = tmp_path / f"{name}.git"
    git("clone", "-q", "--bare", str(BUNDLES / f"{name}.bundle"), str(bare))
    assert git("rev-parse", "HEAD", cwd=bare) == commit
    result = scan_commit(str(bare), commit)
    assert (result.unread, result.unread_conventions) == (languages, conventions)
    assert result.inventory.tests == tests
    assert result.inventory.errors == ()


def test_the_bundles_are_small() -> None:
    sizes = {b.name: b.stat().st_size for b in BUNDLES.glob("*.bundle")}
    assert len(sizes) == len(REPOSITORIES)
    assert max(sizes.values()) < 1 << 20, sizes
