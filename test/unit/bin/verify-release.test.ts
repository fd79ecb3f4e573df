import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseOptions, run, verifyRelease } from '../../../bin/verify-release';
import { LocalReceiptSigner } from '../../../functions/adapters/local/local-signing';
import {
  type DsseEnvelope,
  RELEASE_PAYLOAD_TYPE,
  type ReleasePayloadInput,
  releasePayload,
  signEnvelope,
} from '../../../functions/domain/audit/dsse';
import { cliWorld } from '../../support/cli-world';

const CR = 'cr_01JQ4S6T1X5V8R2W3Y4Z5A6B7C';

const statement: ReleasePayloadInput = {
  cr_id: CR,
  kind: 'pricelist',
  versions: { pricelist_version: 4, fx_version: 'fx-9', tax_rule_version: 2 },
  content_sha256: `sha256:${'ab'.repeat(32)}`,
  author: 'admin',
  approvers: ['alice', 'bob'],
  effective_from: '2026-12-01T00:00:00.000Z',
};

const setup = async () => {
  const signer = new LocalReceiptSigner(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
  const jwks = { keys: [await signer.publicKey()] };
  const sign = (payload: Uint8Array, type = RELEASE_PAYLOAD_TYPE) => signEnvelope(type, payload, signer);
  return { jwks, sign, envelope: await sign(releasePayload(statement)) };
};

const world = (files: Record<string, string>, routes: Record<string, unknown> = {}) =>
  cliWorld(
    files,
    Object.fromEntries(Object.entries(routes).map(([url, body]) => [url, () => Response.json(body)])),
    { ADMIN_TOKEN: 'adm_test_token_0123456789' },
  );

const alteredPayload = (envelope: DsseEnvelope, position: number): DsseEnvelope => {
  const bytes = Buffer.from(envelope.payload, 'base64');
  bytes[position] = (bytes[position] ?? 0) ^ 0x01;
  return { ...envelope, payload: bytes.toString('base64') };
};

describe('npm run verify-release', () => {
  it('parses its options and refuses wrong command lines', () => {
    expect(parseOptions(['r.json', '--keys', 'k.json'])).toEqual({ file: 'r.json', keys: 'k.json' });
    expect(parseOptions(['--cr', CR, '--out', 'r.json', '--sigv4'])).toEqual({
      cr: CR,
      out: 'r.json',
      sigv4: true,
    });
    for (const argv of [
      [],
      ['a', 'b'],
      ['a', '--cr', CR],
      ['--cr', 'cr_x'],
      ['a', '--out', 'x'],
      ['a', '--sigv4'],
      ['--keys'],
      ['--what'],
    ]) {
      expect(() => parseOptions(argv), argv.join(' ')).toThrow();
    }
  });

  it('verifies a release and prints its statement', async () => {
    const { jwks, envelope } = await setup();
    const { io, out } = world({ 'r.json': JSON.stringify(envelope), 'k.json': JSON.stringify(jwks) });
    expect(await run(['r.json', '--keys', 'k.json'], io)).toBe(0);
    expect(out.join('')).toContain(`release ${CR}: OK`);
    expect(out.join('')).toContain('approvers       alice, bob');
  });

  it('fetches a release by change request id with the admin client and saves it', async () => {
    const { jwks, envelope } = await setup();
    const { io, out, written } = world(
      {},
      { [`http://127.0.0.1:3000/audit/releases/${CR}`]: envelope, 'http://127.0.0.1:3000/keys': jwks },
    );
    expect(await run(['--cr', CR, '--out', 'saved.json'], io)).toBe(0);
    expect(JSON.parse(written.get('saved.json') ?? '{}')).toEqual(envelope);
    expect(out.join('')).toContain('OK');
  });

  it('fails one changed byte, another payload type, an unknown key and a non-canonical payload', async () => {
    const { jwks, envelope, sign } = await setup();
    const payloadLength = Buffer.from(envelope.payload, 'base64').length;
    for (const position of [0, Math.floor(payloadLength / 2), payloadLength - 1]) {
      expect(() => verifyRelease(alteredPayload(envelope, position), jwks)).toThrow();
    }
    expect(() => verifyRelease({ ...envelope, payloadType: 'application/json' }, jwks)).toThrow(/signature/);
    const otherType = await sign(releasePayload(statement), 'application/json');
    expect(() => verifyRelease(otherType, jwks)).toThrow(/payload type/);
    const [key] = jwks.keys;
    if (!key) throw new Error('a key');
    expect(() => verifyRelease(envelope, { keys: [{ ...key, kid: 'other' }] })).toThrow(/known key/);
    const other = await new LocalReceiptSigner(
      generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
    ).publicKey();
    expect(() => verifyRelease(envelope, { keys: [{ ...other, kid: key.kid }] })).toThrow(
      /no signature verifies/,
    );
    const spaced = await sign(
      Buffer.from(` ${Buffer.from(releasePayload(statement)).toString('utf8')}`, 'utf8'),
    );
    expect(() => verifyRelease(spaced, jwks)).toThrow(/canonical/);
  });

  it('refuses a release without four eyes even when its signature verifies', async () => {
    const { jwks, sign } = await setup();
    for (const approvers of [['alice'], ['alice', 'alice'], ['admin', 'alice']]) {
      const envelope = await sign(releasePayload({ ...statement, approvers }));
      expect(() => verifyRelease(envelope, jwks), approvers.join(',')).toThrow(/four eyes/);
    }
  });

  it('reports INVALID with exit 1, and a missing file with exit 1 on stderr', async () => {
    const { jwks, envelope } = await setup();
    const bad = world({
      'r.json': JSON.stringify(alteredPayload(envelope, 3)),
      'k.json': JSON.stringify(jwks),
    });
    expect(await run(['r.json', '--keys', 'k.json'], bad.io)).toBe(1);
    expect(bad.out.join('')).toContain('INVALID');
    const missing = world({});
    expect(await run(['nothing.json', '--keys', 'k.json'], missing.io)).toBe(1);
    expect(missing.err.join('')).toContain('cannot verify');
    expect(await run(['--what'], missing.io)).toBe(2);
  });
});
