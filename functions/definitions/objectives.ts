/**
 * The service-level objectives (spec rule 18 and "Limits") and the metrics that measure them: read by the CDK
 * objectives construct (alarms, dashboard), by the metrics adapters (EMF names and dimensions) and by
 * `GET /admin/slo`, so the alarms, the published metrics and the report cannot drift apart. Pure data.
 */
import type { FunctionId } from './functions';
import type { OperationId } from './routes';

/**
 * The variable naming the CloudWatch namespace of the service's metrics (`Pricing/<stage>`, one per stage):
 * Powertools Metrics reads this name itself, and the objectives reader queries the same namespace.
 */
export const METRICS_NAMESPACE_ENV_VAR = 'POWERTOOLS_METRICS_NAMESPACE';

/** The name of the REST API (the `ApiName` dimension of its metrics), set on the function that reads them. */
export const API_NAME_ENV_VAR = 'PRICING_API_NAME';

/** Namespace of a stage's metrics; the log-signal alarms publish into the same one. */
export const metricsNamespace = (stage: string): string => `Pricing/${stage}`;

/** The `service` dimension Powertools gives every metric of a function (its logger's service name too). */
export const serviceNameOf = (functionId: FunctionId): string => `pricing-${functionId}`;

/**
 * The service's own metrics (EMF). Each commit and delivery decision is one sample valued 0 or 1, so a
 * metric's Sum counts the 1s, its SampleCount the decisions and its Average the share.
 */
export const SERVICE_METRICS = {
  /** Per receipt issued: 1 when its `computed_totals.total` differs from the stored quote's `total`. */
  commitTotalsMismatch: 'CommitTotalsMismatch',
  /** Per receipt issued: 1 when it lacks a version (`pricelist_version`, `fx_version`, `tax_rule_version`), its hash or its signature. */
  receiptUnsigned: 'ReceiptUnsigned',
  /** Per commit decided: 1 for a receipt issued inside the rate lock, 0 for a commit refused `quote_expired`. */
  commitInsideLockWindow: 'CommitInsideLockWindow',
  /** Per HTTP request: the operation's own duration (ms), with the `operation` dimension. */
  latency: 'Latency',
  /** Per first attempt of a delivery (attempt 1, not a replay): 1 when answered 2xx. */
  deliveryFirstAttemptSuccess: 'DeliveryFirstAttemptSuccess',
  /** Per delivery answered 2xx outside a replay: ms from the start of its first attempt to the 2xx. */
  deliveryLatency: 'DeliveryLatency',
  /** Per `rates` run: how many pairs of the rate policy have an open circuit breaker. */
  fxBreakersOpen: 'FxBreakersOpen',
} as const;

export type ServiceMetricName = (typeof SERVICE_METRICS)[keyof typeof SERVICE_METRICS];

/** Dimensions of a metric as the functions publish it (HTTP requests add their operation). */
export type MetricDimensions = Readonly<Record<string, string>>;

const httpDimensions = (functionId: FunctionId, operation: OperationId): MetricDimensions => ({
  service: serviceNameOf(functionId),
  operation,
});

/** Where each metric is published: the emitting function's service and, for HTTP functions, the operation. */
export const METRIC_DIMENSIONS = {
  commit: httpDimensions('checkout', 'commit'),
  getPrice: httpDimensions('catalog', 'getPrice'),
  quote: httpDimensions('checkout', 'quote'),
  deliver: { service: serviceNameOf('deliver') },
  rates: { service: serviceNameOf('rates') },
} as const satisfies Record<string, MetricDimensions>;

/**
 * `at_least`: met when measured ≥ target; `at_most`: measured ≤ target; `below`: measured < target. Ratios
 * are fractions (0.9999), latencies milliseconds.
 */
export type ObjectiveComparison = 'at_least' | 'at_most' | 'below';

