/**
 * A catalog document's `rate_policy`: where FX rates come from and how they are published without a person
 * (C23: automatic ticks publish only inside an approved rate policy — sources, per-tick cap, breaker).
 * Objects are strict; rates are decimal strings (C1). Cross-field rules (pair sources exist, no duplicate
 * pairs, a median has three sources, ECB sources only for ECB currencies…) are refinements with the offending
 * path.
 */
import * as z from 'zod';
import { ECB_CURRENCIES, ECB_DAILY_URL } from '../domain/rates/ecb';
import { canonicalPair } from '../domain/rates/pairs';
import { isSecretRef, SECRET_REF_PATTERN } from '../ports/secrets';

export const DEFAULT_SOURCE_TIMEOUT_MS = 5000;
export const DEFAULT_SYMBOL_TEMPLATE = '{base}-{quote}';
/** `interval_seconds` of a daily (stable) pair; volatile pairs tick every 60–900 s (spec "Limits"). */
export const DAILY_INTERVAL_SECONDS = 86_400;
export const MIN_VOLATILE_INTERVAL_SECONDS = 60;
export const MAX_VOLATILE_INTERVAL_SECONDS = 900;
export const MIN_MEDIAN_SOURCE_COUNT = 3;

const sourceId = z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'letters, digits and _ . : - (1–64)');
const pairCode = z.string().regex(/^[A-Z]{3,5}(→|->)[A-Z]{3,5}$/, 'a pair such as "EUR→USD"');

/** The rate domain's pair spelling rule, for the schema's users. */
export { canonicalPair };

const PLACEHOLDER = /\{([^{}]*)\}/g;
const placeholdersOf = (text: string): string[] =>
  [...text.matchAll(PLACEHOLDER)].map((match) => match[1] ?? '');

/**
 * Query parameter names that carry credentials (compared lower-case, without `-`, `_` and `.`): a name
 * containing one of these words, or one of the exact names. A heuristic against the common spellings
 * (`access_key`, `api_key`, `apikey`, `app_id`, `token`, `client_secret`, `password`, `auth`, `sig`, …).
 */
const CREDENTIAL_PARAMETER_WORDS = [
  'key',
  'token',
  'secret',
  'passw',
  'pwd',
  'auth',
  'credential',
  'signature',
  'session',
  'bearer',
  'jwt',
];
const CREDENTIAL_PARAMETER_NAMES = new Set(['sig', 'pass', 'appid']);

/** Whether a query parameter name looks like it carries a credential. */
export const isCredentialParameter = (name: string): boolean => {
  const normalised = name.toLowerCase().replace(/[-_.]/g, '');
  return (
    CREDENTIAL_PARAMETER_NAMES.has(normalised) ||
    CREDENTIAL_PARAMETER_WORDS.some((word) => normalised.includes(word))
  );
};

/** The query parameter names of a URL template (placeholders filled with a letter), or [] if it is no URL. */
const queryParametersOf = (template: string): string[] => {
  try {
    return [...new URL(template.replace(PLACEHOLDER, 'X')).searchParams.keys()];
  } catch {
    return [];
  }
};

/**
 * An https URL without credentials or fragment; `{name}` placeholders (of `allowed`) are filled in later. A
 * query parameter that looks like a credential is refused: the policy is catalog data (change-request diffs,
 * signed releases, the audit journal, snapshots), so a credential is named by `auth.secret_ref` instead.
 */
const httpsUrl = (allowed: readonly string[]) =>
  z
    .string()
    .max(2048)
    .superRefine((value, ctx) => {
      const unknown = placeholdersOf(value).filter((name) => !allowed.includes(name));
      if (unknown.length > 0 || /[{}]/.test(value.replace(PLACEHOLDER, '')))
        ctx.addIssue({
          code: 'custom',
          message: `placeholders allowed here: ${allowed.map((name) => `{${name}}`).join(', ') || 'none'}`,
        });
      let url: URL;
      try {
        url = new URL(value.replace(PLACEHOLDER, 'X'));
      } catch {
        ctx.addIssue({ code: 'custom', message: 'not a URL' });
        return;
      }
      if (url.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: 'must be an https URL' });
      if (url.username || url.password || url.hash)
        ctx.addIssue({ code: 'custom', message: 'must not carry credentials or a fragment' });
      for (const name of new Set(url.searchParams.keys()))
        if (isCredentialParameter(name))
          ctx.addIssue({
            code: 'custom',
            message:
              `query parameter "${name}" looks like a credential, and the rate policy is catalog data ` +
              '(change requests, releases, the journal): remove it and name the secret instead, ' +
              `auth: { "query_param": "${name}", "secret_ref": "<name of the secret>" }`,
          });
    });

