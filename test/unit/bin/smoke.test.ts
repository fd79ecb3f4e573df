import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../bin/cli';
import { DEFAULT_WAIT_SECONDS, describeRows, parseOptions, run } from '../../../bin/smoke';
import { cliWorld } from '../../support/cli-world';

describe('npm run smoke: command line', () => {
  it('takes the URL, the credentials, the receiver and the price to check', () => {
    expect(parseOptions(['--url', 'http://127.0.0.1:3000/'])).toEqual({
      url: 'http://127.0.0.1:3000',
      sigv4: false,
      sku: 'GAME-STARFALL-PS5',
      currency: 'EUR',
      region: 'DE',
      waitSeconds: DEFAULT_WAIT_SECONDS,
    });
    expect(
      parseOptions([
        '--url=https://abc.execute-api.eu-west-1.amazonaws.com/prod',
        '--api-key',
        'mck_test',
        '--sigv4',
        '--receiver',
        'https://hooks.example.com/webhooks/v1',
        '--sku',
        'GIFT-CARD-25',
        '--currency',
        'CHF',
        '--region',
        'CH',
        '--wait',
        '90',
      ]),
    ).toEqual({
      url: 'https://abc.execute-api.eu-west-1.amazonaws.com/prod',
      apiKey: 'mck_test',
      sigv4: true,
      receiver: 'https://hooks.example.com/webhooks/v1',
      sku: 'GIFT-CARD-25',
      currency: 'CHF',
      region: 'CH',
      waitSeconds: 90,
    });
  });

  it.each([
    [[], 'smoke needs --url <base>'],
    [['--url'], '--url needs the base URL of the API'],
    [['--url', 'localhost:3000'], '--url must be http(s)'],
    [['--url', 'nope'], '--url: nope is not a URL'],
    [['--url', 'http://h', '--token', 't', '--sigv4'], 'give --token (the local stack) or --sigv4'],
    [['--url', 'http://h', '--wait', '0'], '--wait must be a number of seconds from 1 to 9999'],
    [['--url', 'http://h', '--receiver', 'ftp://r'], '--receiver must be http(s)'],
    [['--url', 'http://h', 'extra'], 'unexpected arguments: extra'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseOptions(argv)).toThrow(UsageError);
    expect(() => parseOptions(argv)).toThrow(message);
  });
});

describe('npm run smoke: runs', () => {
  it('needs a caller key: the local credentials file only for a loopback URL (exit 2 otherwise)', async () => {
    const deployed = cliWorld({ '/work/.local/data/credentials.json': '{"api_key":"key_local_x"}' });
    expect(await run(['--url', 'https://api.example.com'], deployed.io)).toBe(2);
    expect(deployed.err.join('')).toMatch(/^smoke needs a caller key: --api-key <key> or API_KEY/);
    expect(deployed.requests).toEqual([]);
  });

  it('fails every row a closed API breaks, sending the local key to the loopback API, and exits 1', async () => {
    const local = cliWorld({ '/work/.local/data/credentials.json': '{"api_key":"key_local_x"}' });
    expect(await run(['--url', 'http://127.0.0.1:3000'], local.io)).toBe(1);
    const headers = local.requests.map(
      (request) => (request.init.headers as Record<string, string>)['x-api-key'],
    );
    expect(new Set(headers)).toEqual(new Set(['key_local_x']));
    expect(local.out.join('')).toContain(
      'GET /health: cannot reach http://127.0.0.1:3000: connect ECONNREFUSED',
    );
    expect(local.out.join('')).toMatch(/\n0 passed, 4 failed, 3 skipped\n$/);
  });

  it('prints the table with aligned columns and the counts', () => {
    expect(
      describeRows([
        { check: 'health', result: 'pass', ms: 3.4, detail: 'status ok' },
        { check: 'webhook delivery', result: 'fail', ms: 1234.5, detail: 'evt_1: dead' },
        { check: 'receipt', result: 'skip', ms: 0, detail: 'needs the receipt' },
      ]),
    ).toBe(
      [
        'check             result    ms  detail',
        'health            pass       3  status ok',
        'webhook delivery  fail    1235  evt_1: dead',
        'receipt           skip       0  needs the receipt',
        '1 passed, 1 failed, 1 skipped',
        '',
      ].join('\n'),
    );
  });
});
