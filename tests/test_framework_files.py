"""Which files each framework runs, from its own rules and config files (issue 16; ADR
0004), table-driven: every case is a small tree of files, and the expected result is
each test file with the framework that runs it. Files left out are NOT test files."""

from __future__ import annotations

import pickle
import textwrap

import pytest

from clonegate._adapters.analysis.cache_keys import ScopeContexts
from clonegate._adapters.analysis.config import ConfigScopes
from clonegate._adapters.analysis.scan import analyze_file, is_candidate

from .support.scans import frameworks_of

DESCRIBE = "describe('a', () => { it('b', () => {}) })\n"
PYTEST = "def test_a():\n    pass\n"
UNITTEST = "import unittest\nclass A(unittest.TestCase):\n    def test_a(self): pass\n"
GO = 'package p\nimport "testing"\nfunc TestA(t *testing.T) {}\n'
RUST = "#[test]\nfn a() {}\n"
NODE = "import { test } from 'node:test'\ntest('a', () => {})\n"
VITEST = "import { test } from 'vitest'\ntest('a', () => {})\n"


CASES = [
    (
        "mocha runs ./test/*.js by default, not below it, and only where mocha is used",
        {
            "package.json": '{"devDependencies": {"mocha": "^10"}}',
            "test/app.js": DESCRIBE,
            "test/fixtures/broken.js": DESCRIBE,
            "lib/app.js": DESCRIBE,
            "other/package.json": '{"devDependencies": {"tap": "^1"}}',
            "other/test/app.js": DESCRIBE,
        },
        {"test/app.js": "mocha"},
    ),
    (
        "mocha's spec from .mocharc.yml replaces the default",
        {
            ".mocharc.yml": "spec:\n  - 'spec/**/*.spec.js'\nrecursive: true\n",
            "spec/a/b.spec.js": DESCRIBE,
            "test/app.js": DESCRIBE,
        },
        {"spec/a/b.spec.js": "mocha"},
    ),
    (
        "mocha's spec from the package's scripts, a directory taken recursively",
        {
            "package.json": '{"scripts": {"test": "mocha --recursive -r ts-node/register'
            ' test/unit && eslint ."}, "devDependencies": {"mocha": "1"}}',
            "test/unit/x/y.js": DESCRIBE,
            "test/other.js": DESCRIBE,
        },
        {"test/unit/x/y.js": "mocha"},
    ),
    (
        "mocha's spec and extension from .mocharc.json",
        {
            ".mocharc.json": '{"spec": ["tests"], "extension": ["ts"]}',
            "tests/a.ts": DESCRIBE,
            "tests/b.js": DESCRIBE,
        },
        {"tests/a.ts": "mocha"},
    ),
    (
        "pytest's default python_files, not every file under tests/",
        {
            "tests/helpers.py": PYTEST,
            "tests/test_a.py": PYTEST,
            "tests/a_test.py": PYTEST,
            "tests/conftest.py": PYTEST,
            ".github/test_ci.py": PYTEST,
            "build/test_out.py": PYTEST,
        },
        {"tests/test_a.py": "pytest", "tests/a_test.py": "pytest"},
    ),
    (
        "pytest's python_files and python_classes from setup.cfg",
        {
            "setup.cfg": "[tool:pytest]\npython_files = test/*test_*.py\npython_classes = *Test\n",
            "test/orm/test_a.py": "class QueryTest:\n    def test_a(self): pass\n"
            "class TestIgnored:\n    def test_b(self): pass\n",
            "lib/test_b.py": PYTEST,
        },
        {"test/orm/test_a.py": "pytest"},
    ),
    (
        "pytest.ini wins over pyproject.toml in one directory, as in pytest",
        {
            "pyproject.toml": '[tool.pytest.ini_options]\npython_files = "test_*.py"\n',
            "pytest.ini": "[pytest]\npython_files = check_*.py\n",
            "check_a.py": PYTEST,
            "test_b.py": PYTEST,
        },
        {"check_a.py": "pytest"},
    ),
    (
        "pytest's testpaths from pyproject.toml",
        {
            "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
            "tests/test_a.py": PYTEST,
            "docs/test_b.py": PYTEST,
        },
        {"tests/test_a.py": "pytest"},
    ),
    (
        "pytest 9's native [tool.pytest] table and pytest.toml, before pytest.ini",
        {
            "a/pyproject.toml": '[tool.pytest]\ntestpaths = ["tests"]\n',
            "a/tests/test_a.py": PYTEST,
            "a/bench/test_b.py": PYTEST,
            "b/pytest.toml": '[pytest]\npython_files = ["check_*.py"]\n',
            "b/pytest.ini": "[pytest]\npython_files = test_*.py\n",
            "b/check_c.py": PYTEST,
            "b/test_d.py": PYTEST,
        },
        {"a/tests/test_a.py": "pytest", "b/check_c.py": "pytest"},
    ),
    (
        "unittest discover's test*.py without pytest config; pytest's names with it",
        {
            "app/tests.py": UNITTEST,
            "app/testing.py": PYTEST,
            "conf/pytest.ini": "[pytest]\n",
            "conf/tests.py": UNITTEST,
            "conf/test_x.py": UNITTEST,
        },
        {"app/tests.py": "unittest", "conf/test_x.py": "unittest"},
    ),
    (
        "go skips testdata and _ or . directories",
        {
            "pkg/x_test.go": GO,
            "pkg/testdata/y_test.go": GO,
            "_tools/z_test.go": GO,
        },
        {"pkg/x_test.go": "go-testing"},
    ),
    (
        "cargo's test targets: src, tests/*.rs, tests/<dir>/ with a main.rs; not fixtures",
        {
            "crate/Cargo.toml": "[package]\nname = 'c'\n",
            "crate/src/lib.rs": RUST,
            "crate/tests/it.rs": RUST,
            "crate/tests/ui/fail.rs": RUST,
            "crate/tests/suite/main.rs": RUST,
            "crate/tests/suite/more.rs": RUST,
            "crate/examples/e.rs": RUST,
        },
        {
            "crate/src/lib.rs": "cargo-test",
            "crate/tests/it.rs": "cargo-test",
            "crate/tests/suite/main.rs": "cargo-test",
            "crate/tests/suite/more.rs": "cargo-test",
        },
    ),
    (
        "cargo targets the manifest places by path: a bin, a test, a lib, and their modules",
        {
            "fuzz/Cargo.toml": "[package]\nname = 'f'\n[[bin]]\nname = 'ops'\n"
            "path = 'fuzz_targets/ops.rs'\n[[test]]\nname = 'it'\npath = 'checks/it.rs'\n"
            "[lib]\npath = 'lib/core/lib.rs'\n[[example]]\nname = 'e'\npath = 'ex/e.rs'\n",
            "fuzz/fuzz_targets/ops.rs": RUST,
            "fuzz/fuzz_targets/ops/helpers.rs": RUST,
            "fuzz/fuzz_targets/other.rs": RUST,
            "fuzz/checks/it.rs": RUST,
            "fuzz/lib/core/lib.rs": RUST,
            "fuzz/lib/core/parts/m.rs": RUST,
            "fuzz/ex/e.rs": RUST,
        },
        {
            "fuzz/fuzz_targets/ops.rs": "cargo-test",
            "fuzz/fuzz_targets/ops/helpers.rs": "cargo-test",
            "fuzz/checks/it.rs": "cargo-test",
            "fuzz/lib/core/lib.rs": "cargo-test",
            "fuzz/lib/core/parts/m.rs": "cargo-test",
        },
    ),
    (
        "vitest type tests when its config turns type checking on",
        {
            "a/vitest.config.ts": "export default { test: { typecheck: { enabled: true } } }",
            "a/src/x.test-d.ts": "import { test } from 'vitest'\ntest('t', () => {})\n",
            # (a config that is code and not read would trust the import: ADR 0004)
            "b/package.json": '{"devDependencies": {"vitest": "3"}}',
            "b/src/x.test-d.ts": "import { test } from 'vitest'\ntest('t', () => {})\n",
        },
        {"a/src/x.test-d.ts": "vitest"},
    ),
    (
        "jest's testMatch from package.json; what it does not match is not a test",
        {
            "package.json": '{"jest": {"testMatch": ["<rootDir>/specs/**/*.js"]}}',
            "specs/a.js": DESCRIBE,
            "src/a.test.js": DESCRIBE,
        },
        {"specs/a.js": "jest"},
    ),
    (
        "jest's default testMatch; a file no framework names is kept as unknown",
        {
            "src/__tests__/a.ts": DESCRIBE,
            "src/b.spec.jsx": DESCRIBE,
            "src/c.test.helper.js": DESCRIBE,
        },
        {"src/__tests__/a.ts": "unknown", "src/b.spec.jsx": "unknown"},
    ),
]


