import {
  CloudWatchClient,
  GetMetricDataCommand,
  type GetMetricDataCommandInput,
  type MetricDataQuery,
} from '@aws-sdk/client-cloudwatch';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { CloudWatchObjectiveFigures } from '../../../functions/adapters/aws/cloudwatch-objectives';
import { METRIC_DIMENSIONS, SERVICE_METRICS } from '../../../functions/definitions/objectives';

const restores: (() => void)[] = [];
afterEach(() => {
  for (const restore of restores.splice(0)) restore();
});

const NOW = new Date('2026-11-22T12:34:56.789Z');
const clock = { now: () => NOW };

const fakeCloudWatch = () => {
  const client = new CloudWatchClient({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDFAKE', secretAccessKey: 'fake-secret' },
  });
  const mock = mockClient(client);
  restores.push(() => mock.restore());
  return { client, mock };
};

/** What CloudWatch holds for the window, per query id: the values it answers. */
const answering = (values: Record<string, number[]>) => (input: GetMetricDataCommandInput) => ({
  MetricDataResults: (input.MetricDataQueries ?? []).map((query) => ({
    Id: query.Id,
    StatusCode: 'Complete',
    Timestamps: (values[query.Id ?? ''] ?? []).map(() => input.StartTime),
    Values: values[query.Id ?? ''] ?? [],
  })),
  $metadata: {},
});

const queryOf = (input: GetMetricDataCommandInput | undefined, id: string): MetricDataQuery | undefined =>
  input?.MetricDataQueries?.find((query) => query.Id === id);

const dimensions = (map: Readonly<Record<string, string>>) =>
  Object.entries(map).map(([Name, Value]) => ({ Name, Value }));

describe('CloudWatchObjectiveFigures', () => {
  it('asks for the last 24 h (to the minute) in one period, p95 as an extended statistic', async () => {
    const { client, mock } = fakeCloudWatch();
    mock.on(GetMetricDataCommand).callsFake(answering({}));
    await new CloudWatchObjectiveFigures(client, clock, { namespace: 'Pricing/prod', apiName: 'Api' }).read();
    const input = mock.commandCalls(GetMetricDataCommand)[0]?.args[0].input;
    expect(input?.EndTime).toEqual(new Date('2026-11-22T12:34:00.000Z'));
    expect(input?.StartTime).toEqual(new Date('2026-11-21T12:34:00.000Z'));
    expect(queryOf(input, 'price_p95')).toEqual({
      Id: 'price_p95',
      ReturnData: true,
      MetricStat: {
        Metric: {
          Namespace: 'Pricing/prod',
          MetricName: SERVICE_METRICS.latency,
          Dimensions: dimensions(METRIC_DIMENSIONS.getPrice),
        },
        Period: 86_400,
        Stat: 'p95',
      },
    });
    expect(queryOf(input, 'issued')?.MetricStat).toMatchObject({
      Metric: {
        MetricName: SERVICE_METRICS.commitTotalsMismatch,
        Dimensions: dimensions(METRIC_DIMENSIONS.commit),
      },
      Stat: 'SampleCount',
    });
    expect(queryOf(input, 'first_ok')?.MetricStat).toMatchObject({
      Metric: {
        MetricName: SERVICE_METRICS.deliveryFirstAttemptSuccess,
        Dimensions: dimensions(METRIC_DIMENSIONS.deliver),
      },
      Stat: 'Sum',
    });
    expect(queryOf(input, 'api_5xx')?.MetricStat).toMatchObject({
      Metric: {
        Namespace: 'AWS/ApiGateway',
        MetricName: '5XXError',
        Dimensions: [{ Name: 'ApiName', Value: 'Api' }],
      },
      Stat: 'Sum',
    });
    expect(queryOf(input, 'api_count')?.MetricStat?.Metric?.MetricName).toBe('Count');
  });

  it('turns the answers into the figures of the objectives', async () => {
    const { client, mock } = fakeCloudWatch();
    mock.on(GetMetricDataCommand).callsFake(
      answering({
        issued: [1_000],
        mismatched: [0],
        unsigned: [0],
        decided: [1_010],
        inside: [1_000],
        price_p95: [4.25],
        price_n: [52_000],
        quote_p95: [38],
        quote_n: [1_050],
        first_n: [300],
        first_ok: [299],
        delivery_p95: [812],
        delivery_n: [300],
        api_count: [60_000],
        api_5xx: [3],
      }),
    );
    const figures = await new CloudWatchObjectiveFigures(client, clock, {
      namespace: 'Pricing/prod',
      apiName: 'Api',
    }).read();
    expect(figures).toEqual({
      windowStart: new Date('2026-11-21T12:34:00.000Z'),
      windowEnd: new Date('2026-11-22T12:34:00.000Z'),
      source: 'cloudwatch',
      receipts: { issued: 1_000, totalsMismatched: 0, unsigned: 0 },
      lockWindow: { decided: 1_010, inside: 1_000 },
      latency: { getPrice: { count: 52_000, p95Ms: 4.25 }, quote: { count: 1_050, p95Ms: 38 } },
      delivery: { firstAttempts: 300, firstAttemptSuccesses: 299, latency: { count: 300, p95Ms: 812 } },
      requests: { total: 60_000, serverErrors: 3 },
    });
  });

  it('adds counts split over several periods or pages and keeps the highest p95', async () => {
    const { client, mock } = fakeCloudWatch();
    mock
      .on(GetMetricDataCommand)
      .resolvesOnce({
        MetricDataResults: [
          { Id: 'quote_n', Values: [10, 5] },
          { Id: 'quote_p95', Values: [120, 180] },
        ],
        NextToken: 'page-2',
      })
      .resolvesOnce({ MetricDataResults: [{ Id: 'quote_n', Values: [1] }] });
    const figures = await new CloudWatchObjectiveFigures(client, clock, { namespace: 'Pricing/prod' }).read();
    expect(figures.latency.quote).toEqual({ count: 16, p95Ms: 180 });
    const calls = mock.commandCalls(GetMetricDataCommand);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.args[0].input.NextToken).toBe('page-2');
  });

  it('has no data where CloudWatch has none, and no availability query without the API name', async () => {
    const { client, mock } = fakeCloudWatch();
    mock.on(GetMetricDataCommand).callsFake(answering({}));
    const figures = await new CloudWatchObjectiveFigures(client, clock, { namespace: 'Pricing/prod' }).read();
    expect(figures.latency.getPrice).toEqual({ count: 0, p95Ms: null });
    expect(figures.delivery.latency).toEqual({ count: 0, p95Ms: null });
    expect(figures.requests).toEqual({ total: 0, serverErrors: 0 });
    const input = mock.commandCalls(GetMetricDataCommand)[0]?.args[0].input;
    expect(queryOf(input, 'api_count')).toBeUndefined();
  });
});
