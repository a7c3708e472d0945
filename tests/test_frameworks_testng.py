"""TestNG's cases, in Java and Kotlin, table-driven as in :mod:`.test_frameworks`
(issue 40; ADR 0005): what is a test, with which status, and what is NOT a test."""

from __future__ import annotations

import pytest

from .support.scans import found

TESTNG_JAVA = [
    (
        "@Test methods; enabled = false; dataProvider and invocationCount once; groups",
        """\
        import org.testng.annotations.*;
        class ParserTest {
            @Test public void a() {}
            @Test(enabled = false) public void b() {}
            @Test(dataProvider = "sizes") public void c(int n) {}
            @Test(invocationCount = 5, groups = {"slow"}) public void d() {}
            @DataProvider public Object[][] sizes() { return null; }
            public void helper() {}
        }""",
        [
            ("ParserTest/a", "active"),
            ("ParserTest/b", "skipped"),
            ("ParserTest/c", "active"),
            ("ParserTest/d", "active"),
        ],
    ),
    (
        "@Test on a class: its public methods, static too; not config, private or returning "
        "a value (as TestNG 6.9.12 lists them)",
        """\
        import org.testng.annotations.*;
        @Test(groups = "unit")
        public class ParserTest {
            public void a() {}
            @Test(enabled = false) public void b() {}
            @BeforeMethod public void setUp() {}
            @DataProvider public Object[][] data() { return null; }
            private void c() {}
            void d() {}
            public static void e() {}
            public int f() { return 1; }
            @Ignore public void g() {}
        }""",
        [
            ("ParserTest/a", "active"),
            ("ParserTest/b", "skipped"),
            ("ParserTest/e", "active"),
            ("ParserTest/g", "skipped"),
        ],
    ),
    (
        "a class's enabled = false is overridden by its methods' (TestNG #151, #2603); "
        "its @Ignore is not",
        """\
        import org.testng.annotations.Ignore;
        import org.testng.annotations.Test;
        @Test(enabled = false)
        public class ParserTest {
            public void a() {}
            @Test public void b() {}
            @Ignore public static class Off { @Test public void c() {} }
        }""",
        [("ParserTest/a", "active"), ("ParserTest/b", "active"), ("ParserTest/Off/c", "skipped")],
    ),
]

TESTNG_KOTLIN = [
    (
        "TestNG in Kotlin: @Test, class-level @Test on public functions, enabled = false",
        """\
        import org.testng.annotations.DataProvider
        import org.testng.annotations.Test

        class ParserTest {
            @Test(dataProvider = "d")
            fun a(n: Int) {}

            @Test(enabled = false)
            fun b() {}

            @DataProvider
            fun d(): Array<Array<Any>> = arrayOf()
        }

        @Test
        class OtherTest {
            fun c() {}
            internal fun e() {}
            private fun f() {}
            @DataProvider
            fun g() = 1
            fun h(): Parser = Parser()
        }
        """,
        [
            ("ParserTest/a", "active"),
            ("ParserTest/b", "skipped"),
            ("OtherTest/c", "active"),
            ("OtherTest/e", "active"),
        ],
    ),
]


def _ids(cases: list[tuple[str, str, list[tuple[str, str]]]]) -> list[str]:
    return [c[0] for c in cases]


@pytest.mark.parametrize(("case", "source", "expected"), TESTNG_JAVA, ids=_ids(TESTNG_JAVA))
def test_testng_java(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    assert found("src/test/java/p/ParserTest.java", source) == expected


@pytest.mark.parametrize(("case", "source", "expected"), TESTNG_KOTLIN, ids=_ids(TESTNG_KOTLIN))
def test_testng_kotlin(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    assert found("src/test/kotlin/p/ParserTest.kt", source) == expected
