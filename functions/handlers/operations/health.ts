import { type ComponentResult, healthStatusCode, summarizeHealth } from '../../domain/health';
import type { HealthProbe } from '../../ports/health';
import type { Operation } from '../middleware/http';

/** A component that does not answer within this time counts as down. */
export const HEALTH_PROBE_TIMEOUT_MS = 2_000;

const withTimeout = async (probe: HealthProbe, timeoutMs: number): Promise<ComponentResult> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${probe.component} did not answer`)), timeoutMs);
  });
  try {
    await Promise.race([probe.check(), timeout]);
    return { component: probe.component, status: 'ok' };
  } catch {
    return { component: probe.component, status: 'down' };
  } finally {
    clearTimeout(timer);
  }
};

/** `GET /health`: 200 when every component answers, 503 otherwise; never cached. */
export const healthOperation =
  (probes: readonly HealthProbe[], timeoutMs = HEALTH_PROBE_TIMEOUT_MS): Operation =>
  async () => {
    const results = await Promise.all(probes.map((probe) => withTimeout(probe, timeoutMs)));
    const report = summarizeHealth(results);
    return { statusCode: healthStatusCode(report), body: report };
  };
