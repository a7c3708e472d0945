"""Config files that are code, read where their values are literals (issue 40; ADR 0004),
table-driven: each case is a small tree with one config written one way, and the
expected result is each test file with its framework. Files left out are NOT test
files. A computed value leaves the framework's default, and the file's record says so."""

from __future__ import annotations

import textwrap

import pytest

from clonegate._adapters.analysis.config import ConfigScopes
from clonegate._adapters.analysis.frameworks import jest
from clonegate._adapters.analysis.frameworks.js_literals import (
    COMPUTED,
    Array,
    Object,
    Regex,
    config_of,
)
from clonegate._adapters.analysis.problems import Refused
from clonegate._adapters.analysis.scan import analyze_file, is_candidate

T = "test('t', () => {})\n"
VITEST = T  # globals: an import of vitest would name it whatever its config says (ADR 0004)
PW = "import { test } from '@playwright/test'\n" + T
CY = "it('t', () => {})\n"


def found(files: dict[str, str]) -> dict[str, tuple[str, str]]:
    """``{path: (framework, note)}`` for every file found to hold tests."""
    sources = {path: textwrap.dedent(text).encode() for path, text in files.items()}
    scopes = ConfigScopes(sources, sources.__getitem__)
    assert scopes.errors == ()
    out = {}
    for path, data in sources.items():
        if is_candidate(path, scopes):
            result = analyze_file(path, data, scopes)
            if result is not None:
                out[path] = (result.framework, result.config_note)
    return out


def frameworks(files: dict[str, str]) -> dict[str, str]:
    return {path: framework for path, (framework, _) in found(files).items()}


