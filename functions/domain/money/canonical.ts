/**
 * RFC 8785 JSON Canonicalization Scheme for the plain data the domain produces: object keys sorted by UTF-16
 * code units, no whitespace, strings escaped as JSON.stringify does (which RFC 8785 adopts), numbers in the
 * ECMAScript shortest form. Money is never a JSON number here (C1), so the number rule only meets integers.
 */
export type Json =
  | null
  | boolean
  | number
  | string
  | readonly Json[]
  | { readonly [key: string]: Json | undefined };

export class CanonicalizationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CanonicalizationError';
  }
}

export const canonicalJson = (value: Json): string => {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new CanonicalizationError('non-finite numbers have no JSON form');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((item: Json) => canonicalJson(item)).join(',')}]`;
  const record = value as { readonly [key: string]: Json | undefined };
  const keys = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key] as Json)}`).join(',')}}`;
};
