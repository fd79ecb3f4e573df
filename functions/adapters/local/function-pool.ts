import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import type { FunctionDefinition, FunctionId } from '../../definitions';
import { asFunction } from './iam-guard';

export type LambdaHandler<Event, Result> = (event: Event, context: Context) => Promise<Result>;

export class FunctionTimeoutError extends Error {
  constructor(functionId: string, timeoutSeconds: number) {
    super(`Task timed out after ${timeoutSeconds} seconds (${functionId})`);
    this.name = 'FunctionTimeoutError';
  }
}

const contextFor = (definition: FunctionDefinition, deadline: number): Context => ({
  callbackWaitsForEmptyEventLoop: false,
  functionName: `pricing-local-${definition.id}`,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:pricing-local-${definition.id}`,
  memoryLimitInMB: String(definition.memoryMb),
  awsRequestId: randomUUID(),
  logGroupName: `/aws/lambda/pricing-local-${definition.id}`,
  logStreamName: 'local',
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
});

/**
 * Lambda's execution model for the local stack: each instance serves one event at a time, instances are
 * created on demand up to a concurrency limit, and an invocation past the function's timeout fails (the
 * instance that timed out is discarded, as Lambda does).
 */
export class FunctionPool<Event, Result> {
  private readonly idle: LambdaHandler<Event, Result>[] = [];
  private readonly waiting: {
    resolve: (instance: LambdaHandler<Event, Result>) => void;
    reject: (error: unknown) => void;
  }[] = [];
  private instances = 0;

  constructor(
    readonly definition: FunctionDefinition,
    private readonly createInstance: () => LambdaHandler<Event, Result>,
    private readonly maxInstances = 16,
    /** Ends an instance the pool discards (a bundle's process); in-process instances need nothing. */
    private readonly disposeInstance: (instance: LambdaHandler<Event, Result>) => void = () => undefined,
  ) {}

  /** A new instance, or the init error; a failed init frees its slot (Lambda retries init on the next event). */
  private create(): LambdaHandler<Event, Result> {
    this.instances += 1;
    try {
      return asFunction(this.definition.id as FunctionId, () => this.createInstance());
    } catch (error) {
      this.instances -= 1;
      throw error;
    }
  }

  private async acquire(): Promise<LambdaHandler<Event, Result>> {
    const ready = this.idle.pop();
    if (ready) return ready;
    if (this.instances < this.maxInstances) return this.create();
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  private release(instance: LambdaHandler<Event, Result>): void {
    const next = this.waiting.shift();
    if (next) next.resolve(instance);
    else this.idle.push(instance);
  }

  /** Drops a timed-out instance; a waiting caller gets a fresh slot instead. */
  private discard(instance: LambdaHandler<Event, Result>): void {
    this.disposeInstance(instance);
    this.instances -= 1;
    const next = this.waiting.shift();
    if (!next) return;
    try {
      next.resolve(this.create());
    } catch (error) {
      next.reject(error);
    }
  }

  async invoke(event: Event): Promise<Result> {
    const instance = await this.acquire();
    const timeoutMs = this.definition.timeoutSeconds * 1000;
    const deadline = Date.now() + timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new FunctionTimeoutError(this.definition.id, this.definition.timeoutSeconds)),
        timeoutMs,
      );
    });
    try {
      // Its calls are its function's: checked against the function's grants (iam-guard.ts).
      const result = await Promise.race([
        asFunction(this.definition.id as FunctionId, () =>
          instance(event, contextFor(this.definition, deadline)),
        ),
        timeout,
      ]);
      this.release(instance);
      return result;
    } catch (error) {
      if (error instanceof FunctionTimeoutError) this.discard(instance);
      else this.release(instance);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
}
