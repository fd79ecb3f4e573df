import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findPersonalData } from '../../../../functions/domain/webhooks/personal-data';

const kindsOf = (value: unknown) => findPersonalData(value).map((finding) => finding.kind);
const isCard = (text: unknown) => kindsOf(text).includes('card_number');
const isEmail = (text: unknown) => kindsOf(text).includes('email');

const luhnCheckDigit = (prefix: string): string => {
  for (let digit = 0; digit <= 9; digit += 1) {
    const candidate = `${prefix}${digit}`;
    let sum = 0;
    for (let index = 0; index < candidate.length; index += 1) {
      let value = Number(candidate[candidate.length - 1 - index]);
      if (index % 2 === 1) value = value * 2 > 9 ? value * 2 - 9 : value * 2;
      sum += value;
    }
    if (sum % 10 === 0) return candidate;
  }
  throw new Error('unreachable');
};

describe('findPersonalData: card numbers', () => {
  it.each([
    ['Visa', '4111111111111111'],
    ['Visa (13 digits)', '4222222222222'],
    ['Visa (19 digits)', '4111111111111111110'],
    ['Mastercard', '5555555555554444'],
    ['Mastercard (2-series)', '2223003122003222'],
    ['Amex', '378282246310005'],
    ['Amex', '371449635398431'],
    ['Discover', '6011111111111117'],
    ['Diners Club (14 digits)', '30569309025904'],
    ['JCB', '3530111333300000'],
    ['UnionPay', '6200000000000005'],
  ])('finds a %s test number (%s)', (_brand, number) => {
    expect(findPersonalData(number)).toEqual([{ path: '$', kind: 'card_number' }]);
  });

  it.each([
    ['spaces in fours', '4111 1111 1111 1111'],
    ['dashes in fours', '4111-1111-1111-1111'],
    ['Amex 4-6-5 with spaces', '3782 822463 10005'],
    ['Amex 4-6-5 with dashes', '3782-822463-10005'],
    ['13-digit Visa 4-4-4-1', '4222 2222 2222 2'],
    ['inside a sentence', 'please charge card 4111 1111 1111 1111, thanks'],
    ['after a colon', 'pan:4111111111111111'],
    ['at the end of a sentence', 'my card is 4111111111111111.'],
    ['followed by an expiry', '4111 1111 1111 1111 12/29'],
    ['followed by another number in the same grouping', '4111 1111 1111 1111 2029'],
    ['as the first 16 of 20 grouped digits', '4111 1111 1111 1111 1115'],
    ['preceded by a quantity', 'qty 2 4111 1111 1111 1111'],
    ['with a minus sign', '-4111111111111111'],
    ['in parentheses', '(378282246310005)'],
  ])('finds a card written %s', (_name, text) => {
    expect(isCard(text)).toBe(true);
  });

  it('finds a card held as a JSON number', () => {
    expect(findPersonalData({ pan: 4111111111111111 })).toEqual([{ path: '$.pan', kind: 'card_number' }]);
    expect(findPersonalData(4222222222222n)).toEqual([{ path: '$', kind: 'card_number' }]);
  });

  it.each([
    ['Luhn-invalid 16 digits', '4111111111111112'],
    ['Luhn-invalid with spaces', '4111 1111 1111 1112'],
    ['12 digits, Luhn-valid', '411111111117'],
    ['20 digits, Luhn-valid', '41111111111111111115'],
    ['20 digits in groups, Luhn-valid, no 13–19-digit window valid', '4111 1111 1111 1112 0009'],
    ['a ULID', '01JQ4S6T1X5V8R2W3Y4Z5A6B7C'],
    ['a prefixed ULID', 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C'],
    ['an ISO timestamp', '2026-11-01T12:00:00.000Z'],
    ['two dates (their 16 digits pass Luhn)', '2026-01-01 2026-01-09'],
    ['digits glued to letters (ids, hex digests)', 'sha256:4111111111111111abcdef0123'],
    ['digits glued to a prefix', 'evt_4111111111111111'],
    ['mixed separators', '4111 1111-1111 1111'],
    ['double spaces', '4111  1111  1111  1111'],
    ['short inner groups', '41 11 11 11 11 11 11 11'],
    ['dots as separators', '4111.1111.1111.1111'],
    ['a card-length amount with decimals', '1234567890128.45'],
    ['a card-length amount with a decimal comma', '1234567890128,45'],
    ['decimals before the digits', '0.4111111111111111'],
    ['thousands separators', '4,111,111,111,111,111'],
  ])('does not flag %s', (_name, text) => {
    expect(isCard(text)).toBe(false);
  });

  it('judges decimal money by its integer part: a Luhn-valid 13-digit integer part is still an amount', () => {
    // Documented choice: digits joined to a decimal mark and more digits are an amount (C1 money strings),
    // never a card number, whatever their Luhn sum. The integer part alone would be a "card".
    expect(isCard('1234567890128')).toBe(true);
    expect(isCard('1234567890128.45')).toBe(false);
    expect(isCard(1234567890128.45)).toBe(false);
    expect(isCard('1234567890128.')).toBe(true);
  });

  it('flags every Luhn-valid run of 13–19 digits and no shorter or longer one (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 8, max: 24 }), fc.stringMatching(/^[1-9]\d{30}$/), (length, digits) => {
        const number = luhnCheckDigit(digits.slice(0, length - 1));
        expect(isCard(number)).toBe(length >= 13 && length <= 19);
        expect(isCard(`ref ${number} end`)).toBe(length >= 13 && length <= 19);
      }),
      { numRuns: 1000 },
    );
  });

  it('never flags a Luhn-invalid number of any length (property)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\d{13,19}$/), (digits) => {
        const valid = luhnCheckDigit(digits.slice(0, -1));
        const invalid = `${valid.slice(0, -1)}${(Number(valid.at(-1)) + 1) % 10}`;
        expect(isCard(invalid)).toBe(false);
        expect(isCard(valid)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('never flags digit runs glued to letters, as in hex digests and ULIDs (property)', () => {
    // Inside a lowercase hex SHA-256 a run of 13+ digits has a 0.625^13 chance per position: about 1 digest in 23
    // holds one, and 1 in 10 of those passes Luhn. Gluing to letters keeps receipt hashes publishable.
    fc.assert(
      fc.property(
        fc.stringMatching(/^[0-9a-f]{62}$/),
        fc.stringMatching(/^[0-9A-HJKMNP-TV-Z]{24}$/),
        (hex, ulid) => {
          expect(isCard(`sha256:a${hex}f`)).toBe(false);
          expect(isCard(`evt_0${ulid}Z`)).toBe(false);
          expect(isCard(`evt_0${ulid.replace(/^.{16}/, '4111111111111111')}Z`)).toBe(false);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('findPersonalData: e-mail addresses', () => {
  it.each([
    'jane.doe@example.com',
    'j+tag@mail.example.co.uk',
    "o'brien@example.ie",
    'UPPER@EXAMPLE.COM',
    'user_1@sub-domain.example.org',
    'jürgen@beispiel.de',
    'user@xn--bcher-kva.example',
    'user@example.xn--p1ai',
  ])('finds %s', (email) => {
    expect(findPersonalData(email)).toEqual([{ path: '$', kind: 'email' }]);
  });

  it.each([
    ['inside a sentence', 'contact jane.doe@example.com for refunds'],
    ['in angle brackets', 'Jane Doe <jane.doe@example.com>'],
    ['at the end of a sentence', 'write to jane@example.com.'],
    ['in a mailto link', 'mailto:jane@example.com?subject=hi'],
    ['in a query string', 'https://shop.example/cb?email=jane@example.com&x=1'],
    ['in a URL path', 'https://shop.example/users/jane@example.com/orders'],
    ['after other @ signs', '@@ @handle jane@example.com'],
  ])('finds an address %s', (_name, text) => {
    expect(isEmail(text)).toBe(true);
  });

  it.each([
    ['a bare handle', '@jane'],
    ['no domain dot', 'jane@localhost'],
    ['a one-letter top-level label', 'jane@example.c'],
    ['a numeric top-level label', 'jane@10.0.0.1'],
    ['an empty local part', '@example.com'],
    ['only dots before @', '...@example.com'],
    ['a label starting with a dash', 'jane@-example.com'],
    ['a retina image name', 'https://cdn.example.com/img/sku_1@2x.png'],
    ['a versioned file', 'report@v2.pdf'],
    ['a scoped npm package', '@scope/package@1.2.3'],
    ['a decorator-like string', 'price@1.00'],
    ['an ISO timestamp', '2026-11-01T12:00:00.000Z'],
  ])('does not flag %s', (_name, text) => {
    expect(isEmail(text)).toBe(false);
  });

  it('stays fast on long hostile strings', () => {
    const hostile = [
      'a'.repeat(200_000),
      `@${'b-'.repeat(100_000)}`,
      '@a.'.repeat(50_000),
      `a@${'-.'.repeat(126)}x`.repeat(2_000),
      `a@${'a'.repeat(252)}`.repeat(2_000),
      '4'.repeat(100_000),
      '4111 '.repeat(50_000),
    ].join('');
    const start = process.hrtime.bigint();
    findPersonalData(hostile);
    expect(Number(process.hrtime.bigint() - start) / 1e6).toBeLessThan(2000);
  });
});

describe('findPersonalData: walking JSON', () => {
  it('reports paths like $.data.customer.email, array indexes and quoted odd keys', () => {
    const envelope = {
      event_id: 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C',
      type: 'payout.processed',
      ts: '2026-11-01T12:00:00.000Z',
      data: {
        payout_id: 'po_01JQ4S6T1X5V8R2W3Y4Z5A6B7D',
        amount_minor: 125_000,
        customer: { email: 'jane@example.com', name: 'Jane' },
        cards: ['tok_visa', '4111 1111 1111 1111'],
        'billing address': { note: 'pay with 378282246310005 or mail a@b.co' },
        "it's": 5555555555554444,
      },
    };
    expect(findPersonalData(envelope)).toEqual([
      { path: '$.data.customer.email', kind: 'email' },
      { path: '$.data.cards[1]', kind: 'card_number' },
      { path: "$.data['billing address'].note", kind: 'card_number' },
      { path: "$.data['billing address'].note", kind: 'email' },
      { path: "$.data['it\\'s']", kind: 'card_number' },
    ]);
  });

  it('uses the given root path', () => {
    expect(findPersonalData({ email: 'a@example.com' }, '$.data')).toEqual([
      { path: '$.data.email', kind: 'email' },
    ]);
  });

  it('checks member names and never repeats them in a path', () => {
    expect(
      findPersonalData({ by_email: { 'jane@example.com': { total: '1.00', note: '4111111111111111' } } }),
    ).toEqual([
      { path: '$.by_email[*]', kind: 'email' },
      { path: '$.by_email[*].note', kind: 'card_number' },
    ]);
  });

  it('finds nothing in a clean catalog event', () => {
    expect(
      findPersonalData({
        event_id: 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C',
        type: 'catalog.PriceListUpdated',
        version: '2026-11-01',
        ts: '2026-11-01T12:00:00.000Z',
        attempt: 1,
        trace_id: 'f3c2a8b1d4e5f60718293a4b5c6d7e8f',
        pricelist_version: 42,
        fx_version: 'fx_2026-11-01T12:00:00Z',
        tax_rule_version: 7,
        data: {
          version: 42,
          effective_from: '2026-11-01T12:00:00.000Z',
          changed: [
            { sku_id: 'sku_123', price: '1234567890128.45', image: 'https://cdn.example/sku_123@2x.png' },
          ],
          hash: 'sha256:41111111111111117a2bd0c1e9f34b5a6c7d8e9f0a1b2c3d4e5f60718293a4b5',
        },
      }),
    ).toEqual([]);
  });

  it('ignores booleans, null, undefined, non-finite numbers and functions', () => {
    expect(
      findPersonalData([true, null, undefined, Number.NaN, Number.POSITIVE_INFINITY, () => 'a@example.com']),
    ).toEqual([]);
  });

  it('survives deep nesting and cycles', () => {
    let deep: unknown = 'jane@example.com';
    for (let index = 0; index < 100_000; index += 1) deep = [deep];
    const findings = findPersonalData(deep);
    expect(findings).toHaveLength(1);
    expect(findings[0]?.path).toBe(`$${'[0]'.repeat(100_000)}`);

    const cyclic: Record<string, unknown> = { email: 'jane@example.com' };
    cyclic.self = cyclic;
    expect(findPersonalData(cyclic)).toEqual([{ path: '$.email', kind: 'email' }]);
  });

  it('finds a planted value wherever it sits in random JSON (property)', () => {
    const clean = fc.oneof(
      fc.integer({ min: -1_000_000, max: 1_000_000 }),
      fc.boolean(),
      fc.constant(null),
      fc.stringMatching(/^[a-z_ ]{0,12}$/),
    );
    fc.assert(
      fc.property(
        fc.array(fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), clean), { maxLength: 5 }),
        fc.nat(),
        fc.constantFrom('jane@example.com', '4111 1111 1111 1111'),
        (records, pick, planted) => {
          expect(findPersonalData(records)).toEqual([]);
          if (records.length === 0) return;
          const index = pick % records.length;
          const withPlant = records.map((record, at) => (at === index ? { ...record, zz: planted } : record));
          expect(findPersonalData(withPlant)).toEqual([
            { path: `$[${index}].zz`, kind: planted.includes('@') ? 'email' : 'card_number' },
          ]);
        },
      ),
      { numRuns: 500 },
    );
  });
});
