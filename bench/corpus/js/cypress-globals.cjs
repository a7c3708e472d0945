// mocha --require hook for listing Cypress spec files with mocha --dry-run: Cypress
// runs them on mocha's BDD interface, with the globals `cy` and `Cypress`. Under
// --dry-run only the files' top level and describe bodies run; what they call on
// these globals (`Cypress.session.clearAllSavedSessions()`, `Cypress.env('x')`) is
// answered by a stub that accepts any property and any call.
'use strict';
function stub() {
  const target = function () {};
  return new Proxy(target, {
    get: (_, key) => (key === Symbol.toPrimitive ? () => '' : stub()),
    apply: () => stub(),
  });
}
global.Cypress = stub();
global.cy = stub();

// Cypress's `it(title, config, fn)` and `describe(title, config, fn)`: a test
// configuration object between the title and the body, which plain mocha would take
// for the body (and list the test as pending). The BDD interface's functions are
// wrapped to drop it, as Cypress does.
const path = require('path');
const mochaPath = Object.keys(require.cache).find((p) => p.endsWith(path.join('mocha', 'lib', 'mocha.js')));
if (!mochaPath) throw new Error('cypress-globals.cjs: mocha/lib/mocha.js not loaded yet');
const Mocha = require.cache[mochaPath].exports;
const bdd = Mocha.interfaces.bdd;
const dropConfig = (f) => {
  const wrapped = function (title, config, fn) {
    const options = config !== null && typeof config === 'object';
    return options ? f.call(this, title, fn) : f.apply(this, arguments);
  };
  for (const key of ['only', 'skip']) if (typeof f[key] === 'function') wrapped[key] = dropConfig(f[key]);
  return wrapped;
};
Mocha.interfaces.bdd = function (suite) {
  bdd(suite);
  suite.on('pre-require', (context) => {
    for (const name of ['it', 'specify', 'describe', 'context', 'xit', 'xspecify', 'xdescribe', 'xcontext']) {
      if (typeof context[name] === 'function') context[name] = dropConfig(context[name]);
    }
  });
};