/** HTTP header names (RFC 9110 tokens). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** Headers the client owns or that would change what is asked (framing, hop-by-hop, routing, content). */
const RESERVED_HEADERS = new Set([
  'accept',
  'accept-encoding',
  'connection',
  'content-encoding',
  'content-length',
  'content-type',
  'expect',
  'forwarded',
  'host',
  'keep-alive',
  'origin',
  'range',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'via',
]);
const RESERVED_HEADER_PREFIXES = ['proxy-', 'sec-', 'if-', 'x-forwarded-', 'x-real-ip'];

/** Whether a credential may travel in this header (a valid name the client does not own). */
export const isAllowedAuthHeader = (name: string): boolean => {
  const lower = name.toLowerCase();
  return (
    HEADER_NAME.test(name) &&
    !RESERVED_HEADERS.has(lower) &&
    !RESERVED_HEADER_PREFIXES.some((prefix) => lower.startsWith(prefix))
  );
};

export const secretRefSchema = z
  .string()
  .regex(SECRET_REF_PATTERN, 'a secret name: 1–128 of A–Z a–z 0–9 / _ + = . @ -')
  .refine(isSecretRef, 'a secret name without empty, "." or ".." segments (nor a leading or trailing /)');

/**
 * How a source presents its provider credential: in a header (`header`, with an optional `prefix` such as
 * `"Bearer "`) or a query parameter (`query_param`), the value read from the secret store by `secret_ref`
 * (Secrets Manager `<FX_SECRETS_PREFIX><ref>` in AWS, `<DATA_DIR>/secrets/<ref>` locally). The policy holds
 * only the reference.
 */
export const sourceAuthSchema = z
  .strictObject({
    header: z
      .string()
      .regex(HEADER_NAME, 'an HTTP header name: 1–64 token characters')
      .refine(
        isAllowedAuthHeader,
        'not a header the client owns (Host, Content-Length, Accept, Connection, Transfer-Encoding, Proxy-*, …)',
      )
      .optional(),
    /** Written before the value in the header, e.g. `"Bearer "`. */
    prefix: z
      .string()
      .regex(
        /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32} ?$/,
        'a scheme word such as "Bearer " (1–32 token characters, then at most one space)',
      )
      .optional(),
    query_param: z
      .string()
      .regex(/^[A-Za-z0-9_.~-]{1,64}$/, 'a query parameter name: 1–64 of A–Z a–z 0–9 _ . ~ -')
      .optional(),
    secret_ref: secretRefSchema,
  })
  .superRefine((auth, ctx) => {
    if ((auth.header === undefined) === (auth.query_param === undefined))
      ctx.addIssue({ code: 'custom', message: 'exactly one of header and query_param' });
    if (auth.prefix !== undefined && auth.header === undefined)
      ctx.addIssue({ code: 'custom', path: ['prefix'], message: 'only with header' });
  });

export type SourceAuthPolicy = z.infer<typeof sourceAuthSchema>;

/** A `query_param` credential must not also be written in the URL. */
const authAgreesWithUrl = (
  source: { readonly url?: string | undefined; readonly auth?: SourceAuthPolicy | undefined },
  ctx: z.RefinementCtx,
): void => {
  const param = source.auth?.query_param;
  if (param !== undefined && source.url !== undefined && queryParametersOf(source.url).includes(param))
    ctx.addIssue({
      code: 'custom',
      path: ['auth', 'query_param'],
      message: `the url already has a query parameter "${param}"`,
    });
};

