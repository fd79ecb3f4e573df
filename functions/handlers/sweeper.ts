import { awsDependencies } from '../composition/aws';
import type { ServiceDependencies } from '../composition/dependencies';
import { webhookContext } from '../composition/webhooks';
import { sweepOutbox } from '../usecases/webhooks/fanout';
import { lazyHandler } from './lazy';

export type SweeperHandler = (event: unknown, context: unknown) => Promise<{ swept: number }>;

/** The outbox sweeper, run every minute by an EventBridge Scheduler rate schedule (a timer locally). */
export const createSweeperHandler = (deps: ServiceDependencies): SweeperHandler => {
  const logger = deps.createLogger('sweeper');
  const ctx = webhookContext(deps, logger);
  return async () => sweepOutbox(ctx);
};

export const handler = lazyHandler(() => createSweeperHandler(awsDependencies('sweeper')));
