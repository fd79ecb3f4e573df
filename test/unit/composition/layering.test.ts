/**
 * The layers' import rules, read from the sources: the domain imports only the domain (and pure packages);
 * adapters never import the composition or the handlers; handlers never import an adapter (they receive ports
 * and use cases from the composition root); only the composition builds the dependency object; zod is imported
 * as a namespace, so bundles keep only what they use. A planted violation of each rule is reported.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const FUNCTIONS = join(ROOT, 'functions');

interface SourceFile {
  /** Path from the repository root, e.g. `functions/handlers/webhooks.ts`. */
  readonly path: string;
  readonly text: string;
}

const sources = (dir: string): SourceFile[] =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => {
      const file = join(entry.parentPath, entry.name);
      return { path: relative(ROOT, file), text: readFileSync(file, 'utf8') };
    });

/** Every module a file imports (static `from '…'`, dynamic `import('…')`), relative ones as repository paths. */
const IMPORT_PATTERNS = [
  /^\s*(?:import|export)\s[^;]*?\bfrom\s*'([^']+)'/gms,
  /^\s*import\s*'([^']+)'/gm,
  /\bimport\(\s*'([^']+)'\s*\)/g,
];
const importsOf = (file: SourceFile): string[] =>
  IMPORT_PATTERNS.flatMap((pattern) => [...file.text.matchAll(pattern)]).map(([, specifier = '']) =>
    specifier.startsWith('.') ? relative(ROOT, resolve(ROOT, dirname(file.path), specifier)) : specifier,
  );

/** Packages the pure domain may use: no I/O, clock, environment or SDK. */
const DOMAIN_PACKAGES = new Set(['node:crypto', 'decimal.js', 'currency-codes']);

const layerOf = (path: string): string | undefined => path.match(/^functions\/([a-z-]+)\//)?.[1];

/** Each rule broken, as `file → import (rule)`. */
const violations = (files: readonly SourceFile[]): string[] =>
  files.flatMap((file) => {
    const layer = layerOf(file.path);
    return importsOf(file).flatMap((target) => {
      const targetLayer = target.startsWith('functions/') ? layerOf(target) : undefined;
      const broken: string[] = [];
      if (layer === 'domain' && (targetLayer ? targetLayer !== 'domain' : !DOMAIN_PACKAGES.has(target)))
        broken.push('the domain imports only the domain and pure packages');
      if (layer === 'adapters' && (targetLayer === 'composition' || targetLayer === 'handlers'))
        broken.push('adapters import neither the composition nor the handlers');
      if (layer === 'handlers' && targetLayer === 'adapters')
        broken.push('handlers receive adapters from the composition, never import one');
      return broken.map((rule) => `${file.path} → ${target} (${rule})`);
    });
  });

/**
 * Files that take zod's `z` object (`import { z } from 'zod'`): a value that carries every zod module, locales
 * included, so no bundle can drop them (+360 KiB a function); the namespace import lets esbuild keep only what
 * is used.
 */
const wholeZodImports = (files: readonly SourceFile[]): string[] =>
  files.filter((file) => /^import\s*\{\s*z\s*\}\s*from\s*'zod'/m.test(file.text)).map((file) => file.path);

/** Files that call the dependency builder: only the composition may. */
const dependencyBuilders = (files: readonly SourceFile[]): string[] =>
  files
    .filter((file) => /\bcomposeService\(/.test(file.text) && layerOf(file.path) !== 'composition')
    .map((file) => file.path);

describe('layering of functions/', () => {
  const files = sources(FUNCTIONS);

  it('reads the sources', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(
      importsOf(files.find((file) => file.path === 'functions/handlers/webhooks.ts') as SourceFile),
    ).toContain('functions/composition/aws');
  });

  it('holds: no file breaks a layer rule', () => {
    expect(violations(files)).toEqual([]);
    expect(dependencyBuilders(files)).toEqual([]);
    expect(wholeZodImports(files)).toEqual([]);
  });

  it('reports a planted violation of each rule', () => {
    const planted: SourceFile[] = [
      { path: 'functions/domain/pricing/x.ts', text: "import { readFileSync } from 'node:fs';" },
      { path: 'functions/domain/pricing/y.ts', text: "import type { Port } from '../../ports/clock';" },
      {
        path: 'functions/adapters/aws/x.ts',
        text: "import { awsDependencies } from '../../composition/aws';",
      },
      { path: 'functions/adapters/local/x.ts', text: "const h = await import('../../handlers/api');" },
      {
        path: 'functions/handlers/x.ts',
        text: "import { S3ObjectStore } from '../adapters/aws/object-store';",
      },
      { path: 'functions/handlers/y.ts', text: 'const deps = composeService(platform);' },
    ];
    expect(violations(planted)).toEqual([
      'functions/domain/pricing/x.ts → node:fs (the domain imports only the domain and pure packages)',
      'functions/domain/pricing/y.ts → functions/ports/clock (the domain imports only the domain and pure packages)',
      'functions/adapters/aws/x.ts → functions/composition/aws (adapters import neither the composition nor the handlers)',
      'functions/adapters/local/x.ts → functions/handlers/api (adapters import neither the composition nor the handlers)',
      'functions/handlers/x.ts → functions/adapters/aws/object-store (handlers receive adapters from the composition, never import one)',
    ]);
    expect(dependencyBuilders(planted)).toEqual(['functions/handlers/y.ts']);
    expect(
      wholeZodImports([
        { path: 'functions/schemas/x.ts', text: "import { z } from 'zod';" },
        {
          path: 'functions/schemas/y.ts',
          text: "import * as z from 'zod';\nimport type { z as t } from 'zod';",
        },
      ]),
    ).toEqual(['functions/schemas/x.ts']);
  });
});
