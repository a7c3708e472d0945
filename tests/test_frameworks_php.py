"""PHPUnit's and Pest's cases, table-driven as in :mod:`.test_frameworks` (issue 41;
ADR 0005): what is a test, with which status, and what is NOT a test; which files
each framework runs (ADR 0004), ``phpunit.xml`` read as bounded data."""

from __future__ import annotations

import pytest

from clonegate._adapters.analysis.config import ConfigScopes
from clonegate._adapters.analysis.frameworks import phpunit
from clonegate._adapters.analysis.frameworks.definition import Settings
from clonegate._adapters.analysis.problems import Refused

from .test_framework_files import frameworks_of
from .test_frameworks import found

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


CLASS = "<?php\nclass ATest extends TestCase { public function testA() {} }\n"
PEST_FILE = "<?php\nit('a', function () {});\n"
CONFIG = """\
<?xml version="1.0" encoding="UTF-8"?>
<phpunit bootstrap="vendor/autoload.php">
  <testsuites>
    <testsuite name="unit">
      <directory suffix="Spec.php">./spec/unit</directory>
      <directory>tests</directory>
      <file>checks/OneCheck.php</file>
      <exclude>tests/Slow</exclude>
    </testsuite>
  </testsuites>
  <source><include><directory suffix=".php">src</directory></include></source>
</phpunit>
"""

FILES = [
    (
        "defaults: *Test.php under a test/tests directory; PHPUnit's classes, Pest's calls",
        {
            "tests/Unit/ATest.php": CLASS,
            "tests/Feature/BTest.php": PEST_FILE,
            "src/Component/Tests/CTest.php": CLASS,
            "src/DTest.php": CLASS,
            "tests/Unit/Helper.php": CLASS,
            "tests/Pest.php": PEST_FILE,
            "tests/TestCase.php": "<?php\nabstract class TestCase extends Base {}\n",
        },
        {
            "tests/Unit/ATest.php": "phpunit",
            "tests/Feature/BTest.php": "pest",
            "src/Component/Tests/CTest.php": "phpunit",
        },
    ),
    (
        "phpunit.xml's testsuites: directory suffix, file, exclude; <source> is not tests",
        {
            "phpunit.xml": CONFIG,
            "spec/unit/ASpec.php": CLASS,
            "spec/unit/ATest.php": CLASS,
            "tests/BTest.php": PEST_FILE,
            "tests/Slow/CTest.php": CLASS,
            "checks/OneCheck.php": CLASS,
            "src/DTest.php": CLASS,
        },
        {
            "spec/unit/ASpec.php": "phpunit",
            "tests/BTest.php": "pest",
            "checks/OneCheck.php": "phpunit",
        },
    ),
    (
        "phpunit.xml before phpunit.xml.dist in one directory",
        {
            "phpunit.xml": CONFIG.replace("./spec/unit", "other"),
            "phpunit.xml.dist": CONFIG,
            "spec/unit/ASpec.php": CLASS,
            "other/BSpec.php": CLASS,
        },
        {"other/BSpec.php": "phpunit"},
    ),
    (
        "a Pest file declaring a helper class is Pest's; a file of plain code is no one's",
        {
            "phpunit.xml": CONFIG,
            "tests/AMixedTest.php": PEST_FILE + "class Fake extends Base {}\n",
            "tests/BPlainTest.php": "<?php\nfunction helper() {}\n",
        },
        {"tests/AMixedTest.php": "pest"},
    ),
]


@pytest.mark.parametrize(("case", "files", "expected"), FILES, ids=[c[0] for c in FILES])
def test_php_files(case: str, files: dict[str, str], expected: dict[str, str]) -> None:
    assert frameworks_of(files) == expected


