"""Playwright and Cypress (issue 40; ADR 0004, 0005), table-driven: what is a test, with
which status, and what is NOT one (``test.step``, hooks, ``test.describe.configure``,
a mark inside an ``if``); and which files each runs, by default and by its config."""

from __future__ import annotations

import textwrap

import pytest

from clonegate._adapters.analysis.config import ConfigScopes
from clonegate._adapters.analysis.scan import analyze_file

from .support.scans import flattened

PLAYWRIGHT_CONFIG = "export default { testDir: './e2e' }\n"
CYPRESS_CONFIG = "module.exports = { e2e: {} }\n"


def listed(path: str, source: str, config: dict[str, str]) -> list[tuple[str, str]]:
    """Every test of the file under ``config`` as ``(suite/…/name, status)``."""
    sources = {p: textwrap.dedent(t).encode() for p, t in {**config, path: source}.items()}
    scopes = ConfigScopes(sources, sources.__getitem__)
    result = analyze_file(path, sources[path], scopes)
    return [] if result is None else flattened(result)


PLAYWRIGHT = [
    (
        "test and test.describe; test.step, hooks, use and configure are not tests",
        """\
        import { test, expect } from '@playwright/test';
        test.use({ locale: 'fr' });
        test.beforeEach(async ({ page }) => {});
        test.describe('group', () => {
          test.describe.configure({ mode: 'serial' });
          test('a', async ({ page }) => {
            await test.step('not a test', async () => {});
          });
        });""",
        [("group/a", "active")],
    ),
    (
        "declared marks: skip and fixme skipped, fail xfail, only focused",
        """\
        import { test } from '@playwright/test';
        test.skip('s', async () => {});
        test.fixme('f', async () => {});
        test.fail('x', async () => {});
        test.only('o', async () => {});
        test.fail.only('fo', async () => {});""",
        [("s", "skipped"), ("f", "skipped"), ("x", "xfail"), ("o", "focused"), ("fo", "focused")],
    ),
    (
        "a mark as a statement of the test's body marks it; inside an if it does not",
        """\
        import { test } from '@playwright/test';
        test('a', async ({ browserName }) => { test.skip(browserName === 'webkit', 'no'); });
        test('b', async () => { test.fixme(); });
        test('c', async () => { test.fail(); });
        test('d', async ({ browserName }) => { if (browserName === 'x') { test.skip(); } });
        test('e', async () => { test.slow(); });""",
        [("a", "skipped"), ("b", "skipped"), ("c", "xfail"), ("d", "active"), ("e", "active")],
    ),
    (
        "suite forms: serial, parallel, skip, fixme, only; a mark in a suite's body",
        """\
        import { test } from '@playwright/test';
        test.describe.serial('s', () => { test('a', async () => {}); });
        test.describe.parallel.only('p', () => { test('b', async () => {}); });
        test.describe.skip('k', () => { test('c', async () => {}); });
        test.describe.fixme('f', () => { test('d', async () => {}); });
        test.describe('m', () => {
          test.skip(({ browserName }) => browserName !== 'chromium', 'chromium only');
          test('e', async () => {});
        });""",
        [
            ("s/a", "active"),
            ("p/b", "focused"),
            ("k/c", "skipped"),
            ("f/d", "skipped"),
            ("m/e", "skipped"),
        ],
    ),
    (
        "an anonymous describe; a mark at the file's top level marks every test",
        """\
        import { test } from '@playwright/test';
        test.fixme();
        test.describe(() => { test('a', async () => {}); });
        test('b', async () => {});""",
        [("b", "skipped"), ("/a", "skipped")],
    ),
    (
        "a test from a local fixtures module that extends Playwright's",
        """\
        import { test, expect } from './fixtures';
        test('uses fixture', async ({ todoPage }) => {});
        describe('not playwright', () => { it('no', () => {}); });""",
        [("uses fixture", "active")],
    ),
    (
        "test.extend in the file, and a title object between name and body",
        """\
        import { test as base } from '@playwright/test';
        const test = base.extend({ account: async ({}, use) => use(1) });
        test('tagged', { tag: '@fast' }, async ({ account }) => {});""",
        [("tagged", "active")],
    ),
]


@pytest.mark.parametrize(("case", "source", "expected"), PLAYWRIGHT, ids=[c[0] for c in PLAYWRIGHT])
def test_playwright(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    config = {"playwright.config.ts": PLAYWRIGHT_CONFIG}
    assert listed("e2e/app.spec.ts", source, config) == expected


CYPRESS = [
    (
        "mocha's interface: describe, context, it, specify",
        """\
        describe('a', () => {
          context('b', () => { it('c', () => {}); specify('d', () => {}); });
        });""",
        [("a/b/c", "active"), ("a/b/d", "active")],
    ),
    (
        "an it without a callback is a todo; with options and a body it is a test",
        """\
        it('later');
        it('options only', { retries: 2 });
        it('options', { retries: 2 }, () => {});
        it('named body', checkLogin);""",
        [
            ("later", "todo"),
            ("options only", "todo"),
            ("options", "active"),
            ("named body", "active"),
        ],
    ),
    (
        "skip and only on tests and suites",
        """\
        describe.skip('s', () => { it('a', () => {}); });
        context.only('o', () => { it('b', () => {}); });
        it.skip('c', () => {});
        it.only('d', () => {});""",
        [("c", "skipped"), ("d", "focused"), ("s/a", "skipped"), ("o/b", "focused")],
    ),
    (
        "cy commands and hooks are not tests",
        """\
        beforeEach(() => { cy.visit('/'); });
        Cypress.Commands.add('login', () => {});
        it('visits', () => { cy.get('a').should('exist'); });""",
        [("visits", "active")],
    ),
]


@pytest.mark.parametrize(("case", "source", "expected"), CYPRESS, ids=[c[0] for c in CYPRESS])
def test_cypress(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    config = {"cypress.config.js": CYPRESS_CONFIG}
    assert listed("cypress/e2e/app.cy.ts", source, config) == expected


def test_in_a_jest_file_test_step_and_test_describe_are_still_not_tests() -> None:
    # The playwright interface is Playwright's alone: jest has no test.describe.
    source = "test.describe('x', () => {}); test('a', () => {});"
    assert listed("app.test.js", source, {}) == [("a", "active")]


def test_a_callee_chosen_by_a_condition_is_the_running_form() -> None:
    # swr: ;(process.env.__SWR_TEST_BUILD ? it.skip : it)('name', fn), as ADR 0005 says
    # of a name bound to such a choice; a branch that is no test function is no test.
    source = """\
        describe('d', () => {
          ;(process.env.X ? it.skip : it)('a', async () => {});
          ;(c ? describe.skip : describe)('s', () => { it('b', () => {}) });
          ;(c ? helpers.run : it)('no', () => {});
        });"""
    assert listed("app.test.js", source, {}) == [("d/a", "active"), ("d/s/b", "active")]
