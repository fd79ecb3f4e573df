import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { EdgeFirewall } from '../constructs/api-firewall';

/**
 * What CloudFront needs from us-east-1: the site's web ACL (WAF's CLOUDFRONT scope exists in that region only).
 * The service stack's distribution refers to it across regions (`crossRegionReferences`).
 */
export class PricingEdgeStack extends Stack {
  readonly firewall: EdgeFirewall;

  constructor(scope: Construct, id: string, props: StackProps) {
    super(scope, id, props);
    this.firewall = new EdgeFirewall(this, 'SiteFirewall');
  }
}

/** The region of CloudFront-scope resources. */
export const EDGE_REGION = 'us-east-1';