export interface ObjectiveDefinition {
  readonly description: string;
  readonly target: number;
  readonly comparison: ObjectiveComparison;
  readonly unit: 'ratio' | 'ms' | 'messages' | 'breakers';
}

export const OBJECTIVES = {
  totals_match: {
    description:
      'Receipts whose committed total equals the quoted total (rule 18: at least 99.99 %; any mismatch alarms).',
    target: 0.9999,
    comparison: 'at_least',
    unit: 'ratio',
  },
  lock_window: {
    description:
      'Commits inside the rate-lock window: receipts issued / (receipts issued + commits refused quote_expired) (rule 18).',
    target: 0.99,
    comparison: 'at_least',
    unit: 'ratio',
  },
  signed_receipts: {
    description:
      'Receipts carrying pricelist_version, fx_version, tax_rule_version, a hash and a signature (rule 18).',
    target: 1,
    comparison: 'at_least',
    unit: 'ratio',
  },
  price_latency_p95: {
    description: 'GET /catalog/prices: p95 of the operation duration (Limits: at most 120 ms).',
    target: 120,
    comparison: 'at_most',
    unit: 'ms',
  },
  quote_latency_p95: {
    description: 'POST /pricing/quote: p95 of the operation duration (Limits: at most 250 ms).',
    target: 250,
    comparison: 'at_most',
    unit: 'ms',
  },
  delivery_latency_p95: {
    description:
      'Webhook deliveries answered 2xx (outside replays): p95 of the time from the start of the first attempt to the 2xx (Limits: under 3 s).',
    target: 3000,
    comparison: 'below',
    unit: 'ms',
  },
  delivery_first_attempt_success: {
    description:
      'Share of deliveries (event × endpoint) whose first attempt is answered 2xx (Limits: at least 99.9 % of events).',
    target: 0.999,
    comparison: 'at_least',
    unit: 'ratio',
  },
  delivery_dlq_depth: {
    description: 'Dead deliveries waiting in the delivery DLQ (alarm on the first).',
    target: 0,
    comparison: 'at_most',
    unit: 'messages',
  },
  fx_breakers_open: {
    description: 'Pairs of the rate policy whose FX circuit breaker is open (rule 10; alarm on the first).',
    target: 0,
    comparison: 'at_most',
    unit: 'breakers',
  },
  availability: {
    description: 'Catalog API requests not answered 5xx (Limits: at least 99.95 %).',
    target: 0.9995,
    comparison: 'at_least',
    unit: 'ratio',
  },
} as const satisfies Record<string, ObjectiveDefinition>;

export type ObjectiveId = keyof typeof OBJECTIVES;

/** Whether a measured value meets an objective. */
export const meetsObjective = (objective: ObjectiveDefinition, measured: number): boolean => {
  switch (objective.comparison) {
    case 'at_least':
      return measured >= objective.target;
    case 'at_most':
      return measured <= objective.target;
    case 'below':
      return measured < objective.target;
  }
};

/** How far back the report looks in AWS (the in-process counters count since the local stack started). */
export const OBJECTIVES_WINDOW_SECONDS = 24 * 3600;

/**
 * How fast a ratio objective spends its error budget over the measured window: the share of misses divided by the
 * share the target allows (1: exactly at budget; 14.4 sustained for an hour spends 2 % of 30 days' budget, the page
 * threshold of the availability alarm). Undefined for other objectives (latencies, counts), and without a
 * measurement; an objective with no budget (target 1) burns infinitely on any miss, 0 without one.
 */
export const burnRateOf = (objective: {
  readonly comparison: ObjectiveComparison;
  readonly unit: string;
  readonly target: number;
  readonly measured: number | null;
}): number | undefined => {
  if (objective.unit !== 'ratio' || objective.comparison !== 'at_least' || objective.measured === null)
    return undefined;
  const misses = Math.max(0, 1 - objective.measured);
  const budget = 1 - objective.target;
  if (budget <= 0) return misses > 0 ? Number.POSITIVE_INFINITY : 0;
  return misses / budget;
};
