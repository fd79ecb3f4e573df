import { Logger } from '@aws-lambda-powertools/logger';

/**
 * Field names whose values never reach a log line: secrets, API keys, tokens, signatures, credentials, partner
 * and client (mTLS) keys. Matching is on the key name, at any depth, case-insensitively.
 *
 * Partner and client keys match as the end of a name (`partner_key`, `previous_partner_key`, `clientKey`), so
 * what is about a key without being it stays readable: `partner_key_valid_until`, and the partner key's
 * SHA-256 (`partner_key_sha256`, `partnerKeyHash`). That digest is not a secret: it is a hash of 32 random
 * bytes, so it gives nothing towards the key, authenticates nothing by itself (the service hashes what a caller
 * presents), and it is what an incident needs to tell which partner key a request used.
 */
const SENSITIVE_KEY =
  /secret|token|api[-_]?key|signature|authorization|password|credential|cookie|private[-_]?key|(?:client|partner)[-_]?keys?$|^x-amz-security/i;

/**
 * Field names masked when their value is text (a DPoP proof, RFC 9449) but walked when it is an object: the
 * service logs its own DPoP refusal details as `dpop: { endpoint_id, refusal }`.
 */
const SENSITIVE_TEXT_KEY = /^dpop(?:[-_]?proof)?$/i;

export const MASK = '****';

/**
 * Secrets recognised by their value, wherever they are: in a free-text message, an error message, a nested
 * field under any name. Each is replaced by {@link MASK}, keeping the rest of the text (and the prefix that
 * tells which kind of secret was there).
 */
const SECRET_VALUES: readonly (readonly [RegExp, string])[] = [
  // PEM blocks (private keys, certificates), also when cut off before their END line.
  [/-----BEGIN [A-Z0-9 ]{1,64}-----[\s\S]*?(?:-----END [A-Z0-9 ]{1,64}-----|$)/g, MASK],
  // Credentials after an HTTP authentication scheme (`Authorization: Bearer …`, `DPoP …`, `Basic …`). The
  // credential (token68) has a digit, one of `-._~+/=` or a lower-case letter followed by an upper-case one,
  // so prose such as "Bearer token missing" is kept.
  [
    /\b(Bearer|bearer|BEARER|DPoP|dpop|DPOP|Basic|basic|BASIC)(\s+)(?=[\w.~+/=-]*?(?:[0-9._~+/=-]|[a-z][A-Z]))[\w.~+/=-]+/g,
    `$1$2${MASK}`,
  ],
  // Header-like `name: value` / `name=value` pairs in text, where the value is not an authentication scheme.
  [
    /\b(authorization|x-api-key|api[-_]?key|cookie|set-cookie)(["']?\s*[:=]\s*["']?)(?!(?:Bearer|DPoP|Basic)\s)[^\s"',;&]+/gi,
    `$1$2${MASK}`,
  ],
  // JWTs and other JWS compact serialisations (DPoP proofs among them).
  [/\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, MASK],
  // Webhook signing secrets: `whsec_` + standard base64.
  [/(?<![A-Za-z0-9_])whsec_[A-Za-z0-9+/]{8,}={0,2}/g, `whsec_${MASK}`],
  // Partner keys (`pk_`), caller API keys (`mck_`, `key_local_…`), operator tokens (`adm_local_…`): the prefix
  // and base64url. The random part has an upper-case letter or a digit, so snake_case words stay readable.
  [/(?<![A-Za-z0-9_])(pk|mck|key|adm)_(?=[A-Za-z0-9_-]*[A-Z0-9])[A-Za-z0-9_-]{16,}/g, `$1_${MASK}`],
  // AWS access key ids.
  [/(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])/g, MASK],
];

/** `text` with every secret recognised by its value replaced by {@link MASK}. */
export const redactSecrets = (text: string): string => {
  let redacted = text;
  for (const [pattern, replacement] of SECRET_VALUES) redacted = redacted.replace(pattern, replacement);
  return redacted;
};

/** How many causes deep an error is logged; a longer (or circular) chain ends with `truncated: true`. */
export const MAX_CAUSE_DEPTH = 4;

/**
 * An error as log lines carry it: its class, message and code, and its cause in the same form. Never its stack
 * (it holds file paths and adds nothing the name and message do not), never its other properties (an SDK
 * error's request and response). For an AWS SDK error (`$metadata`) the HTTP status replaces the message (C6:
 * no SDK messages in logs).
 */
export interface LoggedError {
  readonly name: string;
  readonly message?: string;
  readonly code?: string | number;
  readonly http_status?: number;
  readonly cause?: LoggedError | string | number | boolean | { readonly type: string };
  readonly truncated?: true;
}

const causeOf = (cause: unknown, depth: number): LoggedError['cause'] => {
  if (cause instanceof Error) return loggedError(cause, depth + 1);
  if (typeof cause === 'string' || typeof cause === 'number' || typeof cause === 'boolean') return cause;
  return { type: cause === null ? 'null' : typeof cause };
};

/** `error` as {@link LoggedError}; `depth` is its place in a cause chain. */
export const loggedError = (error: Error, depth = 0): LoggedError => {
  const metadata = (error as { $metadata?: unknown }).$metadata;
  const code = (error as { code?: unknown }).code;
  const status =
    typeof metadata === 'object' && metadata !== null
      ? (metadata as { httpStatusCode?: unknown }).httpStatusCode
      : undefined;
  const fields: { -readonly [K in keyof LoggedError]: LoggedError[K] } = { name: String(error.name) };
  if (metadata === undefined) fields.message = String(error.message);
  else if (typeof status === 'number') fields.http_status = status;
  if (typeof code === 'string' || typeof code === 'number') fields.code = code;
  if (error.cause !== undefined) {
    if (depth >= MAX_CAUSE_DEPTH) fields.truncated = true;
    else fields.cause = causeOf(error.cause, depth);
  }
  return fields;
};

/**
 * JSON replacer used by every logger of the service, before Powertools' own: masks sensitive fields by name,
 * redacts secrets by value in every string, and turns errors into {@link LoggedError} (so Powertools' error
 * format, with `stack` and `location`, is never reached). Its output is walked again by `JSON.stringify`, so an
 * error's message and cause are redacted like any other field.
 */
export const maskSensitive = (key: string, value: unknown): unknown => {
  if (key !== '' && value !== undefined && value !== null) {
    if (SENSITIVE_KEY.test(key)) return MASK;
    if (SENSITIVE_TEXT_KEY.test(key) && (typeof value !== 'object' || Array.isArray(value))) return MASK;
  }
  if (typeof value === 'string') return redactSecrets(value);
  if (value instanceof Error) return loggedError(value);
  if (typeof value === 'bigint') return value.toString();
  return value;
};

export interface LoggerOptions {
  readonly serviceName?: string;
  readonly logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT' | 'CRITICAL';
}

/** Structured JSON logger (Powertools) with masking, redaction and stackless errors; one per function instance. */
export const createLogger = (options: LoggerOptions = {}): Logger =>
  new Logger({
    serviceName: options.serviceName ?? 'pricing-service',
    ...(options.logLevel ? { logLevel: options.logLevel } : {}),
    jsonReplacerFn: maskSensitive,
  });
