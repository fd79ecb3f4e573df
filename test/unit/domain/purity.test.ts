import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const domainDir = path.resolve(import.meta.dirname, '../../../functions/domain');

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|mts|cts|js|mjs)$/.test(entry.name) ? [full] : [];
  });

/** Module specifiers a file imports, re-exports or loads dynamically. */
const importsOf = (source: string): string[] => {
  const specifiers: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const pattern of patterns) {
    for (const match of source.matchAll(pattern)) if (match[1]) specifiers.push(match[1]);
  }
  return specifiers;
};

const FORBIDDEN_MODULE = /^(@aws-sdk\/|aws-cdk-lib(\/|$)|(node:)?(fs|net|http|https|child_process)(\/|$))/;

/** Ambient effects the domain must receive through ports instead (C4: time is injected). */
const FORBIDDEN_CODE: readonly (readonly [string, RegExp])[] = [
  ['process.env', /\bprocess\.env\b/],
  ['Date.now(', /\bDate\.now\s*\(/],
  ['new Date() without arguments', /\bnew\s+Date\s*\(\s*\)/],
  ['Math.random(', /\bMath\.random\s*\(/],
];

/** Comments may mention what they like; strip them before scanning code. */
const withoutComments = (source: string): string =>
  source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');

const files = sourceFiles(domainDir);
const relative = (file: string) => path.relative(domainDir, file);

describe('functions/domain purity', () => {
  it('has files to check', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  it.each(files.map((file) => [relative(file), file] as const))(
    '%s imports no AWS SDK, CDK, filesystem or network module',
    (_name, file) => {
      const forbidden = importsOf(readFileSync(file, 'utf8')).filter((specifier) =>
        FORBIDDEN_MODULE.test(specifier),
      );
      expect(forbidden).toEqual([]);
    },
  );

  it.each(files.map((file) => [relative(file), file] as const))(
    '%s reads no environment, clock or randomness',
    (_name, file) => {
      const code = withoutComments(readFileSync(file, 'utf8'));
      const found = FORBIDDEN_CODE.filter(([, pattern]) => pattern.test(code)).map(([label]) => label);
      expect(found).toEqual([]);
    },
  );
});

describe('purity scanner', () => {
  it('finds forbidden imports in every form', () => {
    const source = [
      "import { S3Client } from '@aws-sdk/client-s3';",
      "import type { Stack } from 'aws-cdk-lib';",
      "import { readFileSync } from 'node:fs';",
      "import * as fs from 'fs';",
      "import 'node:net';",
      "export { request } from 'node:http';",
      "const lazy = await import('node:fs/promises');",
      "import { z } from 'zod';",
    ].join('\n');
    expect(importsOf(source).filter((specifier) => FORBIDDEN_MODULE.test(specifier))).toEqual([
      '@aws-sdk/client-s3',
      'aws-cdk-lib',
      'node:fs',
      'fs',
      'node:http',
      'node:net',
      'node:fs/promises',
    ]);
  });

  it('finds ambient effects but allows new Date(value) and mentions in comments', () => {
    const flagged = (code: string) =>
      FORBIDDEN_CODE.filter(([, pattern]) => pattern.test(withoutComments(code))).map(([label]) => label);
    expect(
      flagged('const a = process.env.X; const b = Date.now(); const c = new Date(); Math.random();'),
    ).toEqual(['process.env', 'Date.now(', 'new Date() without arguments', 'Math.random(']);
    expect(flagged('const d = new Date(at.getTime()); // no Date.now() here\n/* process.env */')).toEqual([]);
  });
});
