import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';

export interface ApiFirewallProps {
  /** The REST API stage the web ACL protects. */
  readonly stage: apigateway.Stage;
  /**
   * Requests per 5 minutes from one IP address before WAF blocks it (a coarse flood guard in front of the
   * per-key usage plan).
   * @default 6000 (20 req/s sustained per IP)
   */
  readonly requestsPerIpPer5Minutes?: number;
}

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
            rateBasedStatement: { limit: props.requestsPerIpPer5Minutes ?? 6000, aggregateKeyType: 'IP' },
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
