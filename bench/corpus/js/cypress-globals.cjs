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
