import { spawn } from 'node:child_process';
import path from 'node:path';

/** The repository's root, where the npm scripts run. */
export const REPO_ROOT = path.resolve(import.meta.dirname, '../..');

export interface ScriptRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * A script of bin/ as `npm run` runs it (`node --import tsx <script> <args>` from the repository root, on this
 * Node), with `env` over this process's environment; its exit code and output once it has ended.
 */
export const runScript = (
  script: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<ScriptRun> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
