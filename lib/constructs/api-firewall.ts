import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { CATALOG_RATE_LIMIT } from '../../functions/definitions';

/**
 * A header CloudFront adds to the requests it forwards to the API, with a value only the deployment knows: the
 * regional web ACL does not count those per address (they come from CloudFront's edge addresses, many viewers
 * each; the edge web ACL counts them per viewer). It grants nothing else. Its name matches the logger's
 * sensitive-field pattern, so a logged header map masks it.
 */
export interface SiteOriginSecret {
  readonly header: string;
  readonly value: string;
}

export const SITE_ORIGIN_SECRET_HEADER = 'x-site-origin-secret';

export interface ApiFirewallProps {
  /** The REST API stage the web ACL protects. */
  readonly stage: apigateway.Stage;
  /**
   * Requests per 5 minutes from one IP address before WAF blocks it: a coarse flood guard in front of the
   * per-key usage plan, above it so a storefront backend behind one NAT address meets its key's limit first.
   * @default twice a key's sustained rate over 5 minutes (CATALOG_RATE_LIMIT: 100 req/s → 60 000)
   */
  readonly requestsPerIpPer5Minutes?: number;
  /** Requests that carry it came through the site's distribution: not counted per (edge) address here. */
  readonly siteOrigin?: SiteOriginSecret;
}

/** Twice what one API key may send in 5 minutes at its sustained rate. */
export const DEFAULT_REQUESTS_PER_IP_PER_5_MINUTES = 2 * CATALOG_RATE_LIMIT.requestsPerSecond * 300;

interface ManagedRuleGroup {
  readonly name: string;
  /** Rules of the group that only count: their limits contradict the API contract. */
  readonly countOnly?: readonly string[];
}

/**
 * AWS managed rule groups applied to every request; `SizeRestrictions_BODY` (8 KB) only counts because the API
 * accepts bodies up to 256 KiB (ARCHITECTURE C22), which the integration enforces itself.
 */
const MANAGED_RULE_GROUPS: readonly ManagedRuleGroup[] = [
  { name: 'AWSManagedRulesCommonRuleSet', countOnly: ['SizeRestrictions_BODY'] },
  { name: 'AWSManagedRulesKnownBadInputsRuleSet' },
  { name: 'AWSManagedRulesAmazonIpReputationList' },
];

const visibility = (metricName: string): wafv2.CfnWebACL.VisibilityConfigProperty => ({
  cloudWatchMetricsEnabled: true,
  sampledRequestsEnabled: true,
  metricName,
});

/**
 * A web ACL's rules: the AWS managed rule groups, then a per-address rate rule (not applied to `unless`).
 */
export const firewallRules = (options: {
  readonly requestsPerIpPer5Minutes?: number;
  readonly unless?: wafv2.CfnWebACL.StatementProperty;
}): wafv2.CfnWebACL.RuleProperty[] => {
  const managedRules: wafv2.CfnWebACL.RuleProperty[] = MANAGED_RULE_GROUPS.map((group, index) => ({
    name: group.name,
    priority: index,
    overrideAction: { none: {} },
    statement: {
      managedRuleGroupStatement: {
        vendorName: 'AWS',
        name: group.name,
        ...(group.countOnly
          ? { ruleActionOverrides: group.countOnly.map((name) => ({ name, actionToUse: { count: {} } })) }
          : {}),
      },
    },
    visibilityConfig: visibility(group.name),
  }));
  return [
    ...managedRules,
    {
      name: 'RequestsPerIp',
      priority: managedRules.length,
      action: { block: {} },
      statement: {
        rateBasedStatement: {
          limit: options.requestsPerIpPer5Minutes ?? DEFAULT_REQUESTS_PER_IP_PER_5_MINUTES,
          aggregateKeyType: 'IP',
          ...(options.unless ? { scopeDownStatement: { notStatement: { statement: options.unless } } } : {}),
        },
      },
      visibilityConfig: visibility('RequestsPerIp'),
    },
  ];
};

/** A request that carries the site's origin secret (exactly). */
const carries = (secret: SiteOriginSecret): wafv2.CfnWebACL.StatementProperty => ({
  byteMatchStatement: {
    fieldToMatch: { singleHeader: { Name: secret.header } },
    positionalConstraint: 'EXACTLY',
    searchString: secret.value,
    textTransformations: [{ priority: 0, type: 'NONE' }],
  },
});

/**
 * A regional WAFv2 web ACL (AWS managed rules plus a per-IP rate rule) associated with the API stage. Requests
 * that came through the site's distribution are inspected by the managed rules here too, and counted per viewer
 * by the edge web ACL instead of per edge address here.
 */
export class ApiFirewall extends Construct {
  readonly webAcl: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: ApiFirewallProps) {
    super(scope, id);
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('PricingApi'),
      rules: firewallRules({
        ...(props.requestsPerIpPer5Minutes !== undefined
          ? { requestsPerIpPer5Minutes: props.requestsPerIpPer5Minutes }
          : {}),
        ...(props.siteOrigin ? { unless: carries(props.siteOrigin) } : {}),
      }),
    });
    const association = new wafv2.CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
    association.node.addDependency(props.stage);
  }
}

/**
 * The site's web ACL at the edge (scope CLOUDFRONT, so it lives in us-east-1): the same managed rules and the
 * per-address rate rule, here keyed on the viewer's own address.
 */
export class EdgeFirewall extends Construct {
  readonly webAcl: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: { readonly requestsPerIpPer5Minutes?: number } = {}) {
    super(scope, id);
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'CLOUDFRONT',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('PricingSite'),
      rules: firewallRules(props),
    });
  }
}
