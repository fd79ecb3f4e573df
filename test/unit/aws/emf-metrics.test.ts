import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { emfServiceMetrics } from '../../../functions/adapters/aws/emf-metrics';
import { SERVICE_METRICS } from '../../../functions/definitions/objectives';

interface EmfDocument {
  readonly _aws: {
    readonly Timestamp: number;
    readonly CloudWatchMetrics: readonly {
      readonly Namespace: string;
      readonly Dimensions: readonly (readonly string[])[];
      readonly Metrics: readonly { readonly Name: string; readonly Unit: string }[];
    }[];
  };
  readonly [key: string]: unknown;
}

let write: MockInstance<typeof process.stdout.write>;

beforeEach(() => {
  write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
});
afterEach(() => {
  write.mockRestore();
});

/** The EMF documents written to stdout since the spy started (one JSON document per line). */
const documents = (): EmfDocument[] =>
  write.mock.calls
    .map(([chunk]) => String(chunk))
    .join('')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as EmfDocument);

const recorder = () => emfServiceMetrics({ namespace: 'Pricing/test', serviceName: 'pricing-checkout' });

describe('EmfServiceMetrics', () => {
  it('writes nothing until flushed, then one EMF document with the namespace and service dimension', () => {
    const metrics = recorder();
    metrics.commitIssued({ totalsEqual: true, insideLockWindow: true, signedWithVersions: false });
    expect(documents()).toEqual([]);
    metrics.flush();
    const [document, ...others] = documents();
    expect(others).toEqual([]);
    expect(document?._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: 'Pricing/test',
        Dimensions: [['service']],
        Metrics: expect.arrayContaining([
          { Name: SERVICE_METRICS.commitTotalsMismatch, Unit: 'Count' },
          { Name: SERVICE_METRICS.receiptUnsigned, Unit: 'Count' },
          { Name: SERVICE_METRICS.commitInsideLockWindow, Unit: 'Count' },
        ]),
      },
    ]);
    expect(document).toMatchObject({
      service: 'pricing-checkout',
      [SERVICE_METRICS.commitTotalsMismatch]: 0,
      [SERVICE_METRICS.receiptUnsigned]: 1,
      [SERVICE_METRICS.commitInsideLockWindow]: 1,
    });
  });

  it('an HTTP request adds its operation as a dimension of every metric of the invocation', () => {
    const metrics = recorder();
    metrics.commitRefusedExpired();
    metrics.requestServed('commit', { durationMs: 12.5, statusCode: 422 });
    metrics.flush();
    const [document] = documents();
    expect(document?._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service', 'operation']]);
    expect(document?._aws.CloudWatchMetrics[0]?.Metrics).toEqual(
      expect.arrayContaining([{ Name: SERVICE_METRICS.latency, Unit: 'Milliseconds' }]),
    );
    expect(document).toMatchObject({
      service: 'pricing-checkout',
      operation: 'commit',
      [SERVICE_METRICS.latency]: 12.5,
      [SERVICE_METRICS.commitInsideLockWindow]: 0,
    });
  });

  it('starts each invocation afresh: no metric or dimension of the last one is carried over', () => {
    const metrics = emfServiceMetrics({ namespace: 'Pricing/test', serviceName: 'pricing-deliver' });
    metrics.requestServed('getPrice', { durationMs: 1, statusCode: 200 });
    metrics.flush();
    metrics.deliveryAttempted({ firstAttempt: true, success: true, msSinceFirstAttempt: 840 });
    metrics.deliveryAttempted({ firstAttempt: false, success: false });
    metrics.flush();
    const [, second] = documents();
    expect(second?._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service']]);
    expect(second).not.toHaveProperty('operation');
    expect(second).not.toHaveProperty(SERVICE_METRICS.latency);
    expect(second).toMatchObject({
      service: 'pricing-deliver',
      [SERVICE_METRICS.deliveryFirstAttemptSuccess]: 1,
      [SERVICE_METRICS.deliveryLatency]: 840,
    });
  });

  it('records each sample: values of one invocation become a list', () => {
    const metrics = recorder();
    metrics.deliveryAttempted({ firstAttempt: true, success: true, msSinceFirstAttempt: 100 });
    metrics.deliveryAttempted({ firstAttempt: true, success: false });
    metrics.breakerStates({ pairs: 4, open: 2 });
    metrics.flush();
    expect(documents()[0]).toMatchObject({
      [SERVICE_METRICS.deliveryFirstAttemptSuccess]: [1, 0],
      [SERVICE_METRICS.deliveryLatency]: 100,
      [SERVICE_METRICS.fxBreakersOpen]: 2,
    });
  });

  it('a flush with nothing recorded writes nothing', () => {
    const metrics = recorder();
    metrics.flush();
    metrics.deliveryAttempted({ firstAttempt: false, success: false });
    metrics.flush();
    expect(documents()).toEqual([]);
  });
});
