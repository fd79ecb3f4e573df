/**
 * The guard behind C11 "payloads never carry card numbers or personal data": finds card numbers and e-mail
 * addresses anywhere in a JSON value, so publishing can refuse the event (422 `personal_data_not_allowed`).
 * It is a safety net for honest mistakes, not a data-loss-prevention engine; the rules below trade a few
 * contrived misses for no false alarms on the identifiers, hashes, timestamps and amounts events do carry.
 *
 * Card number: a run of 13–19 ASCII digits that passes the Luhn check. The digits may be written in groups
 * separated by single spaces or single dashes (`4111 1111 1111 1111`, `3782-822463-10005`), one kind of
 * separator per number, every group but the last at least 4 digits long (so dates such as `2026-11-01` and
 * phone-style `415-555-2671` groupings never join into one). A run longer than 19 digits is not cut into pieces
 * (`41111111111111111111` is not a card). A group glued to a letter or `_` (`evt_4111…`, `…4111abc`, hex
 * digests, ULIDs), or to a decimal point or comma followed or preceded by a digit, is not a card digit: so a
 * decimal money string such as `"1234567890123.45"` is an amount, never a card, whatever its Luhn sum.
 *
 * E-mail: `local@domain` anywhere inside a string, where the local part is made of letters, digits and
 * ``.!#$%&'*+=?^_`{|}~-`` (not `/`), and the domain has at least two dot-separated labels ending in an
 * alphabetic top-level label of at least 2 letters (or an `xn--` label). A "domain" ending in a file extension
 * that is no top-level domain (`logo@2x.png`, `report@v2.pdf`) is a file name, not an address.
 *
 * Object member names are checked too. A member name that holds personal data is written `[*]` in every
 * reported path, so the report itself never repeats the data.
 */

export type PersonalDataKind = 'card_number' | 'email';

export interface PersonalDataFinding {
  path: string;
  kind: PersonalDataKind;
}

const CARD_MIN_DIGITS = 13;
const CARD_MAX_DIGITS = 19;
/** Groups before the last one must have at least this many digits. */
const CARD_MIN_INNER_GROUP_DIGITS = 4;

/** Digit groups joined by single spaces or dashes; always starts and ends with a digit. */
const DIGIT_RUN = /\d+(?:[ -]\d+)*/g;
const GROUP_SEPARATOR = /[ -]/;
const WORD_CHAR = /[\p{L}_]/u;
const DIGIT = /\d/;
const DECIMAL_MARK = /[.,]/;

