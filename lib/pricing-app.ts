import path from 'node:path';
import { Annotations, type App, type Environment, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { type IndexMigrationStage, parseIndexMigrationStage } from '../functions/definitions';
import type { OperatorRole } from '../functions/domain/access/principals';
import type { MachineOperatorRole } from './constructs/operator-roles';
import { staticEgressFromContext } from './constructs/static-egress';
import { EDGE_REGION, PricingEdgeStack } from './stacks/edge-stack';
import { PricingServiceStack } from './stacks/service-stack';
import { PricingStatefulStack, RECEIPT_RETENTION_YEARS } from './stacks/stateful-stack';
import { buildWebAppsSync } from './web-build';

export interface PricingStacks {
  readonly stateful: PricingStatefulStack;
  readonly service: PricingServiceStack;
  /** The site's web ACL in us-east-1: with the site, when the account and region are known at synth. */
  readonly edge?: PricingEdgeStack;
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
  /** The account whose principals may assume the human operator roles. @default context `operatorTrustAccount`, else the stack's account */
  readonly operatorTrustAccount?: string;
  /** Machine operator roles. @default context `machineOperatorRoleArns`, else none */
  readonly machineOperatorRoles?: readonly MachineOperatorRole[];
  /** KMS key ARNs of retired receipt keys (C10). @default context `retiredReceiptKeyArns`, else none */
  readonly retiredReceiptKeyArns?: readonly string[];
  /** A staged index replacement's stage (see `retiredIndexesFromContext`). @default context `retiredIndexes`, else none */
  readonly retiredIndexes?: IndexMigrationStage;
  /** Build and deploy the console and the partner portal (S3 behind CloudFront). @default true */
  readonly webSite?: boolean;
}

/**
 * `-c retiredIndexes=<stage>`: the stage of replacing tables' indexes in an existing deployment
 * (`retiredGlobalSecondaryIndexes` in the definitions, `functions/definitions/index-migration.ts`), since
 * CloudFormation adds or removes one index per table per update and an existing deployment keeps serving
 * meanwhile: `add-1` … `add-n` (one replacement more each; the functions read the retired indexes whose
 * replacements are still being built), `keep` (all, the replacements read), `drop-1` … `drop-(n-1)` (one retired
 * index fewer each), then no value (every later deploy, and a new deployment at once). Wait for the index a stage
 * added to be ACTIVE before the next.
 */
export const retiredIndexesFromContext = (app: App): IndexMigrationStage | undefined => {
  const value = contextString(app, 'retiredIndexes');
  return value === undefined ? undefined : parseIndexMigrationStage(value);
};

/**
 * `retiredReceiptKeyArns`: receipt keys retired from signing whose receipts are still kept (C10), as a list in
 * cdk.json or comma-separated on the command line. Each must be a KMS key ARN.
 */
export const retiredReceiptKeyArnsFromContext = (app: App): string[] | undefined => {
  const key = 'retiredReceiptKeyArns';
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined || value === '') return undefined;
  const list = typeof value === 'string' ? value.split(',').map((entry) => entry.trim()) : value;
  if (
    !Array.isArray(list) ||
    !list.every(
      (entry: unknown) =>
        typeof entry === 'string' &&
        /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]{1,64}$/.test(entry),
    )
  )
    throw new Error(
      `context ${key} must be KMS key ARNs (a list, or comma-separated), got ${JSON.stringify(value)}`,
    );
  return list as string[];
};

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
 * `-c operatorTrustAccount=123456789012`: a 12-digit account id; anything else is refused, naming the key.
 */
const contextAccount = (app: App, key: string): string | undefined => {
  const value = contextString(app, key);
  if (value !== undefined && !/^\d{12}$/.test(value))
    throw new Error(`context ${key} must be a 12-digit AWS account id, got ${JSON.stringify(value)}`);
  return value;
};

/**
 * A structured context value: as it is in cdk.json, or parsed from its JSON on the command line (`-c key='…'`);
 * `undefined` when absent. JSON that does not parse is refused, naming the key and what it must be.
 */
const contextJson = (app: App, key: string, shape: string): unknown => {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    throw new Error(`context ${key} must be ${shape}, got ${JSON.stringify(value)}`);
  }
};

/**
 * `tenantRetentionDays`: days of body retention by tenant, an object in cdk.json or its JSON on the command line
 * (`-c tenantRetentionDays='{"eu-1":7}'`); checked by the service stack as the functions check it.
 */
export const tenantRetentionDaysFromContext = (app: App): Record<string, number> | undefined => {
  const key = 'tenantRetentionDays';
  const value = contextJson(app, key, 'a JSON object of tenant → days');
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`context ${key} must be an object of tenant → days`);
  return value as Record<string, number>;
};