/** RFC 6901: empty (the whole document) or `/`-separated tokens, `~` only as `~0` or `~1`. */
const jsonPointer = z
  .string()
  .max(512)
  .regex(/^(\/([^~]|~[01])*)*$/, 'an RFC 6901 JSON pointer such as "/rates/{quote}"')
  .refine(
    (value) => placeholdersOf(value).every((name) => name === 'base' || name === 'quote'),
    'placeholders allowed here: {base}, {quote}',
  );

const timeoutMs = z.number().int().min(100).max(30_000);

export const rateSourceSchema = z.discriminatedUnion('kind', [
  z
    .strictObject({
      source_id: sourceId,
      kind: z.literal('ecb'),
      /** Default: the ECB's daily reference rates, `ECB_DAILY_URL` (a mirror behind a credential: `auth`). */
      url: httpsUrl([]).optional(),
      auth: sourceAuthSchema.optional(),
      timeout_ms: timeoutMs.optional(),
    })
    .superRefine(authAgreesWithUrl),
  z
    .strictObject({
      source_id: sourceId,
      kind: z.literal('json'),
      /** May name `{base}` and `{quote}`: one GET per distinct URL. */
      url: httpsUrl(['base', 'quote']),
      rate_pointer: jsonPointer,
      auth: sourceAuthSchema.optional(),
      timeout_ms: timeoutMs.optional(),
    })
    .superRefine((source, ctx) => {
      authAgreesWithUrl(source, ctx);
      // A document that does not depend on the pair's base (or quote) would give every pair the same rate.
      const named = `${source.url} ${source.rate_pointer}`;
      for (const placeholder of ['{base}', '{quote}'])
        if (!named.includes(placeholder))
          ctx.addIssue({
            code: 'custom',
            path: ['rate_pointer'],
            message: `url or rate_pointer must name ${placeholder}, so each pair reads its own rate`,
          });
    }),
  z
    .strictObject({
      source_id: sourceId,
      kind: z.literal('crypto_ticker'),
      /** Names `{symbol}`: one GET per pair. */
      url: httpsUrl(['symbol']).refine((value) => value.includes('{symbol}'), 'must contain {symbol}'),
      /** Default `{base}-{quote}` (`BTC-EUR`). */
      symbol_template: z
        .string()
        .max(64)
        .regex(/^([A-Za-z0-9_.:-]|\{base\}|\{quote\})+$/, 'letters, digits, _ . : - and {base}, {quote}')
        .refine(
          (value) => value.includes('{base}') && value.includes('{quote}'),
          'must contain {base} and {quote}',
        )
        .optional(),
      auth: sourceAuthSchema.optional(),
      timeout_ms: timeoutMs.optional(),
    })
    .superRefine(authAgreesWithUrl),
  z.strictObject({
    source_id: sourceId,
    kind: z.literal('simulated'),
    timeout_ms: timeoutMs.optional(),
  }),
]);

const seconds = (min: number, max: number) => z.number().int().min(min).max(max);

