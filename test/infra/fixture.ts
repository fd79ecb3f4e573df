import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, CfnElement, Stack } from 'aws-cdk-lib';
import { type Template, Template as TemplateOf } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, expect } from 'vitest';
import { addPricingStacks, type PricingStacks } from '../../lib/pricing-app';

export interface PricingAppFixture {
  readonly app: App;
  readonly stacks: PricingStacks;
  readonly outdir: string;
  /** Removes the cloud assembly written to a temporary directory. */
  readonly cleanup: () => void;
}

/**
 * The deployed app, built by the same `addPricingStacks` as `bin/app.ts`, with bundling skipped (TOOLCHAIN
 * gotcha 6) and its cloud assembly in a temporary directory; environment-agnostic unless given an `env` (as a
 * deploy with an account and region is). cdk-nag is off unless asked for, so a template
 * assertion fails on its own behaviour, not on an unrelated finding.
 */
export const pricingApp = (
  options: {
    readonly nag?: boolean;
    readonly env?: { readonly account: string; readonly region: string };
    /** With `cdk.json`'s context (its feature flags), as the CLI gives it to `bin/app.ts`. */
    readonly cdkJson?: boolean;
  } = {},
): PricingAppFixture => {
  const outdir = mkdtempSync(join(tmpdir(), 'pricing-infra-'));
  const flags = options.cdkJson
    ? (JSON.parse(readFileSync('cdk.json', 'utf8')) as { context: Record<string, unknown> }).context
    : {};
  const app = new App({ outdir, context: { ...flags, 'aws:cdk:bundling-stacks': [] } });
  const stacks = addPricingStacks(app, {
    stage: 'test',
    nag: options.nag ?? false,
    ...(options.env ? { env: options.env } : {}),
  });
  return { app, stacks, outdir, cleanup: () => rmSync(outdir, { recursive: true, force: true }) };
};

/** Logical id of an L2 construct's CloudFormation resource (or of an L1 itself). */
export const logicalIdOf = (construct: IConstruct): string => {
  const element = CfnElement.isCfnElement(construct) ? construct : construct.node.defaultChild;
  if (!element || !CfnElement.isCfnElement(element))
    throw new Error(`${construct.node.path} has no CFN resource`);
  return Stack.of(element).getLogicalId(element);
};

/** `{ Fn::GetAtt: [<logical id>, 'Arn'] }` of a resource in the same stack. */
export const arnOf = (construct: IConstruct): { 'Fn::GetAtt': [string, string] } => ({
  'Fn::GetAtt': [logicalIdOf(construct), 'Arn'],
});

/** Matches (in `expect`) a value imported from the stateful stack that was exported from `construct`. */
export const importedFrom = (construct: IConstruct): { 'Fn::ImportValue': unknown } => ({
  'Fn::ImportValue': expect.stringMatching(new RegExp(`:ExportsOutput\\w*${logicalIdOf(construct)}`)),
});

export interface CfnResource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
}

/** The synthesized resource of a construct in a template. */
export const resourceIn = (template: Template, construct: IConstruct): CfnResource => {
  const resources = template.toJSON().Resources as Record<string, CfnResource | undefined>;
  const resource = resources[logicalIdOf(construct)];
  if (!resource) throw new Error(`no resource for ${construct.node.path}`);
  return resource;
};

/** The app synthesized once for a test file (before its tests, cleaned up after) with both templates. */
export const synthesizedApp = (): {
  readonly fixture: () => PricingAppFixture;
  readonly stateful: () => Template;
  readonly service: () => Template;
} => {
  let fixture: PricingAppFixture | undefined;
  let templates: { stateful: Template; service: Template } | undefined;
  beforeAll(() => {
    fixture = pricingApp();
    templates = {
      stateful: TemplateOf.fromStack(fixture.stacks.stateful),
      service: TemplateOf.fromStack(fixture.stacks.service),
    };
  });
  afterAll(() => fixture?.cleanup());
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the app is synthesized before the tests run');
    return value;
  };
  return {
    fixture: () => ready(fixture),
    stateful: () => ready(templates).stateful,
    service: () => ready(templates).service,
  };
};
