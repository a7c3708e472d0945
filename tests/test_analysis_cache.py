"""The analyzer's per-file cache (issue 18): forks share entries, a warm cache gives the
uncached inventory, and nothing the cache does (hold stale, damaged or no values, fail)
changes a report.

The repositories are real git repositories built with the ``git`` command; the cache is
a dict. Every analysis runs in worker processes, as in production, with two of them so
that the candidates are split into two parts.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
import trio

from clonegate import (
    AnalysisReport,
    AnalysisSettings,
    AnalyzerStatistics,
    ClonedSource,
    TestInventoryAnalyzer,
)
from clonegate._adapters.analysis import analyzer as analyzer_module
from clonegate._adapters.analysis.cache_keys import (
    UndecodableValue,
    cache_key,
    decode,
    encode_file,
    encode_parse_error,
)
from clonegate._adapters.analysis.scan import list_commit, scan_commit
from clonegate._adapters.clones import discard
from clonegate._domain.inventory import (
    ScanError,
    TestCase,
    TestFile,
    TestStatus,
    TestSuite,
)
from clonegate._domain.store import StoreError

from .support.repos import git

PYTHON_FILES = 150
JS_FILES = 60
STAMP = {"GIT_AUTHOR_DATE": "@1700000000 +0000", "GIT_COMMITTER_DATE": "@1700000000 +0000"}


def _python_test(i: int, extra: str = "") -> str:
    return (
        "import pytest\n\n\n"
        f"def test_value_{i}():\n    assert {i} == {i}\n\n\n"
        f"@pytest.mark.skip(reason='later')\ndef test_skipped_{i}():\n    pass\n\n\n"
        f"def check_{i}():\n    assert True\n\n\n"
        f"class TestGroup{i}:\n    def test_one(self):\n        pass\n\n"
        f"    class TestInner:\n        @pytest.mark.xfail\n        def test_deep(self):\n"
        f"            pass\n{extra}"
    )


def _js_test(i: int) -> str:
    return (
        f"describe('module {i}', () => {{\n"
        f"  it('works {i}', () => {{ expect({i}).toBe({i}); }});\n"
        f"  it.skip('later {i}', () => {{}});\n"
        f"  describe('inner', () => {{ test.todo('someday'); }});\n"
        "});\n"
    )


BASE: dict[str, str] = {
    "pytest.ini": "[pytest]\naddopts = -q\n",
    "package.json": '{"devDependencies": {"jest": "^29"}}\n',
    "src/app.py": "def app():\n    return 1\n",
    "tests/helpers.py": "def helper():\n    return 2\n",
    "tests/test_nothing.py": "def helper():\n    return 3\n",  # a candidate without tests
    "tests/test_broken.py": "def test_broken(:\n    pass\n",
    "web/broken.test.js": "describe('broken', () => {\n  it('x', ( => {});\n",
    **{f"tests/pkg{i % 5}/test_module_{i}.py": _python_test(i) for i in range(PYTHON_FILES)},
    **{f"web/part{i % 3}/module_{i}.test.js": _js_test(i) for i in range(JS_FILES)},
}
CANDIDATES = PYTHON_FILES + JS_FILES + 3  # with test_nothing.py and the two broken files
CHANGED = "tests/pkg3/test_module_3.py"


def _commit(work: Path, files: Mapping[str, str | None], message: str) -> str:
    for name, text in files.items():
        target = work / name
        if text is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", message, cwd=work, env=STAMP)
    return git("rev-parse", "HEAD", cwd=work)


def _source(work: Path, head: str) -> ClonedSource:
    when = datetime(2023, 11, 14, tzinfo=UTC)
    return ClonedSource(str(work), work, "main", head, when, 0, True, None, remove=discard)


def _origin(root: Path, files: Mapping[str, str | None] = BASE) -> ClonedSource:
    work = root / "origin"
    git("init", "-q", "-b", "main", str(work))
    return _source(work, _commit(work, files, "origin"))


def _fork(origin: ClonedSource, work: Path, changes: Mapping[str, str | None]) -> ClonedSource:
    """A clone of ``origin`` with one more commit: ``changes`` (None deletes a file)."""
    git("clone", "-q", str(origin.path), str(work))
    return _source(work, _commit(work, changes, "fork"))


@pytest.fixture(scope="module")
def forks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ClonedSource]:
    root = tmp_path_factory.mktemp("forks")
    a = _origin(root)
    b = _fork(a, root / "b", {CHANGED: _python_test(3, "\n\ndef test_added():\n    pass\n")})
    naming = _fork(a, root / "naming", {"pytest.ini": "[pytest]\npython_functions = check_*\n"})
    vitest = _fork(a, root / "vitest", {"web/part1/vitest.config.ts": "export default load()\n"})
    return {"a": a, "b": b, "naming": naming, "vitest": vitest}


class MemoryCache:
    """The AnalysisCache port on a dict: a key kept again takes the new value."""

    def __init__(self) -> None:
        self.entries: dict[bytes, bytes] = {}
        self.looked_up: list[int] = []

    async def lookup(self, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        await trio.lowlevel.checkpoint()
        self.looked_up.append(len(keys))
        return {key: self.entries[key] for key in keys if key in self.entries}

    async def keep(self, entries: Mapping[bytes, bytes]) -> None:
        await trio.lowlevel.checkpoint()
        self.entries.update(entries)


class FailingCache(MemoryCache):
    def __init__(self, *, lookup: bool, keep: bool) -> None:
        super().__init__()
        self.fail_lookup, self.fail_keep = lookup, keep
        self.kept = 0

    async def lookup(self, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        if self.fail_lookup:
            raise StoreError("database is locked")
        return await super().lookup(keys)

    async def keep(self, entries: Mapping[bytes, bytes]) -> None:
        self.kept += 1
        if self.fail_keep:
            raise StoreError("disk full")
        await super().keep(entries)


async def _analyze(
    source: ClonedSource, cache: MemoryCache | None = None
) -> tuple[AnalysisReport, AnalyzerStatistics]:
    analyzer = TestInventoryAnalyzer(AnalysisSettings(processes=2, cache=cache))
    report = await analyzer.analyze(source)
    return report, analyzer.statistics()


def _keys(
    source: ClonedSource, version: str = analyzer_module.ANALYZER_VERSION
) -> dict[str, bytes]:
    listing = list_commit(str(source.path), source.commit)
    return {
        path: cache_key(sha, context, version)
        for (path, sha), context in zip(listing.candidates, listing.contexts, strict=True)
    }


async def test_a_fork_parses_only_the_file_it_changed(forks: dict[str, ClonedSource]) -> None:
    cache = MemoryCache()
    cold, stats = await _analyze(forks["a"], cache)
    assert stats == AnalyzerStatistics(CANDIDATES, 0, CANDIDATES, CANDIDATES)
    assert cold == (await _analyze(forks["a"]))[0]  # a cold cache changes nothing
    assert cold.inventory.test_files == PYTHON_FILES + JS_FILES
    assert cold.facts.bytes_read > 0

    fork, stats = await _analyze(forks["b"], cache)
    assert stats == AnalyzerStatistics(1, CANDIDATES - 1, 1, 1)
    uncached, _ = await _analyze(forks["b"])
    assert fork.inventory == uncached.inventory
    assert fork.analyzer_version == uncached.analyzer_version
    assert fork.facts.files_scanned == uncached.facts.files_scanned
    (changed,) = (f for f in fork.inventory.files if f.path == CHANGED)
    assert changed.tests[-1].name == "test_added"
    # Only the changed file was read: what a cached file adds to bytes_read is 0.
    assert fork.facts.bytes_read == len(_python_test(3, "\n\ndef test_added():\n    pass\n"))

    again, stats = await _analyze(forks["a"], cache)
    assert stats == AnalyzerStatistics(0, CANDIDATES, 0, 0)
    assert again.inventory == cold.inventory
    assert again.facts.bytes_read == 0


def test_forks_share_the_keys_of_the_files_they_share(forks: dict[str, ClonedSource]) -> None:
    a, b = _keys(forks["a"]), _keys(forks["b"])
    assert a.keys() == b.keys()
    assert [p for p in a if a[p] != b[p]] == [CHANGED]
    assert len(set(a.values())) == len(a)  # every file is unique here
    assert all(len(key) == 20 for key in a.values())


async def test_a_version_bump_misses_everything(
    forks: dict[str, ClonedSource], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = MemoryCache()
    await _analyze(forks["a"], cache)
    monkeypatch.setattr(analyzer_module, "ANALYZER_VERSION", "clonegate-analyzer/bumped")
    analyzer = TestInventoryAnalyzer(AnalysisSettings(processes=2, cache=cache))
    assert analyzer.version == "clonegate-analyzer/bumped"
    report = await analyzer.analyze(forks["a"])
    assert analyzer.statistics() == AnalyzerStatistics(CANDIDATES, 0, CANDIDATES, CANDIDATES)
    assert report.analyzer_version == "clonegate-analyzer/bumped"
    assert len(cache.entries) == 2 * CANDIDATES


async def test_pytest_naming_changes_the_python_keys_and_the_result(
    forks: dict[str, ClonedSource],
) -> None:
    a, naming = _keys(forks["a"]), _keys(forks["naming"])
    assert a.keys() == naming.keys()
    for path in a:
        # Every Python file is in pytest.ini's scope; no JavaScript file is.
        assert (a[path] != naming[path]) == path.endswith(".py"), path
    cache = MemoryCache()
    await _analyze(forks["a"], cache)
    report, stats = await _analyze(forks["naming"], cache)
    assert stats.cache_hits == JS_FILES + 1  # the JavaScript files, broken.test.js included
    assert report.inventory == (await _analyze(forks["naming"]))[0].inventory
    module = next(f for f in report.inventory.files if f.path == CHANGED)
    # python_functions = check_*: check_3 is a test, test_value_3 no longer is.
    assert [t.name for t in module.tests] == ["check_3"]


async def test_a_nearer_config_changes_the_framework_and_the_keys_below_it(
    forks: dict[str, ClonedSource],
) -> None:
    a, vitest = _keys(forks["a"]), _keys(forks["vitest"])
    changed = sorted(p for p in a if a[p] != vitest[p])
    assert changed == sorted(p for p in a if p.startswith("web/part1/"))
    cache = MemoryCache()
    await _analyze(forks["a"], cache)
    report, stats = await _analyze(forks["vitest"], cache)
    # A config that is code makes its scope's files candidates for their imports (ADR
    # 0004's import rule): the config itself is one, read and found to import nothing.
    new = sorted(p for p in vitest if p not in a)
    assert set(new) <= {"web/part1/vitest.config.ts"}
    assert stats.files_parsed == len(changed) + len(new)
    assert report.inventory == (await _analyze(forks["vitest"]))[0].inventory
    frameworks = {f.framework for f in report.inventory.files if f.path.startswith("web/part1/")}
    assert frameworks == {"vitest"}
    assert {f.config_note for f in report.inventory.files if f.framework == "vitest"} == {
        "vitest.config.ts is code, not literals: vitest's defaults"
    }


async def test_parse_errors_are_cached_and_reported_the_same(
    forks: dict[str, ClonedSource],
) -> None:
    cache = MemoryCache()
    cold, _ = await _analyze(forks["a"], cache)
    warm, stats = await _analyze(forks["a"], cache)
    assert stats.files_parsed == 0
    assert [(e.path, e.phase) for e in warm.inventory.errors] == [
        ("tests/test_broken.py", "parse"),
        ("web/broken.test.js", "parse"),
    ]
    assert warm.inventory.errors == cold.inventory.errors
    assert warm.inventory.errors[0].message.startswith("syntax error at line 1")


async def test_read_errors_are_not_cached(tmp_path: Path) -> None:
    files = {"tests/test_ok.py": "def test_ok():\n    pass\n"}
    source = _origin(tmp_path, {**files, "tests/test_huge.py": "# padding\n" * (1024 * 1024 + 1)})
    cache = MemoryCache()
    cold, stats = await _analyze(source, cache)
    assert stats == AnalyzerStatistics(1, 0, 2, 1)  # the huge file is a miss, not read
    warm, stats = await _analyze(source, cache)
    assert stats == AnalyzerStatistics(0, 1, 1, 0)
    assert warm.inventory == cold.inventory
    assert [(e.path, e.phase) for e in warm.inventory.errors] == [("tests/test_huge.py", "read")]


@pytest.mark.parametrize(
    "damage",
    [
        b"not json",
        b"\xff\xfe",
        b"[1, 2, 3, 4, 5]",
        b'["pytest"]',
        b'{"framework": "pytest"}',
        b"1",
        b"0.0",
        b"null",
        b'["pytest", "go", "", [], []]',  # another language than the path's
        b'["pytest", "python", "", [["t", 1, "asleep"]], []]',
        b'["pytest", "python", "", [["t", true]], []]',
        b'["pytest", "python", "", [], [["s", 1, [], [["deep", 2, [], "x"]]]]]',
        b"[" * 100_000,
    ],
)
async def test_a_damaged_value_is_a_miss(forks: dict[str, ClonedSource], damage: bytes) -> None:
    cache = MemoryCache()
    cold, _ = await _analyze(forks["a"], cache)
    target = _keys(forks["a"])[CHANGED]
    cache.entries[target] = damage
    warm, stats = await _analyze(forks["a"], cache)
    assert stats == AnalyzerStatistics(1, CANDIDATES - 1, 1, 1)
    assert warm.inventory == cold.inventory
    assert cache.entries[target] != damage  # repaired by the re-parse
    again, stats = await _analyze(forks["a"], cache)
    assert stats.files_parsed == 0
    assert again.inventory == cold.inventory


def test_every_damaged_value_is_refused_by_decode() -> None:
    with pytest.raises(UndecodableValue):
        decode(b"[" * 100_000, "tests/test_x.py")
    with pytest.raises(UndecodableValue):
        decode(b'["jest", "javascript", "", [], []]', "tests/test_x.py")


def test_values_round_trip_and_are_compact() -> None:
    inner = TestSuite("Inner", 5, (), (TestCase("test_deep", 6, TestStatus.XFAIL),))
    found = TestFile(
        "tests/test_x.py",
        "pytest",
        "python",
        (TestSuite("TestGroup", 3, (inner,), (TestCase("test_one", 4),)),),
        (TestCase("test_a", 1), TestCase("test_b", 2, TestStatus.SKIPPED)),
        "a note",
    )
    value = encode_file(found)
    assert value == (
        b'["pytest","python","a note",[["test_a",1],["test_b",2,"skipped"]],'
        b'[["TestGroup",3,[["test_one",4]],[["Inner",5,[["test_deep",6,"xfail"]],[]]]]]]'
    )
    assert decode(value, "tests/test_x.py") == found
    assert decode(encode_file(None), "tests/test_x.py") is None
    error = encode_parse_error("syntax error at line 1: \x1b[2J")
    assert decode(error, "a.py") == ScanError("a.py", "parse", "syntax error at line 1: \x1b[2J")


@pytest.mark.parametrize(("lookup", "keep"), [(True, False), (False, True), (True, True)])
async def test_a_failing_cache_changes_nothing_but_a_warning(
    forks: dict[str, ClonedSource],
    caplog: pytest.LogCaptureFixture,
    lookup: bool,
    keep: bool,
) -> None:
    uncached, _ = await _analyze(forks["a"])
    cache = FailingCache(lookup=lookup, keep=keep)
    with caplog.at_level(logging.WARNING, logger="clonegate"):
        report, stats = await _analyze(forks["a"], cache)
    assert report == uncached
    assert stats == AnalyzerStatistics(CANDIDATES, 0, CANDIDATES, 0)
    (warning,) = [r for r in caplog.records if r.name == "clonegate"]
    assert warning.levelno == logging.WARNING
    assert "database is locked" in warning.getMessage() or "disk full" in warning.getMessage()
    assert cache.kept == (0 if lookup else 1)  # a cache that cannot look up is left alone


@pytest.mark.parametrize("where", ["lookup", "keep"])
async def test_cancellation_in_the_cache_is_not_swallowed(
    forks: dict[str, ClonedSource], caplog: pytest.LogCaptureFixture, where: str
) -> None:
    class CancellingCache(MemoryCache):
        async def lookup(self, keys: Sequence[bytes]) -> dict[bytes, bytes]:
            if where == "lookup":
                scope.cancel()
            return await super().lookup(keys)

        async def keep(self, entries: Mapping[bytes, bytes]) -> None:
            if where == "keep":
                scope.cancel()
            await super().keep(entries)

    reports = []
    with caplog.at_level(logging.WARNING, logger="clonegate"), trio.CancelScope() as scope:
        reports.append(await _analyze(forks["a"], CancellingCache()))
    assert scope.cancelled_caught
    assert reports == []
    assert not [r for r in caplog.records if r.name == "clonegate"]


async def test_a_fully_cached_repository_starts_no_scan_worker(
    forks: dict[str, ClonedSource], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = MemoryCache()
    await _analyze(forks["a"], cache)
    jobs: list[str] = []
    real = analyzer_module.run_in_worker  # type: ignore[attr-defined]

    async def counted(pool: object, function: object, *args: object, **options: object) -> object:
        jobs.append(getattr(function, "__name__", ""))
        return await real(pool, function, *args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(analyzer_module, "run_in_worker", counted)
    report, stats = await _analyze(forks["a"], cache)
    assert jobs == ["list_commit"]
    assert stats.files_parsed == 0
    assert report.inventory == scan_commit(str(forks["a"].path), forks["a"].commit).inventory
