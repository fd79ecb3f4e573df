import type { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { SERVICE_METRICS } from '../../definitions/objectives';
import type {
  BreakerStates,
  CommitOutcome,
  DeliveryAttemptOutcome,
  ServedRequest,
  ServiceMetrics,
} from '../../ports/metrics';

const bit = (value: boolean): number => (value ? 1 : 0);

/**
 * The service metrics as CloudWatch embedded metric format (EMF) documents on stdout, through Powertools
 * Metrics: namespace `Pricing/<stage>`, the `service` dimension of the function, and for HTTP requests the
 * `operation` dimension (one request per invocation, so every metric of the invocation carries it). Values
 * are buffered in memory and written once per invocation by `flush`.
 */
export class EmfServiceMetrics implements ServiceMetrics {
  constructor(
    private readonly metrics: Metrics,
    private readonly logger?: Logger,
  ) {}

  commitIssued(outcome: CommitOutcome): void {
    this.metrics.addMetric(SERVICE_METRICS.commitTotalsMismatch, MetricUnit.Count, bit(!outcome.totalsEqual));
    this.metrics.addMetric(
      SERVICE_METRICS.receiptUnsigned,
      MetricUnit.Count,
      bit(!outcome.signedWithVersions),
    );
    this.metrics.addMetric(
      SERVICE_METRICS.commitInsideLockWindow,
      MetricUnit.Count,
      bit(outcome.insideLockWindow),
    );
  }

  commitRefusedExpired(): void {
    this.metrics.addMetric(SERVICE_METRICS.commitInsideLockWindow, MetricUnit.Count, 0);
  }

  /** Latency per operation; availability comes from API Gateway's own `5XXError` and `Count`. */
  requestServed(operation: string, request: ServedRequest): void {
    this.metrics.addDimension('operation', operation);
    this.metrics.addMetric(SERVICE_METRICS.latency, MetricUnit.Milliseconds, request.durationMs);
  }

  deliveryAttempted(outcome: DeliveryAttemptOutcome): void {
    if (outcome.firstAttempt)
      this.metrics.addMetric(
        SERVICE_METRICS.deliveryFirstAttemptSuccess,
        MetricUnit.Count,
        bit(outcome.success),
      );
    if (outcome.success && outcome.msSinceFirstAttempt !== undefined)
      this.metrics.addMetric(
        SERVICE_METRICS.deliveryLatency,
        MetricUnit.Milliseconds,
        outcome.msSinceFirstAttempt,
      );
  }

  breakerStates(states: BreakerStates): void {
    this.metrics.addMetric(SERVICE_METRICS.fxBreakersOpen, MetricUnit.Count, states.open);
  }

  flush(): void {
    try {
      if (this.metrics.hasStoredMetrics()) this.metrics.publishStoredMetrics();
      else this.metrics.clearDimensions();
    } catch (error) {
      // Losing a flush loses samples, never the request it measured.
      this.logger?.warn('publishing metrics failed', { error_type: (error as Error).name });
      this.metrics.clearMetrics();
      this.metrics.clearDimensions();
    }
  }
}

/** A function's metrics: its namespace and `service` dimension. */
export const emfServiceMetrics = (options: {
  readonly namespace: string;
  readonly serviceName: string;
  readonly logger?: Logger;
}): EmfServiceMetrics =>
  new EmfServiceMetrics(
    new Metrics({ namespace: options.namespace, serviceName: options.serviceName }),
    options.logger,
  );
