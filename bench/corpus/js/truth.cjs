// Turn a JavaScript runner's own list of tests into a truth file (bench/corpus/README.md).
//
//   node truth.cjs --kind mocha|jest|vitest|playwright|cypress --root DIR --meta META.json
//                  [--sites DIR] [--extra RAW] [KIND:]RAW...
//
// RAW: callsites.cjs's records (mocha; cypress: the same, from mocha's --dry-run of
// the spec files, an `it` without a callback a todo), `jest --json` (with --sites, the
// directory jest-callsites.cjs wrote), `vitest run --reporter=json
// --includeTaskLocation`, `playwright test --list --reporter=json`, or
// node-reporter.mjs's records (node: `node --test`). A RAW prefixed with a kind
// (`playwright:list.json`) is read as that kind: one repository, two runners.
// Each registered test comes with its call site as the runner saw it (a stack frame).
// ADR 0005 counts call sites, so tests registered from one place (loops, `each`, a
// matrix helper) are one entry.
// --extra: a listing on another platform (callsites.cjs's CALLSITES_PLATFORM): its call
// sites that the main runs lack are added (tests this platform does not register), and
// its registrations are not in runner_count.
//
// A stack frame does not always point at the start of the call: for
// `test.each(table)('name', fn)` V8 reports the second call's parenthesis, lines below
// `test.each`. So each position is moved to the start of the call expression it belongs
// to, found with TypeScript's parser (the file's syntax, not its tests: which calls are
// tests is the runner's word). The same call gives ADR 0005's name: its first
// argument as written (template literals keep their placeholders).
'use strict';
const fs = require('fs');
const path = require('path');
const ts = require(process.env.TS_MODULE || 'typescript');

function parseArgs(argv) {
  const opts = { raws: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith('--')) opts[argv[i].slice(2)] = argv[++i];
    else opts.raws.push(argv[i]);
  }
  return opts;
}

// One registration per test the runner registered:
// {file, line, column, title, status, failing, focused}, with status active|skipped|todo.
function registrations(kind, raw, root, sites) {
  if (kind === 'node') {
    // Suites (describe) and tests with subtests (t.test) are suites under ADR 0005.
    return raw
      .filter((r) => !r.suite && !r.parent)
      .map((r) => ({
        file: path.relative(root, r.file.startsWith('file://') ? new URL(r.file).pathname : r.file),
        line: r.line,
        column: r.column,
        title: r.title,
        status: r.todo ? 'todo' : r.skip ? 'skipped' : 'active',
      }));
  }
  if (kind === 'mocha' || kind === 'cypress') {
    return raw.map((r) => ({
      file: r.file,
      line: r.line,
      column: r.column,
      title: r.title,
      status: kind === 'cypress' && r.todo ? 'todo' : r.pending ? 'skipped' : 'active',
      focused: r.focused,
    }));
  }
  if (kind === 'playwright') return playwrightRegistrations(raw, root);
  const status = {
    passed: 'active',
    failed: 'active',
    focused: 'active',
    pending: 'skipped',
    skipped: 'skipped',
    disabled: 'skipped',
    todo: 'todo',
  };
  // A file that failed to load registered none of its tests: the truth would miss them.
  const broken = raw.testResults.filter((f) => f.assertionResults.length === 0 && f.message);
  if (broken.length) throw new Error(`test files failed to load: ${broken.map((f) => f.name).join(', ')}`);
  return raw.testResults.flatMap((file) =>
    file.assertionResults.map((a, i) => ({
      file: path.relative(root, file.name),
      line: a.location ? a.location.line : null,
      column: a.location ? a.location.column : null,
      ...(sites ? siteOf(sites, file.name, i, a.title, root) : {}),
      title: a.title,
      status: status[a.status] || null,
      failing: a.failing === true,
    })),
  );
}

