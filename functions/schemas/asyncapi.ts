/**
 * The AsyncAPI 3.0 document of the webhooks (C33; issue "webhook interoperability", item 1): what the service sends
 * to a partner's endpoint, generated from the event-type catalog (`event-types.ts`) and the envelope's zod schema,
 * served at `GET /asyncapi.json` and published as `docs/asyncapi.json` (`npm run asyncapi`; a test keeps them equal
 * and parses the document with the AsyncAPI parser).
 *
 * The partner's endpoint is the server: the service *sends* each message to `<registered url>/<topic>`, one channel
 * per topic. Each message's payload is the envelope with that type's `data`; its headers are those of both
 * signature schemes (C13 and Standard Webhooks), which the security schemes describe.
 */
import * as z from 'zod';
import { ENVELOPE_VERSIONS, LATEST_ENVELOPE_VERSION, topicOf } from '../domain/webhooks/envelope';
import { eventEnvelopeSchema } from './envelope';
import { dataJsonSchema, EVENT_TYPES, type EventTypeDefinition } from './event-types';

type Json = Record<string, unknown>;

/** The envelope without its `data`, as JSON Schema: each message adds its type's. */
const envelopeJsonSchema = (): Json => {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(eventEnvelopeSchema.omit({ data: true }), {
    io: 'output',
  }) as Json;
  return schema;
};

/** A message's id in `components.messages` (`.` is not allowed in component names by convention: `catalog_PriceListUpdated`). */
const messageId = (type: string): string => type.replace(/\./g, '_');

const HEADERS: Json = {
  type: 'object',
  description:
    'The native scheme (C13) sends X-Timestamp and X-Signature; an endpoint with signature_scheme "standard-webhooks" ' +
    'gets webhook-id, webhook-timestamp and webhook-signature instead. X-Event-Id, X-Attempt and X-Webhook-Producer ' +
    'are always sent. An endpoint with signing_algorithm "ed25519" is signed with the service key instead of its ' +
    'secret (v1a signatures) and gets X-Signature-Key-Id, the key id in GET /webhooks/jwks.json.',
  properties: {
    'X-Event-Id': { type: 'string', description: 'The event_id (the same on every retry and replay).' },
    'X-Attempt': { type: 'string', description: 'The delivery attempt, from 1.' },
    'X-Webhook-Producer': { type: 'string', description: 'The producing subsystem.' },
    'X-Timestamp': {
      type: 'string',
      description: 'Native scheme: ISO 8601 UTC with milliseconds; within ±300 s of the receiver’s clock.',
    },
    'X-Signature': {
      type: 'string',
      description:
        'Native scheme: "v1=" + base64 HMAC-SHA-256 of X-Timestamp, method, path and the hex SHA-256 of the body, ' +
        'joined by line feeds; one per secret during a rotation, space-separated. Ed25519 endpoints: "v1a=" + base64 ' +
        'Ed25519 signature over the same canonical string.',
    },
    'X-Signature-Key-Id': {
      type: 'string',
      description: 'Ed25519 endpoints: the id (kid) of the signing key in GET /webhooks/jwks.json.',
    },
    'webhook-id': { type: 'string', description: 'Standard Webhooks: the event_id.' },
    'webhook-timestamp': { type: 'string', description: 'Standard Webhooks: Unix seconds.' },
    'webhook-signature': {
      type: 'string',
      description:
        'Standard Webhooks: "v1," + base64 HMAC-SHA-256 over "<webhook-id>.<webhook-timestamp>.<body>"; Ed25519 ' +
        'endpoints: "v1a," + base64 Ed25519 signature over the same content.',
    },
  },
  required: ['X-Event-Id', 'X-Attempt'],
};

const messageOf = (definition: EventTypeDefinition): Json => {
  const envelope = envelopeJsonSchema();
  return {
    name: definition.type,
    title: definition.type,
    summary: definition.description,
    contentType: 'application/json',
    ...(definition.deprecated_at ? { deprecated: true } : {}),
    headers: { $ref: '#/components/schemas/headers' },
    payload: {
      ...envelope,
      properties: {
        ...(envelope.properties as Json),
        type: { type: 'string', const: definition.type },
        data: dataJsonSchema(definition),
      },
      required: [...((envelope.required as string[]) ?? []), 'data'],
    },
    examples: [
      {
        name: 'example',
        payload: {
          event_id: 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C',
          type: definition.type,
          version: LATEST_ENVELOPE_VERSION,
          ts: '2026-11-26T12:00:00.000Z',
          attempt: 1,
          producer: definition.example.producer,
          data: definition.example.data,
          trace_id: 'trc_example',
          pricelist_version: 42,
          fx_version: 'fx-318',
          tax_rule_version: 5,
        },
      },
    ],
    'x-since': definition.since,
    'x-envelope-versions': [...definition.envelope_versions],
    ...(definition.deprecated_at ? { 'x-deprecated-at': definition.deprecated_at } : {}),
    ...(definition.sunset_at ? { 'x-sunset-at': definition.sunset_at } : {}),
  };
};

