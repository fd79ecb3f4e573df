import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The local stack as its own process (`node --import tsx bin/local.ts`, what `npm start` runs), in its own
 * process group: the crash tests end it with SIGKILL — from outside (`kill -9`) or from inside (the
 * `CRASH_AT` hook) — and start it again on the same data directory.
 */
export interface StackProcess {
  readonly child: ChildProcess;
  readonly url: string;
  output(): string;
}

export const repoRoot = path.resolve(import.meta.dirname, '../..');

/** Every process on the machine whose command line mentions `needle` (read from /proc). */
export const processesMentioning = (needle: string): number[] =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle);
      } catch {
        return false;
      }
    })
    .map(Number);

export const waitUntil = async (condition: () => boolean, timeoutMs: number): Promise<boolean> => {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return condition();
};

export const exitOf = (child: ChildProcess): Promise<number | null> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((resolve) => child.once('exit', (code) => resolve(code)));

/** Runs a command the way a user does in a terminal: its own process group, which Ctrl-C signals as a whole. */
export const runInGroup = (command: string, args: readonly string[], env: Record<string, string>) => {
  const child = spawn(command, [...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  return { child, output: () => output };
};

/** Starts the local stack on `port` with `env` and waits for a healthy `/health` and its banner. */
export const startStackProcess = async (options: {
  readonly port: number;
  readonly dataDir: string;
  readonly env?: Record<string, string>;
  readonly timeoutMs?: number;
}): Promise<StackProcess> => {
  const { child, output } = runInGroup(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
    PORT: String(options.port),
    DATA_DIR: options.dataDir,
    LOG_LEVEL: 'WARN',
    ...options.env,
  });
  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + (options.timeoutMs ?? 90_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the local stack exited while starting:\n${output().slice(-3000)}`);
    }
    try {
      const response = await fetch(`${url}/health`);
      if (response.status === 200 && output().includes('Admin token')) return { child, url, output };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  killGroup(child);
  throw new Error(`no healthy /health within the start timeout:\n${output().slice(-3000)}`);
};

const killGroup = (child: ChildProcess): void => {
  try {
    process.kill(-(child.pid as number), 'SIGKILL');
  } catch {
    // already gone
  }
};

/**
 * Waits until the stack process has ended (a crash hook kills it from inside) and nothing it started is left
 * on its data directory (DynamoDB Local's supervisor stops Java when its parent dies), so the next start finds
 * the directory and the port free.
 */
export const awaitStackGone = async (stack: StackProcess, dataDir: string): Promise<void> => {
  const exited = await Promise.race([
    exitOf(stack.child).then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 30_000)),
  ]);
  if (!exited) killGroup(stack.child);
  if (!(await waitUntil(() => processesMentioning(dataDir).length === 0, 20_000))) {
    for (const pid of processesMentioning(dataDir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }
};

/** `kill -9` of the whole local stack (its process group), then waits as `awaitStackGone` does. */
export const killStack = async (stack: StackProcess, dataDir: string): Promise<void> => {
  killGroup(stack.child);
  await awaitStackGone(stack, dataDir);
};
