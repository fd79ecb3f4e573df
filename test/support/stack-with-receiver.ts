import { afterAll, beforeAll } from 'vitest';
import type { LocalStack } from '../../functions/composition/local/stack';
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
