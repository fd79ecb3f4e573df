import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';

/**
 * Secure defaults in one place: every construct in `lib/constructs` reads them from here, so tightening one
 * (a longer log retention, another runtime) is a one-line change that every resource of its kind follows.
 */
export const SECURE_DEFAULTS = {
  /** Lambda runtime and architecture of every service function. */
  lambdaRuntime: lambda.Runtime.NODEJS_24_X,
  lambdaArchitecture: lambda.Architecture.ARM_64,
  /** esbuild target matching `lambdaRuntime`. */
  esbuildTarget: 'node24',
  lambdaTracing: lambda.Tracing.ACTIVE,
  /** Retention of function, API access and alarm-related log groups. */
  logRetention: logs.RetentionDays.THREE_MONTHS,
  /** Tables, keys and buckets outlive the stack: deleting the stack never deletes data. */
  statefulRemovalPolicy: RemovalPolicy.RETAIN,
  /** Log groups hold the audit trail of requests and deliveries; they are kept when a stack goes away. */
  logRemovalPolicy: RemovalPolicy.RETAIN,
  /** Days S3 server access logs are kept in the access-log bucket. */
  accessLogRetentionDays: 365,
  /** Dead-letter alarms fire on the first message: every dead letter is an incident. */
  deadLetterAlarmPeriod: Duration.minutes(1),
} as const;

/** The repository root: definition `entry` paths are relative to it, and it holds the npm lockfile. */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