NODE_TEST_CASES = [
    (
        "node's default patterns, TypeScript ones included; a file must import node:test",
        {
            "a.test.mjs": NODE,
            "lib/b-test.cjs": NODE,
            "lib/c_test.ts": NODE,
            "test-d.js": NODE,
            "src/test.mts": NODE,
            "pkg/test/deep/e.js": NODE,
            "pkg/test/f.cts": NODE,
            "lib/g.js": NODE,
            "lib/h.check.js": NODE,
            "test/i.jsx": NODE,
            "tests/j.js": NODE,
            "test/k.js": DESCRIBE,
            "test/path-alias.js": "import { x } from 'test/utils'\n" + DESCRIBE,
            # Not parsed (it names no node:test), so its syntax is no scan error.
            "test/types/reply.tst.ts": "import { expect } from 'tstyche'\nconst a = 'test'\n"
            "expect(r.code).type.toBe<<C extends number>(c: C) => R<C>>()\n",
        },
        {
            "a.test.mjs": "node-test",
            "lib/b-test.cjs": "node-test",
            "lib/c_test.ts": "node-test",
            "test-d.js": "node-test",
            "src/test.mts": "node-test",
            "pkg/test/deep/e.js": "node-test",
            "pkg/test/f.cts": "node-test",
        },
    ),
    (
        "the npm port test, and a helper given a test context, are node:test's",
        {
            "test/port.js": "const test = require('test')\ntest('a', () => {})\n",
            "test/helper.js": "exports.m = function (t) {\n  const test = t.test\n"
            "  test('made for the caller', async () => {})\n}\n",
            "test/regex.js": "exports.m = function (re, s) { return re.test(s) }\n" + DESCRIBE,
        },
        {"test/port.js": "node-test", "test/helper.js": "node-test"},
    ),
    (
        "the literal arguments of node --test in package.json's scripts replace the defaults",
        {
            "package.json": '{"scripts": {"test": "c8 node --import tsx --test-reporter spec'
            ' --test \\"packages/*/src/**/*.test.mjs\\" \'scripts/**/*.check.js\' && tsc",'
            ' "start": "node server.js --test"}}',
            "packages/core/src/x/a.test.mjs": NODE,
            "scripts/b.check.js": NODE,
            "test/c.test.js": NODE,
            "server.js": NODE,
            "tsx": NODE,
        },
        {"packages/core/src/x/a.test.mjs": "node-test", "scripts/b.check.js": "node-test"},
    ),
    (
        "node --test alone keeps the defaults; a script running a file is no test run",
        {
            "package.json": '{"scripts": {"test": "node --test", "x": "node tools/run.js --test"}}',
            "test/a.js": NODE,
            "tools/run.js": NODE,
        },
        {"test/a.js": "node-test"},
    ),
    (
        "arguments that are not literal: the defaults, and an import of node:test decides",
        {
            "package.json": '{"scripts": {"test": "node --test $(find src -name \'*.t.js\')"}}',
            "src/a.t.js": NODE,
            "src/test-util.js": "import { mock } from 'node:test'\nexport const m = mock.fn()\n",
            "src/plain.js": DESCRIBE,
            "test/b.js": NODE,
        },
        {"src/a.t.js": "node-test", "test/b.js": "node-test"},
    ),
    (
        "the import rule: a vitest import names test files only where vitest's config is code",
        {
            "a/vitest.config.ts": "export default defineConfig({ test: { include: files } })",
            "a/src/specs/x.ts": VITEST,
            "a/src/test-utils.ts": "import { vi } from 'vitest'\nexport const spy = vi.fn()\n",
            "a/src/plain.ts": DESCRIBE,
            "b/package.json": '{"devDependencies": {"vitest": "3"}}',
            "b/src/specs/y.ts": VITEST,
            "b/src/z.test.ts": VITEST,
        },
        {"a/src/specs/x.ts": "vitest", "b/src/z.test.ts": "vitest"},
    ),
]


