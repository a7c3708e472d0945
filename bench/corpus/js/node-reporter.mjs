// A node:test reporter for the corpus truth (bench/corpus/js/README.md): one JSON array
// of every test the runner reported, with its call site (node's own file, line and
// column of the test() / it() / t.test() call), its status, and whether it has
// subtests (ADR 0005 counts a test with subtests as a suite, like Go's t.Run).
//   node --test --test-reporter=./node-reporter.mjs --test-reporter-destination=OUT ...
// Children are reported before their parent, in order, per file: a test at nesting n
// that follows reports at nesting n + 1 of the same file is their parent.
export default async function* nodeReporter(source) {
  const records = [];
  const below = new Map(); // file -> nesting -> whether reports at it are pending
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const d = event.data;
    if (!d.file) continue;
    const pending = below.get(d.file) ?? below.set(d.file, []).get(d.file);
    const parent = Boolean(pending[d.nesting + 1]);
    pending.length = d.nesting + 1;
    pending[d.nesting] = true;
    records.push({
      file: d.file,
      line: d.line ?? null,
      column: d.column ?? null,
      title: d.name,
      suite: d.details?.type === 'suite',
      parent,
      skip: d.skip !== undefined && d.skip !== false,
      todo: d.todo !== undefined && d.todo !== false,
      failed: event.type === 'test:fail',
      error: event.type === 'test:fail' && d.details?.error ? String(d.details.error.message).slice(0, 200) : undefined,
    });
  }
  yield JSON.stringify(records) + '\n';
}
