import {
  CloudWatchClient,
  type Dimension,
  GetMetricDataCommand,
  type MetricDataQuery,
} from '@aws-sdk/client-cloudwatch';
import {
  METRIC_DIMENSIONS,
  type MetricDimensions,
  OBJECTIVES_WINDOW_SECONDS,
  SERVICE_METRICS,
} from '../../definitions/objectives';
import type { Clock } from '../../ports/clock';
import type { LatencyFigure, ObjectiveFigures, ObjectiveFiguresReader } from '../../ports/metrics';

export const createCloudWatchClient = (region: string): CloudWatchClient => new CloudWatchClient({ region });

export interface CloudWatchObjectivesConfig {
  /** The service's metrics namespace (`Pricing/<stage>`). */
  readonly namespace: string;
  /** The REST API's name (`ApiName` of its metrics); without it availability has no data. */
  readonly apiName?: string;
  /** @default OBJECTIVES_WINDOW_SECONDS (24 h) */
  readonly windowSeconds?: number;
}

type Stat = 'Sum' | 'SampleCount' | 'p95';

interface Query {
  readonly id: string;
  readonly namespace: string;
  readonly metric: string;
  readonly dimensions: MetricDimensions;
  readonly stat: Stat;
}

const dimensionsOf = (dimensions: MetricDimensions): Dimension[] =>
  Object.entries(dimensions).map(([Name, Value]) => ({ Name, Value }));

/**
 * The objectives' figures over the last 24 h from CloudWatch, in one `GetMetricData` call: the EMF metrics
 * of the functions (Sum and SampleCount of the 0/1 samples, p95 of the latencies as an extended statistic)
 * and API Gateway's `5XXError` and `Count`. One period spans the whole window, so each query answers one
 * value; should CloudWatch split it, counts are added and the highest p95 is kept.
 */
export class CloudWatchObjectiveFigures implements ObjectiveFiguresReader {
  constructor(
    private readonly cloudWatch: CloudWatchClient,
    private readonly clock: Clock,
    private readonly config: CloudWatchObjectivesConfig,
  ) {}

  private queries(): Query[] {
    const own = (id: string, metric: string, dimensions: MetricDimensions, stat: Stat): Query => ({
      id,
      namespace: this.config.namespace,
      metric,
      dimensions,
      stat,
    });
    const queries: Query[] = [
      own('mismatched', SERVICE_METRICS.commitTotalsMismatch, METRIC_DIMENSIONS.commit, 'Sum'),
      own('issued', SERVICE_METRICS.commitTotalsMismatch, METRIC_DIMENSIONS.commit, 'SampleCount'),
      own('unsigned', SERVICE_METRICS.receiptUnsigned, METRIC_DIMENSIONS.commit, 'Sum'),
      own('inside', SERVICE_METRICS.commitInsideLockWindow, METRIC_DIMENSIONS.commit, 'Sum'),
      own('decided', SERVICE_METRICS.commitInsideLockWindow, METRIC_DIMENSIONS.commit, 'SampleCount'),
      own('price_p95', SERVICE_METRICS.latency, METRIC_DIMENSIONS.getPrice, 'p95'),
      own('price_n', SERVICE_METRICS.latency, METRIC_DIMENSIONS.getPrice, 'SampleCount'),
      own('quote_p95', SERVICE_METRICS.latency, METRIC_DIMENSIONS.quote, 'p95'),
      own('quote_n', SERVICE_METRICS.latency, METRIC_DIMENSIONS.quote, 'SampleCount'),
      own('first_ok', SERVICE_METRICS.deliveryFirstAttemptSuccess, METRIC_DIMENSIONS.deliver, 'Sum'),
      own('first_n', SERVICE_METRICS.deliveryFirstAttemptSuccess, METRIC_DIMENSIONS.deliver, 'SampleCount'),
      own('delivery_p95', SERVICE_METRICS.deliveryLatency, METRIC_DIMENSIONS.deliver, 'p95'),
      own('delivery_n', SERVICE_METRICS.deliveryLatency, METRIC_DIMENSIONS.deliver, 'SampleCount'),
    ];
    if (this.config.apiName) {
      const api = { ApiName: this.config.apiName };
      queries.push(
        { id: 'api_5xx', namespace: 'AWS/ApiGateway', metric: '5XXError', dimensions: api, stat: 'Sum' },
        { id: 'api_count', namespace: 'AWS/ApiGateway', metric: 'Count', dimensions: api, stat: 'Sum' },
      );
    }
    return queries;
  }

  async read(): Promise<ObjectiveFigures> {
    const windowSeconds = this.config.windowSeconds ?? OBJECTIVES_WINDOW_SECONDS;
    const now = this.clock.now().getTime();
    const windowEnd = new Date(Math.floor(now / 60_000) * 60_000);
    const windowStart = new Date(windowEnd.getTime() - windowSeconds * 1000);
    const queries = this.queries();
    const stats = new Map(queries.map((query) => [query.id, query.stat]));
    const metricQueries: MetricDataQuery[] = queries.map((query) => ({
      Id: query.id,
      ReturnData: true,
      MetricStat: {
        Metric: {
          Namespace: query.namespace,
          MetricName: query.metric,
          Dimensions: dimensionsOf(query.dimensions),
        },
        Period: windowSeconds,
        Stat: query.stat,
      },
    }));
    const values = new Map<string, number[]>();
    let nextToken: string | undefined;
    do {
      const answer = await this.cloudWatch.send(
        new GetMetricDataCommand({
          MetricDataQueries: metricQueries,
          StartTime: windowStart,
          EndTime: windowEnd,
          ...(nextToken ? { NextToken: nextToken } : {}),
        }),
      );
      for (const result of answer.MetricDataResults ?? []) {
        if (!result.Id) continue;
        values.set(result.Id, [...(values.get(result.Id) ?? []), ...(result.Values ?? [])]);
      }
      nextToken = answer.NextToken;
    } while (nextToken);

    const value = (id: string): number | null => {
      const found = values.get(id) ?? [];
      if (found.length === 0) return null;
      return stats.get(id) === 'p95' ? Math.max(...found) : found.reduce((sum, item) => sum + item, 0);
    };
    const count = (id: string): number => Math.round(value(id) ?? 0);
    const latency = (p95: string, n: string): LatencyFigure => {
      const samples = count(n);
      return { count: samples, p95Ms: samples > 0 ? value(p95) : null };
    };
    return {
      windowStart,
      windowEnd,
      source: 'cloudwatch',
      receipts: {
        issued: count('issued'),
        totalsMismatched: count('mismatched'),
        unsigned: count('unsigned'),
      },
      lockWindow: { decided: count('decided'), inside: count('inside') },
      latency: { getPrice: latency('price_p95', 'price_n'), quote: latency('quote_p95', 'quote_n') },
      delivery: {
        firstAttempts: count('first_n'),
        firstAttemptSuccesses: count('first_ok'),
        latency: latency('delivery_p95', 'delivery_n'),
      },
      requests: { total: count('api_count'), serverErrors: count('api_5xx') },
    };
  }
}
