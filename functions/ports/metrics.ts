/**
 * Measurements behind the service-level objectives (`definitions/objectives.ts`). Recording is an in-memory
 * append on the request path: no I/O until `flush`, which the end of each invocation calls.
 */

/** What one issued receipt shows against its quote (rule 18). */
export interface CommitOutcome {
  /** The receipt's `computed_totals.total` equals the stored quote's `total` (same currency, same amount). */
  readonly totalsEqual: boolean;
  /** Issued before the quote's rate lock ended (`expires_at`). */
  readonly insideLockWindow: boolean;
  /** It carries `pricelist_version`, `fx_version`, `tax_rule_version`, `hash` and `signature`. */
  readonly signedWithVersions: boolean;
}

/** One HTTP request as its function answered it. */
export interface ServedRequest {
  /** The operation's own duration (ms), from the start of the handler to its answer. */
  readonly durationMs: number;
  readonly statusCode: number;
}

/** One attempt of one delivery (event × endpoint). */
export interface DeliveryAttemptOutcome {
  /** Attempt 1 of the delivery (a replay's attempts never are). */
  readonly firstAttempt: boolean;
  /** Answered 2xx. */
  readonly success: boolean;
  /** On a 2xx outside a replay: ms from the start of attempt 1 to this 2xx. */
  readonly msSinceFirstAttempt?: number;
}

/** The circuit breakers of the rate policy's pairs after a `rates` run. */
export interface BreakerStates {
  readonly pairs: number;
  readonly open: number;
}

export interface ServiceMetrics {
  commitIssued(outcome: CommitOutcome): void;
  /** A commit refused because the quote's rate lock had ended (`quote_expired`): outside the window. */
  commitRefusedExpired(): void;
  requestServed(operation: string, request: ServedRequest): void;
  deliveryAttempted(outcome: DeliveryAttemptOutcome): void;
  breakerStates(states: BreakerStates): void;
  /** Publishes what was recorded since the last flush (once per invocation); never throws. */
  flush(): void;
}

/** The count and p95 of a latency over the window; `p95Ms` is null without samples. */
export interface LatencyFigure {
  readonly count: number;
  readonly p95Ms: number | null;
}

/** The measured side of the objectives over a window. */
export interface ObjectiveFigures {
  readonly windowStart: Date;
  readonly windowEnd: Date;
  /** Figures from CloudWatch (AWS) or from the counters of this process (local stack). */
  readonly source: 'cloudwatch' | 'in_process';
  readonly receipts: {
    readonly issued: number;
    readonly totalsMismatched: number;
    readonly unsigned: number;
  };
  /** Commits decided: receipts issued plus commits refused `quote_expired`. */
  readonly lockWindow: { readonly decided: number; readonly inside: number };
  readonly latency: { readonly getPrice: LatencyFigure; readonly quote: LatencyFigure };
  readonly delivery: {
    readonly firstAttempts: number;
    readonly firstAttemptSuccesses: number;
    readonly latency: LatencyFigure;
  };
  /** HTTP requests answered (API Gateway's `Count` in AWS) and those answered 5xx. */
  readonly requests: { readonly total: number; readonly serverErrors: number };
}

export interface ObjectiveFiguresReader {
  read(): Promise<ObjectiveFigures>;
}