CASES = [
    (
        "vitest: defineConfig's test.include replaces the default",
        {
            "vitest.config.ts": "import { defineConfig } from 'vitest/config'\n"
            "export default defineConfig({ test: { include: ['tests/**/*.ts'] } })",
            "tests/a.ts": VITEST,
            "src/b.test.ts": VITEST,
        },
        {"tests/a.ts": "vitest"},
    ),
    (
        "vitest: a local const, a template literal, an arrow returning the object",
        {
            "vitest.config.mts": "const include = [`checks/**/*.mjs`]\n"
            "export default defineConfig(() => ({ test: { include } }))",
            "checks/a.mjs": VITEST,
            "src/b.test.ts": VITEST,
        },
        {"checks/a.mjs": "vitest"},
    ),
    (
        "vitest: module.exports, a function returning the object, and exclude",
        {
            "vitest.config.cjs": "module.exports = defineConfig(function () {\n"
            "  return { test: { exclude: [...configDefaults.exclude, 'src/legacy/**'] } }\n"
            "})",
            "src/a.test.ts": VITEST,
            "src/legacy/b.test.ts": VITEST,
        },
        {"src/a.test.ts": "vitest"},
    ),
    (
        "vitest: dir narrows where the default include looks",
        {
            "vitest.config.ts": "export default { test: { dir: './src' } }",
            "src/a.test.ts": VITEST,
            "scripts/b.test.ts": VITEST,
        },
        {"src/a.test.ts": "vitest"},
    ),
    (
        "vitest: vite.config's test key, when no vitest.config is there",
        {
            "vite.config.ts": "export default defineConfig({ plugins: [react()],"
            " test: { include: ['app/**/*.test.{ts,tsx}'] } })",
            "app/a.test.tsx": VITEST,
            "other/b.test.ts": VITEST,
        },
        {"app/a.test.tsx": "vitest"},
    ),
    (
        "vitest: inline projects, each with its root and include",
        {
            "vitest.config.ts": "export default defineConfig({ test: { projects: [\n"
            "  { test: { root: './packages/core', include: ['src/**/*.spec.ts'] } },\n"
            "  { test: { name: 'e2e', include: ['e2e/**/*.e2e.ts'] } },\n"
            "] } })",
            "packages/core/src/a.spec.ts": VITEST,
            "packages/core/b.spec.ts": VITEST,
            "e2e/c.e2e.ts": VITEST,
        },
        {"packages/core/src/a.spec.ts": "vitest", "e2e/c.e2e.ts": "vitest"},
    ),
    (
        "vitest: a workspace file's inline projects",
        {
            "vitest.workspace.ts": "export default defineWorkspace([\n"
            "  { test: { include: ['unit/**/*.ts'] } },\n])",
            "unit/a.ts": VITEST,
            "src/b.test.ts": VITEST,
        },
        {"unit/a.ts": "vitest"},
    ),
    (
        "jest: module.exports testMatch with <rootDir>",
        {
            "jest.config.js": "module.exports = { testMatch: ['<rootDir>/specs/**/*.js'] }",
            "specs/a.js": T,
            "src/b.test.js": T,
        },
        {"specs/a.js": "jest"},
    ),
    (
        "jest: a local const exported, testRegex in the absolute path, ignore patterns",
        {
            "jest.config.js": "const config = {\n"
            "  testRegex: '/test/.*\\\\.test\\\\.tsx?$',\n"
            "  testPathIgnorePatterns: ['/node_modules/', '/e2e/'],\n}\n"
            "export default config",
            "test/a.test.tsx": T,
            "test/e2e/b.test.ts": T,
            "src/c.test.ts": T,
        },
        {"test/a.test.tsx": "jest"},
    ),
    (
        "jest: jest.config.ts with a typed const, roots and rootDir",
        {
            "jest.config.ts": "import type { Config } from 'jest'\n"
            "const config: Config = { rootDir: 'lib', roots: ['<rootDir>/core'] }\n"
            "export default config satisfies Config",
            "lib/core/a.test.ts": T,
            "lib/util/b.test.ts": T,
            "c.test.ts": T,
        },
        {"lib/core/a.test.ts": "jest"},
    ),
    (
        "jest: inline projects, each with its testMatch",
        {
            "jest.config.js": "module.exports = { projects: [\n"
            "  { displayName: 'a', testMatch: ['<rootDir>/a/**/*.check.js'] },\n"
            "  { displayName: 'b', testMatch: ['<rootDir>/b/**/*.test.js'] },\n] }",
            "a/x.check.js": T,
            "a/y.test.js": T,
            "b/z.test.js": T,
        },
        {"a/x.check.js": "jest", "b/z.test.js": "jest"},
    ),
    (
        "playwright: testDir with the default testMatch; a file outside testDir is no test",
        {
            "playwright.config.ts": "export default defineConfig({ testDir: './e2e',"
            " retries: process.env.CI ? 2 : 0, use: { ...devices['Desktop Chrome'] } })",
            "e2e/a.spec.ts": PW,
            "e2e/nested/b.test.mjs": PW,
            "e2e/helpers.ts": PW,
            "src/c.spec.ts": PW,
        },
        {"e2e/a.spec.ts": "playwright", "e2e/nested/b.test.mjs": "playwright"},
    ),
    (
        "playwright: testMatch glob and regular expression, testIgnore",
        {
            "playwright.config.js": "module.exports = { testMatch: ['*.e2e.js', /.*\\.pw\\.js/],"
            " testIgnore: 'old/**' }",
            "flows/a.e2e.js": PW,
            "flows/b.pw.js": PW,
            "flows/c.spec.js": PW,
            "old/d.e2e.js": PW,
        },
        {"flows/a.e2e.js": "playwright", "flows/b.pw.js": "playwright"},
    ),
    (
        "playwright: each project's testDir; path.join(__dirname, …) is read",
        {
            "playwright.config.ts": "import path from 'path'\n"
            "export default defineConfig({ testDir: path.join(__dirname, 'tests'), projects: [\n"
            "  { name: 'api', testDir: './api' }, { name: 'ui' },\n] })",
            "api/a.spec.ts": PW,
            "tests/b.spec.ts": PW,
            "other/c.spec.ts": PW,
        },
        {"api/a.spec.ts": "playwright", "tests/b.spec.ts": "playwright"},
    ),
    (
        "playwright: a test from local fixtures beside a jest config that runs it too",
        {
            "jest.config.js": "module.exports = require('./jest.base')",
            "playwright.config.ts": "export default { testDir: 'e2e' }",
            "e2e/a.spec.ts": "import { test } from './fixtures'\n"
            "test.describe('d', () => { test('t', async ({ page }) => {}) })\n",
            "src/b.spec.ts": "describe('d', () => { test('t', () => {}) })\n",
        },
        {"e2e/a.spec.ts": "playwright", "src/b.spec.ts": "jest"},
    ),
    (
        "cypress: the default e2e specPattern; component tests only when configured",
        {
            "cypress.config.js": "const { defineConfig } = require('cypress')\n"
            "module.exports = defineConfig({ e2e: { baseUrl: 'http://localhost' } })",
            "cypress/e2e/a.cy.ts": CY,
            "src/b.cy.tsx": CY,
            "cypress/support/e2e.ts": CY,
        },
        {"cypress/e2e/a.cy.ts": "cypress"},
    ),
    (
        "cypress: a specPattern of its own, component testing, excludeSpecPattern",
        {
            "cypress.config.ts": "export default defineConfig({\n"
            "  e2e: { specPattern: 'cypress/tests/**/*.spec.{js,ts}',"
            " excludeSpecPattern: ['**/demo/**'] },\n"
            "  component: { devServer: { framework: 'react' } },\n})",
            "cypress/tests/a.spec.ts": CY,
            "cypress/tests/demo/b.spec.ts": CY,
            "src/c.cy.tsx": CY,
            "cypress/e2e/d.cy.ts": CY,
        },
        {
            "cypress/tests/a.spec.ts": "cypress",
            "src/c.cy.tsx": "cypress",
            "cypress/e2e/d.cy.ts": "cypress",
        },
    ),
    (
        "a framework's own config file before package.json: vite.config over a mocha script",
        {
            "package.json": '{"scripts": {"mocha": "mocha test/*.ts", "test": "vitest run"},'
            ' "devDependencies": {"mocha": "5", "vitest": "1"}}',
            "vite.config.ts": "export default defineConfig({ test: {"
            " include: ['./test/**/*.ts'], exclude: ['./test/**/util.ts'] } })",
            "test/Array.ts": T,
            "test/util.ts": "export const util = 1\n",
        },
        {"test/Array.ts": "vitest"},
    ),
    (
        "cypress 9: cypress.json's integrationFolder and testFiles",
        {
            "cypress.json": '{"integrationFolder": "e2e", "testFiles": "**/*.spec.js",'
            ' "ignoreTestFiles": ["*.skip.spec.js"]}',
            "e2e/a/b.spec.js": CY,
            "e2e/c.skip.spec.js": CY,
            "cypress/integration/d.spec.js": CY,
        },
        {"e2e/a/b.spec.js": "cypress"},
    ),
    (
        "cypress 9: cypress.json's defaults, every file of cypress/integration",
        {"cypress.json": "{}", "cypress/integration/a.js": CY, "cypress/support/b.js": CY},
        {"cypress/integration/a.js": "cypress"},
    ),
    (
        "mocha: .mocharc.js's literal spec",
        {
            ".mocharc.js": "'use strict'\nmodule.exports = { spec: 'spec/**/*.spec.js' }",
            "spec/a/b.spec.js": T,
            "test/c.js": T,
        },
        {"spec/a/b.spec.js": "mocha"},
    ),
]