@pytest.mark.parametrize(
    ("case", "files", "expected"), NODE_TEST_CASES, ids=[c[0] for c in NODE_TEST_CASES]
)
def test_node_test_files_and_the_import_rule(
    case: str, files: dict[str, str], expected: dict[str, str]
) -> None:
    assert frameworks_of(files) == expected
    # A file has a cache context exactly when it is a candidate (read for its imports
    # included), and asking leaves nothing to send to a worker.
    sources = {path: text.encode() for path, text in files.items()}
    scopes = ConfigScopes(sources, sources.__getitem__)
    sent = pickle.dumps(scopes)
    contexts = ScopeContexts(scopes)
    for path in sources:
        assert (contexts.of(path) is not None) == is_candidate(path, scopes), path
    assert pickle.dumps(scopes) == sent


def test_node_test_arguments_that_are_not_literal_are_said_so() -> None:
    sources = {
        "package.json": b'{"scripts": {"test": "node --test $FILES"}}',
        "x.test.js": NODE.encode(),
    }
    scopes = ConfigScopes(sources, sources.__getitem__)
    result = analyze_file("x.test.js", sources["x.test.js"], scopes)
    assert result is not None
    assert (result.framework, result.config_note) == (
        "node-test",
        "package.json: node --test's arguments are not literal: node's default patterns",
    )