// `playwright test --list --reporter=json`: every spec of every project, at its
// position (file relative to the config's rootDir, the test directory). Declared marks
// are in expectedStatus (skip, fixme: skipped; fail: failed) and annotations; a mark
// written as a statement of a test's body (`test.skip()`) is only known when the test
// runs: playwrightBodyMark applies ADR 0005 to it from the syntax.
function playwrightRegistrations(raw, root) {
  const found = [];
  const walk = (suite) => {
    for (const spec of suite.specs || []) {
      const file = path.relative(root, path.join(raw.config.rootDir, spec.file));
      for (const t of spec.tests) {
        found.push({
          file,
          line: spec.line,
          column: spec.column,
          title: spec.title,
          status: t.expectedStatus === 'skipped' ? 'skipped' : 'active',
          failing: t.expectedStatus === 'failed',
          playwright: true,
        });
      }
    }
    for (const child of suite.suites || []) walk(child);
  };
  for (const suite of raw.suites) walk(suite);
  if (raw.errors && raw.errors.length) throw new Error(`playwright: ${JSON.stringify(raw.errors).slice(0, 500)}`);
  return found;
}

// The mark of `test.skip(…)`, `test.fixme(…)`, `test.fail(…)` written as a statement of
// the test's own body, of an enclosing test.describe body or of the file (not inside an
// if): ADR
// 0005's rule for Playwright; null if there is none.
function playwrightBodyMark(call) {
  const marks = { skip: 'skipped', fixme: 'skipped', fail: 'xfail' };
  let found = null;
  const bodies = [call.getSourceFile().statements];
  for (let node = call; node; node = node.parent) {
    if (!ts.isCallExpression(node)) continue;
    const fn = node.arguments.find((a) => ts.isArrowFunction(a) || ts.isFunctionExpression(a));
    if (fn && ts.isBlock(fn.body)) bodies.push(fn.body.statements);
  }
  for (const statements of bodies) {
    for (const st of statements) {
      if (!ts.isExpressionStatement(st) || !ts.isCallExpression(st.expression)) continue;
      const callee = st.expression.expression;
      const titled = st.expression.arguments.length >= 2 && ts.isStringLiteralLike(st.expression.arguments[0]);
      if (ts.isPropertyAccessExpression(callee) && callee.expression.getText() === 'test' && marks[callee.name.text] && !titled) {
        const mark = marks[callee.name.text];
        if (found === null || mark === 'skipped') found = mark;
      }
    }
  }
  return found;
}

// jest-callsites.cjs's records, by test file: the same tests in the same order as the
// results, checked by title.
function readSites(dir) {
  const byPath = new Map();
  for (const f of fs.readdirSync(dir)) {
    const rec = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
    byPath.set(rec.testPath, rec.sites);
  }
  return byPath;
}

// A file that chose its own environment (a `@jest-environment` docblock) ran without
// the recording one: jest's own location stands (its line, in the test file).
const ownEnvironment = new Set();
function siteOf(sites, testPath, i, title, root) {
  if (!sites.has(testPath)) {
    ownEnvironment.add(path.relative(root, testPath));
    return {};
  }
  const s = sites.get(testPath)[i];
  if (!s || s.title !== title) throw new Error(`no call site recorded for ${testPath} #${i} ${title}`);
  return { file: path.relative(root, s.file), line: s.line, column: s.column };
}

const sources = new Map();
function sourceFile(root, file) {
  if (!sources.has(file)) {
    const full = path.join(root, file);
    const text = fs.existsSync(full) ? fs.readFileSync(full, 'utf8') : null;
    sources.set(file, text === null ? null : ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kindOf(file)));
  }
  return sources.get(file);
}

function kindOf(file) {
  if (/\.[cm]?tsx$|\.jsx$/.test(file)) return ts.ScriptKind.TSX;
  if (/\.[cm]?ts$/.test(file)) return ts.ScriptKind.TS;
  return ts.ScriptKind.JS;
}

