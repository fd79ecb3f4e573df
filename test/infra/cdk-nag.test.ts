import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPricingStacks } from '../../lib/pricing-app';
import { type PricingAppFixture, pricingApp } from './fixture';

interface ValidationReport {
  readonly pluginReports: readonly { readonly violations?: readonly unknown[] }[];
}

describe('cdk-nag (AWS Solutions)', () => {
  let fixture: PricingAppFixture;
  let synthError: unknown;

  beforeAll(() => {
    fixture = pricingApp({ nag: true });
    try {
      fixture.app.synth();
    } catch (error) {
      synthError = error;
    }
  });
  afterAll(() => fixture.cleanup());

  it('synthesises the app with zero unacknowledged findings', () => {
    expect(synthError).toBeUndefined();
  });

  it('writes a validation report without violations', () => {
    const report = JSON.parse(
      readFileSync(join(fixture.outdir, 'validation-report.json'), 'utf8'),
    ) as ValidationReport;
    expect(report.pluginReports.flatMap((plugin) => plugin.violations ?? [])).toEqual([]);
  });

  it('stays clean with the static egress on (VPC, NAT gateways, flow logs, deliver function in the VPC)', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'pricing-nag-egress-'));
    try {
      const app = new App({
        outdir,
        context: { 'aws:cdk:bundling-stacks': [], staticEgress: 'true', staticEgressAzs: '2' },
      });
      const stacks = addPricingStacks(app, { stage: 'test', nag: true });
      expect(stacks.service.staticEgress).toBeDefined();
      expect(() => app.synth()).not.toThrow();
      const report = JSON.parse(
        readFileSync(join(outdir, 'validation-report.json'), 'utf8'),
      ) as ValidationReport;
      expect(report.pluginReports.flatMap((plugin) => plugin.violations ?? [])).toEqual([]);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });

  it('stays clean synthesized with an account, a region and cdk.json, as deployed: the edge stack, literal ARNs', () => {
    const deployed = pricingApp({
      nag: true,
      env: { account: '123456789012', region: 'eu-west-1' },
      cdkJson: true,
    });
    try {
      expect(deployed.stacks.edge).toBeDefined();
      expect(() => deployed.app.synth()).not.toThrow();
      const report = JSON.parse(
        readFileSync(join(deployed.outdir, 'validation-report.json'), 'utf8'),
      ) as ValidationReport;
      expect(report.pluginReports.flatMap((plugin) => plugin.violations ?? [])).toEqual([]);
    } finally {
      deployed.cleanup();
    }
  });

  it('fails synthesis on a finding (the checks are live)', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'pricing-nag-'));
    try {
      const app = new App({ outdir });
      new sqs.Queue(new Stack(app, 'Unchecked'), 'PlainQueue');
      Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
      expect(() => app.synth()).toThrow(expect.objectContaining({ name: 'ValidationFailed' }));
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});
