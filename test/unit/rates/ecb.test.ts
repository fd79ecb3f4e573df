import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal, dec } from '../../../functions/domain/money/decimal';
import {
  ECB_CURRENCIES,
  EcbFormatError,
  EcbPairError,
  type EcbReferenceRates,
  ecbPairRate,
  MAX_ECB_DOCUMENT_CHARS,
  parseEcbDaily,
} from '../../../functions/domain/rates/ecb';

const FIXTURE = readFileSync(
  path.resolve(import.meta.dirname, '../../fixtures/ecb/eurofxref-daily.xml'),
  'utf8',
);

const ENVELOPE_OPEN =
  '<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">';

/** A document of the daily shape around the given inner content of the day's Cube. */
const daily = (cubes: string, time = '2024-01-04'): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n${ENVELOPE_OPEN}<gesmes:subject>Reference rates</gesmes:subject><Cube><Cube time='${time}'>${cubes}</Cube></Cube></gesmes:Envelope>`;

const day = (rates: Record<string, string>): EcbReferenceRates => ({
  date: '2024-01-04',
  base: 'EUR',
  rates: new Map(Object.entries(rates)),
});

describe('parseEcbDaily on the real daily file', () => {
  const parsed = parseEcbDaily(FIXTURE);

  it('reads the date and all 30 currencies against the euro', () => {
    expect(parsed.date).toBe('2024-01-04');
    expect(parsed.base).toBe('EUR');
    expect(parsed.rates.size).toBe(30);
    expect([...parsed.rates.keys()].every((currency) => ECB_CURRENCIES.has(currency))).toBe(true);
  });

  it('keeps the rates exactly as published (decimal strings)', () => {
    expect(parsed.rates.get('USD')).toBe('1.0953');
    expect(parsed.rates.get('JPY')).toBe('157.91');
    expect(parsed.rates.get('GBP')).toBe('0.86278');
    expect(parsed.rates.get('IDR')).toBe('16994.46');
  });

  it('derives direct pairs (EUR→X), spot-checked on three currencies', () => {
    expect(ecbPairRate(parsed, 'EUR→USD', 4)).toBe('1.0953');
    expect(ecbPairRate(parsed, 'EUR→JPY', 2)).toBe('157.91');
    expect(ecbPairRate(parsed, 'EUR->GBP', 5)).toBe('0.86278');
    expect(ecbPairRate(parsed, 'EUR→GBP', 8)).toBe('0.86278000');
  });

  it('derives the inverse (X→EUR = 1 / rate)', () => {
    expect(ecbPairRate(parsed, 'USD→EUR', 6)).toBe('0.912992');
    expect(ecbPairRate(parsed, 'IDR→EUR', 8)).toBe('0.00005884');
  });

  it('derives cross rates through the euro (X→Y = rate(Y) / rate(X))', () => {
    expect(ecbPairRate(parsed, 'GBP→USD', 6)).toBe('1.269501');
    expect(ecbPairRate(parsed, 'JPY→CHF', 8)).toBe('0.00589766');
    expect(ecbPairRate(parsed, 'CHF→JPY', 4)).toBe('169.5587');
    expect(ecbPairRate(parsed, 'SEK→ZAR', 5)).toBe('1.82540');
  });

  it('parses the file without its declaration, with a byte order mark, CRLF line ends and comments', () => {
    const variant = `\uFEFF${FIXTURE.replace(/^<\?xml[^>]*>\n/, '<!-- fetched daily -->\n').replace(/\n/g, '\r\n')}`;
    expect(parseEcbDaily(variant).rates).toEqual(parsed.rates);
  });

  it('accepts other namespace declarations and the predefined entities in text', () => {
    const doc = daily(`<Cube currency='USD' rate='1.0953'/>`)
      .replace('<gesmes:Envelope ', '<gesmes:Envelope xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ')
      .replace('Reference rates', 'Reference &amp; rates &lt;daily&gt; &quot;&apos;');
    expect(parseEcbDaily(doc).rates.get('USD')).toBe('1.0953');
  });

  it('accepts double-quoted attributes and character references', () => {
    const doc = daily(`<Cube currency="USD" rate="1.0953" /><Cube currency='&#74;&#x50;Y' rate='157.91'/>`);
    expect(Object.fromEntries(parseEcbDaily(doc).rates)).toEqual({ USD: '1.0953', JPY: '157.91' });
  });
});

describe('ecbPairRate rounding and errors', () => {
  it('rounds half to even at the pair precision', () => {
    expect(ecbPairRate(day({ USD: '1.00005' }), 'EUR→USD', 4)).toBe('1.0000');
    expect(ecbPairRate(day({ USD: '1.00015' }), 'EUR→USD', 4)).toBe('1.0002');
    expect(ecbPairRate(day({ USD: '1.000151' }), 'EUR→USD', 4)).toBe('1.0002');
    // 1 / 8 = 0.125 exactly: a tie at 2 decimals goes to the even 0.12.
    expect(ecbPairRate(day({ USD: '8' }), 'USD→EUR', 2)).toBe('0.12');
    expect(ecbPairRate(day({ USD: '8', GBP: '1' }), 'USD→GBP', 2)).toBe('0.12');
  });

  it('refuses a pair it cannot derive, with a typed error', () => {
    const rates = day({ USD: '1.0953' });
    const problem = (pair: string, precision = 4) => {
      try {
        ecbPairRate(rates, pair, precision);
      } catch (error) {
        expect(error).toBeInstanceOf(EcbPairError);
        return (error as EcbPairError).problem;
      }
      return undefined;
    };
    expect(problem('EUR→EUR')).toBe('same_currency');
    expect(problem('EUR→GBP')).toBe('missing_currency');
    expect(problem('GBP→USD')).toBe('missing_currency');
    expect(problem('EURUSD')).toBe('invalid_pair');
    expect(problem('IDR→EUR')).toBe('missing_currency');
    expect(ecbPairRate(day({ IDR: '16994.46' }), 'IDR→EUR', 4)).toBe('0.0001');
    expect(() => ecbPairRate(day({ IDR: '16994.46' }), 'IDR→EUR', 2)).toThrow(EcbPairError);
    expect(() => ecbPairRate(rates, 'EUR→USD', 13)).toThrow(RangeError);
  });

  it('inverse and cross rates agree with exact division within half a unit of the last place', () => {
    const codes = ['USD', 'GBP', 'JPY', 'CHF'];
    const rate = fc
      .tuple(fc.integer({ min: 1, max: 99_999_999 }), fc.integer({ min: 0, max: 6 }))
      .map(([digits, scale]) =>
        dec(String(digits))
          .dividedBy(10 ** scale)
          .toString(),
      );
    fc.assert(
      fc.property(
        fc.tuple(rate, rate, rate, rate),
        fc.constantFrom(...codes),
        fc.constantFrom(...codes),
        fc.integer({ min: 6, max: 12 }),
        (values, from, to, precision) => {
          fc.pre(from !== to);
          const rates = day(Object.fromEntries(codes.map((code, index) => [code, values[index] as string])));
          const exact = dec(rates.rates.get(to) as string).dividedBy(dec(rates.rates.get(from) as string));
          fc.pre(exact.gte(new Decimal('1e-6')));
          const derived = dec(ecbPairRate(rates, `${from}→${to}`, precision));
          expect(
            derived
              .minus(exact)
              .abs()
              .lte(new Decimal(`0.5e-${precision}`)),
          ).toBe(true);
        },
      ),
    );
  });
});

describe('parseEcbDaily refuses malformed input', () => {
  const refuses = (xml: string, fragment: string | RegExp) => {
    expect(() => parseEcbDaily(xml)).toThrow(EcbFormatError);
    expect(() => parseEcbDaily(xml)).toThrow(fragment);
  };
  const usd = `<Cube currency='USD' rate='1.0953'/>`;

  it.each([
    ['an empty document', '', 'no root element'],
    ['HTML', '<html><body>maintenance</body></html>', 'root element is <html>'],
    ['JSON', '{"rates":{"USD":1.09}}', 'text outside the root element'],
    ['a truncated body', FIXTURE.slice(0, FIXTURE.indexOf('</Cube>')), 'is not closed'],
    ['a body cut inside a tag', FIXTURE.slice(0, 600), 'malformed start tag'],
    ['a DOCTYPE (entity expansion)', `<!DOCTYPE x [<!ENTITY a "b">]>${daily(usd)}`, 'DTD'],
    ['CDATA', daily(`<![CDATA[x]]>${usd}`), 'DTD, CDATA'],
    ['a second processing instruction', daily(`<?php x ?>${usd}`), 'processing instruction'],
    [
      'a malformed XML declaration',
      `<?xml version="2.0"?>${daily(usd).replace(/^<\?xml[^>]*>/, '')}`,
      'XML declaration',
    ],
    ['another encoding', daily(usd).replace('UTF-8', 'ISO-8859-1'), 'encoding ISO-8859-1'],
    ['a malformed comment', daily(`<!-- a -- b -->${usd}`), 'malformed comment'],
    ['an unclosed comment', `${daily(usd)}<!-- open`, 'malformed comment'],
    ['a malformed start tag', daily(`<Cube currency=USD rate='1'/>`), 'malformed start tag'],
    ['a malformed end tag', daily(`${usd}</ Cube>`), 'malformed end tag'],
    ['a mismatched end tag', daily(`${usd}</Cubes>`), 'unexpected </Cubes>'],
    ['an end tag before any start', '</Cube>', 'unexpected </Cube>'],
    ['two roots', `${daily(usd)}<Cube/>`, 'more than one root'],
    ['a duplicate attribute', daily(`<Cube currency='USD' currency='GBP' rate='1'/>`), 'given twice'],
    ['a bare ampersand', daily(`<Cube currency='US&D' rate='1'/>`), 'bare "&"'],
    ['an unknown entity', daily(`<Cube currency='&usd;' rate='1'/>`), 'unknown entity'],
    ['a NUL character reference', daily(`<Cube currency='&#0;' rate='1'/>`), 'invalid character reference'],
    ['a surrogate character reference', daily(`<Cube currency='&#xD800;' rate='1'/>`), 'invalid character'],
    ['"]]>" in text', daily(`]]>${usd}`), '"]]>"'],
    ['deep nesting', daily(`${usd}${'<a>'.repeat(10)}${'</a>'.repeat(10)}`), 'nested too deeply'],
    ['an oversized document', daily(' '.repeat(MAX_ECB_DOCUMENT_CHARS)), 'larger than'],
  ])('%s', (_name, xml, fragment) => refuses(xml, fragment));

  it.each([
    ['a wrong root', `<Envelope>${usd}</Envelope>`, 'root element is <Envelope>'],
    [
      'a missing default namespace',
      daily(usd).replace(' xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref"', ''),
      'namespaces',
    ],
    [
      'a missing gesmes namespace',
      daily(usd).replace(' xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01"', ''),
      'namespaces',
    ],
    ['another default namespace', daily(usd).replace('eurofxref"', 'other"'), 'unexpected attribute xmlns='],
    [
      'another gesmes namespace',
      daily(usd).replace('2002-08-01" xmlns=', '2099" xmlns='),
      'unexpected attribute xmlns:gesmes=',
    ],
    [
      'a foreign attribute on the envelope',
      daily(usd).replace('<gesmes:Envelope ', '<gesmes:Envelope id="1" '),
      'unexpected attribute id',
    ],
    [
      'text in the envelope',
      daily(usd).replace('</gesmes:Envelope>', 'hello</gesmes:Envelope>'),
      'text inside <gesmes:Envelope>',
    ],
    [
      'an unknown element in the envelope',
      daily(usd).replace('<Cube>', '<Extra/><Cube>'),
      'unexpected <Extra>',
    ],
    [
      'two subjects',
      daily(usd).replace('<Cube>', '<gesmes:subject>x</gesmes:subject><Cube>'),
      'more than one <gesmes:subject>',
    ],
    [
      'no Cube',
      `${ENVELOPE_OPEN}<gesmes:subject>Reference rates</gesmes:subject></gesmes:Envelope>`,
      'no <Cube>',
    ],
    [
      'an attribute on the outer Cube',
      daily(usd).replace('<Cube><Cube', "<Cube time='x'><Cube"),
      'has attributes [time], expected []',
    ],
    ['text in the outer Cube', daily(usd).replace('<Cube><Cube', '<Cube>x<Cube'), 'text inside <Cube>'],
    ['no day', `${ENVELOPE_OPEN}<Cube></Cube></gesmes:Envelope>`, "expected one day's"],
    [
      'two days',
      daily(usd).replace('</Cube></Cube>', `</Cube><Cube time='2024-01-03'>${usd}</Cube></Cube>`),
      "expected one day's",
    ],
    [
      'another element as the day',
      `${ENVELOPE_OPEN}<Cube><Day time='2024-01-04'/></Cube></gesmes:Envelope>`,
      'unexpected <Day> in <Cube>',
    ],
    [
      'a day without time',
      daily(usd).replace(" time='2024-01-04'", ''),
      'has attributes [], expected [time]',
    ],
    ['an impossible date', daily(usd, '2024-02-30'), 'is not a date'],
    ['a date in another format', daily(usd, '04.01.2024'), 'is not a date'],
    ['text in the day', daily(`x${usd}`), 'text inside <Cube>'],
    ['a day without rates', daily(''), 'no rates on 2024-01-04'],
    [
      'another element among the rates',
      daily(`${usd}<Rate currency='GBP' rate='0.86'/>`),
      "unexpected <Rate> in the day's",
    ],
    [
      'a rate without currency',
      daily(`<Cube rate='1.0953'/>`),
      'has attributes [rate], expected [currency,rate]',
    ],
    [
      'an extra attribute on a rate',
      daily(`<Cube currency='USD' rate='1.0953' unit='1'/>`),
      'expected [currency,rate]',
    ],
    ['text in a rate', daily(`<Cube currency='USD' rate='1.0953'>x</Cube>`), 'text inside <Cube>'],
    ['a rate with children', daily(`<Cube currency='USD' rate='1.0953'><Cube/></Cube>`), 'with children'],
    ['a lowercase currency', daily(`<Cube currency='usd' rate='1.0953'/>`), 'currency="usd"'],
    ['the euro itself', daily(`<Cube currency='EUR' rate='1'/>`), 'currency="EUR"'],
    ['a rate with a comma', daily(`<Cube currency='USD' rate='1,0953'/>`), 'rate="1,0953"'],
    ['a zero rate', daily(`<Cube currency='USD' rate='0.0000'/>`), 'rate="0.0000"'],
    ['a negative rate', daily(`<Cube currency='USD' rate='-1.0953'/>`), 'rate="-1.0953"'],
    ['an exponent rate', daily(`<Cube currency='USD' rate='1e3'/>`), 'rate="1e3"'],
    ['a currency listed twice', daily(`${usd}${usd}`), 'USD listed twice'],
  ])('%s', (_name, xml, fragment) => refuses(xml, fragment));

  it('names the format in every error', () => {
    expect(() => parseEcbDaily('<html/>')).toThrow(/^not an ECB reference rates document: /);
  });

  it('never throws anything but EcbFormatError on arbitrary input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        try {
          parseEcbDaily(text);
        } catch (error) {
          expect(error).toBeInstanceOf(EcbFormatError);
        }
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: FIXTURE.trimEnd().length - 1 }), (cut) => {
        expect(() => parseEcbDaily(FIXTURE.slice(0, cut))).toThrow(EcbFormatError);
      }),
    );
  });
});
