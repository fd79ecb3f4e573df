import { type App, type Environment, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { staticEgressFromContext } from './constructs/static-egress';
import { PricingServiceStack } from './stacks/service-stack';
import { PricingStatefulStack, RECEIPT_RETENTION_YEARS } from './stacks/stateful-stack';

export interface PricingStacks {
  readonly stateful: PricingStatefulStack;
  readonly service: PricingServiceStack;
}

export interface PricingAppOptions {
  /** @default context `stage`, else 'dev' */
  readonly stage?: string;
  /** @default context `account`/`region`, else CDK_DEFAULT_ACCOUNT/CDK_DEFAULT_REGION, else environment-agnostic */
  readonly env?: Environment;
  /** Run the cdk-nag AWS Solutions checks on synth. @default true */
  readonly nag?: boolean;
  /** Years receipts stay write-once (7–10). @default context `receiptRetentionYears`, else 7 */
  readonly receiptRetentionYears?: number;
}

const contextString = (app: App, key: string): string | undefined => {
  const value: unknown = app.node.tryGetContext(key);
  return typeof value === 'string' && value.length > 0 ? value : undefined;
};

/**
 * A whole-number context value (`-c receiptRetentionYears=10` arrives as a string, cdk.json as a number);
 * `undefined` when absent. Anything else is refused, naming the key.
 */
const contextInteger = (app: App, key: string): number | undefined => {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined || value === '') return undefined;
  const parsed = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN;
  if (!Number.isInteger(parsed))
    throw new Error(`context ${key} must be a whole number, got ${JSON.stringify(value)}`);
  return parsed;
};

/**
 * Adds the two stacks to an app: the stateful one (keys, tables, buckets) and the service one that uses them.
 * Shared by `bin/app.ts` and the infra tests, so the tests check the app that is deployed.
 */
export const addPricingStacks = (app: App, options: PricingAppOptions = {}): PricingStacks => {
  const stage = options.stage ?? contextString(app, 'stage') ?? 'dev';
  const account = contextString(app, 'account') ?? process.env.CDK_DEFAULT_ACCOUNT;
  const region = contextString(app, 'region') ?? process.env.CDK_DEFAULT_REGION;
  const env: Environment = options.env ?? {
    ...(account ? { account } : {}),
    ...(region ? { region } : {}),
  };

  const staticEgress = staticEgressFromContext(app);
  const stateful = new PricingStatefulStack(app, 'PricingStatefulStack', {
    stackName: `pricing-${stage}-stateful`,
    description: 'Pricing service: KMS keys, DynamoDB tables and S3 buckets (retained)',
    env,
    stage,
    receiptRetentionYears:
      options.receiptRetentionYears ??
      contextInteger(app, 'receiptRetentionYears') ??
      RECEIPT_RETENTION_YEARS.default,
    terminationProtection: stage === 'prod',
  });
  const service = new PricingServiceStack(app, 'PricingServiceStack', {
    stackName: `pricing-${stage}-service`,
    description: 'Pricing service: functions, queues, API, scheduler and alarms',
    env,
    stage,
    tables: stateful.tables,
    keys: stateful.keys,
    buckets: stateful.buckets,
    bucketWriters: stateful.bucketWriters,
    bucketReaders: stateful.bucketReaders,
    // `-c staticEgress=true [-c staticEgressAzs=2]`: deliveries from stack-allocated Elastic IPs (costs money).
    ...(staticEgress ? { staticEgress } : {}),
  });
  service.addStackDependency(stateful);

  Tags.of(app).add('service', 'pricing');
  Tags.of(app).add('stage', stage);
  if (options.nag ?? true) Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { stateful, service };
};
