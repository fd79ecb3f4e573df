import { awsDependencies } from '../composition/aws';
import type { ServiceDependencies } from '../composition/dependencies';
import { webhookContext } from '../composition/webhooks';
import { sweepOutbox } from '../usecases/webhooks/fanout';
import { type WatchdogRun, watchOrderedKeys } from '../usecases/webhooks/order-watchdog';
import { lazyHandler } from './lazy';

export interface SweepResult {
  readonly swept: number;
  readonly ordered: WatchdogRun;
}

export type SweeperHandler = (event: unknown, context: unknown) => Promise<SweepResult>;

/**
 * The sweeper, run every minute by an EventBridge Scheduler rate schedule (a timer locally): the outbox (events
 * whose fan-out is not recorded) and the ordered keys' watchdog (heads whose turn message was lost). Each runs even
 * when the other fails; a failure fails the invocation after both.
 */
export const createSweeperHandler = (deps: ServiceDependencies): SweeperHandler => {
  const logger = deps.createLogger('sweeper');
  const ctx = webhookContext(deps, logger);
  return async () => {
    const [outbox, ordered] = await Promise.allSettled([sweepOutbox(ctx), watchOrderedKeys(ctx)]);
    if (outbox.status === 'rejected' || ordered.status === 'rejected') {
      const failed = [outbox, ordered].filter((run) => run.status === 'rejected');
      throw new AggregateError(
        failed.map((run) => run.reason),
        'sweep failed',
      );
    }
    return { swept: outbox.value.swept, ordered: ordered.value };
  };
};

export const handler = lazyHandler(() => createSweeperHandler(awsDependencies('sweeper')));
