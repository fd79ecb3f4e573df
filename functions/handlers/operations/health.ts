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

/** How long a deep health report is reused: probes cost calls to every component. */
export const HEALTH_CACHE_MS = 5_000;

/**
 * `GET /admin/health` (operators): 200 when every component answers, 503 otherwise. One report serves every
 * request for HEALTH_CACHE_MS (concurrent requests share the probes in flight), so polling costs the
 * components a few calls a minute, whoever polls.
 */
export const healthOperation = (
  probes: readonly HealthProbe[],
  timeoutMs = HEALTH_PROBE_TIMEOUT_MS,
  now: () => number = Date.now,
  cacheMs = HEALTH_CACHE_MS,
): Operation => {
  let cached: { at: number; report: Promise<ReturnType<typeof summarizeHealth>> } | undefined;
  return async () => {
    const at = now();
    if (!cached || at - cached.at >= cacheMs) {
      cached = {
        at,
        report: Promise.all(probes.map((probe) => withTimeout(probe, timeoutMs))).then(summarizeHealth),
      };
    }
    const report = await cached.report;
    return { statusCode: healthStatusCode(report), body: report };
  };
};

/**
 * `GET /health` (public, unauthenticated): the function answers, nothing more. It calls no component, so
 * nobody can make the service spend calls on its dependencies, nor learn which of them is down.
 */
export const livenessOperation = (): Operation => async () => ({
  statusCode: 200,
  headers: { 'Cache-Control': 'no-store' },
  body: { status: 'ok' },
});
