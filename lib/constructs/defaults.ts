import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as lambdaNodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { IConstruct } from 'constructs';

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

/** ESM output needs `require` for the CommonJS dependencies esbuild inlines. */
const ESM_REQUIRE_BANNER =
  "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

/**
 * How every function is bundled: ESM for `SECURE_DEFAULTS.esbuildTarget`, minified with source maps, and the AWS
 * SDK bundled too, so a function runs the SDK versions the tests ran, not the runtime's copy.
 */
export const functionBundling = (): lambdaNodejs.BundlingOptions => ({
  format: lambdaNodejs.OutputFormat.ESM,
  target: SECURE_DEFAULTS.esbuildTarget,
  mainFields: ['module', 'main'],
  banner: ESM_REQUIRE_BANNER,
  minify: true,
  sourceMap: true,
  sourceMapMode: lambdaNodejs.SourceMapMode.DEFAULT,
  externalModules: [],
});

/** cdk-nag's finding on the account-level API Gateway logging role a REST API creates, acknowledged with why. */
export const acknowledgeApiLoggingRole = (api: apigateway.RestApi): void => {
  const loggingRole = api.node.tryFindChild('CloudWatchRole');
  if (!loggingRole) return;
  Validations.of(loggingRole).acknowledge({
    id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
    reason:
      'The account-level API Gateway logging role must write to log groups API Gateway creates per API and ' +
      'stage; AWS maintains this managed policy for exactly that role, assumable only by apigateway.amazonaws.com.',
  });
};

/**
 * A cdk-nag finding's resource as cdk-nag renders it in the finding id: the stack's partition, region and account
 * as literals where the stack knows them (a synth with an account and region), else `<AWS::…>` (an
 * environment-agnostic synth). Acknowledgements written with `<AWS::Region>` alone would not match a deploy.
 */
export const nagResource = (scope: IConstruct, pattern: string): string => {
  const stack = Stack.of(scope);
  const literal = (value: string, pseudo: string): string =>
    Token.isUnresolved(value) ? `<${pseudo}>` : value;
  return pattern
    .replaceAll('<AWS::Partition>', literal(stack.partition, 'AWS::Partition'))
    .replaceAll('<AWS::Region>', literal(stack.region, 'AWS::Region'))
    .replaceAll('<AWS::AccountId>', literal(stack.account, 'AWS::AccountId'));
};
