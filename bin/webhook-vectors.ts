/**
 * Writes `docs/webhook-signature-vectors.json`: fixed test vectors of the webhook signature (C13) for partners
 * implementing a receiver. Deterministic: fixed secrets, timestamps and bodies, no randomness.
 *
 *   node --import tsx bin/webhook-vectors.ts           write the file
 *   node --import tsx bin/webhook-vectors.ts --check   write nothing; exit 1 when the file differs (CI)
 * (`npm run webhook-vectors`); exit codes as every tool in bin/ (bin/cli.ts).
 */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { generateSecret, secretBytes } from '../functions/domain/webhooks/secret';
import {
  ed25519KeyOfSeed,
  jwkOf,
  nativeAsymmetricSignature,
  standardAsymmetricSignature,
} from '../functions/domain/webhooks/sender-keys';
import { canonicalString, SIGNATURE_SCHEME, signatureHeader } from '../functions/domain/webhooks/signature';
import {
  standardSignatureHeader,
  standardSignedContent,
  unixSeconds,
} from '../functions/domain/webhooks/standard-webhooks';
import { type CliIo, runMain } from './cli';
import { runGenerator } from './generated-file';

export const VECTORS_FILE = resolve(import.meta.dirname, '..', 'docs', 'webhook-signature-vectors.json');

export interface SignatureVector {
  readonly name: string;
  /** One secret; a rotation vector carries `secrets` (new first, then old) instead. */
  readonly secret?: string;
  readonly secrets?: readonly string[];
  readonly method: string;
  readonly path: string;
  readonly timestamp: string;
  readonly body: string;
  readonly body_sha256_hex: string;
  readonly canonical_string: string;
  readonly expected_signature: string;
}

/** A Standard Webhooks vector (C33): the three headers a delivery in that mode carries. */
export interface StandardWebhooksVector {
  readonly name: string;
  readonly secret?: string;
  readonly secrets?: readonly string[];
  readonly webhook_id: string;
  readonly webhook_timestamp: string;
  readonly body: string;
  readonly signed_content: string;
  readonly expected_signature: string;
}

