/** Pure aggregation of component checks into the `GET /health` answer. */

export type ComponentStatus = 'ok' | 'down';

export interface ComponentResult {
  readonly component: string;
  readonly status: ComponentStatus;
}

export interface HealthReport {
  readonly status: 'ok' | 'degraded';
  readonly components: Readonly<Record<string, ComponentStatus>>;
}

export const HEALTHY_STATUS_CODE = 200;
export const UNHEALTHY_STATUS_CODE = 503;

export const summarizeHealth = (results: readonly ComponentResult[]): HealthReport => {
  const components: Record<string, ComponentStatus> = {};
  for (const result of [...results].sort((a, b) => a.component.localeCompare(b.component))) {
    components[result.component] = result.status;
  }
  const allOk = results.every((result) => result.status === 'ok');
  return { status: allOk ? 'ok' : 'degraded', components };
};

export const healthStatusCode = (report: HealthReport): number =>
  report.status === 'ok' ? HEALTHY_STATUS_CODE : UNHEALTHY_STATUS_CODE;
