"""Per-framework cases, table-driven: what is a test, with which status, and what is NOT
a test (issue 16; ADR 0005). Each case is one file as a framework's own tool sees it:
the expected list is what ``go test -list``/``-v``, pytest ``--collect-only``, jest or
mocha would run, as ``suite/…/name`` paths with their status."""

from __future__ import annotations

import textwrap

import pytest

from clonegate._adapters.analysis.scan import analyze_file

from .support.scans import NO_CONFIG, found

GO = [
    (
        "a Run method of something else keeps the test",
        'func TestE(t *testing.T) { exec.Command("true").Run() }',
        [("TestE", "active")],
    ),
    (
        "mock's Run(fn) is not a subtest",
        'func TestMock(t *testing.T) { m.On("x").Run(func(a mock.Arguments) {}) }',
        [("TestMock", "active")],
    ),
    (
        "suite.Run(t, s) and srv.Run(ctx, h) are not subtests",
        "func TestSuite(t *testing.T) { suite.Run(t, new(S)); srv.Run(ctx, h) }",
        [("TestSuite", "active")],
    ),
    ("testing.TB is not run by go test", "func TestTB(tb testing.TB) {}", []),
    ("a testing.T value is not run", "func TestValue(t testing.T) {}", []),
    ("two parameters are not run", "func TestTwo(t *testing.T, s string) {}", []),
    ("a result is not run", "func TestResult(t *testing.T) error { return nil }", []),
    ("a method is not run", "func (s *S) TestMethod(t *testing.T) {}", []),
    ("a lower-case rest is not run", "func Testlower(t *testing.T) {}", []),
    ("Test alone and an unnamed parameter are", "func Test(*testing.T) {}", [("Test", "active")]),
    (
        "subtests on the test's own T, nested, named without quotes",
        """\
        func TestSubs(t *testing.T) {
            t.Run("", func(t *testing.T) { t.Run("inner", func(t *testing.T) {}) })
            t.Run("b", func(tt *testing.T) { tt.Skip("later") })
            for _, c := range cases { t.Run(c.name, func(t *testing.T) {}) }
        }""",
        [("TestSubs/b", "skipped"), ("TestSubs/c.name", "active"), ("TestSubs//inner", "active")],
    ),
    (
        "a subtest's own T is not the outer one's",
        """\
        func TestScopes(t *testing.T) {
            t.Run("a", func(st *testing.T) { other.Run("x", f) })
        }""",
        [("TestScopes/a", "active")],
    ),
]


