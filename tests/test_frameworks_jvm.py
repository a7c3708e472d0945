"""Per-framework cases for Kotlin, table-driven as in :mod:`.test_frameworks` (issue 40;
ADR 0005): JUnit and ``kotlin.test`` in Kotlin, kotest's spec styles; and what is NOT
a test. TestNG's are in :mod:`.test_frameworks_testng`."""

from __future__ import annotations

import pytest

from .support.sample_sources import KOTEST_FUN_SPEC
from .support.scans import NO_CONFIG, found

KOTLIN_JUNIT = [
    (
        "JUnit 5 in Kotlin: backticked names, parameterized once, nested inner classes",
        """\
        import org.junit.jupiter.api.Test
        import org.junit.jupiter.api.Nested
        import org.junit.jupiter.params.ParameterizedTest

        class ParserTest {
            @Test
            fun `reads a file`() {}

            @ParameterizedTest
            @ValueSource(ints = [1, 2, 3])
            fun sizes(size: Int) {}

            @Disabled("later")
            @Test
            fun later() {}

            @DisabledOnOs(OS.WINDOWS)
            @Test
            fun unix() {}

            @BeforeEach
            fun setUp() {}

            fun helper() {}

            @Nested
            inner class Inner {
                @org.junit.jupiter.api.Test
                fun deep() {}
            }
        }
        """,
        [
            ("ParserTest/reads a file", "active"),
            ("ParserTest/sizes", "active"),
            ("ParserTest/later", "skipped"),
            ("ParserTest/unix", "skipped"),
            ("ParserTest/Inner/deep", "active"),
        ],
    ),
    (
        "JUnit 4 in Kotlin: @Ignore on a class skips its tests",
        """\
        import org.junit.Ignore
        import org.junit.Test

        @Ignore
        class ParserTest {
            @Test
            fun a() {}
        }

        class Helper {
            fun b() {}
        }
        """,
        [("ParserTest/a", "skipped")],
    ),
    (
        "kotlin.test: @Test and @Ignore; a top-level function is no test",
        """\
        import kotlin.test.Ignore
        import kotlin.test.Test

        @Test
        fun topLevel() {}

        class ParserTest {
            @Test
            fun a() {}

            @Ignore
            @Test
            fun b() {}
        }
        """,
        [("ParserTest/a", "active"), ("ParserTest/b", "skipped")],
    ),
    (
        "a Kotlin file importing no test framework is not a test file",
        """\
        class ParserTest {
            @Test
            fun a() {}
        }
        """,
        [],
    ),
]