export const ratePairPolicySchema = z
  .strictObject({
    pair: pairCode,
    /** Source ids in fallback order (`median`: all of them, at least three). */
    sources: z.array(sourceId).min(1).max(10),
    method: z.enum(['provider', 'median', 'twap']),
    interval_seconds: z
      .number()
      .int()
      .refine(
        (value) =>
          value === DAILY_INTERVAL_SECONDS ||
          (value >= MIN_VOLATILE_INTERVAL_SECONDS && value <= MAX_VOLATILE_INTERVAL_SECONDS),
        `60 to 900 for a volatile pair, or ${DAILY_INTERVAL_SECONDS} for a daily one`,
      ),
    publication_delay_seconds: seconds(0, 3600),
    max_tick_move_bps: z.number().int().min(1).max(10_000),
    twap_window_seconds: seconds(60, 86_400).optional(),
    precision: z.number().int().min(0).max(12),
    stale_after_seconds: seconds(1, 30 * 86_400),
    max_age_seconds: seconds(1, 30 * 86_400),
  })
  .superRefine((pair, ctx) => {
    const [from, to] = canonicalPair(pair.pair).split('→');
    if (from === to) ctx.addIssue({ code: 'custom', path: ['pair'], message: 'a pair of two currencies' });
    const seen = new Map<string, number>();
    pair.sources.forEach((source, index) => {
      const first = seen.get(source);
      if (first !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['sources', index],
          message: `source ${source} listed twice (also at [${first}])`,
        });
      else seen.set(source, index);
    });
    if (pair.method === 'median' && seen.size < MIN_MEDIAN_SOURCE_COUNT)
      ctx.addIssue({
        code: 'custom',
        path: ['sources'],
        message: `a median needs at least ${MIN_MEDIAN_SOURCE_COUNT} distinct sources`,
      });
    if (pair.method === 'twap' && pair.twap_window_seconds === undefined)
      ctx.addIssue({ code: 'custom', path: ['twap_window_seconds'], message: 'required for method twap' });
    if (pair.method !== 'twap' && pair.twap_window_seconds !== undefined)
      ctx.addIssue({ code: 'custom', path: ['twap_window_seconds'], message: 'only for method twap' });
    if (pair.twap_window_seconds !== undefined && pair.twap_window_seconds < pair.interval_seconds)
      ctx.addIssue({
        code: 'custom',
        path: ['twap_window_seconds'],
        message: 'must be at least interval_seconds (a window of one tick is no average)',
      });
    if (pair.stale_after_seconds < pair.interval_seconds)
      ctx.addIssue({
        code: 'custom',
        path: ['stale_after_seconds'],
        message: 'must be at least interval_seconds (else every rate goes stale before the next tick)',
      });
    if (pair.max_age_seconds <= pair.stale_after_seconds)
      ctx.addIssue({
        code: 'custom',
        path: ['max_age_seconds'],
        message: 'must be above stale_after_seconds',
      });
  });

export const breakerPolicySchema = z.strictObject({
  failure_threshold: z.number().int().min(1).max(100),
  window_seconds: seconds(1, 7 * 86_400),
  open_seconds: seconds(1, 7 * 86_400),
});

export const ratePolicySchema = z
  .strictObject({
    sources: z.array(rateSourceSchema).min(1).max(50),
    pairs: z.array(ratePairPolicySchema).min(1).max(500),
    breaker: breakerPolicySchema,
  })
  .superRefine((policy, ctx) => {
    const sources = new Map<string, { kind: string; index: number }>();
    policy.sources.forEach((source, index) => {
      const first = sources.get(source.source_id);
      if (first)
        ctx.addIssue({
          code: 'custom',
          path: ['sources', index, 'source_id'],
          message: `duplicate source_id ${source.source_id} (also at [${first.index}])`,
        });
      else sources.set(source.source_id, { kind: source.kind, index });
    });
    const pairs = new Map<string, number>();
    policy.pairs.forEach((pair, pairIndex) => {
      const key = canonicalPair(pair.pair);
      const first = pairs.get(key);
      if (first !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['pairs', pairIndex, 'pair'],
          message: `duplicate pair ${key} (also at [${first}])`,
        });
      else pairs.set(key, pairIndex);
      const currencies = key.split('→');
      pair.sources.forEach((id, sourceIndex) => {
        const source = sources.get(id);
        if (!source) {
          ctx.addIssue({
            code: 'custom',
            path: ['pairs', pairIndex, 'sources', sourceIndex],
            message: `unknown source ${id}: not in sources`,
          });
          return;
        }
        const foreign = currencies.filter((currency) => !ECB_CURRENCIES.has(currency));
        if (source.kind === 'ecb' && foreign.length > 0)
          ctx.addIssue({
            code: 'custom',
            path: ['pairs', pairIndex, 'sources', sourceIndex],
            message: `source ${id} (ecb) has no reference rate for ${foreign.join(', ')}`,
          });
      });
    });
  });

export type RateSourcePolicy = z.infer<typeof rateSourceSchema>;
export type RatePairPolicy = z.infer<typeof ratePairPolicySchema>;
export type BreakerPolicyDocument = z.infer<typeof breakerPolicySchema>;
export type RatePolicy = z.infer<typeof ratePolicySchema>;

/** The URL an ECB source fetches. */
export const ecbUrlOf = (source: Extract<RateSourcePolicy, { kind: 'ecb' }>): string =>
  source.url ?? ECB_DAILY_URL;
