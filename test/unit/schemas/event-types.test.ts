/**
 * The event-type catalog and the AsyncAPI document (C33; issue "webhook interoperability", item 1): every type the
 * service sends is in the catalog with a schema its example and real events satisfy; `GET /webhooks/event-types`
 * and `GET /asyncapi.json` answer what the catalog and `docs/asyncapi.json` hold; the document parses with the
 * AsyncAPI parser without errors or warnings and has one message per type in its topic's channel.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Parser } from '@asyncapi/parser';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  CATALOG_EVENT_TYPES,
  OPERATIONAL_EVENT_TYPES,
  PAYOUT_PROCESSED,
  topicOf,
} from '../../../functions/domain/webhooks/envelope';
import { asyncApiOperation, eventTypesOperation } from '../../../functions/handlers/operations/webhooks';
import { buildAsyncApi, renderAsyncApi } from '../../../functions/schemas/asyncapi';
import { eventEnvelopeSchema } from '../../../functions/schemas/envelope';
import {
  EVENT_TYPES,
  type EventTypeDefinition,
  eventTypesCatalog,
  eventTypesResponseSchema,
} from '../../../functions/schemas/event-types';
import { everyCatalogEvent } from '../../support/catalog-events';

const definitions = EVENT_TYPES as readonly EventTypeDefinition[];
const ASYNCAPI_FILE = path.resolve(import.meta.dirname, '../../../docs/asyncapi.json');

describe('the event-type catalog', () => {
  it('has every type the service sends, once', () => {
    expect(definitions.map((definition) => definition.type).sort()).toEqual(
      [...CATALOG_EVENT_TYPES, PAYOUT_PROCESSED, ...OPERATIONAL_EVENT_TYPES].sort(),
    );
  });

  it.each(definitions.map((definition) => [definition.type, definition] as const))(
    '%s: its example satisfies its data schema, and an envelope of it the envelope schema',
    (_type, definition) => {
      expect(definition.data.safeParse(definition.example.data).success).toBe(true);
      const envelope = {
        event_id: 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C',
        type: definition.type,
        version: definition.envelope_versions[0],
        ts: '2026-11-26T12:00:00.000Z',
        attempt: 1,
        producer: definition.example.producer,
        data: definition.example.data,
        trace_id: 'trc_example',
        pricelist_version: null,
        fx_version: null,
        tax_rule_version: null,
      };
      expect(eventEnvelopeSchema.safeParse(envelope).success).toBe(true);
      // A field added later (C24: optional) does not make an event invalid for receivers.
      expect(definition.data.safeParse({ ...definition.example.data, added_later: 1 }).success).toBe(true);
    },
  );

  it('real catalog events satisfy their types’ schemas', () => {
    const real = everyCatalogEvent();
    expect(real).toHaveLength(CATALOG_EVENT_TYPES.length);
    for (const event of real) {
      const definition = definitions.find((entry) => entry.type === event.type);
      const checked = definition?.data.safeParse(event.data);
      expect(checked?.success, `${event.type}: ${JSON.stringify(checked?.error?.issues)}`).toBe(true);
    }
  });

  it('GET /webhooks/event-types serves each type with the JSON Schema of its zod schema, and is cacheable', async () => {
    const answer = await eventTypesOperation()({} as never);
    expect(answer.statusCode).toBe(200);
    expect(answer.headers?.['Cache-Control']).toBe('public, max-age=300');
    const body = eventTypesResponseSchema.parse(answer.body);
    expect(body).toEqual(eventTypesCatalog());
    for (const entry of body.event_types) {
      const definition = definitions.find(
        (candidate) => candidate.type === entry.type,
      ) as EventTypeDefinition;
      const { $schema: _dialect, ...schema } = z.toJSONSchema(definition.data, { io: 'output' });
      expect(entry.schema).toEqual(schema);
      expect(entry.topic).toBe(topicOf(entry.type));
      expect(entry.example).toEqual(definition.example);
    }
  });
});

describe('the AsyncAPI document', () => {
  it('is published as docs/asyncapi.json, exactly as GET /asyncapi.json serves it', async () => {
    let committed = '';
    try {
      committed = readFileSync(ASYNCAPI_FILE, 'utf8');
    } catch {
      // Compared below, so the failure says what to do.
    }
    expect(
      committed === renderAsyncApi(),
      'docs/asyncapi.json is stale: run `npm run asyncapi` and commit it',
    ).toBe(true);
    const answer = await asyncApiOperation()({} as never);
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toEqual(JSON.parse(committed));
  });

  it('parses with the AsyncAPI parser without errors or warnings, one message per type in its topic’s channel', async () => {
    const { document, diagnostics } = await new Parser().parse(renderAsyncApi());
    // Spectral severities: 0 error, 1 warning, 2 information, 3 hint.
    const problems = diagnostics.filter((diagnostic) => diagnostic.severity <= 1);
    expect(
      problems.map((problem) => `${problem.code}: ${problem.message} at ${problem.path.join('.')}`),
    ).toEqual([]);
    expect(document?.version()).toBe('3.0.0');
    // Every signing the service does: HMAC natively and in Standard Webhooks mode, and Ed25519 with the JWKS key id.
    const raw = JSON.parse(renderAsyncApi()) as {
      servers: Record<string, { security: { $ref: string }[] }>;
      components: { securitySchemes: Record<string, unknown> };
    };
    const schemes = Object.values(raw.servers).flatMap((server) =>
      server.security.map((requirement) => requirement.$ref.split('/').pop() ?? ''),
    );
    expect(schemes.sort()).toEqual(['ed25519', 'native', 'standardWebhooks']);
    expect(Object.keys(raw.components.securitySchemes).sort()).toEqual(schemes);
    const messages = document?.allMessages().all() ?? [];
    expect(messages.map((message) => message.name()).sort()).toEqual(
      definitions.map((definition) => definition.type).sort(),
    );
    for (const channel of document?.allChannels().all() ?? []) {
      for (const message of channel.messages().all())
        expect(topicOf(message.name() ?? ''), `${message.name()} in /${channel.id()}`).toBe(channel.id());
      expect(channel.address()).toBe(`/${channel.id()}`);
    }
    expect(
      document
        ?.allOperations()
        .all()
        .every((operation) => operation.action() === 'send'),
    ).toBe(true);
  });

  it('describes each message’s data with its type’s schema and carries the catalog’s example', () => {
    const document = buildAsyncApi() as {
      components: {
        messages: Record<
          string,
          {
            name: string;
            payload: { properties: Record<string, unknown> };
            examples: { payload: { data: unknown } }[];
          }
        >;
      };
    };
    for (const definition of definitions) {
      const message = Object.values(document.components.messages).find(
        (entry) => entry.name === definition.type,
      );
      const { $schema: _dialect, ...schema } = z.toJSONSchema(definition.data, { io: 'output' });
      expect(message?.payload.properties.data).toEqual(schema);
      expect(message?.examples[0]?.payload.data).toEqual(definition.example.data);
    }
  });
});
