// jest testEnvironment wrapper: records the call site of every test jest registers.
//
// jest's --testLocationInResults gives the line and column of the first stack frame
// but not its file, so a test registered by a helper in another file (luxon's
// Helpers.withNow calls test() in test/helpers.js) gets the helper's line in the test
// file. This environment extends the project's own (CALLSITES_JEST_ENV, default
// jest-environment-node) and, when the file's tests are collected and run, walks
// jest-circus's tree and reads each test's registration stack (its asyncError): the first
// frame outside node_modules is the test(...) call. One JSON file per test file is
// written to $CALLSITES_OUT (a directory), in the order jest reports the results.
'use strict';
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { fileURLToPath } = require('url');

const out = process.env.CALLSITES_OUT;
const baseName = process.env.CALLSITES_JEST_ENV || 'jest-environment-node';
const baseModule = require(require.resolve(baseName, { paths: [process.cwd()] }));
const Base = baseModule.TestEnvironment || baseModule.default || baseModule;
const frame = /\(?((?:file:\/\/)?\/[^()]*?):(\d+):(\d+)\)?$/;

function callSite(error) {
  for (const text of String(error && error.stack).split('\n').slice(1)) {
    const m = frame.exec(text.trim());
    if (!m) continue;
    const file = m[1].startsWith('file://') ? fileURLToPath(m[1]) : m[1];
    if (file.includes(`${path.sep}node_modules${path.sep}`)) continue;
    return { file, line: Number(m[2]), column: Number(m[3]) };
  }
  return { file: null, line: null, column: null };
}

// Tests in the order jest-circus reports them: depth first through describe blocks.
function collect(block, into) {
  for (const child of block.children || []) {
    if (child.type === 'test') into.push({ title: child.name, ...callSite(child.asyncError) });
    else collect(child, into);
  }
  return into;
}

class CallSitesEnvironment extends Base {
  constructor(config, context) {
    super(config, context);
    this.callSitesTestPath = context.testPath;
  }

  async handleTestEvent(event, state) {
    if (event.name === 'run_finish') {
      const sites = collect(state.rootDescribeBlock, []);
      const id = crypto.createHash('sha1').update(this.callSitesTestPath).digest('hex');
      fs.mkdirSync(out, { recursive: true });
      fs.writeFileSync(path.join(out, `${id}.json`), JSON.stringify({ testPath: this.callSitesTestPath, sites }));
    }
    if (super.handleTestEvent) return super.handleTestEvent(event, state);
  }
}

module.exports = CallSitesEnvironment;
