"""PHPUnit's and Pest's cases, table-driven as in :mod:`.test_frameworks` (issue 41;
ADR 0005): what is a test, with which status, and what is NOT a test. Which files
they run: :mod:`.test_php_files`."""

from __future__ import annotations

import pytest

from clonegate._adapters.analysis.problems import Refused

from .support.sample_sources import PHPUNIT_CLASS
from .support.scans import found, grammars_built

PHPUNIT = [
    (
        "public test* methods, @test, #[Test]; not protected, private or helpers",
        """\
        <?php
        use PHPUnit\\Framework\\TestCase;
        use PHPUnit\\Framework\\Attributes\\Test;
        final class ParserTest extends TestCase {
            public function testA(): void {}
            function testB() {}
            /** @test */
            public function it_parses(): void {}
            #[Test]
            public function c(): void {}
            protected function testHelper() {}
            private function testPrivate() {}
            public function helper() {}
            public function setUp(): void {}
        }""",
        [
            ("ParserTest/testA", "active"),
            ("ParserTest/testB", "active"),
            ("ParserTest/it_parses", "active"),
            ("ParserTest/c", "active"),
        ],
    ),
    (
        "@dataProvider and #[DataProvider] once, whatever the data",
        """\
        <?php
        class ParserTest extends \\PHPUnit\\Framework\\TestCase {
            /** @dataProvider sizes */
            public function testA(int $n): void {}
            #[DataProvider('sizes'), TestWith([1])]
            public function testB(int $n): void {}
            public static function sizes(): array { return [[1], [2], [3]]; }
        }""",
        [("ParserTest/testA", "active"), ("ParserTest/testB", "active")],
    ),
    (
        "markTestSkipped/markTestIncomplete top-level skip; inside an if the test stays active",
        """\
        <?php
        class ParserTest extends TestCase {
            public function testA(): void { $this->markTestSkipped('later'); }
            public function testB(): void { self::markTestIncomplete(); }
            public function testC(): void {
                if (PHP_OS === 'WINNT') { $this->markTestSkipped('windows'); }
            }
        }""",
        [
            ("ParserTest/testA", "skipped"),
            ("ParserTest/testB", "skipped"),
            ("ParserTest/testC", "active"),
        ],
    ),
    (
        "@requires and #[Requires…] on a method or its class are conditional skips",
        """\
        <?php
        class ParserTest extends TestCase {
            /** @requires extension intl */
            public function testA(): void {}
            #[RequiresPhp('>= 8.2')]
            public function testB(): void {}
            public function testC(): void {}
        }
        /** @requires OS Linux */
        class OtherTest extends TestCase {
            public function testD(): void {}
        }
        #[\\PHPUnit\\Framework\\Attributes\\RequiresOperatingSystem('Linux')]
        class ThirdTest extends TestCase {
            public function testE(): void {}
        }""",
        [
            ("ParserTest/testA", "skipped"),
            ("ParserTest/testB", "skipped"),
            ("ParserTest/testC", "active"),
            ("OtherTest/testD", "skipped"),
            ("ThirdTest/testE", "skipped"),
        ],
    ),
    (
        "an abstract base counts where written; a subclass adds only its own; "
        "a class extending nothing is no test class",
        """\
        <?php
        abstract class BaseTest extends TestCase {
            public function testShared(): void {}
        }
        final class ParserTest extends BaseTest {
            public function testOwn(): void {}
        }
        class Helper {
            public function testNothing(): void {}
        }
        function testFunction() {}""",
        [("BaseTest/testShared", "active"), ("ParserTest/testOwn", "active")],
    ),
    (
        "an abstract test method has no body: it counts where implemented, once",
        """\
        <?php
        abstract class BaseTest extends TestCase {
            abstract public function testEach(): void;
            public function testShared(): void {}
        }
        final class ParserTest extends BaseTest {
            public function testEach(): void {}
        }""",
        [("BaseTest/testShared", "active"), ("ParserTest/testEach", "active")],
    ),
    (
        "a docblock's @test must be the method's own, and a comment is no docblock",
        """\
        <?php
        class ParserTest extends TestCase {
            /** @test */
            public function a(): void {}
            public function b(): void {}
            // @test
            public function c(): void {}
            /* @test */
            public function d(): void {}
            /** @testWith [1] */
            public function e(): void {}
        }""",
        [("ParserTest/a", "active")],
    ),
]

