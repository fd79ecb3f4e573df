import { Logger } from '@aws-lambda-powertools/logger';

/**
 * Field names whose values never reach a log line: secrets, API keys, tokens, signatures, credentials.
 * Matching is on the key name, at any depth, case-insensitively.
 */
const SENSITIVE_KEY =
  /secret|token|api[-_]?key|signature|authorization|password|credential|cookie|private[-_]?key|^x-amz-security/i;

export const MASK = '****';

/** JSON replacer used by every logger of the service: masks sensitive fields before serialisation. */
export const maskSensitive = (key: string, value: unknown): unknown => {
  if (key !== '' && SENSITIVE_KEY.test(key) && value !== undefined && value !== null) return MASK;
  if (typeof value === 'bigint') return value.toString();
  return value;
};

export interface LoggerOptions {
  readonly serviceName?: string;
  readonly logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT' | 'CRITICAL';
}

/** Structured JSON logger (Powertools) with masking; one per function instance. */
export const createLogger = (options: LoggerOptions = {}): Logger =>
  new Logger({
    serviceName: options.serviceName ?? 'pricing-service',
    ...(options.logLevel ? { logLevel: options.logLevel } : {}),
    jsonReplacerFn: maskSensitive,
  });