/** An Ed25519 vector (C33): the key's public JWK, the signed content and the expected `v1a` signature. */
export interface Ed25519Vector {
  readonly name: string;
  readonly scheme: 'native' | 'standard-webhooks';
  readonly kid: string;
  /** The endpoint the envelope names (a receiver checks it is its own). */
  readonly endpoint_id: string;
  readonly body: string;
  /** Native: the canonical string; Standard Webhooks: `<webhook-id>.<webhook-timestamp>.<body>`. */
  readonly signed_content: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface SignatureVectors {
  readonly description: string;
  readonly scheme: string;
  readonly canonical_string: string;
  readonly vectors: readonly SignatureVector[];
  readonly standard_webhooks: {
    readonly description: string;
    readonly vectors: readonly StandardWebhooksVector[];
  };
  readonly ed25519: {
    readonly description: string;
    /** The JWKS the vectors verify against (a fixed key: its seed is SHA-256 of a label). */
    readonly jwks: { readonly keys: readonly Record<string, string>[] };
    readonly vectors: readonly Ed25519Vector[];
  };
}

/** A fixed secret: the 32 bytes are SHA-256 of a label, so anyone can see there is nothing hidden in them. */
const fixedSecret = (label: string): string =>
  generateSecret(() => createHash('sha256').update(`webhook-signature-vectors/${label}`).digest());

const envelope = (fields: Record<string, unknown>): string =>
  JSON.stringify({
    event_id: 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C',
    type: 'catalog.PriceListUpdated',
    version: '2026-11-01',
    ts: '2026-11-01T12:00:00.000Z',
    attempt: 1,
    producer: 'catalog',
    trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
    pricelist_version: 42,
    fx_version: 'fx_2026-11-01T11:45:00Z',
    tax_rule_version: 7,
    ...fields,
  });

/** A catalog event whose JSON is exactly `bytes` long (UTF-8), padded through its `changed` list. */
const envelopeOfSize = (bytes: number): string => {
  const changed: { sku_id: string; price: string; currency: string }[] = [];
  const render = (note: string) =>
    envelope({ data: { version: 42, effective_from: '2026-11-01T12:00:00.000Z', changed, note } });
  while (Buffer.byteLength(render('')) + 48 <= bytes) {
    const index = changed.length + 1;
    changed.push({ sku_id: `sku_${String(index).padStart(4, '0')}`, price: `${index}.99`, currency: 'EUR' });
  }
  const body = render('x'.repeat(bytes - Buffer.byteLength(render(''))));
  if (Buffer.byteLength(body) !== bytes) throw new Error(`padding failed: ${Buffer.byteLength(body)} bytes`);
  return body;
};

interface VectorInput {
  readonly name: string;
  readonly secrets: readonly string[];
  readonly method: string;
  readonly path: string;
  readonly timestamp: string;
  readonly body: string;
}

const INPUTS: readonly VectorInput[] = [
  {
    name: 'catalog event',
    secrets: [fixedSecret('endpoint-1')],
    method: 'POST',
    path: '/webhooks/v1/catalog',
    timestamp: '2026-11-01T12:00:00.123Z',
    body: envelope({
      data: { version: 42, effective_from: '2026-11-01T12:00:00.000Z', changed: ['sku_123'] },
    }),
  },
  {
    name: 'non-ASCII UTF-8 body',
    secrets: [fixedSecret('endpoint-2')],
    method: 'POST',
    path: '/webhooks/v1/catalog',
    timestamp: '2026-11-01T12:00:01.000Z',
    body: envelope({
      type: 'catalog.PromoChanged',
      data: {
        version: 3,
        effective_from: '2026-11-01T12:00:00.000Z',
        title: 'Café crème – 12,30 € · ¥1200 · Ünïcödé · 日本 · Ελληνικά · 🎉',
      },
    }),
  },
  {
    name: 'empty body',
    secrets: [fixedSecret('endpoint-1')],
    method: 'POST',
    path: '/webhooks/v1/catalog',
    timestamp: '2026-11-01T12:00:02.000Z',
    body: '',
  },
  {
    name: 'path with a query string',
    secrets: [fixedSecret('endpoint-3')],
    method: 'POST',
    path: '/partner/hooks/webhooks/v1/payout?tenant=tn_01&region=eu%2Dwest&flag',
    timestamp: '2026-11-01T12:00:03.000Z',
    body: envelope({
      type: 'payout.processed',
      producer: 'payments',
      tenant: 'tn_01',
      data: {
        payout_id: 'po_01JQ4S6T1X5V8R2W3Y4Z5A6B7D',
        status: 'processed',
        amount_minor: 125000,
        currency: 'EUR',
      },
    }),
  },
  {
    name: 'raw bytes: pretty-printed body with CRLF line ends and a trailing newline',
    secrets: [fixedSecret('endpoint-1')],
    method: 'POST',
    path: '/webhooks/v1/catalog',
    timestamp: '2026-11-01T12:00:04.000Z',
    body: `${JSON.stringify(JSON.parse(envelope({ data: { version: 43 } })), null, 2).replace(/\n/g, '\r\n')}\r\n`,
  },
  {
    name: '1 KB body',
    secrets: [fixedSecret('endpoint-1')],
    method: 'POST',
    path: '/webhooks/v1/catalog',
    timestamp: '2026-11-01T12:00:05.000Z',
    body: envelopeOfSize(1024),
  },
  {
    name: 'rotation: new and old secret, two signatures (new first)',
    secrets: [fixedSecret('endpoint-1-rotated'), fixedSecret('endpoint-1')],
    method: 'POST',
    path: '/webhooks/v1/catalog',
    timestamp: '2026-11-02T08:30:00.000Z',
    body: envelope({ data: { version: 44, effective_from: '2026-11-02T08:30:00.000Z', changed: ['sku_7'] } }),
  },
];

const vectorOf = (input: VectorInput): SignatureVector => {
  const body = new TextEncoder().encode(input.body);
  const request = { timestamp: input.timestamp, method: input.method, path: input.path, body };
  const keyed = input.secrets.length === 1 ? { secret: input.secrets[0] } : { secrets: input.secrets };
  return {
    name: input.name,
    ...keyed,
    method: input.method,
    path: input.path,
    timestamp: input.timestamp,
    body: input.body,
    body_sha256_hex: createHash('sha256').update(body).digest('hex'),
    canonical_string: canonicalString(request),
    expected_signature: signatureHeader({ ...request, secrets: input.secrets.map(secretBytes) }),
  };
};

/** Standard Webhooks vectors: the same bodies and secrets, signed as an endpoint in that mode is. */
const standardVectorOf = (input: VectorInput): StandardWebhooksVector => {
  const id = 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C';
  const timestamp = unixSeconds(new Date(input.timestamp));
  const body = new TextEncoder().encode(input.body);
  const keyed = input.secrets.length === 1 ? { secret: input.secrets[0] } : { secrets: input.secrets };
  return {
    name: input.name,
    ...keyed,
    webhook_id: id,
    webhook_timestamp: timestamp,
    body: input.body,
    signed_content: standardSignedContent({ id, timestamp, body }).toString('utf8'),
    expected_signature: standardSignatureHeader({
      secrets: input.secrets.map(secretBytes),
      id,
      timestamp,
      body,
    }),
  };
};

/** The Ed25519 vectors' key: the seed is SHA-256 of a label, so anyone can see nothing is hidden in it. */
const ED25519_KEY = {
  kid: 'whk_1_vectors',
  ...ed25519KeyOfSeed(createHash('sha256').update('webhook-signature-vectors/ed25519').digest()),
};

/** The endpoint the Ed25519 vectors are for: one key signs for every endpoint, so the envelope names it. */
const ED25519_ENDPOINT = 'ep_01JQ4S6T1X5V8R2W3Y4Z5A6B7E';

const ed25519VectorsOf = (source: VectorInput): Ed25519Vector[] => {
  const input = {
    ...source,
    body:
      source.body === '' ? '' : JSON.stringify({ ...JSON.parse(source.body), endpoint_id: ED25519_ENDPOINT }),
  };
  const body = new TextEncoder().encode(input.body);
  const canonical = canonicalString({
    timestamp: input.timestamp,
    method: input.method,
    path: input.path,
    body,
  });
  const id = 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C';
  const timestamp = unixSeconds(new Date(input.timestamp));
  const content = standardSignedContent({ id, timestamp, body });
  return [
    {
      name: `${input.name} (native)`,
      scheme: 'native',
      kid: ED25519_KEY.kid,
      endpoint_id: ED25519_ENDPOINT,
      body: input.body,
      signed_content: canonical,
      headers: {
        'X-Timestamp': input.timestamp,
        'X-Signature': nativeAsymmetricSignature(ED25519_KEY.privateKey, canonical),
        'X-Signature-Key-Id': ED25519_KEY.kid,
      },
    },
    {
      name: `${input.name} (Standard Webhooks)`,
      scheme: 'standard-webhooks',
      kid: ED25519_KEY.kid,
      endpoint_id: ED25519_ENDPOINT,
      body: input.body,
      signed_content: content.toString('utf8'),
      headers: {
        'webhook-id': id,
        'webhook-timestamp': timestamp,
        'webhook-signature': standardAsymmetricSignature(ED25519_KEY.privateKey, content),
        'X-Signature-Key-Id': ED25519_KEY.kid,
      },
    },
  ];
};

/** The vectors document. */
export const buildVectors = (): SignatureVectors => ({
  description:
    'Test vectors for the X-Signature header of webhook deliveries (decision C13). Each vector gives the inputs ' +
    '(secret, method, path, X-Timestamp, raw body) and the expected values. `body` is the exact raw request ' +
    'body; its bytes are its UTF-8 encoding. The HMAC key is the base64-decoded part of the secret after ' +
    '`whsec_` (32 bytes), not the secret text. A rotation vector carries `secrets` (new first, then old) ' +
    'instead of `secret`, and its expected header holds one signature per secret, space-separated, in that ' +
    'order; a receiver holding either secret accepts it. Generated by bin/webhook-vectors.ts.',
  scheme: SIGNATURE_SCHEME,
  canonical_string:
    'The X-Timestamp header value, a line feed (\\n), the HTTP method, a line feed, the request path ' +
    'including the query string if any, a line feed, and the lowercase hexadecimal SHA-256 of the raw body ' +
    'bytes; no trailing line feed. X-Signature is "v1=" followed by the standard padded base64 of ' +
    'HMAC-SHA-256 over the UTF-8 bytes of that string.',
  vectors: INPUTS.map(vectorOf),
  standard_webhooks: {
    description:
      'Endpoints with signature_scheme "standard-webhooks" (C33) are signed as the Standard Webhooks ' +
      'specification says: webhook-signature is "v1," followed by the standard padded base64 of HMAC-SHA-256 over ' +
      'the bytes of "<webhook-id>.<webhook-timestamp>.<raw body>" (signed_content), keyed with the decoded secret; ' +
      'one signature per secret during a rotation, space-separated. webhook-timestamp is Unix seconds. The ' +
      "standardwebhooks libraries verify these (with their clock set to the vector's timestamp).",
    // The path is not signed in this scheme: the vector about a path's query string has no counterpart here.
    vectors: INPUTS.filter((input) => !input.path.includes('?')).map(standardVectorOf),
  },
  ed25519: {
    description:
      'Endpoints with signing_algorithm "ed25519" (C33) carry a v1a signature by the service key named in ' +
      'X-Signature-Key-Id: "v1a=" + base64 Ed25519 (RFC 8032, pure) over the canonical string in the native scheme, ' +
      '"v1a," + base64 Ed25519 over "<webhook-id>.<webhook-timestamp>.<raw body>" in Standard Webhooks mode. ' +
      'Verify with the key of that kid in GET /webhooks/jwks.json; these vectors verify with the jwks below. One ' +
      'key signs for every endpoint, so the envelope names its endpoint (endpoint_id): refuse one naming another.',
    jwks: {
      keys: [
        {
          ...jwkOf({
            kid: ED25519_KEY.kid,
            public_jwk: ED25519_KEY.publicJwk,
            created_at: '',
            activates_at: '',
          }),
        },
      ],
    },
    vectors: INPUTS.slice(0, 3).flatMap(ed25519VectorsOf),
  },
});

/** The file's exact content. */
export const renderVectors = (): string => `${JSON.stringify(buildVectors(), null, 2)}\n`;

export const USAGE = `usage: node --import tsx bin/webhook-vectors.ts [--check]   (npm run webhook-vectors)
writes docs/webhook-signature-vectors.json; --check writes nothing and exits 1 when the file differs (CI)`;

export const run = (argv: readonly string[], io: CliIo): Promise<number> =>
  runGenerator(
    {
      usage: USAGE,
      file: VECTORS_FILE,
      generate: renderVectors,
      upToDate: (shown) => `${shown} is up to date`,
      stale: (shown) =>
        `${shown} differs from what bin/webhook-vectors.ts generates: regenerate it and commit it`,
      wrote: (shown) => `wrote ${shown}`,
    },
    argv,
    io,
  );

await runMain(import.meta.url, run);
