/** One component the service depends on; `check` resolves when it answers, rejects when it does not. */
export interface HealthProbe {
  readonly component: string;
  check(): Promise<void>;
}
