// mocha --require hook: records the call site of every test mocha registers.
//
// ADR 0005 counts call sites, not cases: an `it` inside a loop registers many tests
// from one place. mocha's --dry-run lists the tests without running them; this hook
// wraps Suite.prototype.addTest (every interface ends there) and reads the stack to
// find the first frame outside mocha, node_modules and node itself: the `it(...)` call.
// At exit it writes one JSON record per registered test to $CALLSITES_OUT.
'use strict';
const path = require('path');
const fs = require('fs');
const { fileURLToPath } = require('url');

// CALLSITES_PLATFORM (win32): the test files see that platform, so the tests they only
// register there (`if (process.platform === 'win32') it(...)`) are listed too. Nothing
// runs under --dry-run but the files' top level and describe bodies.
if (process.env.CALLSITES_PLATFORM) {
  Object.defineProperty(process, 'platform', { value: process.env.CALLSITES_PLATFORM });
}
const out = process.env.CALLSITES_OUT;
if (!out) throw new Error('callsites.cjs: set CALLSITES_OUT');
const root = process.env.CALLSITES_ROOT || process.cwd();

// The hook is required by mocha's CLI, so mocha's own suite.js is already loaded:
// take that instance from the cache rather than loading a second copy.
const suitePath = Object.keys(require.cache).find((p) =>
  p.endsWith(path.join('mocha', 'lib', 'suite.js')),
);
if (!suitePath) throw new Error('callsites.cjs: mocha/lib/suite.js not loaded yet');
const Suite = require.cache[suitePath].exports;

Error.stackTraceLimit = 100;
const frame = /\(?((?:file:\/\/)?\/[^()]*?):(\d+):(\d+)\)?$/;
const records = [];

function callSite() {
  const lines = String(new Error().stack).split('\n').slice(1);
  for (const text of lines) {
    const m = frame.exec(text.trim());
    if (!m) continue;
    const file = m[1].startsWith('file://') ? fileURLToPath(m[1]) : m[1];
    // This directory's hooks (cypress-globals.cjs wraps `it`) are not call sites.
    if (path.dirname(file) === __dirname || file.includes(`${path.sep}node_modules${path.sep}`)) continue;
    return { file: path.relative(root, file), line: Number(m[2]), column: Number(m[3]) };
  }
  return { file: null, line: null, column: null };
}

const addTest = Suite.prototype.addTest;
Suite.prototype.addTest = function (test) {
  // No callback: mocha's pending test, which ADR 0005 calls todo in Cypress. Read
  // now: mocha drops each test's fn after the run.
  records.push({ test, site: callSite(), todo: typeof test.fn !== 'function' });
  return addTest.apply(this, arguments);
};

// Focus is kept on the suites, not on the test: a test is focused when it or a suite
// above it was registered with `.only`.
function focused(test) {
  if (test.parent && (test.parent._onlyTests || []).includes(test)) return true;
  for (let s = test.parent; s && s.parent; s = s.parent) {
    if ((s.parent._onlySuites || []).includes(s)) return true;
  }
  return false;
}

process.on('exit', () => {
  const rows = records.map(({ test, site, todo }) => ({
    ...site,
    title: test.title,
    fullTitle: test.fullTitle(),
    pending: Boolean(test.isPending()),
    todo,
    focused: focused(test),
  }));
  fs.writeFileSync(out, JSON.stringify(rows, null, 1));
});
