import { describe, expect, it } from 'vitest';
import { summarizeHealth } from '../../../functions/domain/health';
import { healthOperation } from '../../../functions/handlers/operations/health';
import type { HealthProbe } from '../../../functions/ports/health';
import { proxyEvent } from '../support/lambda';

const request = {
  event: proxyEvent({ resource: '/health' }),
  route: {
    method: 'GET',
    path: '/health',
    function: 'api',
    operation: 'health',
    auth: 'none',
    summary: 'health',
  },
  traceId: 'trace-health-1',
} as const;

const ok = (component: string): HealthProbe => ({ component, check: async () => undefined });
const failing = (component: string): HealthProbe => ({
  component,
  check: async () => {
    throw new Error('connection refused');
  },
});
const hanging = (component: string): HealthProbe => ({ component, check: () => new Promise<void>(() => {}) });

describe('healthOperation', () => {
  it('answers 200 ok with every component, sorted by name, when all probes answer', async () => {
    const result = await healthOperation([ok('sqs'), ok('dynamodb'), ok('s3')])(request);
    expect(result.statusCode).toBe(200);
    expect(result.body).toEqual({ status: 'ok', components: { dynamodb: 'ok', s3: 'ok', sqs: 'ok' } });
    expect(Object.keys((result.body as { components: object }).components)).toEqual([
      'dynamodb',
      's3',
      'sqs',
    ]);
  });

  it('answers 503 degraded with the failing component down when one probe rejects', async () => {
    const result = await healthOperation([ok('dynamodb'), failing('sqs'), ok('s3')])(request);
    expect(result.statusCode).toBe(503);
    expect(result.body).toEqual({
      status: 'degraded',
      components: { dynamodb: 'ok', s3: 'ok', sqs: 'down' },
    });
  });

  it('counts a probe that never answers as down after the timeout', async () => {
    const result = await healthOperation([ok('dynamodb'), hanging('s3')], 20)(request);
    expect(result.statusCode).toBe(503);
    expect(result.body).toEqual({ status: 'degraded', components: { dynamodb: 'ok', s3: 'down' } });
  });

  it('counts a probe that throws synchronously as down', async () => {
    const probe: HealthProbe = {
      component: 'kms',
      check: () => {
        throw new Error('not a promise');
      },
    };
    const result = await healthOperation([probe])(request);
    expect(result.statusCode).toBe(503);
    expect(result.body).toEqual({ status: 'degraded', components: { kms: 'down' } });
  });

  it('reveals nothing about the failure in the body', async () => {
    const result = await healthOperation([failing('sqs')])(request);
    expect(JSON.stringify(result.body)).not.toContain('connection refused');
  });

  it('answers 200 ok with no components when there are no probes', async () => {
    const result = await healthOperation([])(request);
    expect(result).toEqual({ statusCode: 200, body: { status: 'ok', components: {} } });
  });
});

describe('summarizeHealth', () => {
  it('does not reorder its input', () => {
    const results = [
      { component: 'b', status: 'ok' },
      { component: 'a', status: 'down' },
    ] as const;
    summarizeHealth(results);
    expect(results.map((result) => result.component)).toEqual(['b', 'a']);
  });
});
