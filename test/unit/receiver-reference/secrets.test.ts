import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  cachedSecrets,
  parseSecretList,
  readSsmParameter,
  SecretsConfigurationError,
} from '../../../functions/receiver/reference/secrets';
import { newSecret } from './support';

const CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  // A fresh secret per run: a secret access key in the source fails the secret scan (`npm run secrets`).
  secretAccessKey: randomBytes(30).toString('base64'),
};

describe('parseSecretList', () => {
  it('splits on commas and whitespace and keeps the order', () => {
    const [a, b, c] = [newSecret(), newSecret(), newSecret()];
    expect(parseSecretList(` ${a}, ${b}\n${c},`, 'WEBHOOK_SECRETS')).toEqual([a, b, c]);
  });

  it('refuses an empty list', () => {
    expect(() => parseSecretList(' , ', 'WEBHOOK_SECRETS')).toThrow(SecretsConfigurationError);
  });

  it('names the position and the problem of a bad secret, never its value', () => {
    const bad = 'whsec_c2hvcnQ=';
    let error: unknown;
    try {
      parseSecretList(`${newSecret()},${bad}`, 'WEBHOOK_SECRETS');
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(SecretsConfigurationError);
    expect((error as Error).message).toBe(
      'WEBHOOK_SECRETS: secret 2 of 2 is not a whsec_ secret (secret_wrong_length)',
    );
    expect(() => parseSecretList('plain-text-secret', 'X')).toThrow(/secret_prefix_missing/);
  });
});

describe('cachedSecrets', () => {
  const clockAt = (start: number) => {
    const clock = { ms: start };
    return { clock, now: () => new Date(clock.ms) };
  };

  it('loads once, serves from the cache until the TTL, then reloads', async () => {
    const { clock, now } = clockAt(0);
    let loads = 0;
    const source = cachedSecrets(
      async () => {
        loads += 1;
        return [`s${loads}`];
      },
      { ttlSeconds: 300, clock: now },
    );
    expect(await source()).toEqual(['s1']);
    clock.ms = 299_999;
    expect(await source()).toEqual(['s1']);
    clock.ms = 300_000;
    expect(await source()).toEqual(['s2']);
    expect(loads).toBe(2);
  });

  it('shares one load among concurrent callers', async () => {
    let loads = 0;
    let release: (value: readonly string[]) => void = () => undefined;
    const source = cachedSecrets(
      () => {
        loads += 1;
        return new Promise((resolve) => {
          release = resolve;
        });
      },
      { ttlSeconds: 60 },
    );
    const waiting = Promise.all([source(), source(), source()]);
    release(['only']);
    expect(await waiting).toEqual([['only'], ['only'], ['only']]);
    expect(loads).toBe(1);
  });

  it('throws the first load failure, then recovers on the next call', async () => {
    let fail = true;
    const source = cachedSecrets(
      async () => {
        if (fail) throw new Error('SSM down');
        return ['ok'];
      },
      { ttlSeconds: 60 },
    );
    await expect(source()).rejects.toThrow('SSM down');
    fail = false;
    expect(await source()).toEqual(['ok']);
  });

  it('keeps the previous list when a reload fails, and tells onStale', async () => {
    const { clock, now } = clockAt(0);
    let fail = false;
    const stale: unknown[] = [];
    const source = cachedSecrets(
      async () => {
        if (fail) throw new Error('SSM down');
        return ['first'];
      },
      { ttlSeconds: 10, clock: now, onStale: (error) => stale.push(error) },
    );
    expect(await source()).toEqual(['first']);
    fail = true;
    clock.ms = 10_000;
    expect(await source()).toEqual(['first']);
    expect(stale).toHaveLength(1);
    // The failed reload counts as a load: the next try is a full period later, not on every request.
    clock.ms = 15_000;
    expect(await source()).toEqual(['first']);
    expect(stale).toHaveLength(1);
  });
});

describe('readSsmParameter', () => {
  interface Seen {
    url: string;
    headers: Record<string, string>;
    body: string;
  }
  const fakeFetch = (status: number, answer: string, seen: Seen[] = []) => {
    const fetch = async (url: string, init: RequestInit) => {
      seen.push({ url, headers: init.headers as Record<string, string>, body: String(init.body) });
      return new Response(answer, { status, headers: { 'content-type': 'application/x-amz-json-1.1' } });
    };
    return { fetch, seen };
  };

  it('makes one SigV4-signed AmazonSSM.GetParameter call with decryption and returns the value', async () => {
    const secret = newSecret();
    const { fetch, seen } = fakeFetch(
      200,
      JSON.stringify({ Parameter: { Name: '/p', Type: 'SecureString', Value: secret } }),
    );
    const value = await readSsmParameter({
      parameterName: '/partner/webhooks/secrets',
      region: 'eu-west-1',
      credentials: CREDENTIALS,
      fetch,
    });
    expect(value).toBe(secret);
    expect(seen).toHaveLength(1);
    const [call] = seen;
    expect(call?.url).toBe('https://ssm.eu-west-1.amazonaws.com/');
    expect(JSON.parse(call?.body ?? '')).toEqual({ Name: '/partner/webhooks/secrets', WithDecryption: true });
    expect(call?.headers['x-amz-target']).toBe('AmazonSSM.GetParameter');
    expect(call?.headers['content-type']).toBe('application/x-amz-json-1.1');
    expect(call?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/ssm\/aws4_request, SignedHeaders=[^,]*x-amz-target[^,]*, Signature=[0-9a-f]{64}$/,
    );
  });

  it('reports the error type SSM answered, never a value', async () => {
    const { fetch } = fakeFetch(
      400,
      JSON.stringify({ __type: 'com.amazonaws.ssm#ParameterNotFound', message: 'not found' }),
    );
    await expect(
      readSsmParameter({ parameterName: '/missing', region: 'eu-west-1', credentials: CREDENTIALS, fetch }),
    ).rejects.toThrow('SSM refused to read /missing: ParameterNotFound');
  });

  it('reports an HTTP status when the answer is not JSON, and a missing value', async () => {
    await expect(
      readSsmParameter({
        parameterName: '/p',
        region: 'eu-west-1',
        credentials: CREDENTIALS,
        fetch: fakeFetch(503, '<html>').fetch,
      }),
    ).rejects.toThrow('HTTP 503');
    await expect(
      readSsmParameter({
        parameterName: '/p',
        region: 'eu-west-1',
        credentials: CREDENTIALS,
        fetch: fakeFetch(200, '{}').fetch,
      }),
    ).rejects.toThrow('SSM returned no value for /p');
  });

  it('wraps a network failure', async () => {
    await expect(
      readSsmParameter({
        parameterName: '/p',
        region: 'eu-west-1',
        credentials: CREDENTIALS,
        fetch: async () => {
          throw new TypeError('fetch failed');
        },
      }),
    ).rejects.toThrow(SecretsConfigurationError);
  });

  it('uses a given endpoint (a VPC endpoint, or a fake in tests)', async () => {
    const { fetch, seen } = fakeFetch(200, JSON.stringify({ Parameter: { Value: 'v' } }));
    await readSsmParameter({
      parameterName: '/p',
      region: 'eu-west-1',
      credentials: CREDENTIALS,
      endpoint: 'http://127.0.0.1:9999/',
      fetch,
    });
    expect(seen[0]?.url).toBe('http://127.0.0.1:9999/');
  });
});
