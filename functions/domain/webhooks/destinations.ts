import { createHash } from 'node:crypto';

/**
 * Destinations beyond HTTP (C34): an Amazon SQS queue or an EventBridge event bus in the partner's account, reached
 * through a role the partner lets the service assume with an external id. Pure: the shapes, what an address says
 * (region, account, FIFO), and what a delivery carries besides the envelope; the AWS calls are the adapter's.
 */

/** `arn:<partition>:iam::<account>:role/<path/name>` (IAM's role names: letters, digits, `+=,.@_-`). */
export const ROLE_ARN =
  /^arn:aws(?:-cn|-us-gov)?:iam::(\d{12}):role\/(?:[\x21-\x7e]{1,511}\/)?[\w+=,.@-]{1,64}$/;
/** `arn:<partition>:events:<region>:<account>:event-bus/<name>`. */
export const EVENT_BUS_ARN =
  /^arn:aws(?:-cn|-us-gov)?:events:([a-z]{2}(?:-[a-z]+)+-\d):(\d{12}):event-bus\/([\w.\-/]{1,256})$/;
/** A queue's name: letters, digits, `_` and `-` (≤ 80), a FIFO queue's ending in `.fifo`. */
const QUEUE_NAME = '([\\w-]{1,80}|[\\w-]{1,75}\\.fifo)';
/** An Amazon SQS queue URL: `https://sqs.<region>.amazonaws.com/<account>/<name>`. */
export const AWS_QUEUE_URL = new RegExp(
  `^https://sqs\\.([a-z]{2}(?:-[a-z]+)+-\\d)\\.amazonaws\\.com(?:\\.cn)?/(\\d{12})/${QUEUE_NAME}$`,
);
/** A queue of a local emulator (the local stack's fauxqs): `http(s)://<host>[:<port>]/<account>/<name>`. */
const OTHER_QUEUE_URL = new RegExp(`^https?://[^/?#@]+/(\\d{12})/${QUEUE_NAME}$`);

/**
 * The external ids this service makes (`pricing-ext-` and 32 base64url characters): one per endpoint, never chosen
 * by the caller, so no tenant can make the service assume a role another tenant's trust policy lets it assume.
 */
export const EXTERNAL_ID_PREFIX = 'pricing-ext-';
export const EXTERNAL_ID = /^pricing-ext-[A-Za-z0-9_-]{32}$/;

export const externalIdFrom = (random: Uint8Array): string =>
  `${EXTERNAL_ID_PREFIX}${Buffer.from(random.subarray(0, 24)).toString('base64url')}`;

/** The two cloud destinations as stored (the partner gives all but the external id, which the service makes). */
export type QueueDestination = {
  readonly type: 'sqs';
  readonly queue_url: string;
  readonly role_arn: string;
  readonly external_id: string;
};
export type EventBusDestination = {
  readonly type: 'eventbridge';
  readonly event_bus_arn: string;
  readonly role_arn: string;
  readonly external_id: string;
};
export type CloudDestination = QueueDestination | EventBusDestination;
export const CLOUD_DESTINATION_TYPES = ['sqs', 'eventbridge'] as const;
export const DESTINATION_TYPES = ['http', ...CLOUD_DESTINATION_TYPES] as const;

export interface QueueAddress {
  /** Set for an Amazon SQS URL; absent for an emulator's queue (its URL's origin is the endpoint). */
  readonly region?: string;
  readonly account: string;
  readonly name: string;
  readonly fifo: boolean;
}

/** What a queue URL names, or undefined when it names no queue. */
export const queueAddressOf = (url: string): QueueAddress | undefined => {
  const aws = AWS_QUEUE_URL.exec(url);
  if (aws) {
    const [, region, account, name] = aws as unknown as [string, string, string, string];
    return { region, account, name, fifo: name.endsWith('.fifo') };
  }
  const other = OTHER_QUEUE_URL.exec(url);
  if (!other) return undefined;
  const [, account, name] = other as unknown as [string, string, string];
  return { account, name, fifo: name.endsWith('.fifo') };
};

/** The region and account of an event bus ARN, or undefined. */
export const eventBusAddressOf = (
  arn: string,
): { readonly region: string; readonly account: string; readonly name: string } | undefined => {
  const match = EVENT_BUS_ARN.exec(arn);
  if (!match) return undefined;
  const [, region, account, name] = match as unknown as [string, string, string, string];
  return { region, account, name };
};

/** The account a role ARN belongs to. */
export const roleAccountOf = (arn: string): string | undefined => ROLE_ARN.exec(arn)?.[1];

/**
 * The signed "path" of a delivery that has none (native scheme, C13's canonical string): `/<topic>`, what the
 * path would be for an HTTP endpoint registered at the root of its host.
 */
export const cloudSignedPath = (topic: string): string => `/${topic}`;

/**
 * SQS message attributes from a delivery's headers: every header but `Content-Type` and `User-Agent` (the message
 * is JSON, its sender the role), as String attributes under the header's own name (SQS allows at most 10).
 */
export const messageAttributesOf = (
  headers: Readonly<Record<string, string>>,
): Record<string, { DataType: 'String'; StringValue: string }> =>
  Object.fromEntries(
    Object.entries(headers)
      .filter(([name]) => !['content-type', 'user-agent'].includes(name.toLowerCase()))
      .map(([name, value]) => [name, { DataType: 'String' as const, StringValue: value }]),
  );

/** Characters SQS allows in a FIFO message group id (≤ 128 of them): letters, digits and ASCII punctuation. */
const GROUP_ID_UNSAFE = /[^\x21-\x7e]/g;

/**
 * A FIFO queue's message group: the delivery's ordering key when the endpoint orders its deliveries (so the queue
 * keeps the service's order per key), else the endpoint (one group: the queue's order is the send order).
 */
export const messageGroupOf = (endpointId: string, orderingKey: string | undefined): string => {
  const key = orderingKey || endpointId;
  const group = key.replace(GROUP_ID_UNSAFE, '_');
  // A longer key is named by its digest: two keys never share a group by being cut short.
  return group.length <= 128 ? group : createHash('sha256').update(key).digest('hex');
};

/** A cloud destination as an endpoint keeps it: with the principal its role was told to trust. */
export type EndpointDestination = CloudDestination & { readonly principal: string };