PEST = [
    (
        "it (named 'it …'), test, describe suites, nested",
        """\
        <?php
        it('parses', function () { expect(1)->toBe(1); });
        test('sums', fn () => expect(2)->toBe(2));
        describe('parser', function () {
            it('reads', function () {});
            describe('deep', function () { test('x', function () {}); });
        });""",
        [
            ("it parses", "active"),
            ("sums", "active"),
            ("parser/it reads", "active"),
            ("parser/deep/x", "active"),
        ],
    ),
    (
        "->skip() (any condition), ->todo() or no closure, ->only(); a describe's marker applies",
        """\
        <?php
        it('a', function () {})->skip();
        it('b', function () {})->skip(PHP_OS_FAMILY === 'Windows', 'no');
        test('c')->todo();
        test('d');
        it('e', function () {})->only();
        describe('f', function () { it('g', function () {}); })->skip();
        describe('h', function () { it('i', function () {})->only(); })->todo();""",
        [
            ("it a", "skipped"),
            ("it b", "skipped"),
            ("c", "todo"),
            ("d", "todo"),
            ("it e", "focused"),
            ("f/it g", "skipped"),
            ("h/it i", "todo"),
        ],
    ),
    (
        "datasets once: ->with() and shared datasets",
        """\
        <?php
        dataset('sizes', [1, 2, 3]);
        it('fits', function (int $n) {})->with('sizes');
        test('sums', function ($a, $b) {})->with([[1, 2], [3, 4]])->group('math');""",
        [("it fits", "active"), ("sums", "active")],
    ),
    (
        "not tests: hooks, uses(), a method ->it() call, a test in a function, a computed name",
        """\
        <?php
        uses(Tests\\TestCase::class);
        beforeEach(function () { $this->x = 1; });
        $spec->it('no', function () {});
        function helper() { it('never', function () {}); }
        it($name, function () {});
        it("x $y", function () {});""",
        [],
    ),
]


def _ids(cases: list[tuple[str, str, list[tuple[str, str]]]]) -> list[str]:
    return [c[0] for c in cases]


@pytest.mark.parametrize(("case", "source", "expected"), PHPUNIT, ids=_ids(PHPUNIT))
def test_phpunit(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    assert found("tests/Unit/ParserTest.php", source) == expected


@pytest.mark.parametrize(("case", "source", "expected"), PEST, ids=_ids(PEST))
def test_pest(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    assert found("tests/Unit/ParserTest.php", source) == expected


def test_the_php_parser_is_built_only_when_a_php_file_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A worker builds the parsers of the languages it meets (ADR 0003): most
    # repositories hold no PHP.
    with grammars_built(monkeypatch, "php") as built:
        found("tests/test_a.py", "def test_a():\n    pass\n")
        found("p_test.go", "package p\nfunc TestA(t *testing.T) {}\n")
        assert built == []
        assert found("tests/Unit/ATest.php", PHPUNIT_CLASS) == [("ATest/testA", "active")]
        assert built == ["php"]


def test_hostile_php_files_stay_in_their_envelope() -> None:
    # 20,000 one-test classes: each method's class is its parent's parent, never a
    # search over the file's classes; 2,000 nested describes are past the depth bound.
    many = "<?php\n" + "".join(
        f"class C{i}Test extends TestCase {{ public function testA() {{}} }}\n"
        for i in range(20_000)
    )
    assert len(found("tests/ManyTest.php", many)) == 20_000
    deep = "<?php\n" + "describe('x', function () {\n" * 2_000 + "});\n" * 2_000
    with pytest.raises(Refused, match="too deeply nested"):  # the scan's error, not a crash
        found("tests/DeepTest.php", deep)
