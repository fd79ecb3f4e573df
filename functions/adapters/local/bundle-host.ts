import { type ChildProcess, fork } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Context } from 'aws-lambda';
import type { LambdaHandler } from './function-pool';

/**
 * Lambda's runtime for the local stack on the deployed bundles (`LOCAL_BUNDLES=1 npm start`): each instance of a
 * function is a Node process of its own that imports the function's bundle once (its init) from a directory
 * outside the repository (no `node_modules` to fall back on, as in Lambda), with exactly the environment the
 * function's template gives it, and then serves one invocation at a time over IPC. An instance the pool discards
 * (a timeout) is killed, as Lambda discards a timed-out sandbox; `stop()` kills them all.
 */

/** The instance's side: import the bundle, then answer `{ id, event, context }` messages one by one. */
const HOST = `
const started = performance.now();
let module;
try {
  module = await import('./index.mjs');
} catch (error) {
  process.send({ init: 'failed', message: String(error?.message ?? error) });
  process.exit(1);
}
process.send({ init: 'ready', importMs: performance.now() - started });
process.on('message', async ({ id, event, context }) => {
  const deadline = Date.now() + context.remainingMs;
  const lambdaContext = { ...context, getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) };
  try {
    const result = await module.handler(event, lambdaContext);
    process.send({ id, result: result ?? null });
  } catch (error) {
    process.send({ id, error: { name: String(error?.name ?? 'Error'), message: String(error?.message ?? error) } });
  }
});
process.on('disconnect', () => process.exit(0));
`;

/** An event as Lambda serializes it to the runtime: JSON, binary attributes (`Uint8Array`) as base64. */
export const asLambdaJson = <T>(value: T): T =>
  JSON.parse(
    JSON.stringify(value, (_key, entry: unknown) =>
      entry instanceof Uint8Array ? Buffer.from(entry).toString('base64') : entry,
    ),
  ) as T;

/** A handler's failure inside an instance, with its name and message as the function threw them. */
export class BundleInvocationError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

/** The bundle's init failed (an import error, a missing module): the instance is gone. */
export class BundleInitError extends Error {
  constructor(functionId: string, message: string) {
    super(`the ${functionId} bundle failed to initialize: ${message}`);
    this.name = 'BundleInitError';
  }
}

type Answer =
  | { readonly id: number; readonly result: unknown }
  | { readonly id: number; readonly error: { readonly name: string; readonly message: string } };

type InitMessage =
  | { readonly init: 'ready'; readonly importMs: number }
  | { readonly init: 'failed'; readonly message: string };

export interface BundleHostOptions {
  readonly functionId: string;
  /** The bundle's entry file (`index.mjs` in the cloud assembly). */
  readonly file: string;
  /** The function's whole environment (its template's variables, the region, credentials, endpoints). */
  readonly env: Readonly<Record<string, string>>;
  /** Where the instance's output goes (Lambda's log stream), line by line: Powertools' JSON lines, EMF. */
  readonly output?: (line: string) => void;
}

/** One function's instances: `createInstance` for its pool, `dispose` for one it discards, `stop` for all. */
export class BundleHost<Event, Result> {
  readonly #dir: string;
  readonly #children = new Map<LambdaHandler<Event, Result>, ChildProcess>();
  #stopped = false;

  constructor(private readonly options: BundleHostOptions) {
    this.#dir = mkdtempSync(join(tmpdir(), `pricing-${options.functionId}-bundle-`));
    copyFileSync(options.file, join(this.#dir, 'index.mjs'));
    writeFileSync(join(this.#dir, 'host.mjs'), HOST);
  }

  /** A new instance: its process starts (the cold start) on its first invocation. */
  createInstance = (): LambdaHandler<Event, Result> => {
    let child: Promise<ChildProcess> | undefined;
    let next = 0;
    const pending = new Map<number, { resolve: (value: Result) => void; reject: (error: Error) => void }>();
    const start = (): Promise<ChildProcess> =>
      new Promise((resolve, reject) => {
        if (this.#stopped) return reject(new Error(`the ${this.options.functionId} function is stopped`));
        const proc = fork(join(this.#dir, 'host.mjs'), [], {
          cwd: this.#dir,
          env: { PATH: process.env.PATH ?? '', ...this.options.env },
          stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
          // Not the parent's loaders (tsx): the bundle is plain JavaScript, as in Lambda.
          execArgv: [],
        });
        this.#children.set(instance, proc);
        const output = this.options.output ?? (() => undefined);
        for (const stream of [proc.stdout, proc.stderr]) {
          if (stream)
            createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on('line', output);
        }
        proc.once('message', (message: InitMessage) => {
          if (message.init === 'ready') resolve(proc);
          else reject(new BundleInitError(this.options.functionId, message.message));
        });
        proc.on('message', (message: Answer | InitMessage) => {
          if (!('id' in message)) return;
          const waiter = pending.get(message.id);
          pending.delete(message.id);
          if ('error' in message)
            waiter?.reject(new BundleInvocationError(message.error.name, message.error.message));
          else waiter?.resolve(message.result as Result);
        });
        const end = (gone: Error) => {
          this.#children.delete(instance);
          child = undefined;
          reject(gone);
          for (const waiter of pending.values()) waiter.reject(gone);
          pending.clear();
        };
        proc.once('exit', (code, signal) =>
          end(new Error(`the ${this.options.functionId} instance exited (${signal ?? code})`)),
        );
        // A process that cannot start, or a send on a channel that just closed: that instance's calls fail, the
        // stack goes on (an unhandled 'error' would end it).
        proc.on('error', (error) =>
          end(
            new Error(`the ${this.options.functionId} instance failed: ${error.message}`, { cause: error }),
          ),
        );
      });
    const instance: LambdaHandler<Event, Result> = async (event: Event, context: Context) => {
      child ??= start();
      const proc = await child;
      const id = next++;
      return new Promise<Result>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        const { getRemainingTimeInMillis, done: _done, fail: _fail, succeed: _succeed, ...rest } = context;
        proc.send(
          { id, event: asLambdaJson(event), context: { ...rest, remainingMs: getRemainingTimeInMillis() } },
          (error) => {
            if (!error) return;
            pending.delete(id);
            reject(error);
          },
        );
      });
    };
    return instance;
  };

  /** Kills an instance the pool discarded (it timed out). */
  dispose = (instance: LambdaHandler<Event, Result>): void => {
    this.#children.get(instance)?.kill('SIGKILL');
  };

  async stop(): Promise<void> {
    this.#stopped = true;
    const exits = [...this.#children.values()].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    );
    await Promise.all(exits);
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