/**
 * `machineOperatorRoleArns`: machine principals acting as operators (C27), each a role ARN and the roles it
 * holds (never `approver`), as a list in cdk.json or as its JSON on the command line:
 * `-c machineOperatorRoleArns='[{"role_arn":"arn:aws:iam::123456789012:role/ci","roles":["author"]}]'`.
 * The roles themselves are checked by `OperatorRoles`.
 */
export const machineOperatorRolesFromContext = (app: App): MachineOperatorRole[] | undefined => {
  const key = 'machineOperatorRoleArns';
  const value = contextJson(app, key, 'a JSON list of {"role_arn","roles"}');
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw new Error(`context ${key} must be a list of {"role_arn","roles"}`);
  return value.map((entry: unknown) => {
    const candidate = entry as { role_arn?: unknown; roles?: unknown };
    if (
      typeof candidate !== 'object' ||
      candidate === null ||
      typeof candidate.role_arn !== 'string' ||
      !Array.isArray(candidate.roles) ||
      !candidate.roles.every((role: unknown) => typeof role === 'string')
    )
      throw new Error(`context ${key}: each entry is {"role_arn": "<role ARN>", "roles": ["<role>", …]}`);
    return { roleArn: candidate.role_arn, roles: candidate.roles as OperatorRole[] };
  });
};

/** The pages built for the web site, in the app's output directory (`cdk.out/.web-pages`). */
const webPages = (app: App): string => {
  const dir = path.join(app.outdir, '.web-pages');
  buildWebAppsSync(dir);
  return dir;
};

/**
 * Adds the stacks to an app: the stateful one (keys, tables, buckets), the service one that uses them and, with
 * the site and a known account and region, the edge one (the site's web ACL in us-east-1).
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
  const operatorTrustAccount = options.operatorTrustAccount ?? contextAccount(app, 'operatorTrustAccount');
  const machineOperatorRoles = options.machineOperatorRoles ?? machineOperatorRolesFromContext(app);
  const retiredReceiptKeyArns = options.retiredReceiptKeyArns ?? retiredReceiptKeyArnsFromContext(app);
  const retiredIndexes = options.retiredIndexes ?? retiredIndexesFromContext(app);
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
    ...(retiredIndexes ? { indexStage: retiredIndexes } : {}),
  });
  const tenantRetentionDays = tenantRetentionDaysFromContext(app);
  const webSite = options.webSite ?? true;
  // CloudFront-scope WAF lives in us-east-1; a reference to it from another region needs both stacks' account
  // and region at synth (an environment-agnostic synth goes without it, and says so).
  const edge =
    webSite && env.account !== undefined && env.region !== undefined
      ? new PricingEdgeStack(app, 'PricingEdgeStack', {
          stackName: `pricing-${stage}-edge`,
          description:
            "Pricing service: the console's and the partner portal's web ACL (CloudFront, us-east-1)",
          env: { account: env.account, region: EDGE_REGION },
          crossRegionReferences: true,
        })
      : undefined;
  const service = new PricingServiceStack(app, 'PricingServiceStack', {
    stackName: `pricing-${stage}-service`,
    description: 'Pricing service: functions, queues, API, scheduler and alarms',
    env,
    ...(edge ? { crossRegionReferences: true, siteFirewallArn: edge.firewall.webAcl.attrArn } : {}),
    stage,
    tables: stateful.tables,
    keys: stateful.keys,
    buckets: stateful.buckets,
    bucketWriters: stateful.bucketWriters,
    bucketReaders: stateful.bucketReaders,
    // `-c staticEgress=true [-c staticEgressAzs=2]`: deliveries from stack-allocated Elastic IPs (costs money).
    ...(staticEgress ? { staticEgress } : {}),
    ...(operatorTrustAccount ? { operatorTrustAccount } : {}),
    ...(machineOperatorRoles ? { machineOperatorRoles } : {}),
    ...(retiredReceiptKeyArns ? { retiredReceiptKeyArns } : {}),
    ...(retiredIndexes ? { indexStage: retiredIndexes } : {}),
    // `-c tenantRetentionDays='{"eu-1":7}'` (or an object in cdk.json): shorter body retention by tenant.
    ...(tenantRetentionDays ? { tenantRetentionDays } : {}),
    // The console and the partner portal, built from web/ into the cloud assembly's directory.
    ...(webSite ? { webAssetDir: webPages(app) } : {}),
  });
  service.addStackDependency(stateful);
  if (webSite && !edge)
    Annotations.of(service).addWarningV2(
      'pricing:site-without-edge-firewall',
      'No account or region at synth: the site has no edge web ACL (give -c account=… -c region=…, or the ' +
        'CDK_DEFAULT_ variables, to get PricingEdgeStack in us-east-1).',
    );

  Tags.of(app).add('service', 'pricing');
  Tags.of(app).add('stage', stage);
  if (options.nag ?? true) Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { stateful, service, ...(edge ? { edge } : {}) };
};
