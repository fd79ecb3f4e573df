import { awsDependencies } from '../composition/aws';
import type { ServiceDependencies } from '../composition/dependencies';
import { webhookContext } from '../composition/webhooks';
import { replayRequestSchema } from '../schemas/webhooks';
import { type ReplayAccepted, ReplayRefusedError, replayDeliveries } from '../usecases/webhooks/replay';
import { lazyHandler } from './lazy';

export type ReplayResult =
  | ({ readonly ok: true } & ReplayAccepted)
  | {
      readonly ok: false;
      readonly error: string;
      readonly error_description: string;
      readonly details?: unknown;
    };

export type ReplayHandler = (event: unknown, context: unknown) => Promise<ReplayResult>;

/**
 * The replay function operators invoke directly (`aws lambda invoke --payload '{"event_ids":[...]}'` or
 * `'{"from":"…","to":"…"}'`): the same use case as `POST /webhooks/replay`. Bad input answers a C6-style
 * object instead of failing the invocation.
 */
export const createReplayHandler = (deps: ServiceDependencies): ReplayHandler => {
  const logger = deps.createLogger('replay');
  const ctx = webhookContext(deps, logger);
  return async (event) => {
    const parsed = replayRequestSchema.safeParse(event);
    if (!parsed.success)
      return {
        ok: false,
        error: 'invalid_request',
        error_description: parsed.error.issues
          .map((issue) => `${issue.path.join('.') || '$'}: ${issue.message}`)
          .join('; '),
      };
    try {
      const accepted = await replayDeliveries(ctx, parsed.data);
      logger.info('replay accepted', { ...accepted });
      return { ok: true, ...accepted };
    } catch (error) {
      if (error instanceof ReplayRefusedError)
        return { ok: false, error: error.code, error_description: error.message, details: error.details };
      throw error;
    }
  };
};

export const handler = lazyHandler(() => createReplayHandler(awsDependencies('replay')));