@pytest.mark.parametrize(("case", "files", "expected"), CASES, ids=[c[0] for c in CASES])
def test_framework_files(case: str, files: dict[str, str], expected: dict[str, str]) -> None:
    assert frameworks_of(files) == expected


def test_a_config_that_is_code_is_said_so_in_the_file_record() -> None:
    config = b"module.exports = require('kcd-scripts/jest')"
    sources = {"jest.config.js": config, "a.test.js": DESCRIBE.encode()}
    scopes = ConfigScopes(sources, sources.__getitem__)
    result = analyze_file("a.test.js", sources["a.test.js"], scopes)
    assert result is not None
    assert result.framework == "jest"
    assert result.config_note == "jest.config.js is code, not literals: jest's defaults"


def test_pytest_naming_options_decide_classes_and_functions() -> None:
    config = b"[pytest]\npython_classes = *Suite Check\npython_functions = check_*\n"
    source = textwrap.dedent(
        """\
        def check_a(): pass
        def test_b(): pass
        class OrderSuite:
            def check_c(self): pass
        class CheckD:
            def check_e(self): pass
        class TestF:
            def check_g(self): pass
        """
    ).encode()
    sources = {"tox.ini": config, "test_x.py": source}
    scopes = ConfigScopes(sources, sources.__getitem__)
    result = analyze_file("test_x.py", source, scopes)
    assert result is not None
    names = [t.name for t in result.tests] + [
        f"{s.name}/{t.name}" for s in result.suites for t in s.tests
    ]
    assert names == ["check_a", "OrderSuite/check_c", "CheckD/check_e"]


def test_scopes_sent_to_a_worker_answer_alike_and_leave_their_memos_behind() -> None:
    # Scopes remember answers by directory; a worker gets the configs, not the memos.
    sources = {
        "pytest.ini": b"[pytest]\nnorecursedirs = build\npython_files = check_*.py\n",
        "pkg/setup.cfg": b"[tool:pytest]\ntestpaths = tests\n",
        "pkg/tests/test_a.py": b"",
        "pkg/tests/helper.py": b"",
        "pkg/tests/test_z.py": b"",
        "pkg/other/test_b.py": b"",
        "check_c.py": b"",
        "c_check.py": b"",
        "build/check_d.py": b"",
        "deep/er/check_e.py": b"",
    }
    scopes = ConfigScopes(sources, sources.__getitem__)
    sent = pickle.dumps(scopes)
    answers = {path: scopes.selecting(path, "python") for path in sources}
    assert pickle.dumps(scopes) == sent  # answering memoized nothing that is sent
    received = pickle.loads(sent)
    assert {path: received.selecting(path, "python") for path in sources} == answers
    # Each answer is the one fresh scopes give, asked about that file alone.
    for path in sources:
        assert ConfigScopes(sources, sources.__getitem__).selecting(path, "python") == answers[path]
    assert {path for path, found in answers.items() if found} == {
        "pkg/tests/test_a.py",
        "pkg/tests/test_z.py",
        "check_c.py",
        "deep/er/check_e.py",
    }