// The call expression a runner's position belongs to: the innermost call that contains
// the position outside its arguments, then up through `f(a)(b)` chains (the outer call
// is the test: `test.each(t)('name', fn)`, `it.skipIf(c)('name', fn)`).
function callAt(sf, line, column) {
  const starts = sf.getLineStarts();
  if (line < 1 || line > starts.length) return null;
  const pos = starts[line - 1] + column - 1;
  let best = null;
  const visit = (node) => {
    if (pos < node.getStart(sf) || pos >= node.getEnd()) return;
    if (ts.isCallExpression(node)) {
      const inArgs = node.arguments.some((a) => pos >= a.getFullStart() && pos < a.getEnd());
      if (!inArgs) best = node;
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  while (best && ts.isCallExpression(best.parent) && best.parent.expression === best) best = best.parent;
  return best;
}

// Property and identifier names along a call's callee: `it.skipIf(c)` gives it, skipIf.
function calleeNames(call) {
  const names = [];
  let e = call.expression;
  while (e) {
    if (ts.isIdentifier(e)) names.push(e.text);
    if (ts.isPropertyAccessExpression(e)) names.push(e.name.text);
    e = ts.isCallExpression(e) || ts.isPropertyAccessExpression(e) ? e.expression : null;
  }
  return names;
}

// node:test's options object (`test('x', { only: true }, fn)`): the names of its
// `only` set to true (the runner reports it only under --test-only), and `skip-option` for a
// `skip` whose value is no literal (`{ skip: isWindows }`): a conditional skip, which
// ADR 0005 counts as skipped whatever the runner resolved here.
function optionNames(call) {
  const options = call.arguments.find((a) => ts.isObjectLiteralExpression(a));
  const found = [];
  for (const p of options ? options.properties : []) {
    const key = p.name && p.name.getText().replace(/^['"]|['"]$/g, '');
    const value = ts.isPropertyAssignment(p) ? p.initializer : ts.isShorthandPropertyAssignment(p) ? p.name : null;
    if (!value) continue;
    if (key === 'only' && value.kind === ts.SyntaxKind.TrueKeyword) found.push('only');
    const literal = ts.isLiteralExpression(value) || [ts.SyntaxKind.TrueKeyword, ts.SyntaxKind.FalseKeyword,
      ts.SyntaxKind.NullKeyword].includes(value.kind) || (ts.isIdentifier(value) && value.text === 'undefined');
    if (key === 'skip' && !literal) found.push('skip-option');
  }
  return found;
}

function nameOf(call, sf) {
  const arg = call.arguments[0];
  if (!arg) return null;
  if (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg)) return arg.text;
  const text = arg.getText(sf);
  return ts.isTemplateExpression(arg) ? text.slice(1, -1) : text;
}

// ADR 0005's status for one call site from its registrations' statuses. A site run in
// some registrations and skipped in others is conditionally skipped (`skipIf`, a suite's
// `skipIf`): skipped, unless the test itself says `runIf`, which ADR 0005 calls active.
function siteStatus(regs, names) {
  const seen = new Set(regs.map((r) => r.status));
  if (seen.has(null)) return null;
  let status = seen.size === 1 ? [...seen][0] : 'skipped';
  if (status === 'active' && names.includes('skip-option')) status = 'skipped'; // node:test { skip: cond }
  if (seen.has('todo') && seen.size > 1) status = 'todo';
  if (seen.size > 1 && names.includes('runIf') && !seen.has('todo')) status = 'active';
  if (status !== 'active') return status;
  if (regs.some((r) => r.focused) || names.includes('only') || names.includes('fit')) return 'focused';
  if (regs.some((r) => r.failing) || names.includes('fails') || names.includes('failing')) return 'xfail';
  return 'active';
}

// A Playwright mark in the test's body: skipped wins over what the listing says,
// xfail over active (the listing runs no body).
function rowStatus(s) {
  const status = siteStatus(s.regs, s.names);
  if (s.bodyMark === 'skipped' && status !== 'todo') return 'skipped';
  if (s.bodyMark === 'xfail' && status === 'active') return 'xfail';
  return status;
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const root = path.resolve(opts.root);
  const meta = JSON.parse(fs.readFileSync(opts.meta, 'utf8'));
  const recorded = opts.sites ? readSites(opts.sites) : null;
  const regs = opts.raws.flatMap((f) => {
    const m = /^(mocha|jest|vitest|playwright|cypress):(.*)$/.exec(f);
    const [kind, file] = m ? [m[1], m[2]] : [opts.kind, f];
    return registrations(kind, JSON.parse(fs.readFileSync(file, 'utf8')), root, kind === 'jest' ? recorded : null);
  });
  const extra = opts.extra ? registrations(opts.kind, JSON.parse(fs.readFileSync(opts.extra, 'utf8')), root, null) : [];
  const sites = new Map();
  let unplaced = 0;
  const added = [];
  for (const r of [...regs, ...extra.map((e) => ({ ...e, extra: true }))]) {
    const sf = r.line === null ? null : sourceFile(root, r.file);
    const call = sf ? callAt(sf, r.line, r.column) : null;
    if (r.line !== null && !call) unplaced++;
    const start = call ? sf.getLineAndCharacterOfPosition(call.getStart(sf)) : null;
    // Without a position (vitest's typecheck tests, collected statically, one per call)
    // each registration is its own entry.
    const key = start ? `${r.file}:${start.line + 1}:${start.character}` : `${r.file}:#${sites.size}`;
    if (r.extra && sites.has(key) && !sites.get(key).extra) continue;
    if (r.extra && !sites.has(key)) added.push(`${r.file}:${start ? start.line + 1 : r.line}`);
    if (!sites.has(key)) {
      sites.set(key, {
        file: r.file,
        line: start ? start.line + 1 : r.line,
        column: start ? start.character : r.column,
        name: (call && nameOf(call, sf)) ?? r.title,
        names: call ? [...calleeNames(call), ...(opts.kind === 'node' ? optionNames(call) : [])] : [],
        bodyMark: call && r.playwright ? playwrightBodyMark(call) : null,
        extra: Boolean(r.extra),
        regs: [],
      });
    }
    sites.get(key).regs.push(r);
  }
  const rows = [...sites.values()].sort(
    (a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0)),
  );
  const shared = rows.filter((s) => s.regs.length > 1);
  const notes = [...(meta.notes || [])];
  notes.push(
    `${regs.length} tests registered by the runner, ${rows.length} call sites: ` +
      `${shared.length} call sites register more than one test (loops, each, shared helpers) ` +
      `for ${shared.reduce((n, s) => n + s.regs.length, 0)} registrations.`,
  );
  const mixed = shared.filter((s) => new Set(s.regs.map((r) => r.status)).size > 1);
  if (mixed.length) {
    notes.push(
      `${mixed.length} call sites are run in some registrations and skipped in others ` +
        `(conditional skips): status from ADR 0005 (skipped, or active for runIf): ` +
        mixed.map((s) => `${s.file}:${s.line}`).join(', '),
    );
  }
  if (added.length) {
    notes.push(
      `${added.length} call sites added from the --extra run (another platform), ` +
        `where the files register tests they do not register here: ${added.join(', ')}.`,
    );
  }
  if (ownEnvironment.size) {
    notes.push(
      `${ownEnvironment.size} test files choose their jest environment in a docblock, so their ` +
        `call sites are jest's own locations: ${[...ownEnvironment].sort().join(', ')}.`,
    );
  }
  if (unplaced) notes.push(`${unplaced} registrations whose position is in no call: runner's line kept.`);
  const noLine = rows.filter((s) => s.line === null).length;
  if (noLine) notes.push(`${noLine} tests without a location from the runner: line null, runner's title.`);
  const out = {
    name: meta.name,
    repository: meta.repository,
    commit: meta.commit,
    committed: meta.committed,
    license: meta.license,
    frameworks: meta.frameworks,
    tool: meta.tool,
    runner_count: regs.length,
    notes,
    // Paths no runner here could list (a sub-project run by another script), left out
    // on both sides by the accuracy measure; each says why.
    ...(meta.excluded ? { excluded: meta.excluded } : {}),
    tests: rows.map((s) => ({ file: s.file, line: s.line, name: s.name, status: rowStatus(s) })),
  };
  process.stdout.write(JSON.stringify(out, null, 2) + '\n');
}

main();
