import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { RETIRED_RECEIPT_KEY_IDS_ENV_VAR } from '../../functions/definitions';
import { addPricingStacks, retiredReceiptKeyArnsFromContext } from '../../lib/pricing-app';

const RETIRED = [
  'arn:aws:kms:eu-west-1:123456789012:key/0b6c3a1e-1111-4222-8333-944455556666',
  'arn:aws:kms:eu-west-1:123456789012:key/7d9e2f00-aaaa-4bbb-8ccc-dddd0000eeee',
];

const serviceWith = (retiredReceiptKeyArns?: readonly string[]) => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stacks = addPricingStacks(app, {
    stage: 'test',
    nag: false,
    ...(retiredReceiptKeyArns ? { retiredReceiptKeyArns } : {}),
  });
  return Template.fromStack(stacks.service).toJSON() as {
    Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
  };
};

const functionsWithVariable = (template: ReturnType<typeof serviceWith>) =>
  Object.values(template.Resources)
    .filter((resource) => resource.Type === 'AWS::Lambda::Function')
    .filter((resource) => {
      const variables = (
        resource.Properties.Environment as { Variables?: Record<string, unknown> } | undefined
      )?.Variables;
      return variables?.[RETIRED_RECEIPT_KEY_IDS_ENV_VAR] !== undefined;
    })
    .map((resource) => String(resource.Properties.Description));

const getPublicKeyResources = (template: ReturnType<typeof serviceWith>): unknown[] =>
  Object.values(template.Resources)
    .filter((resource) => resource.Type === 'AWS::IAM::Policy')
    .flatMap(
      (resource) =>
        (resource.Properties.PolicyDocument as { Statement: { Action: unknown; Resource: unknown }[] })
          .Statement,
    )
    .filter((statement) => statement.Action === 'kms:GetPublicKey')
    .flatMap((statement) => (Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource]));

describe('retired receipt keys (C10)', () => {
  it('lists them for GET /keys and the stored key sets: api and exporter get their ARNs and their public halves only', () => {
    const template = serviceWith(RETIRED);
    const described = functionsWithVariable(template);
    expect(described).toHaveLength(2);
    expect(described.some((text) => text.startsWith('HTTP API: system routes'))).toBe(true);
    expect(described.some((text) => text.startsWith('Finance export'))).toBe(true);
    const variables = Object.values(template.Resources)
      .map(
        (resource) =>
          (resource.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables,
      )
      .map((vars) => vars?.[RETIRED_RECEIPT_KEY_IDS_ENV_VAR])
      .filter((value) => value !== undefined);
    expect(new Set(variables)).toEqual(new Set([RETIRED.join(',')]));
    const retiredGrants = getPublicKeyResources(template).filter((resource) =>
      RETIRED.includes(resource as string),
    );
    expect(retiredGrants.sort()).toEqual([...RETIRED, ...RETIRED].sort());
  });

  it('sets nothing when there are none', () => {
    expect(functionsWithVariable(serviceWith())).toEqual([]);
  });

  it('reads them from context, as a list or comma-separated, and refuses what is not a KMS key ARN', () => {
    const app = (value: unknown) => new App({ context: { retiredReceiptKeyArns: value } });
    expect(retiredReceiptKeyArnsFromContext(app(RETIRED))).toEqual(RETIRED);
    expect(retiredReceiptKeyArnsFromContext(app(RETIRED.join(' , ')))).toEqual(RETIRED);
    expect(retiredReceiptKeyArnsFromContext(new App())).toBeUndefined();
    expect(() => retiredReceiptKeyArnsFromContext(app('alias/old-key'))).toThrow(/KMS key ARNs/);
  });
});