@pytest.mark.parametrize(("case", "source", "expected"), GO, ids=[c[0] for c in GO])
def test_go(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    body = 'package x\n\nimport "testing"\n\n' + textwrap.dedent(source)
    assert found("x_test.go", body) == expected


JAVASCRIPT = [
    (
        "a local variable named test is not a test, nor its methods",
        """\
        describe('a', () => {
          it('b', (done) => {
            var test = request(app);
            test.set('A', 'b');
            test.expect(200, done);
          });
        });""",
        [("a/b", "active")],
    ),
    (
        "a local function named test is not a test",
        """\
        function test(app) { return app; }
        test(app1);
        it('real', () => {});""",
        [("real", "active")],
    ),
    (
        "a parameter named it is not a test",
        """\
        function each(it) { it('no'); }
        it('yes', () => {});""",
        [("yes", "active")],
    ),
    (
        "only known modifiers: skip, todo, concurrent.each",
        """\
        it.skip('s', () => {});
        test.todo('t');
        test.concurrent.each([1])('c %i', () => {});
        test.describe('not a modifier', () => {});""",
        [("s", "skipped"), ("t", "todo"), ("c %i", "active")],
    ),
    (
        "test.extend keeps the framework's test",
        """\
        import { test as base } from 'vitest';
        const test = base.extend({ db: async ({}, use) => use(1) });
        test('uses db', ({ db }) => {});""",
        [("uses db", "active")],
    ),
    ("an empty name is empty, without quotes", "it('', () => {});", [("", "active")]),
    (
        "a name bound to a framework function is that function; other bindings are not",
        """\
        const testOrSkip = process.platform === 'win32' ? test.skip : test;
        const skipped = test.skip;
        const maybe = cond ? describe : describe.skip;
        const other = cond ? helpers.run : test;
        const table = test.each;
        testOrSkip('a', () => {});
        skipped('b', () => {});
        maybe('c', () => { test('d', () => {}) });
        other('no', () => {});""",
        [("a", "active"), ("b", "skipped"), ("c/d", "active")],
    ),
]


@pytest.mark.parametrize(("case", "source", "expected"), JAVASCRIPT, ids=[c[0] for c in JAVASCRIPT])
def test_javascript(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    assert found("app.test.js", source) == expected


NODE_TEST = [
    (
        "named, default, required, renamed and namespace imports",
        """\
        import test, { describe, it as should } from 'node:test';
        import * as nt from 'node:test';
        const runner = require('node:test');
        const { it: check } = require('node:test');
        test('default', () => {});
        check('destructured', () => {});
        describe('d', () => { should('renamed', () => {}) });
        nt.test('namespace', () => {});
        nt.describe.skip('ns suite', () => { nt.it('inside') });
        runner('required default', () => {});
        runner.suite('required suite', () => { runner.test('x', () => {}) });""",
        [
            ("default", "active"),
            ("destructured", "active"),
            ("namespace", "active"),
            ("required default", "active"),
            ("d/renamed", "active"),
            ("ns suite/inside", "skipped"),
            ("required suite/x", "active"),
        ],
    ),
    (
        "options: skip or todo with a reason or true, a condition, only; false stays active",
        """\
        const { test } = require('node:test');
        test('reason', { skip: 'flaky on CI' }, () => {});
        test('true', { skip: true }, () => {});
        test('false', { skip: false }, () => {});
        test('undefined', { skip: undefined, timeout: 5 }, () => {});
        test('condition', { skip: process.platform === 'win32' }, () => {});
        test('shorthand', { skip }, () => {});
        test('todo', { todo: 'later' }, () => {});
        test('only', { only: true }, () => {});
        test('timeout only', { timeout: 100 }, () => {});""",
        [
            ("reason", "skipped"),
            ("true", "skipped"),
            ("false", "active"),
            ("undefined", "active"),
            ("condition", "skipped"),
            ("shorthand", "skipped"),
            ("todo", "todo"),
            ("only", "focused"),
            ("timeout only", "active"),
        ],
    ),
    (
        "modifiers, and a suite's option applies to its tests",
        """\
        import { describe, it, test } from 'node:test';
        it.skip('s', () => {});
        test.todo('t');
        it.only('o', () => {});
        describe('d', { skip: true }, () => { it('in', () => {}) });
        test('without a callback is a passing no-op for node', );
        test('no callback');""",
        [
            ("s", "skipped"),
            ("t", "todo"),
            ("o", "focused"),
            ("without a callback is a passing no-op for node", "active"),
            ("no callback", "active"),
            ("d/in", "skipped"),
        ],
    ),
    (
        "t.test subtests make their test a suite, nested, awaited, in loops, as Go's t.Run",
        """\
        import { test, describe } from 'node:test';
        test('parent', async (t) => {
          await t.test('a', () => {});
          for (const c of cases) { await t.test(c.name, async (inner) => {
            await inner.test('deep', () => {});
          }) }
        });
        describe('d', () => {
          test('p', function (ctx) { ctx.test('s', () => {}) });
        });
        test('leaf', (t) => { t.assert.ok(/x/.test(s)); re.test(s); t.diagnostic('x') });""",
        [
            ("leaf", "active"),
            ("parent/a", "active"),
            ("parent/c.name/deep", "active"),
            ("d/p/s", "active"),
        ],
    ),
    (
        "not subtests: t.test in a describe, another object's test, a suite's context",
        """\
        import { test, describe } from 'node:test';
        describe('d', (s) => { s.test('no', () => {}); it2.test('no', () => {}) });
        test('a', (t) => { other.test('no', () => {}) });
        test('b', () => { t.test('no outer t', () => {}) });""",
        [("a", "active"), ("b", "active")],
    ),
    (
        "a test() inside a running test is its subtest, through t.test bound or not",
        """\
        import { test } from 'node:test';
        test('outer', (t) => {
          const sub = t.test;
          test('plain', () => {});
        });
        test('helper', (t) => { const test = t.test; test('via binding', () => {}) });""",
        [("outer/plain", "active"), ("helper/via binding", "active")],
    ),
    (
        "the context's own skip and todo, as top-level statements; a condition is active",
        """\
        import { test } from 'node:test';
        test('skips', (t) => { t.skip('no network') });
        test('todo', async (t) => { await t.todo() });
        test('maybe', (t) => { if (win) t.skip() });
        test('parent runs its subtests', (t) => { t.skip(); t.test('sub', () => {}) });""",
        [
            ("skips", "skipped"),
            ("todo", "todo"),
            ("maybe", "active"),
            ("parent runs its subtests/sub", "active"),
        ],
    ),
    (
        "without a node:test import there are no subtests: vitest's context has no test",
        """\
        import { test } from 'vitest';
        test('a', (t) => { t.test('b', () => {}) });""",
        [("a", "active")],
    ),
]


@pytest.mark.parametrize(("case", "source", "expected"), NODE_TEST, ids=[c[0] for c in NODE_TEST])
def test_node_test(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    result = analyze_file("test/app.test.mjs", textwrap.dedent(source).encode(), NO_CONFIG)
    assert result is not None
    if "node:test" in source:
        assert result.framework == "node-test"
    assert found("test/app.test.mjs", source) == expected


def test_a_test_from_another_module_is_not_node_test() -> None:
    source = "import { test } from './helpers.js';\ntest('a', (t) => { t.test('b') });\n"
    result = analyze_file("test/app.test.mjs", source.encode(), NO_CONFIG)
    assert result is not None
    assert (result.framework, [t.name for t in result.tests]) == ("unknown", ["a"])
    # node's rules select test/helpers.mjs, jest's and vitest's do not: nothing runs it.
    assert analyze_file("test/helpers.mjs", source.encode(), NO_CONFIG) is None


def test_a_one_token_grammar_gap_is_passed_over_a_real_error_is_not() -> None:
    # tree-sitter-typescript 0.23 refuses the trailing comma; TypeScript accepts it.
    gap = "it('a', async () => { await vi.importActual<typeof import('x')>('x',) })\n"
    assert found("app.test.ts", gap) == [("a", "active")]
    broken = "it('a', async () => { await f(\n"
    with pytest.raises(SyntaxError):
        found("app.test.ts", broken)


def test_typescript_parameters_shadow_too() -> None:
    source = "function each(test: Fn) { test('no'); }\ntest('yes', () => {});\n"
    assert found("app.test.ts", source) == [("yes", "active")]


PYTHON = [
    (
        "module pytestmark applies to every test",
        """\
        import pytest
        pytestmark = pytest.mark.skip(reason="all")
        def test_a(): pass
        class TestB:
            def test_c(self): pass""",
        [("test_a", "skipped"), ("TestB/test_c", "skipped")],
    ),
    (
        "marks bound to a name, as decorators and in a class pytestmark",
        """\
        import sys, pytest
        needs_x = pytest.mark.skipif(sys.platform == "x", reason="x")
        flaky = pytest.mark.xfail(strict=False)
        other = make_decorator()
        @needs_x
        def test_a(): pass
        @flaky
        def test_b(): pass
        @other
        def test_c(): pass
        class TestD:
            pytestmark = [needs_x]
            def test_e(self): pass""",
        [
            ("test_a", "skipped"),
            ("test_b", "xfail"),
            ("test_c", "active"),
            ("TestD/test_e", "skipped"),
        ],
    ),
    (
        "skip decorators made in another module are known by their names",
        """\
        import unittest
        from .util import skipIfNonUnix, skip_if_no_network, skipper, skipped
        from . import util
        class A(unittest.TestCase):
            @skipIfNonUnix
            def test_a(self): pass
            @util.skipUnlessDBFeature("x")
            def test_b(self): pass
            @skip_if_no_network
            def test_c(self): pass
            @skipper
            def test_d(self): pass
            @skipped
            def test_e(self): pass
        @skipIfNonUnix
        class B(unittest.TestCase):
            def test_f(self): pass""",
        [
            ("A/test_a", "skipped"),
            ("A/test_b", "skipped"),
            ("A/test_c", "skipped"),
            ("A/test_d", "active"),
            ("A/test_e", "active"),
            ("B/test_f", "skipped"),
        ],
    ),
    (
        "subclasses of a test base from another module: a project plugin collects them",
        """\
        from sqlalchemy.testing import fixtures
        class _Base(fixtures.TestBase):
            def test_shared(self): pass
        class CompileTest(_Base):
            def test_a(self): pass
            def helper(self): pass
        class QueryTest(fixtures.MappedTest):
            def test_b(self): pass
        class Options(config.Options):
            def test_c(self): pass""",
        [
            ("CompileTest/test_a", "active"),
            ("CompileTest/test_shared", "active"),
            ("QueryTest/test_b", "active"),
        ],
    ),
    (
        "fixtures and helpers are not tests",
        """\
        import pytest
        @pytest.fixture
        def test_data(): return 1
        def helper(): pass
        class Helper:
            def test_x(self): pass""",
        [],
    ),
    (
        "a mixin's tests run in each collected class that inherits them, not in the mixin",
        """\
        import unittest
        class Checks:
            def test_shared(self): pass
            def test_overridden(self): pass
        class Base(unittest.TestCase):
            def test_base(self): pass
        class TestA(Checks, Base):
            def test_overridden(self): pass
        class TestB(Checks):
            pass""",
        [
            ("Base/test_base", "active"),
            ("TestA/test_overridden", "active"),
            ("TestA/test_shared", "active"),
            ("TestA/test_base", "active"),
            ("TestB/test_shared", "active"),
            ("TestB/test_overridden", "active"),
        ],
    ),
    (
        "a name defined twice is collected once, the last definition",
        """\
        def test_a(): pass
        def test_a(): pass
        class TestB:
            def test_c(self): pass
            def test_c(self): pass""",
        [("test_a", "active"), ("TestB/test_c", "active")],
    ),
]


@pytest.mark.parametrize(("case", "source", "expected"), PYTHON, ids=[c[0] for c in PYTHON])
def test_python(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    assert found("tests/test_cases.py", source) == expected


RUST = [
    (
        "tests inside a macro invocation are read",
        """\
        rt_test! {
            #[test]
            fn a() {}
            mod inner {
                #[test]
                fn b() {}
            }
        }
        #[test]
        fn c() {}""",
        [("c", "active"), ("a", "active"), ("inner/b", "active")],
    ),
    (
        "any path ending in ::test is a test attribute",
        """\
        #[tokio::test(flavor = "multi_thread")]
        async fn a() {}
        #[test_log::test]
        fn b() {}
        #[not_a::tester]
        fn c() {}""",
        [("a", "active"), ("b", "active")],
    ),
    (
        "conditional ignores skip, as ADR 0005 counts conditional skips",
        """\
        #[test]
        #[cfg_attr(miri, ignore)]
        fn a() {}
        #[test]
        #[rustversion::attr(not(nightly), ignore = "nightly only")]
        fn b() {}
        #[test]
        #[cfg_attr(miri, should_panic)]
        fn c() {}""",
        [("a", "skipped"), ("b", "skipped"), ("c", "active")],
    ),
    (
        "a macro body that is not items is left alone",
        """\
        #[test]
        fn a() { assert!(matches!(x, #[test] 1 => $y)); }""",
        [("a", "active")],
    ),
]


@pytest.mark.parametrize(("case", "source", "expected"), RUST, ids=[c[0] for c in RUST])
def test_rust(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    assert found("src/lib.rs", source) == expected


JAVA = [
    (
        "JUnit 5's own test annotations, and composed ones named *Test; not TestNG's or helpers",
        """\
        import org.junit.jupiter.api.*;
        import org.junit.jupiter.params.ParameterizedTest;
        class ParserTest {
            @Test void a() {}
            @ParameterizedTest @ValueSource(ints = 1) void b(int i) {}
            @MultiLocaleTest void c(Locale l) {}
            @Disabled @RepeatedTest(3) void d() {}
            @BeforeTest void e() {}
            @BeforeEach void f() {}
            void testG() {}
            @Nested class Inner { @TestFactory Stream<DynamicTest> h() { return null; } }
        }""",
        [
            ("ParserTest/a", "active"),
            ("ParserTest/b", "active"),
            ("ParserTest/c", "active"),
            ("ParserTest/d", "skipped"),
            ("ParserTest/Inner/h", "active"),
        ],
    ),
]


@pytest.mark.parametrize(("case", "source", "expected"), JAVA, ids=[c[0] for c in JAVA])
def test_java(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    assert found("src/test/java/p/ParserTest.java", source) == expected
