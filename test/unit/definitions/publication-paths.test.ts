/**
 * No route writes catalog data except through a change request (C23): the catalog's one write path
 * (`publishCatalogChange` in functions/usecases/catalog/import.ts, and the repository's `publish` behind it) is
 * called only by the change-request use case and by automatic rate publication inside an approved rate policy.
 * The end-to-end walk of every route is in test/e2e/change-requests.e2e.test.ts; this reads the sources.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');

const sources = (directory: string): string[] =>
  readdirSync(directory).flatMap((name) => {
    const full = path.join(directory, name);
    if (statSync(full).isDirectory()) return sources(full);
    return full.endsWith('.ts') ? [full] : [];
  });

const relative = (file: string) => path.relative(ROOT, file).split(path.sep).join('/');

const callersOf = (pattern: RegExp): string[] =>
  sources(path.join(ROOT, 'functions'))
    .filter((file) => pattern.test(readFileSync(file, 'utf8')))
    .map(relative)
    .sort();

describe('catalog write paths', () => {
  it('only the catalog write path itself calls the repository publication', () => {
    expect(callersOf(/\.publish\(\{\s*expectedRevision/)).toEqual(['functions/usecases/catalog/import.ts']);
  });

  it('only change requests and the approved rate policy publish catalog changes', () => {
    expect(callersOf(/\bpublishCatalogChange\(/)).toEqual([
      'functions/usecases/catalog/import.ts',
      'functions/usecases/change-requests/change-requests.ts',
      'functions/usecases/rates/publisher.ts',
    ]);
  });

  it('no handler, adapter or composition reaches the write path directly', () => {
    const direct = callersOf(/\b(importCatalog|publishCatalogChange)\(/).filter(
      (file) => !file.startsWith('functions/usecases/'),
    );
    expect(direct).toEqual([]);
  });
});
