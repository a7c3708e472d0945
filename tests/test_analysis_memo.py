"""What an analysis worker recalls within a run (issue 47, :mod:`.analysis.memo`): a
repeat gives the report a fresh scan gives, without parsing again; a changed blob is
parsed again; read errors and listings with errors are never kept.

Real git repositories built with the ``git`` command; the analyzer's jobs run in its
served worker processes, as in production.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clonegate import AnalysisSettings, ClonedSource, TestInventoryAnalyzer
from clonegate._adapters.analysis import memo, scan
from clonegate._adapters.analysis.results import MIN_FILES_PER_PART, ScanResult
from clonegate._adapters.clones import discard
from clonegate._domain.inventory import ScanError, TestCase, TestFile

from .support.repos import git

STAMP = {"GIT_AUTHOR_DATE": "@1700000000 +0000", "GIT_COMMITTER_DATE": "@1700000000 +0000"}
CHANGED = "tests/test_module_3.py"


def _python_test(i: int, extra: str = "") -> str:
    return f"import pytest\n\n\ndef test_value_{i}():\n    assert {i}\n\n\n{extra}"


FILES: dict[str, str] = {
    "pytest.ini": "[pytest]\naddopts = -q\n",
    "src/app.py": "def app():\n    return 1\n",
    "tests/test_broken.py": "def test_broken(:\n    pass\n",  # a parse error: kept
    "tests/test_nothing.py": "def helper():\n    return 3\n",  # no test: kept
    **{f"tests/test_module_{i}.py": _python_test(i) for i in range(40)},
}


def _commit(work: Path, files: Mapping[str, str], message: str) -> str:
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    git("add", "-A", cwd=work)
    git("commit", "-q", "--allow-empty", "-m", message, cwd=work, env=STAMP)
    return git("rev-parse", "HEAD", cwd=work)


def _source(work: Path, head: str) -> ClonedSource:
    when = datetime(2023, 11, 14, tzinfo=UTC)
    return ClonedSource(str(work), work, "main", head, when, 0, True, None, remove=discard)


def _repository(root: Path, name: str, files: Mapping[str, str]) -> ClonedSource:
    work = root / name
    git("init", "-q", "-b", "main", str(work))
    return _source(work, _commit(work, files, name))


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ClonedSource]:
    root = tmp_path_factory.mktemp("memo")
    a = _repository(root, "a", FILES)
    copy = _repository(root, "copy", FILES)  # another clone of the same content
    changed = {**FILES, CHANGED: _python_test(3, "def test_added():\n    pass\n")}
    b = _repository(root, "b", changed)
    many = {f"tests/test_many_{i}.py": _python_test(i) for i in range(2 * MIN_FILES_PER_PART)}
    big = _repository(root, "big", {**FILES, **many})
    return {"a": a, "copy": copy, "b": b, "big": big}


def _fresh(source: ClonedSource) -> ScanResult:
    """The scan of ``source`` in this process, recalling nothing."""
    return scan.scan_commit(str(source.path), source.commit)


async def test_a_repeat_in_a_run_is_recalled_with_the_report_of_a_fresh_scan(
    repos: dict[str, ClonedSource],
) -> None:
    analyzer = TestInventoryAnalyzer(AnalysisSettings(processes=1))  # one served worker
    first = await analyzer.analyze(repos["a"])
    parsed = analyzer.statistics().files_parsed
    assert parsed == len(FILES) - 2  # the candidates: not pytest.ini nor src/app.py

    again = await analyzer.analyze(repos["copy"])
    # Its own commit, the rest as the first (bytes_read too: a recalled file counts).
    assert again == dataclasses.replace(
        first, facts=dataclasses.replace(first.facts, commit=repos["copy"].commit)
    )
    assert analyzer.statistics().files_parsed == parsed  # nothing parsed again
    fresh = _fresh(repos["copy"])
    assert again.inventory == fresh.inventory
    assert again.facts.bytes_read == fresh.bytes_read

    fork = await analyzer.analyze(repos["b"])
    assert analyzer.statistics().files_parsed == parsed + 1  # the changed blob alone
    fresh = _fresh(repos["b"])
    assert fork.inventory == fresh.inventory
    assert fork.facts.bytes_read == fresh.bytes_read
    (changed,) = (f for f in fork.inventory.files if f.path == CHANGED)
    assert [t.name for t in changed.tests] == ["test_value_3", "test_added"]


async def test_parts_split_among_workers_give_a_fresh_scans_report_again(
    repos: dict[str, ClonedSource],
) -> None:
    analyzer = TestInventoryAnalyzer(AnalysisSettings(processes=2))
    fresh = _fresh(repos["big"])
    for _ in range(3):  # whichever worker takes which part, as often as it comes
        report = await analyzer.analyze(repos["big"])
        assert report.inventory == fresh.inventory
        assert report.facts.bytes_read == fresh.bytes_read


@pytest.fixture
def own_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    """This test's own memo: what this process keeps is not another test's."""
    monkeypatch.setattr(scan, "OUTCOMES", memo.Outcomes())
    monkeypatch.setattr(scan, "LISTINGS", memo.Listings())


@pytest.mark.usefixtures("own_memo")
def test_a_tree_listed_once_is_recalled_and_a_changed_one_listed(
    repos: dict[str, ClonedSource], tmp_path: Path
) -> None:
    path, commit = str(repos["a"].path), repos["a"].commit
    listing = scan.list_commit(path, commit, recall=True)
    assert scan.list_commit(path, commit, recall=True) is listing
    assert scan.list_commit(path, commit) is not listing  # not asked to recall
    # The copy's commit has its own sha, and the same tree.
    copy = repos["copy"]
    assert copy.commit != commit
    assert scan.list_commit(str(copy.path), copy.commit, recall=True) is listing
    b = repos["b"]
    changed = scan.list_commit(str(b.path), b.commit, recall=True)
    assert changed is not listing
    fresh = scan.list_commit(str(b.path), b.commit)
    assert dataclasses.replace(changed, scopes=fresh.scopes) == fresh


@pytest.mark.usefixtures("own_memo")
def test_a_listing_with_an_error_is_listed_again(tmp_path: Path) -> None:
    broken = _repository(
        tmp_path,
        "broken",
        {**FILES, "pyproject.toml": "[tool.pytest.ini_options]\npython_files = [\n"},
    )
    path, commit = str(broken.path), broken.commit
    listing = scan.list_commit(path, commit, recall=True)
    assert listing.errors  # the pyproject.toml
    assert scan.list_commit(path, commit, recall=True) is not listing


@pytest.mark.usefixtures("own_memo")
def test_a_read_error_is_never_recalled(
    repos: dict[str, ClonedSource], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = repos["a"]
    path = str(source.path)
    listing = scan.list_commit(path, source.commit)
    part = listing.candidates
    with monkeypatch.context() as patch:
        patch.setattr(scan, "MAX_FILE_BYTES", 10)  # every file too large to read
        unread = scan.scan_part(path, part, listing.scopes, recall=True)
    assert {e.phase for e in unread.errors} == {"read"}
    assert not unread.files
    read = scan.scan_part(path, part, listing.scopes, recall=True)
    assert read == scan.scan_part(path, part, listing.scopes)  # parsed, not recalled
    assert read.parsed == len(part)
    again = scan.scan_part(path, part, listing.scopes, recall=True)
    assert again.parsed == 0
    assert dataclasses.replace(again, parsed=read.parsed) == read


def test_outcomes_are_made_the_paths_and_bounded_oldest_first() -> None:
    outcomes = memo.Outcomes(max_tests=5)
    found = TestFile("a/test_x.py", "pytest", "python", (), (TestCase("test_x", 1),))
    outcomes.keep(b"sha1", b"ctx", found, 100)
    outcomes.keep(b"sha2", b"ctx", ScanError("a/test_y.py", "parse", "SyntaxError"), 7)
    outcomes.keep(b"sha3", b"ctx", None, 3)
    assert outcomes.recall(b"sha1", b"other", "a/test_x.py") is None  # another context
    assert outcomes.recall(b"sha1", b"ctx", "b/test_x.py") == (
        dataclasses.replace(found, path="b/test_x.py"),
        100,
    )
    assert outcomes.recall(b"sha2", b"ctx", "c.py") == (
        ScanError("c.py", "parse", "SyntaxError"),
        7,
    )
    outcomes.keep(b"sha4", b"ctx", None, 1)  # 2 + 1 + 1 + 1 = 5: all kept
    assert outcomes.recall(b"sha1", b"ctx", "x.py") is not None
    outcomes.keep(b"sha5", b"ctx", None, 1)  # past 5: the oldest goes
    assert outcomes.recall(b"sha1", b"ctx", "x.py") is None
    assert outcomes.recall(b"sha5", b"ctx", "x.py") == (None, 1)
    many = tuple(TestCase(f"test_{i}", i) for i in range(5))
    outcomes.keep(b"sha6", b"ctx", TestFile("t.py", "pytest", "python", (), many), 9)
    assert outcomes.recall(b"sha6", b"ctx", "t.py") is None  # larger than the bound


def test_listings_are_bounded_by_their_files_oldest_first(
    repos: dict[str, ClonedSource],
) -> None:
    source = repos["a"]
    real = scan.list_commit(str(source.path), source.commit)
    listings = memo.Listings(max_files=100)

    def of(files: int) -> scan.Listing:
        return dataclasses.replace(real, files_scanned=files)

    first, second, third = of(40), of(40), of(30)
    listings.keep(b"t1", first)
    listings.keep(b"t2", second)
    assert listings.recall(b"t1") is first
    listings.keep(b"t3", third)  # 110 files: the oldest goes
    assert listings.recall(b"t1") is None
    assert listings.recall(b"t2") is second
    assert listings.recall(b"t3") is third
    listings.keep(b"t4", of(101))  # larger than the bound: never kept
    assert listings.recall(b"t4") is None
    assert listings.recall(b"t2") is second
