import { describe, expect, it } from 'vitest';
import {
  canonicalPair,
  ecbUrlOf,
  isCredentialParameter,
  type RatePolicy,
  ratePolicySchema,
} from '../../../functions/schemas/rate-policy';

const policy = (): RatePolicy => ({
  sources: [
    { source_id: 'ecb', kind: 'ecb' },
    {
      source_id: 'frankfurter',
      kind: 'json',
      url: 'https://api.frankfurter.app/latest?from={base}',
      rate_pointer: '/rates/{quote}',
      timeout_ms: 3000,
    },
    {
      source_id: 'coinbase',
      kind: 'crypto_ticker',
      url: 'https://api.exchange.coinbase.com/products/{symbol}/ticker',
    },
    {
      source_id: 'coinbase-spot',
      kind: 'crypto_ticker',
      url: 'https://api.coinbase.com/v2/prices/{symbol}/spot',
      symbol_template: '{base}-{quote}',
    },
    { source_id: 'sim', kind: 'simulated' },
  ],
  pairs: [
    {
      pair: 'EUR→USD',
      sources: ['ecb', 'frankfurter'],
      method: 'provider',
      interval_seconds: 86_400,
      publication_delay_seconds: 60,
      max_tick_move_bps: 200,
      precision: 4,
      stale_after_seconds: 86_400 * 2,
      max_age_seconds: 86_400 * 4,
    },
    {
      pair: 'USDT->EUR',
      sources: ['coinbase', 'coinbase-spot', 'sim'],
      method: 'median',
      interval_seconds: 60,
      publication_delay_seconds: 0,
      max_tick_move_bps: 100,
      precision: 6,
      stale_after_seconds: 300,
      max_age_seconds: 900,
    },
    {
      pair: 'EUR→BTC',
      sources: ['coinbase', 'sim'],
      method: 'twap',
      interval_seconds: 300,
      publication_delay_seconds: 30,
      max_tick_move_bps: 500,
      twap_window_seconds: 3600,
      precision: 8,
      stale_after_seconds: 900,
      max_age_seconds: 3600,
    },
  ],
  breaker: { failure_threshold: 3, window_seconds: 600, open_seconds: 900 },
});

type Mutable = {
  sources: Record<string, unknown>[];
  pairs: Record<string, unknown>[];
  breaker: Record<string, unknown>;
};
const mutated = (change: (draft: Mutable) => void): unknown => {
  const draft = structuredClone(policy()) as unknown as Mutable;
  change(draft);
  return draft;
};
const problems = (value: unknown) => {
  const result = ratePolicySchema.safeParse(value);
  return result.success
    ? []
    : result.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
};

