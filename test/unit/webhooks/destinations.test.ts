import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  EXTERNAL_ID,
  eventBusAddressOf,
  externalIdFrom,
  messageAttributesOf,
  messageGroupOf,
  queueAddressOf,
  roleAccountOf,
} from '../../../functions/domain/webhooks/destinations';
import { createEndpointSchema, updateEndpointSchema } from '../../../functions/schemas/webhooks';

const ROLE = 'arn:aws:iam::111122223333:role/pricing-deliveries';
const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/111122223333/orders';

describe('cloud destination addresses (C34)', () => {
  it('reads an Amazon SQS queue URL: region, account, name, FIFO', () => {
    expect(queueAddressOf(QUEUE)).toEqual({
      region: 'eu-west-1',
      account: '111122223333',
      name: 'orders',
      fifo: false,
    });
    expect(queueAddressOf(`${QUEUE}.fifo`)).toMatchObject({ name: 'orders.fifo', fifo: true });
    // An emulator's queue has no region: its URL's origin is where it is.
    expect(queueAddressOf('http://127.0.0.1:4566/000000000000/partner')).toEqual({
      account: '000000000000',
      name: 'partner',
      fifo: false,
    });
    for (const wrong of [
      'https://sqs.eu-west-1.amazonaws.com/1111/orders',
      `${QUEUE}/extra`,
      `${QUEUE}?x=1`,
      'https://sqs.eu-west-1.amazonaws.com/111122223333/has space',
      `https://sqs.eu-west-1.amazonaws.com/111122223333/${'a'.repeat(81)}`,
      'https://user:pw@host/111122223333/q',
      'ftp://host/111122223333/q',
    ])
      expect(queueAddressOf(wrong), wrong).toBeUndefined();
  });

  it('reads an event bus ARN and a role ARN', () => {
    expect(eventBusAddressOf('arn:aws:events:us-east-1:111122223333:event-bus/partner')).toEqual({
      region: 'us-east-1',
      account: '111122223333',
      name: 'partner',
    });
    expect(eventBusAddressOf('arn:aws:events:us-east-1:1111:event-bus/partner')).toBeUndefined();
    expect(eventBusAddressOf('arn:aws:sqs:us-east-1:111122223333:partner')).toBeUndefined();
    expect(roleAccountOf(ROLE)).toBe('111122223333');
    expect(roleAccountOf('arn:aws:iam::111122223333:role/path/to/name')).toBe('111122223333');
    expect(roleAccountOf('arn:aws:iam::111122223333:user/name')).toBeUndefined();
  });

  it('makes external ids of the service form from 24 random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 24, maxLength: 24 }), (bytes) => {
        expect(externalIdFrom(bytes)).toMatch(EXTERNAL_ID);
      }),
    );
  });

  it('groups FIFO messages by the ordering key (or the endpoint), in what SQS allows, long keys by digest', () => {
    expect(messageGroupOf('ep_1', undefined)).toBe('ep_1');
    expect(messageGroupOf('ep_1', 'data.sku="A 1"')).toBe('data.sku="A_1"');
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (key) => {
        const group = messageGroupOf('ep_1', key);
        expect(group).toMatch(/^[\x21-\x7e]{1,128}$/);
        expect(messageGroupOf('ep_1', key)).toBe(group);
      }),
    );
    expect(messageGroupOf('ep_1', 'k'.repeat(129))).not.toBe(messageGroupOf('ep_1', `${'k'.repeat(128)}j`));
  });

  it('carries every header but Content-Type and User-Agent as String message attributes', () => {
    expect(
      messageAttributesOf({ 'Content-Type': 'application/json', 'User-Agent': 'x', 'webhook-id': 'evt_1' }),
    ).toEqual({ 'webhook-id': { DataType: 'String', StringValue: 'evt_1' } });
  });
});

describe('endpoint registration with a destination', () => {
  const problems = (result: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) =>
    result.error?.issues.map((issue) => issue.path.join('.')) ?? [];

  it('takes an SQS queue or an event bus with a role, and no url', () => {
    expect(
      createEndpointSchema.safeParse({ destination: { type: 'sqs', queue_url: QUEUE, role_arn: ROLE } })
        .success,
    ).toBe(true);
    expect(
      createEndpointSchema.safeParse({
        destination: {
          type: 'eventbridge',
          event_bus_arn: 'arn:aws:events:eu-west-1:111122223333:event-bus/partner',
          role_arn: ROLE,
        },
      }).success,
    ).toBe(true);
    expect(
      createEndpointSchema.safeParse({ url: 'https://partner.example/hooks', destination: { type: 'http' } })
        .success,
    ).toBe(true);
  });

  it('names the field that is wrong', () => {
    expect(problems(createEndpointSchema.safeParse({}))).toEqual(['url']);
    expect(problems(createEndpointSchema.safeParse({ destination: { type: 'http' } }))).toEqual(['url']);
    const sqs = { type: 'sqs', queue_url: QUEUE, role_arn: ROLE };
    expect(
      problems(createEndpointSchema.safeParse({ destination: sqs, url: 'https://partner.example/' })),
    ).toEqual(['url']);
    expect(
      problems(createEndpointSchema.safeParse({ destination: sqs, auth: { headers: { 'X-Key': 'v' } } })),
    ).toEqual(['auth']);
    expect(
      problems(createEndpointSchema.safeParse({ destination: { ...sqs, queue_url: 'https://x/1/q' } })),
    ).toEqual(['destination.queue_url']);
    expect(problems(createEndpointSchema.safeParse({ destination: { ...sqs, role_arn: 'role' } }))).toEqual([
      'destination.role_arn',
    ]);
    // The external id is the service's to make, never the caller's.
    expect(
      problems(createEndpointSchema.safeParse({ destination: { ...sqs, external_id: 'mine' } })),
    ).toEqual(['destination']);
    expect(problems(updateEndpointSchema.safeParse({ destination: { type: 'http' } }))).toEqual(['url']);
    expect(updateEndpointSchema.safeParse({ destination: sqs }).success).toBe(true);
  });
});