/** The AsyncAPI 3.0 document. */
export const buildAsyncApi = (): Json => {
  const definitions = EVENT_TYPES as readonly EventTypeDefinition[];
  const topics = [...new Set(definitions.map((definition) => topicOf(definition.type)))];
  const ofTopic = (topic: string) => definitions.filter((definition) => topicOf(definition.type) === topic);
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Pricing service webhooks',
      version: LATEST_ENVELOPE_VERSION,
      description:
        'Signed event envelopes the pricing service POSTs to partner endpoints, at least once, with retries ' +
        '(C11–C16, C24, C31–C33). Deduplicate by event_id. Envelope versions: ' +
        `${ENVELOPE_VERSIONS.join(', ')}. The event-type catalog is GET /webhooks/event-types; changes are in ` +
        'GET /changelog.',
    },
    defaultContentType: 'application/json',
    servers: {
      partner: {
        host: '{endpoint_host}',
        pathname: '{endpoint_path}',
        protocol: 'https',
        description: 'The partner endpoint registered with POST /webhooks/endpoints (its url).',
        variables: {
          endpoint_host: { description: 'Host (and port) of the registered url.' },
          endpoint_path: {
            description: 'Path of the registered url, e.g. /webhooks/v1.',
            default: '/webhooks/v1',
          },
        },
        security: [
          { $ref: '#/components/securitySchemes/native' },
          { $ref: '#/components/securitySchemes/standardWebhooks' },
          { $ref: '#/components/securitySchemes/ed25519' },
        ],
      },
    },
    channels: Object.fromEntries(
      topics.map((topic) => [
        topic,
        {
          address: `/${topic}`,
          title: `Topic ${topic}`,
          description: `Events of topic ${topic}, POSTed to <registered url>/${topic}.`,
          servers: [{ $ref: '#/servers/partner' }],
          messages: Object.fromEntries(
            ofTopic(topic).map((definition) => [
              messageId(definition.type),
              { $ref: `#/components/messages/${messageId(definition.type)}` },
            ]),
          ),
        },
      ]),
    ),
    operations: Object.fromEntries(
      topics.map((topic) => [
        `send_${topic}`,
        {
          action: 'send',
          title: `Deliver ${topic} events`,
          summary: `POST each ${topic} event to the endpoint; any 2xx ends it, anything else is retried with backoff.`,
          channel: { $ref: `#/channels/${topic}` },
          messages: ofTopic(topic).map((definition) => ({
            $ref: `#/channels/${topic}/messages/${messageId(definition.type)}`,
          })),
        },
      ]),
    ),
    components: {
      schemas: { headers: HEADERS },
      messages: Object.fromEntries(
        definitions.map((definition) => [messageId(definition.type), messageOf(definition)]),
      ),
      securitySchemes: {
        native: {
          type: 'httpApiKey',
          name: 'X-Signature',
          in: 'header',
          description:
            'HMAC-SHA-256 with the endpoint secret (whsec_ + base64 of 32 bytes, key = decoded bytes) over the ' +
            'canonical string of C13; see docs/receiving-webhooks.md and docs/webhook-signature-vectors.json.',
        },
        standardWebhooks: {
          type: 'httpApiKey',
          name: 'webhook-signature',
          in: 'header',
          description:
            'Standard Webhooks (https://www.standardwebhooks.com), for endpoints with signature_scheme ' +
            '"standard-webhooks": verify with the standardwebhooks libraries and the same secret.',
        },
        ed25519: {
          type: 'httpApiKey',
          name: 'X-Signature-Key-Id',
          in: 'header',
          description:
            'Ed25519 (signing_algorithm "ed25519", v1a signatures in either scheme) with the service key the header ' +
            'names, published as a JWKS at GET /webhooks/jwks.json (kid, alg EdDSA); the signed envelope names its ' +
            'endpoint_id. See docs/receiving-webhooks.md and the ed25519 section of docs/webhook-signature-vectors.json.',
        },
      },
    },
  };
};

/** The published file's exact content. */
export const renderAsyncApi = (document: Json = buildAsyncApi()): string =>
  `${JSON.stringify(document, null, 2)}\n`;