@pytest.mark.parametrize(("case", "files", "expected"), CASES, ids=[c[0] for c in CASES])
def test_code_config_files(case: str, files: dict[str, str], expected: dict[str, str]) -> None:
    assert frameworks(files) == expected


COMPUTED_CASES = [
    (
        "vitest: include from a call",
        {"vitest.config.ts": "export default defineConfig({ test: { include: list() } })"},
        "src/a.test.ts",
        VITEST,
        ("vitest", "vitest.config.ts is code: include computed, vitest's default for them"),
    ),
    (
        "vitest: a template literal with a substitution",
        {"vitest.config.ts": "export default { test: { include: [`${dir}/*.ts`] } }"},
        "src/a.test.ts",
        VITEST,
        ("vitest", "vitest.config.ts is code: include computed, vitest's default for them"),
    ),
    (
        "jest: Object.assign of a preset",
        {"jest.config.js": "module.exports = Object.assign(preset, { verbose: true })"},
        "src/a.test.js",
        T,
        ("jest", "jest.config.js is code, not literals: jest's defaults"),
    ),
    (
        "jest: a key written before a spread of something computed",
        {"jest.config.js": "module.exports = { testMatch: ['x/*.js'], ...preset }"},
        "src/a.test.js",
        T,
        (
            "jest",
            "jest.config.js is code: rootDir, testMatch, testRegex, roots, "
            "testPathIgnorePatterns, projects computed, jest's default for them",
        ),
    ),
    (
        "playwright: testDir from the environment",
        {"playwright.config.ts": "export default { testDir: process.env.DIR }"},
        "e2e/a.spec.ts",
        PW,
        (
            "playwright",
            "playwright.config.ts is code: testDir computed, Playwright's default for them",
        ),
    ),
    (
        "cypress: a config made by a function of another module",
        {"cypress.config.ts": "export default makeConfig()"},
        "src/a.cy.ts",
        CY,
        ("cypress", "cypress.config.ts is code, not literals: Cypress's defaults"),
    ),
    (
        "mocha: a spec computed",
        {".mocharc.js": "module.exports = { spec: process.env.SPEC }", "package.json": "{}"},
        "test/a.js",
        T,
        ("mocha", ".mocharc.js is code: spec computed, mocha's default for them"),
    ),
]