KOTEST = [
    (
        "FunSpec: containers are suites, leaves tests; x-forms, f:, config and bang; "
        "enabledIf is a condition to run",
        KOTEST_FUN_SPEC,
        [
            ("ParserTest/a", "active"),
            ("ParserTest/b", "skipped"),
            ("ParserTest/f:c", "focused"),
            ("ParserTest/!d", "skipped"),
            ("ParserTest/e", "skipped"),
            ("ParserTest/f", "active"),
            ("ParserTest/g", "active"),
            ("ParserTest/ctx/h", "active"),
            ("ParserTest/off/i", "skipped"),
        ],
    ),
    (
        "StringSpec and FreeSpec: strings invoked, '-' containers; init blocks; @Ignored",
        """\
        import io.kotest.core.annotation.Ignored
        import io.kotest.core.spec.style.FreeSpec
        import io.kotest.core.spec.style.StringSpec

        @Ignored
        class C : StringSpec({ "c" {} })

        class A : StringSpec({
            "a" {}
            "b".config(enabled = false) {}
            "c".config(false) {}
            "d".config(tags = setOf(Linux)) {}
        })

        class B : FreeSpec() {
            init {
                "outer" - {
                    "c" {}
                }
            }
        }
        """,
        [
            ("C/c", "skipped"),
            ("A/a", "active"),
            ("A/b", "skipped"),
            ("A/c", "skipped"),
            ("A/d", "active"),
            ("B/outer/c", "active"),
        ],
    ),
    (
        "ShouldSpec, DescribeSpec, FeatureSpec, ExpectSpec",
        """\
        import io.kotest.core.spec.style.*

        class A : ShouldSpec({
            context("c") { should("a") {} }
            xshould("b") {}
        })
        class B : DescribeSpec({
            describe("d") {
                it("a") {}
                xit("b") {}
                context("c") { it("e") {} }
            }
        })
        class C : FeatureSpec({ feature("f") { scenario("a") {} } })
        class D : ExpectSpec({ context("c") { expect("a") {} } })
        """,
        [
            ("A/b", "skipped"),
            ("A/c/a", "active"),
            ("B/d/a", "active"),
            ("B/d/b", "skipped"),
            ("B/d/c/e", "active"),
            ("C/f/a", "active"),
            ("D/c/a", "active"),
        ],
    ),
    (
        "BehaviorSpec and WordSpec: given/when/and containers, infix should/When",
        """\
        import io.kotest.core.spec.style.*

        class A : BehaviorSpec({
            given("g") {
                `when`("w") {
                    then("a") {}
                }
                When("W") {
                    and("x") { Then("b") {} }
                }
                xwhen("off") { then("c") {} }
            }
        })
        class B : WordSpec({
            "s" should {
                "a" {}
            }
            "t" When {
                "u" should { "b" {} }
            }
            "assertion" should startWith("a")
        })
        """,
        [
            ("A/g/w/a", "active"),
            ("A/g/W/x/b", "active"),
            ("A/g/off/c", "skipped"),
            ("B/s/a", "active"),
            ("B/t/u/b", "active"),
        ],
    ),
    (
        "withData once, or a container of its own tests; loops once; helpers and "
        "abstract specs are not tests",
        """\
        import io.kotest.core.spec.style.FunSpec
        import io.kotest.datatest.withData

        abstract class Base : FunSpec({ test("abstract") {} })

        class ParserTest : FunSpec({
            withData(1, 2, 3) { n -> n shouldBe n }
            context("data") {
                withData("x", "y") { s -> test("of $s") {} }
            }
            listOf(1, 2).forEach { n -> test("loop $n") {} }
            cases.forEach { test(it.name) {} }
        })

        class Helper {
            fun test(name: String, f: () -> Unit) {}
            fun use() { test("not a spec") {} }
        }
        """,
        [
            ("ParserTest/withData", "active"),
            ("ParserTest/loop $n", "active"),
            ("ParserTest/it.name", "active"),
            ("ParserTest/data/withData/of $s", "active"),
        ],
    ),
    (
        "test factories: a suite where written, not again where included",
        """\
        import io.kotest.core.spec.style.FunSpec
        import io.kotest.core.spec.style.describeSpec
        import io.kotest.core.spec.style.funSpec

        val shared = funSpec {
            test("a") {}
        }

        fun more(name: String) = describeSpec {
            describe(name) { xit("b") {} }
        }

        class ParserTest : FunSpec({
            include(shared)
            include(more("x"))
            include(funSpec { test("c") {} })
            test("d") {}
        })
        """,
        [
            ("ParserTest/d", "active"),
            ("ParserTest/funSpec/c", "active"),
            ("shared/a", "active"),
            ("more/name/b", "skipped"),
        ],
    ),
    (
        "AnnotationSpec: annotated functions, @Ignore skipped",
        """\
        import io.kotest.core.spec.style.AnnotationSpec

        class ParserTest : AnnotationSpec() {
            @Test
            fun a() {}

            @Ignore
            @Test
            fun b() {}

            fun helper() {}
        }
        """,
        [("ParserTest/a", "active"), ("ParserTest/b", "skipped")],
    ),
]


def _ids(cases: list[tuple[str, str, list[tuple[str, str]]]]) -> list[str]:
    return [c[0] for c in cases]


@pytest.mark.parametrize(("case", "source", "expected"), KOTLIN_JUNIT, ids=_ids(KOTLIN_JUNIT))
def test_kotlin_junit(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    assert found("src/test/kotlin/p/ParserTest.kt", source) == expected


@pytest.mark.parametrize(("case", "source", "expected"), KOTEST, ids=_ids(KOTEST))
def test_kotest(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    assert found("src/test/kotlin/p/ParserTest.kt", source) == expected


@pytest.mark.parametrize(
    ("path", "framework"),
    [
        ("src/test/kotlin/p/ParserTest.kt", "junit5"),
        ("src/jvmTest/kotlin/p/Parser.kt", "junit5"),
        ("src/commonTest/kotlin/p/Parser.kt", "junit5"),
        ("src/main/kotlin/p/ParserTest.kt", None),
        ("src/jvmMain/kotlin/p/ParserTest.kt", None),
    ],
)
def test_kotlin_test_sources(path: str, framework: str | None) -> None:
    from clonegate._adapters.analysis.scan import analyze_file

    source = b"import org.junit.jupiter.api.Test\nclass P {\n    @Test\n    fun a() {}\n}\n"
    result = analyze_file(path, source, NO_CONFIG)
    assert (result.framework if result else None) == framework
