import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    privateTmpRoot: string;
  }
}

/**
 * The infra files' temporary directories live under one directory made here and removed, with everything in
 * it, when the run ends (`private-tmpdir.setup.ts` gives each test process its own directory inside it).
 */
export default function setup(project: TestProject) {
  const root = mkdtempSync(path.join(tmpdir(), 'pricing-test-tmp-'));
  project.provide('privateTmpRoot', root);
  return () => rmSync(root, { recursive: true, force: true });
}
