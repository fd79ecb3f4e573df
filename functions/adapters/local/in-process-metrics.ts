import type { Clock } from '../../ports/clock';
import type {
  BreakerStates,
  CommitOutcome,
  DeliveryAttemptOutcome,
  LatencyFigure,
  ObjectiveFigures,
  ObjectiveFiguresReader,
  ServedRequest,
  ServiceMetrics,
} from '../../ports/metrics';
import { LatencyHistogram } from './latency-histogram';

const P95 = 0.95;

const figureOf = (histogram: LatencyHistogram | undefined): LatencyFigure => ({
  count: histogram?.count ?? 0,
  p95Ms: histogram?.percentile(P95) ?? null,
});

/**
 * The local stack's metrics: counters and latency histograms in this process, shared by every function
 * instance of the stack (one object), read back by `GET /admin/slo`. Memory is bounded: counters, and one
 * fixed-size histogram per operation of the route table (plus delivery latency). The window is the life of
 * the process.
 */
export class InProcessMetrics implements ServiceMetrics, ObjectiveFiguresReader {
  private readonly startedAt: Date;
  private issued = 0;
  private totalsMismatched = 0;
  private unsigned = 0;
  private insideLockWindow = 0;
  private refusedExpired = 0;
  private requests = 0;
  private serverErrors = 0;
  private readonly latencies = new Map<string, LatencyHistogram>();
  private firstAttempts = 0;
  private firstAttemptSuccesses = 0;
  private readonly deliveryLatency = new LatencyHistogram();
  private breakers: BreakerStates | undefined;

  constructor(private readonly clock: Clock) {
    this.startedAt = clock.now();
  }

  commitIssued(outcome: CommitOutcome): void {
    this.issued += 1;
    if (!outcome.totalsEqual) this.totalsMismatched += 1;
    if (!outcome.signedWithVersions) this.unsigned += 1;
    if (outcome.insideLockWindow) this.insideLockWindow += 1;
  }

  commitRefusedExpired(): void {
    this.refusedExpired += 1;
  }

  requestServed(operation: string, request: ServedRequest): void {
    let histogram = this.latencies.get(operation);
    if (!histogram) {
      histogram = new LatencyHistogram();
      this.latencies.set(operation, histogram);
    }
    histogram.record(request.durationMs);
    this.requests += 1;
    if (request.statusCode >= 500) this.serverErrors += 1;
  }

  deliveryAttempted(outcome: DeliveryAttemptOutcome): void {
    if (outcome.firstAttempt) {
      this.firstAttempts += 1;
      if (outcome.success) this.firstAttemptSuccesses += 1;
    }
    if (outcome.success && outcome.msSinceFirstAttempt !== undefined)
      this.deliveryLatency.record(outcome.msSinceFirstAttempt);
  }

  breakerStates(states: BreakerStates): void {
    this.breakers = states;
  }

  /** Nothing to publish: the counters are read in place. */
  flush(): void {}

  /** The breaker states the last `rates` run reported, if any. */
  lastBreakerStates(): BreakerStates | undefined {
    return this.breakers;
  }

  async read(): Promise<ObjectiveFigures> {
    return {
      windowStart: this.startedAt,
      windowEnd: this.clock.now(),
      source: 'in_process',
      receipts: { issued: this.issued, totalsMismatched: this.totalsMismatched, unsigned: this.unsigned },
      lockWindow: { decided: this.issued + this.refusedExpired, inside: this.insideLockWindow },
      latency: {
        getPrice: figureOf(this.latencies.get('getPrice')),
        quote: figureOf(this.latencies.get('quote')),
      },
      delivery: {
        firstAttempts: this.firstAttempts,
        firstAttemptSuccesses: this.firstAttemptSuccesses,
        latency: figureOf(this.deliveryLatency),
      },
      requests: { total: this.requests, serverErrors: this.serverErrors },
    };
  }
}
