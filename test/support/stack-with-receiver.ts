import { afterAll, beforeAll } from 'vitest';
import type { LocalStack } from '../../functions/composition/local/stack';
import type { RetryPolicy } from '../../functions/domain/webhooks/retry-policy';
import { startDemoStack } from './demo-stack';
import { startReceiver, type TestReceiver } from './webhook-receiver';

/** The demo stack and a loopback receiver of a test file, set once its `beforeAll` has run. */
export interface StackWithReceiver {
  readonly stack: LocalStack;
  readonly receiver: TestReceiver;
}

/**
 * An in-memory demo stack (with these caller key and admin token) and a loopback webhook receiver, started before
 * the file's tests and stopped after them.
 */
export const demoStackWithReceiver = (credentials: {
  readonly apiKey: string;
  readonly adminToken: string;
  /** A shorter retry policy than production's. */
  readonly webhookPolicy?: RetryPolicy;
}): StackWithReceiver => {
  const started: { stack?: LocalStack; receiver?: TestReceiver } = {};
  beforeAll(async () => {
    [started.stack, started.receiver] = await Promise.all([startDemoStack(credentials), startReceiver()]);
  }, 60_000);
  afterAll(async () => {
    await started.receiver?.close();
    await started.stack?.stop();
  });
  return {
    get stack() {
      if (!started.stack) throw new Error('the demo stack is not started (outside a test?)');
      return started.stack;
    },
    get receiver() {
      if (!started.receiver) throw new Error('the receiver is not started (outside a test?)');
      return started.receiver;
    },
  };
};

/**
 * An operator's HTTP calls to a stack (its base URL, asked for per call: the stack starts in `beforeAll`) with
 * `token`: JSON in and out, a fresh Idempotency-Key on every POST; the status, headers and parsed body.
 */
export const operatorCalls =
  (baseUrl: () => string, token: string) => async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${baseUrl()}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        ...(method === 'POST' ? { 'idempotency-key': crypto.randomUUID() } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: (text ? JSON.parse(text) : {}) as Record<string, unknown>,
    };
  };