const luhnValid = (digits: string): boolean => {
  let sum = 0;
  for (let index = 0; index < digits.length; index += 1) {
    let digit = digits.charCodeAt(digits.length - 1 - index) - 48;
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
};

/** Whether the group on this edge of a run is glued to a word or is part of a decimal or grouped number. */
const glued = (next: string | undefined, afterNext: string | undefined): boolean =>
  next !== undefined &&
  (WORD_CHAR.test(next) || (DECIMAL_MARK.test(next) && afterNext !== undefined && DIGIT.test(afterNext)));

const runHasCard = (text: string, run: string, at: number): boolean => {
  const groups = run.split(GROUP_SEPARATOR);
  const separators = run.match(/[ -]/g) ?? [];
  const firstAllowed = !glued(text[at - 1], text[at - 2]);
  const lastAllowed = !glued(text[at + run.length], text[at + run.length + 1]);
  for (let start = firstAllowed ? 0 : 1; start < groups.length; start += 1) {
    let digits = '';
    for (let end = start; end < groups.length; end += 1) {
      if (end === groups.length - 1 && !lastAllowed) break;
      if (end > start) {
        if ((groups[end - 1] as string).length < CARD_MIN_INNER_GROUP_DIGITS) break;
        if (separators[end - 1] !== separators[start]) break;
      }
      digits += groups[end] as string;
      if (digits.length > CARD_MAX_DIGITS) break;
      if (digits.length >= CARD_MIN_DIGITS && luhnValid(digits)) return true;
    }
  }
  return false;
};

const hasCardNumber = (text: string): boolean => {
  for (const match of text.matchAll(DIGIT_RUN)) {
    if (runHasCard(text, match[0], match.index)) return true;
  }
  return false;
};

const LOCAL_CHAR = /[\p{L}\p{N}.!#$%&'*+=?^_`{|}~-]/u;
const DOMAIN_CHAR = /[\p{L}\p{N}.-]/u;
const LOCAL_MAX_CHARS = 64;
const DOMAIN_MAX_CHARS = 253;
const DOMAIN =
  /^(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)+(?:\p{L}{2,63}|xn--[a-z0-9-]{1,59})$/iu;

/** File extensions that are not top-level domains: `name@2x.png` is an image, not an address. */
const FILE_EXTENSIONS: ReadonlySet<string> = new Set([
  'avif',
  'bmp',
  'css',
  'csv',
  'gif',
  'htm',
  'html',
  'ico',
  'jpeg',
  'jpg',
  'js',
  'json',
  'mp3',
  'mp4',
  'pdf',
  'png',
  'svg',
  'tif',
  'tiff',
  'txt',
  'webm',
  'webp',
  'woff',
  'woff2',
  'xml',
  'yaml',
  'yml',
]);

/**
 * Looks around every `@` instead of running one big pattern over the text: each check reads at most 64
 * characters to the left and 253 to the right, so a long hostile string costs linear time.
 */
const hasEmail = (text: string): boolean => {
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let from = at;
    while (from > 0 && at - from < LOCAL_MAX_CHARS && LOCAL_CHAR.test(text[from - 1] as string)) from -= 1;
    const local = text.slice(from, at).replace(/^\.+/, '');
    if (local.length === 0) continue;
    let to = at + 1;
    while (to < text.length && to - at <= DOMAIN_MAX_CHARS && DOMAIN_CHAR.test(text[to] as string)) to += 1;
    // Drop trailing dots and dashes (a sentence's full stop) by hand: `/[.-]+$/` would backtrack quadratically.
    while (to > at + 1 && (text[to - 1] === '.' || text[to - 1] === '-')) to -= 1;
    const domain = text.slice(at + 1, to);
    if (!DOMAIN.test(domain)) continue;
    const topLevel = domain.slice(domain.lastIndexOf('.') + 1).toLowerCase();
    if (!FILE_EXTENSIONS.has(topLevel)) return true;
  }
  return false;
};

const kindsIn = (text: string): PersonalDataKind[] => {
  const kinds: PersonalDataKind[] = [];
  if (hasCardNumber(text)) kinds.push('card_number');
  if (hasEmail(text)) kinds.push('email');
  return kinds;
};

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const memberPath = (parent: string, key: string): string =>
  IDENTIFIER.test(key)
    ? `${parent}.${key}`
    : `${parent}['${key.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`;

/** The text a scalar is checked as: strings as they are, integers and finite numbers in JavaScript's form. */
const scalarText = (value: unknown): string | undefined => {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === 'bigint') return value.toString();
  return undefined;
};

/**
 * Walks any JSON value (objects, arrays, strings, numbers) and reports every string/number that contains a
 * Luhn-valid run of 13–19 digits (spaces or dashes allowed between digit groups) or an e-mail address, with
 * its JSON path like `$.data.customer.email` (`$.items[0]`, `$['odd key']`). A value holding both kinds is
 * reported twice, card first; findings come in document order. Never throws: the walk is iterative (no stack
 * overflow on deep nesting) and visits each object once (no loop on cyclic input).
 */
export const findPersonalData = (value: unknown, path = '$'): PersonalDataFinding[] => {
  const findings: PersonalDataFinding[] = [];
  const seen = new WeakSet<object>();
  const pending: { value: unknown; path: string }[] = [{ value, path }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const current = next.value;
    const text = scalarText(current);
    if (text !== undefined) {
      for (const kind of kindsIn(text)) findings.push({ path: next.path, kind });
      continue;
    }
    if (typeof current !== 'object' || current === null || seen.has(current)) continue;
    seen.add(current);
    const children: { value: unknown; path: string }[] = [];
    if (Array.isArray(current)) {
      current.forEach((item: unknown, index) => {
        children.push({ value: item, path: `${next.path}[${index}]` });
      });
    } else {
      for (const [key, member] of Object.entries(current)) {
        const keyKinds = kindsIn(key);
        const childPath = keyKinds.length > 0 ? `${next.path}[*]` : memberPath(next.path, key);
        for (const kind of keyKinds) findings.push({ path: childPath, kind });
        children.push({ value: member, path: childPath });
      }
    }
    for (let index = children.length - 1; index >= 0; index -= 1) pending.push(children[index]!);
  }
  return findings;
};
