"""The fixture repositories the tests' servers serve: small ones with a few commits
and branches, large ones made with git fast-import, copies of a directory, and
repositories of test files in each framework the analyzer reads."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

BIG_BLOB_BYTES = 4 * 1024 * 1024  # the "big" fixture repository's random blob
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Fixture",
    "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
    "GIT_COMMITTER_NAME": "Fixture",
    "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV, **(env or {})},
        check=True,
        capture_output=True,
        text=True,
    )
    return result.stdout.strip()


@dataclass(frozen=True)
class FixtureRepo:
    name: str  # served as /<name>.git
    head: str  # sha of HEAD's branch tip
    branch: str
    commits: int  # on the HEAD branch
    committed_at: int  # unix time of the tip


def make_repo(
    root: Path,
    name: str,
    *,
    commits: int = 3,
    branch: str = "main",
    other_branches: Iterable[str] = ("dev",),
    files: dict[str, bytes] | None = None,
    epoch: int = 1_700_000_000,
) -> FixtureRepo:
    """Build ``root/<name>.git``: ``commits`` commits on ``branch``, side branches, a tag."""
    work = root / f"{name}.work"
    git("init", "-q", "-b", branch, str(work))
    for i in range(commits):
        (work / f"file{i}.txt").write_text(f"commit {i}\n")
        for path, data in (files or {}).items() if i == commits - 1 else ():
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            (work / path).write_bytes(data)
        git("add", "-A", cwd=work)
        stamp = f"@{epoch + i} +0200"
        dates = {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        git("commit", "-q", "-m", f"commit {i}", cwd=work, env=dates)
    head = git("rev-parse", "HEAD", cwd=work)
    for other in other_branches:
        git("checkout", "-q", "-b", other, cwd=work)
        (work / f"{other}.txt").write_text(other)
        git("add", "-A", cwd=work)
        git("commit", "-q", "-m", f"on {other}", cwd=work)
        git("checkout", "-q", branch, cwd=work)
    git("tag", "v1", head, cwd=work)
    git("clone", "-q", "--bare", str(work), str(root / f"{name}.git"))
    return FixtureRepo(name, head, branch, commits, epoch + commits - 1)


def make_empty_repo(root: Path, name: str) -> None:
    git("init", "-q", "--bare", "-b", "main", str(root / f"{name}.git"))


def make_large_repo(root: Path, name: str, *, files: int = 2000, commits: int = 500) -> str:
    """A bare ``root/<name>.git`` of ``files`` text files and ``commits`` commits, via fast-import.

    The first commit adds every file; each later one rewrites a few. Returns HEAD's sha.
    """
    bare = root / f"{name}.git"
    git("init", "-q", "--bare", "-b", "main", str(bare))
    chunks: list[bytes] = []
    for c in range(commits):
        touched = range(files) if c == 0 else [(c * 7 + k * 131) % files for k in range(4)]
        body = [
            f"commit refs/heads/main\nmark :{c + 1}\n"
            f"committer Fixture <fixture@example.invalid> {1_700_000_000 + c} +0000\n"
            f"data {len(f'change {c}')}\nchange {c}\n"
        ]
        if c:
            body.append(f"from :{c}\n")
        for f in touched:
            rng = random.Random(f * 100_003 + c)  # deterministic, and not too compressible
            lines = (f"value_{i} = {rng.getrandbits(64):#x}" for i in range(20 + f % 60))
            text = (f"# module {f}, revision {c}\n" + "\n".join(lines) + "\n").encode()
            path = f"src/pkg{f % 40}/module_{f}.py"
            body.append(f"M 644 inline {path}\ndata {len(text)}\n")
            chunks.append("".join(body).encode() + text + b"\n")
            body = []
        if body:
            chunks.append("".join(body).encode())
    return fast_import(bare, b"".join(chunks))


def fast_import(bare: Path, stream: bytes) -> str:
    """Feed ``stream`` to ``git fast-import`` in ``bare``, pack it as a real host would
    serve it, and return HEAD's sha."""
    subprocess.run(
        ["git", "-C", str(bare), "fast-import", "--quiet"],
        input=stream,
        check=True,
        env={**os.environ, **GIT_ENV},
    )
    git("-C", str(bare), "repack", "-adq")
    return git("-C", str(bare), "rev-parse", "HEAD")


