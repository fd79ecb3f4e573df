import { parsePair } from '../pricing/fx';
import { AggregationError, isPositiveRate, parseRate, roundRate } from './aggregate';

/**
 * The ECB's euro foreign exchange reference rates (`eurofxref-daily.xml`): one day's rates of about 30
 * currencies against the euro, in this exact shape:
 *
 *   <?xml version="1.0" encoding="UTF-8"?>
 *   <gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01"
 *                    xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
 *     <gesmes:subject>Reference rates</gesmes:subject>
 *     <gesmes:Sender><gesmes:name>European Central Bank</gesmes:name></gesmes:Sender>
 *     <Cube><Cube time='2024-01-04'><Cube currency='USD' rate='1.0953'/>…</Cube></Cube>
 *   </gesmes:Envelope>
 *
 * The parser reads well-formed XML of this shape only, without an XML dependency: no DTD (so no entity
 * expansion), no CDATA, no processing instruction but the declaration, the five predefined entities and
 * character references only; anything else is an `EcbFormatError`.
 */

export const ECB_DAILY_URL = 'https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml';
export const ECB_BASE_CURRENCY = 'EUR';
export const GESMES_NAMESPACE = 'http://www.gesmes.org/xml/2002-08-01';
export const EUROFXREF_NAMESPACE = 'http://www.ecb.int/vocabulary/2002-08-01/eurofxref';

/**
 * Currencies of the daily reference rates (since 2023), and the euro. A day's file may lack one of them; the
 * pair is then not derivable from that file.
 */
export const ECB_CURRENCIES: ReadonlySet<string> = new Set([
  'EUR',
  'USD',
  'JPY',
  'BGN',
  'CZK',
  'DKK',
  'GBP',
  'HUF',
  'PLN',
  'RON',
  'SEK',
  'CHF',
  'ISK',
  'NOK',
  'TRY',
  'AUD',
  'BRL',
  'CAD',
  'CNY',
  'HKD',
  'IDR',
  'ILS',
  'INR',
  'KRW',
  'MXN',
  'MYR',
  'NZD',
  'PHP',
  'SGD',
  'THB',
  'ZAR',
]);

/** Far above the real file (about 1.7 KB); a larger answer is not this format. */
export const MAX_ECB_DOCUMENT_CHARS = 256 * 1024;
const MAX_DEPTH = 8;

export class EcbFormatError extends Error {
  constructor(message: string) {
    super(`not an ECB reference rates document: ${message}`);
    this.name = 'EcbFormatError';
  }
}

export type EcbPairProblem = 'invalid_pair' | 'same_currency' | 'missing_currency' | 'rounds_to_zero';

export class EcbPairError extends Error {
  constructor(
    readonly problem: EcbPairProblem,
    message: string,
  ) {
    super(message);
    this.name = 'EcbPairError';
  }
}

/** One day's reference rates: units of each currency per euro, as published (decimal strings). */
export interface EcbReferenceRates {
  /** `YYYY-MM-DD`. */
  readonly date: string;
  readonly base: typeof ECB_BASE_CURRENCY;
  readonly rates: ReadonlyMap<string, string>;
}

interface XmlElement {
  readonly name: string;
  readonly attributes: ReadonlyMap<string, string>;
  readonly children: XmlElement[];
  text: string;
}

const NAME = '[A-Za-z_][A-Za-z0-9._-]*(?::[A-Za-z_][A-Za-z0-9._-]*)?';
const DECLARATION =
  /^<\?xml\s+version\s*=\s*(["'])1\.0\1(?:\s+encoding\s*=\s*(["'])([A-Za-z0-9._-]+)\2)?(?:\s+standalone\s*=\s*(["'])(?:yes|no)\4)?\s*\?>/;
const START_TAG = new RegExp(`<(${NAME})((?:\\s+${NAME}\\s*=\\s*(?:"[^"<]*"|'[^'<]*'))*)\\s*(/?)>`, 'y');
const ATTRIBUTE = new RegExp(`\\s+(${NAME})\\s*=\\s*(?:"([^"<]*)"|'([^'<]*)')`, 'y');
const END_TAG = new RegExp(`</(${NAME})\\s*>`, 'y');
const COMMENT = /<!--([\s\S]*?)-->/y;
const TEXT = /[^<]+/y;
const WHITESPACE = /^[ \t\r\n]*$/;
const PREDEFINED: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Replaces the predefined entities and character references; any other `&` is malformed. */
const decodeText = (raw: string): string =>
  raw.replace(/&([^;&\s]{0,10});|&/g, (match, body: string | undefined) => {
    if (body === undefined) throw new EcbFormatError('a bare "&"');
    const known = PREDEFINED[body];
    if (known) return known;
    const reference = /^#(?:x([0-9A-Fa-f]{1,6})|([0-9]{1,7}))$/.exec(body);
    if (!reference) throw new EcbFormatError(`unknown entity ${match}`);
    const code = reference[1] ? Number.parseInt(reference[1], 16) : Number(reference[2]);
    if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
      throw new EcbFormatError(`invalid character reference ${match}`);
    return String.fromCodePoint(code);
  });

