// Guard: npm scripts must run on the Node.js major pinned by the `node` devDependency (the Lambda runtime's).
// If `npm ci --ignore-scripts` skipped the `node` package's install step, scripts silently fall back to the
// system Node; fail loudly instead.
const expectedMajor = '24';
const actual = process.versions.node;
if (!actual.startsWith(`${expectedMajor}.`)) {
  console.error(
    `This project runs on Node.js ${expectedMajor} (the Lambda runtime), but npm scripts got ${actual}.\n` +
      'Run `npm ci` without --ignore-scripts so the pinned `node` package installs, then retry.',
  );
  process.exit(1);
}