def commit_tree(
    source: Path, root: Path, name: str, *, extra: Callable[[Path], None] | None = None
) -> str:
    """Commit a copy of the directory ``source`` as the bare repository ``root/<name>.git``.

    ``extra`` may add files the fixture cannot hold in git itself (symlinks, huge files).
    Returns HEAD's sha.
    """
    work = root / f"{name}.work"
    shutil.copytree(source, work, symlinks=True)
    if extra is not None:
        extra(work)
    git("init", "-q", "-b", "main", str(work))
    git("add", "-A", "-f", cwd=work)
    stamp = "@1700000000 +0000"
    git(
        "commit",
        "-q",
        "-m",
        "fixture",
        cwd=work,
        env={"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp},
    )
    git("clone", "-q", "--bare", str(work), str(root / f"{name}.git"))
    return git("rev-parse", "HEAD", cwd=work)


_TEMPLATES = {
    "python": (
        "tests/pkg{d}/test_module_{i}.py",
        "import pytest\n\n\n{body}",
        "@pytest.mark.parametrize('n', [1, 2])\ndef test_case_{i}_{k}(n):\n"
        "    value = {k} * n\n    assert value == {k} * n\n\n\n",
    ),
    "jest": (
        "src/feature{d}/module_{i}.test.js",
        "const {{ run }} = require('../run');\n\ndescribe('module {i}', () => {{\n{body}}});\n",
        "  it('case {k}', () => {{\n    expect(run({k})).toBe({k});\n  }});\n",
    ),
    "vitest": (
        "web/feature{d}/module_{i}.spec.ts",
        "import {{ describe, it, expect }} from 'vitest';\n"
        "\ndescribe('module {i}', () => {{\n{body}}});\n",
        "  it.skip('case {k}', () => {{\n    const v: number = {k};\n"
        "    expect(v).toBe({k});\n  }});\n",
    ),
    "go": (
        "pkg/feature{d}/module_{i}_test.go",
        'package feature\n\nimport "testing"\n\n{body}',
        'func TestCase{i}_{k}(t *testing.T) {{\n\tt.Run("sub", func(t *testing.T) {{\n'
        '\t\tif {k} != {k} {{\n\t\t\tt.Fatal("no")\n\t\t}}\n\t}})\n}}\n\n',
    ),
    "junit5": (
        "src/test/java/feature{d}/Module{i}Test.java",
        "package feature;\n\nimport org.junit.jupiter.api.Test;\n\nclass Module{i}Test {{\n"
        "{body}}}\n",
        "    @Test\n    void case{k}() {{\n        int v = {k};\n    }}\n\n",
    ),
    "rust": (
        "crates/feature{d}/tests/module_{i}.rs",
        "use std::fmt;\n\n{body}",
        "#[test]\nfn case_{i}_{k}() {{\n    assert_eq!({k}, {k});\n}}\n\n",
    ),
    # Not in the default mix (issue 40): ``bench_analyzer.py --kinds`` picks them.
    "kotlin-junit5": (
        "src/test/kotlin/feature{d}/Module{i}Test.kt",
        "package feature\n\nimport org.junit.jupiter.api.Test\n\nclass Module{i}Test {{\n"
        "{body}}}\n",
        "    @Test\n    fun `case {k}`() {{\n        val v = {k}\n    }}\n\n",
    ),
    "kotest": (
        "src/test/kotlin/feature{d}/Module{i}Spec.kt",
        "package feature\n\nimport io.kotest.core.spec.style.FunSpec\n\n"
        'class Module{i}Spec : FunSpec({{\n    context("module {i}") {{\n{body}    }}\n}})\n',
        '        test("case {k}") {{\n            val v = {k}\n        }}\n\n',
    ),
    "testng": (
        "src/test/java/feature{d}/Module{i}NgTest.java",
        "package feature;\n\nimport org.testng.annotations.Test;\n\n@Test\n"
        "public class Module{i}NgTest {{\n{body}}}\n",
        "    public void case{k}() {{\n        int v = {k};\n    }}\n\n",
    ),
    "playwright": (
        "e2e/feature{d}/flow_{i}.spec.ts",
        "import {{ test, expect }} from '@playwright/test';\n\n"
        "test.describe('flow {i}', () => {{\n{body}}});\n",
        "  test('step {k}', async ({{ page }}) => {{\n    await page.goto('/{k}');\n"
        "    await test.step('check', async () => {{}});\n  }});\n",
    ),
    "cypress": (
        "cypress/e2e/feature{d}/page_{i}.cy.js",
        "describe('page {i}', () => {{\n{body}}});\n",
        "  it('shows {k}', () => {{\n    cy.visit('/{k}');\n  }});\n",
    ),
    "node-test": (
        "test/feature{d}/unit_{i}.test.mjs",
        "import {{ describe, test }} from 'node:test';\nimport assert from 'node:assert';\n\n"
        "describe('unit {i}', () => {{\n{body}}});\n",
        "  test('case {k}', {{ skip: {k} === 5 }}, (t) => {{\n    assert.equal({k}, {k});\n"
        "  }});\n",
    ),
    # Issue 41: XCTest and Swift Testing in a package's Tests/ (a Package.swift is added).
    "xctest": (
        "Tests/Feature{d}Tests/Module{i}Tests.swift",
        "import XCTest\n@testable import Feature\n\nfinal class Module{i}Tests: XCTestCase {{\n"
        "{body}}}\n",
        "    func testCase{k}() throws {{\n        let v = {k}\n        XCTAssertEqual(v, {k})\n"
        "    }}\n\n",
    ),
    "swift-testing": (
        "Tests/Feature{d}Tests/Unit{i}.swift",
        "import Testing\n@testable import Feature\n\n@Suite struct Unit{i} {{\n{body}}}\n",
        "    @Test(arguments: [1, 2]) func case{k}(n: Int) {{\n"
        "        #expect(n * {k} == {k} * n)\n    }}\n\n",
    ),
    # Issue 41's PHP kinds, also picked by ``--kinds`` only.
    "phpunit": (
        "tests/Feature{d}/Module{i}Test.php",
        "<?php\n\nnamespace Tests\\Feature;\n\nuse PHPUnit\\Framework\\TestCase;\n\n"
        "final class Module{i}Test extends TestCase\n{{\n{body}}}\n",
        "    /** @dataProvider sizes */\n    public function testCase{k}(int $n): void\n"
        "    {{\n        $this->assertSame({k} * $n, {k} * $n);\n    }}\n\n",
    ),
    "pest": (
        "tests/Unit{d}/Module{i}Test.php",
        "<?php\n\ndescribe('module {i}', function () {{\n{body}}});\n",
        "    it('does {k}', function (int $n) {{\n        expect({k} * $n)->toBe({k} * $n);\n"
        "    }})->with([1, 2]);\n\n",
    ),
    # Issue 41's Ruby kinds.
    "ruby-rspec": (
        "spec/feature{d}/module_{i}_spec.rb",
        'require "spec_helper"\n\nRSpec.describe "module {i}" do\n  let(:v) {{ {i} }}\n\n'
        '  context "when used" do\n{body}  end\nend\n',
        '    it "handles case {k}", skip: {k} == 5 do\n      expect(v + {k}).to eq({i} + {k})\n'
        "    end\n\n",
    ),
    "ruby-minitest": (
        "test/feature{d}/module_{i}_test.rb",
        'require "test_helper"\n\nclass Module{i}Test < Minitest::Test\n  def setup\n'
        "    @v = {i}\n  end\n\n{body}end\n",
        "  def test_case_{k}\n    skip if {k} == 5\n    assert_equal @v + {k}, {i} + {k}\n"
        "  end\n\n",
    ),
    # Issue 41's C++ kinds, not in the default mix either.
    "gtest": (
        "src/feature{d}/module_{i}_test.cc",
        '#include <gtest/gtest.h>\n\n#include "feature/module.h"\n\nnamespace feature {{\n\n'
        "{body}}}  // namespace feature\n",
        "TEST(Module{i}Test, Case{k}) {{\n  int v = {k};\n  EXPECT_EQ(v, {k});\n}}\n\n",
    ),
    "catch2": (
        "tests/feature{d}/module_{i}.cpp",
        '#include <catch2/catch_test_macros.hpp>\n\n#include "feature/module.h"\n\n{body}',
        'TEST_CASE("module {i} case {k}", "[feature]") {{\n  int v = {k};\n'
        '  SECTION("checks") {{\n    REQUIRE(v == {k});\n  }}\n}}\n\n',
    ),
    "doctest": (
        "tests/feature{d}/module_{i}.cpp",
        '#include <doctest/doctest.h>\n\n#include "feature/module.h"\n\n'
        'TEST_SUITE("module {i}") {{\n\n{body}}}\n',
        'TEST_CASE("case {k}" * doctest::timeout(1)) {{\n  int v = {k};\n'
        '  SUBCASE("checks") {{\n    CHECK(v == {k});\n  }}\n}}\n\n',
    ),
    # Issue 41's: one test project (_PROJECTS), a class of [Fact]s and a [Theory] per file.
    "xunit": (
        "tests/Suite.Tests/Feature{d}/Module{i}Tests.cs",
        "using Xunit;\n\nnamespace Suite.Tests.Feature;\n\npublic class Module{i}Tests\n{{\n"
        "{body}}}\n",
        "    [Theory]\n    [InlineData({k})]\n    public void Case{k}(int v)\n    {{\n"
        "        Assert.Equal({k}, v);\n    }}\n\n",
    ),
}
DEFAULT_KINDS = ("python", "jest", "vitest", "go", "junit5", "rust")
# The project files that make a kind's files tests (C#'s test project).
_PROJECTS = {
    "xunit": (
        "tests/Suite.Tests/Suite.Tests.csproj",
        '<Project Sdk="Microsoft.NET.Sdk">\n  <ItemGroup>\n'
        '    <PackageReference Include="xunit" Version="2.9.3" />\n  </ItemGroup>\n</Project>\n',
    ),
}
# What a package.json names for the JavaScript kinds that run only in a project using them.
_PACKAGES = {"playwright": "@playwright/test", "cypress": "cypress"}


def make_test_suite_repo(
    root: Path,
    name: str,
    *,
    test_files: int = 2000,
    tests_per_file: int = 6,
    other_files: int = 1000,
    kinds: tuple[str, ...] = DEFAULT_KINDS,
    salt: str = "",
) -> str:
    """A bare repository with ``test_files`` test files across six frameworks (or
    ``kinds``, names of ``_TEMPLATES``), via fast-import.

    Every file is unique (its index is in every name), so git cannot share blobs and
    the analyzer really reads and parses each one. ``salt``: a first line ``# salt``
    in every ``.py`` file, so that repositories of other salts share none of them.
    Returns HEAD's sha.
    """
    bare = root / f"{name}.git"
    git("init", "-q", "--bare", "-b", "main", str(bare))
    templates = [_TEMPLATES[kind] for kind in kinds]
    blobs = []
    for i in range(test_files):
        path, outer, inner = templates[i % len(templates)]
        body = "".join(inner.format(i=i, k=k) for k in range(tests_per_file))
        blobs.append((path.format(d=i % 50, i=i), outer.format(i=i, body=body)))
    if any(kind in ("xctest", "swift-testing") for kind in kinds):
        blobs.append(("Package.swift", "// swift-tools-version:5.9\nimport PackageDescription\n"))
    for i in range(other_files):
        blobs.append((f"src/lib/part{i % 50}/util_{i}.py", f"def util_{i}():\n    return {i}\n"))
    packages = ["jest", *(_PACKAGES[kind] for kind in kinds if kind in _PACKAGES)]
    dependencies = ", ".join(
        f'"{package}": "*"' if package != "jest" else '"jest": "^29"' for package in packages
    )
    blobs.append(("package.json", f'{{"devDependencies": {{{dependencies}}}}}\n'))
    blobs.extend(_PROJECTS[kind] for kind in kinds if kind in _PROJECTS)
    stream = [
        "commit refs/heads/main\ncommitter Fixture <fixture@example.invalid> "
        "1700000000 +0000\ndata 7\nfixture\n"
    ]
    for path, text in blobs:
        if salt and path.endswith(".py"):
            text = f"# {salt}\n{text}"
        data = text.encode()
        stream.append(f"M 644 inline {path}\ndata {len(data)}\n")
        stream.append(text + "\n")
    return fast_import(bare, "".join(stream).encode())