HOSTILE_CONFIGS = [
    (
        "an external entity",
        b'<?xml version="1.0"?>\n<!DOCTYPE p [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
        b"<phpunit><testsuites><testsuite><directory>&x;</directory></testsuite>"
        b"</testsuites></phpunit>",
    ),
    (
        "billion laughs",
        b'<!DOCTYPE p [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        b"<phpunit>&b;</phpunit>",
    ),
    ("nested past the bound", b"<a>" * 10_000 + b"</a>" * 10_000),
    ("too large", b"<phpunit>" + b" " * (phpunit.MAX_CONFIG_BYTES + 1) + b"</phpunit>"),
]


@pytest.mark.parametrize(("case", "content"), HOSTILE_CONFIGS, ids=[c[0] for c in HOSTILE_CONFIGS])
def test_hostile_phpunit_xml_is_refused(case: str, content: bytes) -> None:
    with pytest.raises(Refused):
        phpunit.read_config("phpunit.xml", content, phpunit.DEFAULTS)


def test_phpunit_xml_not_xml_or_without_testsuite() -> None:
    with pytest.raises(ValueError, match="not XML"):
        phpunit.read_config("phpunit.xml", b"<phpunit>", phpunit.DEFAULTS)
    settings = phpunit.read_config("phpunit.xml", b"<phpunit/>", phpunit.DEFAULTS)
    assert settings.files == phpunit.DEFAULTS.files
    assert settings.note == "phpunit.xml names no testsuite: defaults"


def test_phpunit_xml_entries_outside_or_odd_are_literal() -> None:
    content = (
        b"<phpunit><testsuites><testsuite>"
        b"<directory>../elsewhere</directory><directory>/abs</directory>"
        b'<directory prefix="x*" suffix="{a,b}.php">t</directory>'
        b"</testsuite></testsuites></phpunit>"
    )
    settings = phpunit.read_config("phpunit.xml", content, phpunit.DEFAULTS)
    assert settings == Settings(files=("t/**/x[*]*[{]a,b[}].php",))


def test_an_exclude_is_its_testsuites_own() -> None:
    """psr7's unit suite excludes tests/Integration, which its next suite runs."""
    config = """\
    <phpunit><testsuites>
      <testsuite name="unit"><directory>tests</directory><exclude>tests/Integration</exclude>
      </testsuite>
      <testsuite name="integration"><directory>tests/Integration</directory></testsuite>
    </testsuites></phpunit>"""
    files = {
        "phpunit.xml.dist": config,
        "tests/ATest.php": CLASS,
        "tests/Integration/BTest.php": CLASS,
    }
    assert frameworks_of(files) == {
        "tests/ATest.php": "phpunit",
        "tests/Integration/BTest.php": "phpunit",
    }


def test_the_php_parser_is_built_only_when_a_php_file_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A worker builds the parsers of the languages it meets (ADR 0003): most
    # repositories hold no PHP.
    from clonegate._adapters.analysis import syntax

    built: list[str] = []
    real = syntax._LANGUAGES["php"]

    def php() -> object:
        built.append("php")
        return real()

    monkeypatch.setitem(syntax._LANGUAGES, "php", php)
    syntax.kit.cache_clear()
    try:
        found("tests/test_a.py", "def test_a():\n    pass\n")
        found("p_test.go", "package p\nfunc TestA(t *testing.T) {}\n")
        assert built == []
        assert found("tests/Unit/ATest.php", CLASS) == [("ATest/testA", "active")]
        assert built == ["php"]
    finally:
        syntax.kit.cache_clear()


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


def test_a_refused_phpunit_xml_is_a_config_error_and_the_defaults_apply() -> None:
    hostile = b'<!DOCTYPE p [<!ENTITY x SYSTEM "file:///etc/passwd">]><phpunit>&x;</phpunit>'
    sources = {"phpunit.xml": hostile, "tests/ATest.php": CLASS.encode(), "x/BTest.php": b""}
    scopes = ConfigScopes(sources, sources.__getitem__)
    assert [(e.path, e.phase) for e in scopes.errors] == [("phpunit.xml", "config")]
    assert "DTD" in scopes.errors[0].message
    assert frameworks_of({p: d.decode() for p, d in sources.items()}) == {
        "tests/ATest.php": "phpunit"
    }