/** Well-formed XML of one root element, as a tree (comments dropped). */
const parseXml = (source: string): XmlElement => {
  if (source.length > MAX_ECB_DOCUMENT_CHARS)
    throw new EcbFormatError(`larger than ${MAX_ECB_DOCUMENT_CHARS} characters`);
  let input = source.startsWith('\uFEFF') ? source.slice(1) : source;
  const declaration = DECLARATION.exec(input);
  if (declaration) {
    const encoding = declaration[3];
    if (encoding && encoding.toUpperCase() !== 'UTF-8') throw new EcbFormatError(`encoding ${encoding}`);
    input = input.slice(declaration[0].length);
  } else if (input.startsWith('<?xml')) throw new EcbFormatError('a malformed XML declaration');

  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let position = 0;
  const at = (pattern: RegExp): RegExpExecArray | null => {
    pattern.lastIndex = position;
    const match = pattern.exec(input);
    if (match) position = pattern.lastIndex;
    return match;
  };
  while (position < input.length) {
    const top = stack.at(-1);
    if (input.startsWith('<!--', position)) {
      const comment = at(COMMENT);
      if (!comment || comment[1]?.includes('--')) throw new EcbFormatError('a malformed comment');
      continue;
    }
    if (input.startsWith('<!', position) || input.startsWith('<?', position))
      throw new EcbFormatError('a DTD, CDATA section or processing instruction');
    if (input.startsWith('</', position)) {
      const end = at(END_TAG);
      if (!end) throw new EcbFormatError('a malformed end tag');
      if (!top || top.name !== end[1]) throw new EcbFormatError(`an unexpected </${end[1]}>`);
      stack.pop();
      continue;
    }
    if (input.startsWith('<', position)) {
      const start = at(START_TAG);
      if (!start) throw new EcbFormatError('a malformed start tag');
      if (!top && root) throw new EcbFormatError('more than one root element');
      if (stack.length >= MAX_DEPTH) throw new EcbFormatError('elements nested too deeply');
      const attributes = new Map<string, string>();
      const attributeText = start[2] as string;
      ATTRIBUTE.lastIndex = 0;
      for (let match = ATTRIBUTE.exec(attributeText); match; match = ATTRIBUTE.exec(attributeText)) {
        const name = match[1] as string;
        if (attributes.has(name)) throw new EcbFormatError(`attribute ${name} given twice`);
        attributes.set(name, decodeText(match[2] ?? (match[3] as string)));
      }
      const element: XmlElement = { name: start[1] as string, attributes, children: [], text: '' };
      if (top) top.children.push(element);
      else root = element;
      if (start[3] !== '/') stack.push(element);
      continue;
    }
    const text = at(TEXT)?.[0] as string;
    if (text.includes(']]>')) throw new EcbFormatError('"]]>" in text');
    if (top) top.text += decodeText(text);
    else if (!WHITESPACE.test(text)) throw new EcbFormatError('text outside the root element');
  }
  if (stack.length > 0) throw new EcbFormatError(`<${stack.at(-1)?.name}> is not closed`);
  if (!root) throw new EcbFormatError('no root element');
  return root;
};

const expectAttributes = (element: XmlElement, names: readonly string[]): void => {
  const found = [...element.attributes.keys()].sort().join(',');
  const expected = [...names].sort().join(',');
  if (found !== expected)
    throw new EcbFormatError(`<${element.name}> has attributes [${found}], expected [${expected}]`);
};

const expectNoText = (element: XmlElement): void => {
  if (!WHITESPACE.test(element.text)) throw new EcbFormatError(`text inside <${element.name}>`);
};

const isCalendarDate = (value: string): boolean => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const time = Date.parse(`${value}T00:00:00.000Z`);
  return !Number.isNaN(time) && new Date(time).toISOString().slice(0, 10) === value;
};

