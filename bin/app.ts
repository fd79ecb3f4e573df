#!/usr/bin/env node
import { App } from 'aws-cdk-lib';
import { addPricingStacks } from '../lib/pricing-app';

/**
 * The CDK app: `npm run synth` (offline, no credentials needed) and `npm run deploy`. Stage and environment
 * come from context (`-c stage=prod -c account=… -c region=…`) or CDK_DEFAULT_ACCOUNT/CDK_DEFAULT_REGION.
 * cdk-nag (AWS Solutions) runs on every synth; any unacknowledged finding fails it.
 */
const app = new App();
addPricingStacks(app);
app.synth();
