import { parsePair } from '../../domain/pricing/fx';
import { isPositiveRate } from '../../domain/rates/aggregate';
import {
  ECB_DAILY_URL,
  EcbFormatError,
  EcbPairError,
  ecbPairRate,
  parseEcbDaily,
} from '../../domain/rates/ecb';
import { type SimulatedFeed, SimulatedFeedError } from '../../domain/rates/simulated';
import type { RateQuote, RateSource } from '../../ports/rates';
import { SecretUnavailableError, type SecretValues } from '../../ports/secrets';
import {
  canonicalPair,
  DEFAULT_SOURCE_TIMEOUT_MS,
  DEFAULT_SYMBOL_TEMPLATE,
  ecbUrlOf,
  type RatePolicy,
  type SourceAuthPolicy,
} from '../../schemas/rate-policy';
import { createGuardedFetch, GuardedFetchError } from './guarded-http-client';

/**
 * Rate sources over HTTPS: GETs through the egress guard (`createGuardedFetch`: the SSRF checks of webhook
 * deliveries), `AbortSignal.timeout` over the request and the body, redirects not followed (a 3xx is an error
 * status), bodies read up to a limit; a provider credential named by the policy's `auth.secret_ref` is read
 * from the secret store per request and sent in a header or a query parameter. Plus the simulated feed for the
 * local stack. What a source answers is validated strictly: a malformed answer is a failure of the source
 * (`RateSourceError`, or the pair left out of the answer), never a rate. A credential's value never appears in
 * an error (nor in the error's cause).
 */

export type RateSourceFailure =
  | 'timeout'
  | 'network'
  /** The egress guard refused the destination (scheme, private or reserved address). */
  | 'egress_refused'
  /** The credential named by `auth.secret_ref` could not be read: nothing was sent. */
  | 'credential_unavailable'
  | 'http_status'
  | 'too_large'
  | 'malformed'
  | 'stale'
  | 'outage';

