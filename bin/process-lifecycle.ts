/**
 * The life of a long-running local process (`npm start`, `npm run receiver`): progress lines on stderr, a clean
 * stop on Ctrl-C or SIGTERM (a second signal well after the first exits at once), the banner once it is up, and
 * the exit when it cannot start.
 */

/** A second Ctrl-C later than this after the first ends the process without waiting for a clean stop. */
export const FORCE_QUIT_AFTER_MS = 2_000;

/** Writes progress lines to stderr as `[<tag>] <line>`. */
export const progressLine =
  (tag: string) =>
  (line: string): void => {
    process.stderr.write(`[${tag}] ${line}\n`);
  };

export interface ShutdownSignals {
  /** Whether a stop signal has arrived. */
  readonly stopping: () => boolean;
}

/**
 * On SIGINT or SIGTERM: says so, runs `stop` (what is running at that moment), says it stopped and exits 0.
 * One Ctrl-C reaches the process more than once (directly, and relayed by npm); only a signal sent at least
 * FORCE_QUIT_AFTER_MS after the first means "stop waiting" and exits 1 at once.
 */
export const stopOnSignals = (
  say: (line: string) => void,
  stop: () => Promise<void> | undefined,
): ShutdownSignals => {
  let stoppingSince: number | undefined;
  const shutdown = async (signal: string) => {
    if (stoppingSince !== undefined) {
      if (Date.now() - stoppingSince < FORCE_QUIT_AFTER_MS) return;
      say(`${signal} again: exiting now`);
      process.exit(1);
    }
    stoppingSince = Date.now();
    say(`${signal} received, stopping`);
    await stop();
    say('stopped; nothing left running');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  return { stopping: () => stoppingSince !== undefined };
};

/** Prints the banner of a process that is up on stdout: its lines between blank lines, ending with how to stop. */
export const printBanner = (lines: readonly string[]): void => {
  process.stdout.write(`${['', ...lines, '  Ctrl-C stops everything.', ''].join('\n')}\n`);
};

/** The class of an error, whatever its constructor's parameters. */
type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * What to do when the process cannot start: says `cannot start:` with the message of an expected error (one of
 * `expected`, whose message tells what to fix) or the stack of any other, and exits 1.
 */
export const exitOnStartFailure =
  (say: (line: string) => void, expected: readonly ErrorClass[]) =>
  (error: unknown): never => {
    if (expected.some((type) => error instanceof type)) {
      say(`cannot start: ${(error as Error).message}`);
    } else {
      say(`cannot start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
    process.exit(1);
  };
