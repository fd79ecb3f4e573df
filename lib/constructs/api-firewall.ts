import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { CATALOG_RATE_LIMIT } from '../../functions/definitions';

export interface ApiFirewallProps {
  /** The REST API stage the web ACL protects. */
  readonly stage: apigateway.Stage;
  /**
   * Requests per 5 minutes from one IP address before WAF blocks it: a coarse flood guard in front of the
   * per-key usage plan, above it so a storefront backend behind one NAT address meets its key's limit first.
   * @default twice a key's sustained rate over 5 minutes (CATALOG_RATE_LIMIT: 100 req/s → 60 000)
   */
  readonly requestsPerIpPer5Minutes?: number;
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

/** A regional WAFv2 web ACL (AWS managed rules plus a per-IP rate rule) associated with the API stage. */
export class ApiFirewall extends Construct {
  readonly webAcl: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: ApiFirewallProps) {
    super(scope, id);
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
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('PricingApi'),
      rules: [
        ...managedRules,
        {
          name: 'RequestsPerIp',
          priority: managedRules.length,
          action: { block: {} },
          statement: {
            rateBasedStatement: {
              limit: props.requestsPerIpPer5Minutes ?? DEFAULT_REQUESTS_PER_IP_PER_5_MINUTES,
              aggregateKeyType: 'IP',
            },
          },
          visibilityConfig: visibility('RequestsPerIp'),
        },
      ],
    });
    const association = new wafv2.CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
    association.node.addDependency(props.stage);
  }
}