describe('ratePolicySchema', () => {
  it('accepts a policy with every kind of source and method', () => {
    expect(problems(policy())).toEqual([]);
    expect(ratePolicySchema.parse(policy())).toEqual(policy());
  });

  it('defaults the ECB source to the daily reference rates', () => {
    expect(ecbUrlOf({ source_id: 'ecb', kind: 'ecb' })).toBe(
      'https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml',
    );
    expect(ecbUrlOf({ source_id: 'ecb', kind: 'ecb', url: 'https://mirror.example/ecb.xml' })).toBe(
      'https://mirror.example/ecb.xml',
    );
  });

  it('writes pairs canonically with →', () => {
    expect(canonicalPair('EUR->USDT')).toBe('EUR→USDT');
    expect(canonicalPair('EUR→USDT')).toBe('EUR→USDT');
  });

  it.each<[string, (draft: Mutable) => void, string, RegExp | string]>([
    ['an unknown field', (d) => Object.assign(d.breaker, { extra: 1 }), 'breaker', /Unrecognized key/],
    [
      'an unknown source kind',
      (d) => Object.assign(d.sources[0] as object, { kind: 'ftp' }),
      'sources.0.kind',
      /Invalid/,
    ],
    [
      'a json source without url',
      (d) => delete (d.sources[1] as Record<string, unknown>).url,
      'sources.1.url',
      /Invalid input/,
    ],
    [
      'a plain http url',
      (d) => Object.assign(d.sources[1] as object, { url: 'http://api.frankfurter.app/latest?from={base}' }),
      'sources.1.url',
      'must be an https URL',
    ],
    [
      'a url with credentials',
      (d) => Object.assign(d.sources[1] as object, { url: 'https://u:p@api.example/{base}' }),
      'sources.1.url',
      'credentials',
    ],
    [
      'not a url',
      (d) => Object.assign(d.sources[1] as object, { url: 'api.example/{base}' }),
      'sources.1.url',
      'not a URL',
    ],
    [
      'an unknown placeholder',
      (d) => Object.assign(d.sources[1] as object, { url: 'https://api.example/{date}/{base}' }),
      'sources.1.url',
      'placeholders allowed here: {base}, {quote}',
    ],
    [
      'a stray brace',
      (d) => Object.assign(d.sources[1] as object, { url: 'https://api.example/{base}/}' }),
      'sources.1.url',
      'placeholders allowed',
    ],
    [
      'an ECB url with a placeholder',
      (d) => Object.assign(d.sources[0] as object, { url: 'https://ecb.example/{base}.xml' }),
      'sources.0.url',
      'placeholders allowed here: none',
    ],
    [
      'a pointer on an ECB source',
      (d) => Object.assign(d.sources[0] as object, { rate_pointer: '/x' }),
      'sources.0',
      /Unrecognized key/,
    ],
    [
      'a malformed JSON pointer',
      (d) => Object.assign(d.sources[1] as object, { rate_pointer: 'rates/{quote}' }),
      'sources.1.rate_pointer',
      'RFC 6901',
    ],
    [
      'a bad escape in a pointer',
      (d) => Object.assign(d.sources[1] as object, { rate_pointer: '/rates~2/{quote}' }),
      'sources.1.rate_pointer',
      'RFC 6901',
    ],
    [
      'a pointer with another placeholder',
      (d) => Object.assign(d.sources[1] as object, { rate_pointer: '/{symbol}/{quote}' }),
      'sources.1.rate_pointer',
      'placeholders allowed',
    ],
    [
      'a json source not naming the base',
      (d) => Object.assign(d.sources[1] as object, { url: 'https://api.frankfurter.app/latest' }),
      'sources.1.rate_pointer',
      'must name {base}',
    ],
    [
      'a json source not naming the quote',
      (d) => Object.assign(d.sources[1] as object, { rate_pointer: '/rate' }),
      'sources.1.rate_pointer',
      'must name {quote}',
    ],
    [
      'a ticker url without {symbol}',
      (d) => Object.assign(d.sources[2] as object, { url: 'https://api.example/ticker' }),
      'sources.2.url',
      'must contain {symbol}',
    ],
    [
      'a symbol template without the quote',
      (d) => Object.assign(d.sources[3] as object, { symbol_template: '{base}' }),
      'sources.3.symbol_template',
      'must contain {base} and {quote}',
    ],
    [
      'a symbol template with spaces',
      (d) => Object.assign(d.sources[3] as object, { symbol_template: '{base} {quote}' }),
      'sources.3.symbol_template',
      'letters, digits',
    ],
    [
      'a timeout too long',
      (d) => Object.assign(d.sources[1] as object, { timeout_ms: 60_000 }),
      'sources.1.timeout_ms',
      /Too big/,
    ],
    [
      'a duplicate source id',
      (d) => Object.assign(d.sources[4] as object, { source_id: 'ecb' }),
      'sources.4.source_id',
      'duplicate source_id ecb (also at [0])',
    ],
    [
      'a pair source not defined',
      (d) => ((d.pairs[0] as { sources: string[] }).sources = ['ecb', 'nowhere']),
      'pairs.0.sources.1',
      'unknown source nowhere: not in sources',
    ],
    [
      'a source listed twice in a pair',
      (d) => ((d.pairs[0] as { sources: string[] }).sources = ['ecb', 'ecb']),
      'pairs.0.sources.1',
      'source ecb listed twice (also at [0])',
    ],
    [
      'no source for a pair',
      (d) => ((d.pairs[0] as { sources: string[] }).sources = []),
      'pairs.0.sources',
      /at least 1|>=1/,
    ],
    [
      'a duplicate pair (either arrow)',
      (d) => Object.assign(d.pairs[2] as object, { pair: 'USDT→EUR' }),
      'pairs.2.pair',
      'duplicate pair USDT→EUR (also at [1])',
    ],
    [
      'a pair of one currency',
      (d) => Object.assign(d.pairs[0] as object, { pair: 'EUR→EUR' }),
      'pairs.0.pair',
      'a pair of two currencies',
    ],
    [
      'a malformed pair',
      (d) => Object.assign(d.pairs[0] as object, { pair: 'EURUSD' }),
      'pairs.0.pair',
      'a pair such as',
    ],
    [
      'a median of two sources',
      (d) => ((d.pairs[1] as { sources: string[] }).sources = ['coinbase', 'sim']),
      'pairs.1.sources',
      'a median needs at least 3 distinct sources',
    ],
    [
      'a twap without window',
      (d) => delete (d.pairs[2] as Record<string, unknown>).twap_window_seconds,
      'pairs.2.twap_window_seconds',
      'required for method twap',
    ],
    [
      'a window on a provider pair',
      (d) => Object.assign(d.pairs[0] as object, { twap_window_seconds: 86_400 }),
      'pairs.0.twap_window_seconds',
      'only for method twap',
    ],
    [
      'a twap window shorter than the interval',
      (d) => Object.assign(d.pairs[2] as object, { twap_window_seconds: 120 }),
      'pairs.2.twap_window_seconds',
      'at least interval_seconds',
    ],
    [
      'an interval of 30 s',
      (d) => Object.assign(d.pairs[1] as object, { interval_seconds: 30 }),
      'pairs.1.interval_seconds',
      '60 to 900 for a volatile pair',
    ],
    [
      'an interval of an hour',
      (d) => Object.assign(d.pairs[1] as object, { interval_seconds: 3600 }),
      'pairs.1.interval_seconds',
      'or 86400 for a daily one',
    ],
    [
      'a publication delay above an hour',
      (d) => Object.assign(d.pairs[1] as object, { publication_delay_seconds: 3601 }),
      'pairs.1.publication_delay_seconds',
      /Too big/,
    ],
    [
      'a cap of zero',
      (d) => Object.assign(d.pairs[1] as object, { max_tick_move_bps: 0 }),
      'pairs.1.max_tick_move_bps',
      /Too small/,
    ],
    [
      'a fractional cap',
      (d) => Object.assign(d.pairs[1] as object, { max_tick_move_bps: 1.5 }),
      'pairs.1.max_tick_move_bps',
      /expected int/,
    ],
    [
      'a precision of 13',
      (d) => Object.assign(d.pairs[1] as object, { precision: 13 }),
      'pairs.1.precision',
      /Too big/,
    ],
    [
      'stale before the next tick',
      (d) => Object.assign(d.pairs[2] as object, { stale_after_seconds: 120 }),
      'pairs.2.stale_after_seconds',
      'at least interval_seconds',
    ],
    [
      'max age not above stale',
      (d) => Object.assign(d.pairs[1] as object, { max_age_seconds: 300 }),
      'pairs.1.max_age_seconds',
      'must be above stale_after_seconds',
    ],
    [
      'an ECB source for a crypto pair',
      (d) => ((d.pairs[2] as { sources: string[] }).sources = ['ecb', 'sim']),
      'pairs.2.sources.0',
      'source ecb (ecb) has no reference rate for BTC',
    ],
    [
      'a breaker threshold of 0',
      (d) => Object.assign(d.breaker, { failure_threshold: 0 }),
      'breaker.failure_threshold',
      /Too small/,
    ],
    ['no pairs', (d) => (d.pairs = []), 'pairs', /at least 1|>=1/],
    [
      'a rate as a number where a string is expected',
      (d) => Object.assign(d.sources[1] as object, { rate_pointer: 1.0845 }),
      'sources.1.rate_pointer',
      /expected string/,
    ],
  ])('refuses %s with its path and a clear message', (_name, change, path, message) => {
    const found = problems(mutated(change));
    expect(found.map((problem) => problem.path)).toContain(path);
    const atPath = found
      .filter((problem) => problem.path === path)
      .map((problem) => problem.message)
      .join(' | ');
    if (typeof message === 'string') expect(atPath).toContain(message);
    else expect(atPath).toMatch(message);
  });
});