@pytest.mark.parametrize(
    ("case", "config", "path", "source", "expected"),
    COMPUTED_CASES,
    ids=[c[0] for c in COMPUTED_CASES],
)
def test_a_computed_value_leaves_the_default_and_says_so(
    case: str, config: dict[str, str], path: str, source: str, expected: tuple[str, str]
) -> None:
    assert found({**config, path: source}) == {path: expected}


def test_literals_are_evaluated_and_only_literals() -> None:
    value = config_of(
        "c.ts",
        b"const dir = 'e2e'\n"
        b"export default defineConfig({ a: [dir, `t`, /x\\.y/i, 1_000, true, null],"
        b" b: run(), c: cond ? 1 : 2, d: { ...other, e: 'kept' }, 'f-g': 'quoted\\u0041' }"
        b" as Config)",
    )
    assert isinstance(value, Object)
    assert value.items["a"] == Array(["e2e", "t", Regex("x\\.y", "i"), 1000.0, True, None])
    assert value.items["b"] is COMPUTED
    assert value.items["c"] is COMPUTED
    assert value.get("d") == Object({"e": "kept"}, open=True)
    assert value.items["f-g"] == "quotedA"
    assert config_of("c.js", b"module.exports = require('./base')") is COMPUTED
    assert config_of("c.js", b"const a = b; const b = a; export default a") is COMPUTED


@pytest.mark.timeout(60)  # a safety net for a run gone quadratic (ADR 0010)
@pytest.mark.parametrize(
    ("what", "code"),
    [
        ("nested", b"export default " + b"{a:" * 100 + b"1" + b"}" * 100),
        ("nested past the parser's bound", b"export default " + b"{a:" * 2_000 + b"}" * 2_000),
        (
            "const chain",
            b"".join(b"const c%d = c%d\n" % (i, i + 1) for i in range(200))
            + b"const c200 = {}\nexport default c0\n",
        ),
        ("array", b"export default { testMatch: [" + b"'a'," * 100_000 + b"] }"),
    ],
)
def test_a_hostile_config_is_refused_within_its_bounds(what: str, code: bytes) -> None:
    with pytest.raises(Refused, match=r"nested|values"):
        config_of("jest.config.js", code)


def test_a_refused_config_is_a_scan_error_with_the_defaults_noted() -> None:
    code = b"export default " + b"{a:" * 2_000 + b"1" + b"}" * 2_000
    sources = {"jest.config.js": code, "a.test.js": T.encode()}
    scopes = ConfigScopes(sources, sources.__getitem__)
    assert [(e.path, e.phase) for e in scopes.errors] == [("jest.config.js", "config")]
    result = analyze_file("a.test.js", sources["a.test.js"], scopes)
    assert result is not None
    assert (result.framework, result.config_note) == (
        "jest",
        "jest.config.js could not be read: defaults",
    )
    assert jest.DEFAULTS.files


def test_extglobs_run_and_a_negated_one_is_a_scan_error_of_its_config() -> None:
    files = {
        "vitest.config.ts": "export default { test: { include: ['**/*.@(spec|check).?(m)ts'] } }",
        "a.check.mts": T,
        "b.spec.ts": T,
        "c.test.ts": T,
    }
    assert frameworks(files) == {"a.check.mts": "vitest", "b.spec.ts": "vitest"}
    config = b"export default { test: { include: ['**/!(*.d).ts'] } }"
    sources = {"vitest.config.ts": config, "a.test.ts": T.encode()}
    scopes = ConfigScopes(sources, sources.__getitem__)
    assert [(e.path, e.phase) for e in scopes.errors] == [("vitest.config.ts", "config")]
    assert "negated extglob" in scopes.errors[0].message