/** Parses the daily reference rates document; anything not of its exact shape is an `EcbFormatError`. */
export const parseEcbDaily = (xml: string): EcbReferenceRates => {
  const envelope = parseXml(xml);
  if (envelope.name !== 'gesmes:Envelope') throw new EcbFormatError(`the root element is <${envelope.name}>`);
  for (const [name, value] of envelope.attributes) {
    if (name === 'xmlns:gesmes' && value === GESMES_NAMESPACE) continue;
    if (name === 'xmlns' && value === EUROFXREF_NAMESPACE) continue;
    if (name.startsWith('xmlns:') && name !== 'xmlns:gesmes') continue;
    throw new EcbFormatError(`unexpected attribute ${name}="${value}" on the envelope`);
  }
  if (
    envelope.attributes.get('xmlns') !== EUROFXREF_NAMESPACE ||
    envelope.attributes.get('xmlns:gesmes') !== GESMES_NAMESPACE
  )
    throw new EcbFormatError('the envelope does not declare the gesmes and eurofxref namespaces');
  expectNoText(envelope);
  const seen = new Set<string>();
  for (const child of envelope.children) {
    if (!['gesmes:subject', 'gesmes:Sender', 'Cube'].includes(child.name))
      throw new EcbFormatError(`unexpected <${child.name}> in the envelope`);
    if (seen.has(child.name)) throw new EcbFormatError(`more than one <${child.name}>`);
    seen.add(child.name);
  }
  const outer = envelope.children.find((child) => child.name === 'Cube');
  if (!outer) throw new EcbFormatError('no <Cube>');
  expectAttributes(outer, []);
  expectNoText(outer);
  const [day, ...otherDays] = outer.children;
  if (!day || otherDays.length > 0)
    throw new EcbFormatError(`expected one day's <Cube time>, found ${outer.children.length}`);
  if (day.name !== 'Cube') throw new EcbFormatError(`unexpected <${day.name}> in <Cube>`);
  expectAttributes(day, ['time']);
  expectNoText(day);
  const date = day.attributes.get('time') as string;
  if (!isCalendarDate(date)) throw new EcbFormatError(`time="${date}" is not a date`);
  if (day.children.length === 0) throw new EcbFormatError(`no rates on ${date}`);
  const rates = new Map<string, string>();
  for (const cube of day.children) {
    if (cube.name !== 'Cube') throw new EcbFormatError(`unexpected <${cube.name}> in the day's <Cube>`);
    expectAttributes(cube, ['currency', 'rate']);
    expectNoText(cube);
    if (cube.children.length > 0) throw new EcbFormatError('a rate <Cube> with children');
    const currency = cube.attributes.get('currency') as string;
    const rate = cube.attributes.get('rate') as string;
    if (!/^[A-Z]{3}$/.test(currency) || currency === ECB_BASE_CURRENCY)
      throw new EcbFormatError(`currency="${currency}"`);
    if (!isPositiveRate(rate)) throw new EcbFormatError(`rate="${rate}" for ${currency}`);
    if (rates.has(currency)) throw new EcbFormatError(`${currency} listed twice`);
    rates.set(currency, rate);
  }
  return { date, base: ECB_BASE_CURRENCY, rates };
};

/**
 * A pair's rate from one day's reference rates, through the euro, rounded half-even to `precision`:
 * EUR→X = rate(X) (direct), X→EUR = 1 / rate(X) (inverse), X→Y = rate(Y) / rate(X) (cross). Quotients are
 * taken to 50 significant digits before the one rounding; that never moves a result across a rounding
 * boundary, since a quotient of two rates with few decimals is either exactly on a tie or far from one.
 */
export const ecbPairRate = (day: EcbReferenceRates, pair: string, precision: number): string => {
  let from: string;
  let to: string;
  try {
    [from, to] = parsePair(pair);
  } catch {
    throw new EcbPairError('invalid_pair', `not a rate pair: ${pair}`);
  }
  if (from === to) throw new EcbPairError('same_currency', `${pair} is not a pair of two currencies`);
  const perEuro = (currency: string) => {
    if (currency === ECB_BASE_CURRENCY) return parseRate('1');
    const rate = day.rates.get(currency);
    if (rate === undefined)
      throw new EcbPairError('missing_currency', `${currency} has no reference rate on ${day.date}`);
    return parseRate(rate);
  };
  const value = perEuro(to).dividedBy(perEuro(from));
  try {
    return roundRate(value, precision);
  } catch (error) {
    if (error instanceof AggregationError)
      throw new EcbPairError('rounds_to_zero', `${pair} is zero at ${precision} decimals`);
    throw error;
  }
};
