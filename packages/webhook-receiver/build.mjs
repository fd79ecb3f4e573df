/**
 * Builds the package from the service's receiver kit: each entry (`src/index.ts`, `src/dynamodb.ts`) bundled by
 * esbuild as ESM (`.mjs`) and CommonJS (`.cjs`) for Node 20+, the AWS SDK left to the consumer (a peer), and the
 * declarations emitted by the repository's TypeScript compiler (`dist/types`). `npm pack` runs it (prepack).
 */
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const dist = join(here, 'dist');
rmSync(dist, { recursive: true, force: true });

for (const entry of ['index', 'dynamodb']) {
  for (const format of ['esm', 'cjs']) {
    await build({
      entryPoints: [join(here, 'src', `${entry}.ts`)],
      outfile: join(dist, `${entry}.${format === 'esm' ? 'mjs' : 'cjs'}`),
      bundle: true,
      platform: 'node',
      target: 'node20',
      format,
      external: ['@aws-sdk/*'],
      legalComments: 'none',
      logLevel: 'warning',
    });
  }
}

const tsconfig = join(dist, 'tsconfig.build.json');
writeFileSync(
  tsconfig,
  JSON.stringify({
    extends: join(root, 'tsconfig.json'),
    compilerOptions: {
      noEmit: false,
      declaration: true,
      emitDeclarationOnly: true,
      rootDir: root,
      declarationDir: join(dist, 'types'),
      skipLibCheck: true,
    },
    include: [],
    files: [join(here, 'src', 'index.ts'), join(here, 'src', 'dynamodb.ts')],
  }),
);
const tsc = spawnSync(
  process.execPath,
  [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', tsconfig],
  {
    encoding: 'utf8',
  },
);
rmSync(tsconfig);
if (tsc.status !== 0) {
  process.stderr.write(`${tsc.stdout}${tsc.stderr}`);
  process.exit(1);
}