describe('provider credentials by reference (auth.secret_ref)', () => {
  const withSource = (index: number, fields: Record<string, unknown>) =>
    mutated((d) => Object.assign(d.sources[index] as object, fields));
  const messagesAt = (value: unknown, path: string) =>
    problems(value)
      .filter((problem) => problem.path === path)
      .map((problem) => problem.message);

  it('accepts auth in a header (with a prefix) or a query parameter on json, crypto_ticker and ecb sources', () => {
    const value = mutated((d) => {
      Object.assign(d.sources[0] as object, {
        url: 'https://ecb-mirror.example/eurofxref-daily.xml',
        auth: { header: 'X-Api-Key', secret_ref: 'ecb-mirror' },
      });
      Object.assign(d.sources[1] as object, {
        auth: { query_param: 'access_key', secret_ref: 'frankfurter/key' },
      });
      Object.assign(d.sources[2] as object, {
        auth: { header: 'Authorization', prefix: 'Bearer ', secret_ref: 'coinbase@prod' },
      });
    });
    expect(problems(value)).toEqual([]);
    const parsed = ratePolicySchema.parse(value);
    expect(parsed.sources[2]).toMatchObject({ auth: { header: 'Authorization', prefix: 'Bearer ' } });
  });

  it.each([
    'access_key',
    'api_key',
    'apikey',
    'API-KEY',
    'key',
    'token',
    'access_token',
    'secret',
    'client_secret',
    'password',
    'passwd',
    'auth',
    'Authorization',
    'app_id',
    'sig',
    'signature',
    'x-api-key',
    'subscription-key',
  ])('refuses the credential-like query parameter %s, pointing at auth.secret_ref', (name) => {
    expect(isCredentialParameter(name)).toBe(true);
    const value = withSource(1, { url: `https://api.example/latest?from={base}&${name}=AAAAAAAA` });
    expect(messagesAt(value, 'sources.1.url').join(' | ')).toContain(
      `query parameter "${name}" looks like a credential`,
    );
    expect(messagesAt(value, 'sources.1.url').join(' | ')).toContain('"secret_ref"');
  });

  it('keeps ordinary query parameters', () => {
    for (const name of [
      'from',
      'base',
      'symbols',
      'to',
      'currencies',
      'amount',
      'places',
      'date',
      'format',
      'code',
    ])
      expect(isCredentialParameter(name)).toBe(false);
    expect(
      problems(withSource(1, { url: 'https://api.example/latest?from={base}&symbols={quote}&places=6' })),
    ).toEqual([]);
    expect(
      messagesAt(withSource(2, { url: 'https://api.example/{symbol}?token=AAAA' }), 'sources.2.url').join(),
    ).toContain('"token" looks like a credential');
    expect(
      messagesAt(withSource(0, { url: 'https://ecb.example/daily.xml?apikey=AAAA' }), 'sources.0.url').join(),
    ).toContain('"apikey" looks like a credential');
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['Host', { header: 'Host', secret_ref: 's' }, 'sources.1.auth.header', 'client owns (Host'],
    ['Content-Length', { header: 'content-length', secret_ref: 's' }, 'sources.1.auth.header', 'client owns'],
    [
      'Transfer-Encoding',
      { header: 'Transfer-Encoding', secret_ref: 's' },
      'sources.1.auth.header',
      'header',
    ],
    [
      'Proxy-Authorization',
      { header: 'Proxy-Authorization', secret_ref: 's' },
      'sources.1.auth.header',
      'Proxy',
    ],
    ['Accept', { header: 'Accept', secret_ref: 's' }, 'sources.1.auth.header', 'header'],
    [
      'a header name with a space',
      { header: 'X Api Key', secret_ref: 's' },
      'sources.1.auth.header',
      'header',
    ],
    [
      'a header name with CRLF',
      { header: 'X-Key\r\nHost', secret_ref: 's' },
      'sources.1.auth.header',
      'header',
    ],
    ['a ref with ..', { header: 'X-Api-Key', secret_ref: '../keys' }, 'sources.1.auth.secret_ref', '".."'],
    [
      'an absolute ref',
      { header: 'X-Api-Key', secret_ref: '/etc/passwd' },
      'sources.1.auth.secret_ref',
      'segments',
    ],
    [
      'a ref with a space',
      { header: 'X-Api-Key', secret_ref: 'a b' },
      'sources.1.auth.secret_ref',
      'secret name',
    ],
    ['a ref too long', { header: 'X-Api-Key', secret_ref: 'x'.repeat(129) }, 'sources.1.auth.secret_ref', ''],
    ['no secret_ref', { header: 'X-Api-Key' }, 'sources.1.auth.secret_ref', ''],
    [
      'both header and query_param',
      { header: 'X-Api-Key', query_param: 'k', secret_ref: 's' },
      'sources.1.auth',
      'exactly one',
    ],
    ['neither header nor query_param', { secret_ref: 's' }, 'sources.1.auth', 'exactly one'],
    [
      'a prefix without header',
      { query_param: 'k', prefix: 'Bearer ', secret_ref: 's' },
      'sources.1.auth.prefix',
      'only with header',
    ],
    [
      'a prefix with a line break',
      { header: 'Authorization', prefix: 'Bearer\n', secret_ref: 's' },
      'sources.1.auth.prefix',
      'scheme word',
    ],
    [
      'a bad query parameter name',
      { query_param: 'a&b', secret_ref: 's' },
      'sources.1.auth.query_param',
      'query parameter name',
    ],
    [
      'a secret value instead of a reference',
      { header: 'X-Api-Key', secret_ref: 's', value: 'AAAA' },
      'sources.1.auth',
      'Unrecognized key',
    ],
  ])('refuses auth with %s', (_name, auth, path, message) => {
    const found = messagesAt(withSource(1, { auth }), path);
    expect(found.length).toBeGreaterThan(0);
    expect(found.join(' | ')).toContain(message);
  });

  it('refuses a query_param the url already has, and auth on a simulated source', () => {
    const value = withSource(1, {
      url: 'https://api.example/latest?from={base}&app=1',
      auth: { query_param: 'app', secret_ref: 's' },
    });
    expect(messagesAt(value, 'sources.1.auth.query_param')).toEqual([
      'the url already has a query parameter "app"',
    ]);
    expect(problems(withSource(4, { auth: { header: 'X-Api-Key', secret_ref: 's' } }))).toContainEqual({
      path: 'sources.4',
      message: expect.stringMatching(/Unrecognized key/),
    });
  });
});