export class RateSourceError extends Error {
  constructor(
    readonly sourceId: string,
    readonly reason: RateSourceFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${sourceId}: ${message}`, options);
    this.name = 'RateSourceError';
  }
}

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** How a source presents its credential (the policy's `auth`): a header (with a prefix) or a query parameter. */
export type SourceCredential =
  | { readonly secretRef: string; readonly header: string; readonly prefix?: string }
  | { readonly secretRef: string; readonly queryParam: string };

interface HttpSourceOptions {
  readonly sourceId: string;
  readonly timeoutMs?: number;
  /** Default: the guarded GET under the strictest egress policy (https to public addresses only). */
  readonly fetch?: FetchLike;
  /** The provider credential to present with every request. */
  readonly credential?: SourceCredential;
  /** Where `credential.secretRef` is read; without it a source with a credential fails every fetch. */
  readonly secrets?: SecretValues;
}

/** The egress policy of AWS (https, public unicast addresses only): the default of every HTTP source. */
const STRICT_EGRESS = { allowHttp: false, allowedCidrs: [] } as const;
let strictFetch: FetchLike | undefined;
const defaultFetch = (): FetchLike => {
  strictFetch ??= createGuardedFetch({ policy: STRICT_EGRESS });
  return strictFetch;
};

/** The policy's `auth` as a source's credential. */
export const credentialOf = (auth: SourceAuthPolicy | undefined): SourceCredential | undefined => {
  if (!auth) return undefined;
  if (auth.header !== undefined)
    return {
      secretRef: auth.secret_ref,
      header: auth.header,
      ...(auth.prefix !== undefined ? { prefix: auth.prefix } : {}),
    };
  if (auth.query_param !== undefined) return { secretRef: auth.secret_ref, queryParam: auth.query_param };
  return undefined;
};

/** `url` with `name=value` appended to its query (the rest of the URL left exactly as it was). */
const withQueryParameter = (url: string, name: string, value: string): string => {
  const hash = url.indexOf('#');
  const [head, fragment] = hash === -1 ? [url, ''] : [url.slice(0, hash), url.slice(hash)];
  const separator = !head.includes('?') ? '?' : head.endsWith('?') || head.endsWith('&') ? '' : '&';
  return `${head}${separator}${encodeURIComponent(name)}=${encodeURIComponent(value)}${fragment}`;
};

/**
 * The credential's value, read within the source's time budget. Any failure (missing, unreadable, too slow,
 * no secret store) is `credential_unavailable`, naming only the reference.
 */
const credentialValue = async (
  options: HttpSourceOptions,
  credential: SourceCredential,
  signal: AbortSignal,
): Promise<string> => {
  const unavailable = (cause?: unknown) =>
    new RateSourceError(
      options.sourceId,
      'credential_unavailable',
      `credential ${credential.secretRef} unavailable`,
      // The secret stores' errors carry a reference and a fixed reason, never a value.
      cause === undefined ? undefined : { cause },
    );
  if (!options.secrets) throw unavailable();
  const secrets = options.secrets;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      secrets.value(credential.secretRef),
      new Promise<never>((_resolve, reject) => {
        onAbort = () => reject(new Error('no credential in time'));
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } catch (error) {
    throw unavailable(error instanceof SecretUnavailableError ? error : undefined);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
};

const ECB_MAX_BYTES = 256 * 1024;
const JSON_MAX_BYTES = 1024 * 1024;
const TICKER_MAX_BYTES = 64 * 1024;
/** The ECB publishes on TARGET working days; a longer gap (Easter is four days) means the file is stuck. */
export const ECB_MAX_DOCUMENT_AGE_DAYS = 5;

/** GET with a timeout over the whole exchange, the body read up to `maxBytes` and decoded as strict UTF-8. */
const getText = async (
  options: HttpSourceOptions,
  url: string,
  accept: string,
  maxBytes: number,
): Promise<string> => {
  const { sourceId, credential } = options;
  const fetchImpl: FetchLike = options.fetch ?? defaultFetch();
  const signal = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_SOURCE_TIMEOUT_MS);
  const fail = (error: unknown): never => {
    if (error instanceof RateSourceError) throw error;
    // With a credential on the request, only the guard's own errors (fixed texts) are kept as the cause: another
    // fetch's error could quote the URL, query parameter included.
    const cause =
      credential === undefined || error instanceof GuardedFetchError ? { cause: error } : undefined;
    const name = (error as Error | undefined)?.name;
    if (name === 'TimeoutError' || name === 'AbortError' || signal.aborted)
      throw new RateSourceError(sourceId, 'timeout', 'no complete answer in time', cause);
    if (
      error instanceof GuardedFetchError &&
      (error.kind === 'address_not_allowed' || error.kind === 'scheme_not_allowed')
    )
      throw new RateSourceError(
        sourceId,
        'egress_refused',
        'destination refused by the egress policy',
        cause,
      );
    throw new RateSourceError(sourceId, 'network', 'request failed', cause);
  };
  try {
    const headers: Record<string, string> = { accept };
    let target = url;
    if (credential) {
      const value = await credentialValue(options, credential, signal);
      if ('header' in credential) headers[credential.header] = `${credential.prefix ?? ''}${value}`;
      else target = withQueryParameter(url, credential.queryParam, value);
    }
    const response = await fetchImpl(target, { method: 'GET', headers, redirect: 'manual', signal });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new RateSourceError(sourceId, 'http_status', `answered ${response.status}`);
    }
    const declared = Number(response.headers.get('content-length') ?? Number.NaN);
    if (declared > maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw new RateSourceError(sourceId, 'too_large', `declares ${declared} bytes`);
    }
    const chunks: Uint8Array[] = [];
    let total = 0;
    if (response.body) {
      const reader = response.body.getReader();
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        total += chunk.value.byteLength;
        if (total > maxBytes) {
          await reader.cancel().catch(() => undefined);
          throw new RateSourceError(sourceId, 'too_large', `answer above ${maxBytes} bytes`);
        }
        chunks.push(chunk.value);
      }
    }
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
    } catch (error) {
      throw new RateSourceError(sourceId, 'malformed', 'answer is not UTF-8', { cause: error });
    }
  } catch (error) {
    return fail(error);
  }
};

/** A JSON number kept as its exact source text (never through a binary float). */
class JsonNumber {
  constructor(readonly text: string) {}
}

/**
 * `JSON.parse` keeping numbers as their source text (JSON.parse source text access, Node ≥ 21): a rate
 * written as a JSON number is read exactly as written.
 */
export const parseJsonExact = (text: string): unknown =>
  JSON.parse(text, (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined ? new JsonNumber(context.source) : value,
  );

/** RFC 6901: the value at `pointer`, or undefined when a step is missing. */
export const resolvePointer = (document: unknown, pointer: string): unknown => {
  if (pointer === '') return document;
  if (!pointer.startsWith('/')) return undefined;
  let node: unknown = document;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      if (!/^(0|[1-9]\d*)$/.test(token)) return undefined;
      node = node[Number(token)];
    } else if (node !== null && typeof node === 'object' && !(node instanceof JsonNumber)) {
      node = Object.hasOwn(node, token) ? (node as Record<string, unknown>)[token] : undefined;
    } else return undefined;
    if (node === undefined) return undefined;
  }
  return node;
};

/** A rate from a JSON value: a decimal string, or a JSON number in plain decimal notation; else undefined. */
export const rateOfJson = (value: unknown): string | undefined => {
  const text = value instanceof JsonNumber ? value.text : value;
  return isPositiveRate(text) ? text : undefined;
};

const fill = (template: string, values: Readonly<Record<string, string>>): string =>
  template.replace(/\{(base|quote|symbol)\}/g, (_match, name: string) => values[name] ?? '');

const currenciesOf = (pair: string): { base: string; quote: string } => {
  const [base, quote] = parsePair(pair);
  return { base, quote };
};

const parseJsonAnswer = (sourceId: string, text: string): unknown => {
  try {
    return parseJsonExact(text);
  } catch (error) {
    throw new RateSourceError(sourceId, 'malformed', 'answer is not JSON', { cause: error });
  }
};

/**
 * Runs one request per key, all at once; a key whose request failed is left out. When every request failed,
 * the first failure is thrown, so the caller learns why.
 */
const perRequest = async <T>(
  keys: readonly string[],
  run: (key: string) => Promise<T>,
): Promise<Map<string, T>> => {
  const settled = await Promise.allSettled(keys.map(run));
  const results = new Map<string, T>();
  let firstError: unknown;
  settled.forEach((outcome, index) => {
    if (outcome.status === 'fulfilled') results.set(keys[index] as string, outcome.value);
    else firstError ??= outcome.reason;
  });
  if (results.size === 0 && keys.length > 0) throw firstError;
  return results;
};

/** The ECB's daily euro reference rates; any pair of its currencies, through the euro. */
export class EcbRateSource implements RateSource {
  readonly sourceId: string;

  constructor(
    private readonly options: HttpSourceOptions & {
      readonly url?: string;
      /** Decimals of each pair's quote (the pair's precision): derived rates are rounded once, half-even. */
      readonly precisionOf: (pair: string) => number;
    },
  ) {
    this.sourceId = options.sourceId;
  }

  async fetch(pairs: readonly string[], at: Date): Promise<RateQuote[]> {
    const text = await getText(
      this.options,
      this.options.url ?? ECB_DAILY_URL,
      'application/xml, text/xml',
      ECB_MAX_BYTES,
    );
    let day: ReturnType<typeof parseEcbDaily>;
    try {
      day = parseEcbDaily(text);
    } catch (error) {
      if (error instanceof EcbFormatError)
        throw new RateSourceError(this.sourceId, 'malformed', error.message, { cause: error });
      throw error;
    }
    const ageDays = (Date.parse(at.toISOString().slice(0, 10)) - Date.parse(day.date)) / 86_400_000;
    if (ageDays > ECB_MAX_DOCUMENT_AGE_DAYS)
      throw new RateSourceError(this.sourceId, 'stale', `reference rates of ${day.date}`);
    if (ageDays < -1)
      throw new RateSourceError(this.sourceId, 'malformed', `reference rates dated ${day.date}`);
    const quotes: RateQuote[] = [];
    for (const pair of pairs) {
      try {
        quotes.push({
          pair: canonicalPair(pair),
          rate: ecbPairRate(day, pair, this.options.precisionOf(canonicalPair(pair))),
          source: this.sourceId,
          observed_at: at.toISOString(),
        });
      } catch (error) {
        if (!(error instanceof EcbPairError)) throw error;
      }
    }
    return quotes;
  }
}

/**
 * A generic JSON provider: `url` and `pointer` name `{base}` and `{quote}`; each distinct URL is fetched once
 * per call and the rate read at the pointer (`https://…/latest?base={base}` with `/rates/{quote}`). The value
 * must be a positive decimal string or a JSON number in plain decimal notation.
 */
export class JsonRateSource implements RateSource {
  readonly sourceId: string;

  constructor(
    private readonly options: HttpSourceOptions & { readonly url: string; readonly pointer: string },
  ) {
    this.sourceId = options.sourceId;
  }

  async fetch(pairs: readonly string[], at: Date): Promise<RateQuote[]> {
    const urls = new Map(pairs.map((pair) => [pair, fill(this.options.url, currenciesOf(pair))]));
    const documents = await perRequest([...new Set(urls.values())], async (url) =>
      parseJsonAnswer(this.sourceId, await getText(this.options, url, 'application/json', JSON_MAX_BYTES)),
    );
    const quotes: RateQuote[] = [];
    for (const pair of pairs) {
      const document = documents.get(urls.get(pair) as string);
      if (document === undefined) continue;
      const rate = rateOfJson(resolvePointer(document, fill(this.options.pointer, currenciesOf(pair))));
      if (rate !== undefined)
        quotes.push({
          pair: canonicalPair(pair),
          rate,
          source: this.sourceId,
          observed_at: at.toISOString(),
        });
    }
    return quotes;
  }
}

/** Ticker answers may be this far ahead of our clock (skew) before they count as malformed. */
const TICKER_CLOCK_SKEW_MS = 60_000;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A crypto ticker: one GET per pair of `url` with `{symbol}` (the pair through `symbolTemplate`, default
 * `{base}-{quote}`). Accepted answers (other fields are ignored):
 * - `{ "price": "<decimal>", "time"?: "<ISO 8601>" }` — an exchange ticker (Coinbase Exchange
 *   `/products/{symbol}/ticker`); `time` becomes `observed_at`;
 * - `{ "data": { "amount": "<decimal>", "base"?: "<code>", "currency"?: "<code>" } }` — a spot price
 *   (Coinbase `/v2/prices/{symbol}/spot`); `base` and `currency`, when present, must be the pair's.
 * The price may also be a JSON number in plain decimal notation. Anything else leaves the pair out.
 */
export class CryptoTickerRateSource implements RateSource {
  readonly sourceId: string;

  constructor(
    private readonly options: HttpSourceOptions & { readonly url: string; readonly symbolTemplate?: string },
  ) {
    this.sourceId = options.sourceId;
  }

  /** The quote in one ticker answer, or a `RateSourceError` (`malformed`). */
  quoteOf(pair: string, answer: unknown, at: Date): RateQuote {
    const malformed = (what: string) => new RateSourceError(this.sourceId, 'malformed', `${pair}: ${what}`);
    if (answer === null || typeof answer !== 'object' || Array.isArray(answer))
      throw malformed('not an object');
    const { base, quote } = currenciesOf(pair);
    const fields = answer as Record<string, unknown>;
    let rate: string | undefined;
    let observedAt = at.toISOString();
    if ('price' in fields) {
      rate = rateOfJson(fields.price);
      if (fields.time !== undefined) {
        const time =
          typeof fields.time === 'string' && ISO_TIME.test(fields.time)
            ? Date.parse(fields.time)
            : Number.NaN;
        if (Number.isNaN(time)) throw malformed('time is not an ISO 8601 time');
        if (time > at.getTime() + TICKER_CLOCK_SKEW_MS) throw malformed('time is in the future');
        observedAt = new Date(time).toISOString();
      }
    } else if (fields.data !== null && typeof fields.data === 'object' && !Array.isArray(fields.data)) {
      const data = fields.data as Record<string, unknown>;
      if (
        (data.base !== undefined && data.base !== base) ||
        (data.currency !== undefined && data.currency !== quote)
      )
        throw malformed(`answer is for ${String(data.base)}-${String(data.currency)}`);
      rate = rateOfJson(data.amount);
    } else throw malformed('neither price nor data.amount');
    if (rate === undefined) throw malformed('the price is not a positive decimal');
    return { pair: canonicalPair(pair), rate, source: this.sourceId, observed_at: observedAt };
  }

  async fetch(pairs: readonly string[], at: Date): Promise<RateQuote[]> {
    const template = this.options.symbolTemplate ?? DEFAULT_SYMBOL_TEMPLATE;
    const answers = await perRequest(pairs, async (pair) => {
      const symbol = fill(template, currenciesOf(pair));
      const url = fill(this.options.url, { symbol: encodeURIComponent(symbol) });
      const answer = parseJsonAnswer(
        this.sourceId,
        await getText(this.options, url, 'application/json', TICKER_MAX_BYTES),
      );
      return this.quoteOf(pair, answer, at);
    });
    return [...answers.values()];
  }
}

/** The simulated feed (local stack, demos): an outage of every pair asked fails the fetch; of one pair, omits it. */
export class SimulatedRateSource implements RateSource {
  constructor(
    readonly sourceId: string,
    private readonly feed: SimulatedFeed,
  ) {}

  async fetch(pairs: readonly string[], at: Date): Promise<RateQuote[]> {
    const quotes: RateQuote[] = [];
    let outages = 0;
    for (const pair of pairs) {
      try {
        quotes.push({
          pair: canonicalPair(pair),
          rate: this.feed.quote(pair, at),
          source: this.sourceId,
          observed_at: at.toISOString(),
        });
      } catch (error) {
        if (!(error instanceof SimulatedFeedError)) throw error;
        if (error.reason === 'outage') outages += 1;
      }
    }
    if (pairs.length > 0 && outages === pairs.length)
      throw new RateSourceError(this.sourceId, 'outage', 'simulated outage');
    return quotes;
  }
}

export interface RateSourcesOptions {
  /** Default: the guarded GET under the strictest egress policy (https to public addresses only). */
  readonly fetch?: FetchLike;
  /** Where sources with `auth` read their credential (`auth.secret_ref`). */
  readonly secrets?: SecretValues;
  /** The feed behind every `simulated` source (required when the policy has one). */
  readonly simulatedFeed?: SimulatedFeed;
}

/** The sources of a rate policy by `source_id`. */
export const rateSourcesFor = (
  policy: RatePolicy,
  options: RateSourcesOptions = {},
): Map<string, RateSource> => {
  const precision = new Map(policy.pairs.map((pair) => [canonicalPair(pair.pair), pair.precision]));
  const sources = new Map<string, RateSource>();
  for (const source of policy.sources) {
    const credential = source.kind === 'simulated' ? undefined : credentialOf(source.auth);
    const http: HttpSourceOptions = {
      sourceId: source.source_id,
      timeoutMs: source.timeout_ms ?? DEFAULT_SOURCE_TIMEOUT_MS,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(credential ? { credential } : {}),
      ...(credential && options.secrets ? { secrets: options.secrets } : {}),
    };
    switch (source.kind) {
      case 'ecb':
        sources.set(
          source.source_id,
          new EcbRateSource({
            ...http,
            url: ecbUrlOf(source),
            precisionOf: (pair) => precision.get(pair) ?? 12,
          }),
        );
        break;
      case 'json':
        sources.set(
          source.source_id,
          new JsonRateSource({ ...http, url: source.url, pointer: source.rate_pointer }),
        );
        break;
      case 'crypto_ticker':
        sources.set(
          source.source_id,
          new CryptoTickerRateSource({
            ...http,
            url: source.url,
            ...(source.symbol_template ? { symbolTemplate: source.symbol_template } : {}),
          }),
        );
        break;
      case 'simulated':
        if (!options.simulatedFeed)
          throw new Error(`source ${source.source_id} is simulated, but no simulated feed was given`);
        sources.set(source.source_id, new SimulatedRateSource(source.source_id, options.simulatedFeed));
        break;
    }
  }
  return sources;
};
