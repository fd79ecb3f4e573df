import { existsSync } from 'node:fs';
import path from 'node:path';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MASK, maskSensitive } from '../../functions/shared/logger';
import {
  DEFAULT_REQUESTS_PER_IP_PER_5_MINUTES,
  SITE_ORIGIN_SECRET_HEADER,
} from '../../lib/constructs/api-firewall';
import { WEB_SECURITY_HEADERS } from '../../lib/web-build';
import { logicalIdOf, type PricingAppFixture, pricingApp } from './fixture';

/** The console and the partner portal in AWS: S3 behind CloudFront (OAC), security headers, the API on the same origin. */
let fixture: PricingAppFixture;
let service: Template;

beforeAll(() => {
  fixture = pricingApp();
  service = Template.fromStack(fixture.stacks.service);
});
afterAll(() => fixture.cleanup());

const site = () => {
  const webSite = fixture.stacks.service.webSite;
  if (!webSite) throw new Error('no web site');
  return webSite;
};

describe('the web site (console and partner portal)', () => {
  it('builds the pages into the cloud assembly and deploys them to the site bucket, invalidating the pages', () => {
    for (const file of ['console/index.html', 'console/app.js', 'portal/index.html', 'portal/app.css'])
      expect(existsSync(path.join(fixture.outdir, '.web-pages', file)), file).toBe(true);
    service.hasResourceProperties('Custom::CDKBucketDeployment', {
      DestinationBucketName: { Ref: logicalIdOf(site().bucket) },
      DistributionPaths: ['/console/*', '/portal/*'],
    });
  });

  it('keeps the bucket private, encrypted, SSL-only and logged; only the distribution reads it (OAC)', () => {
    service.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
      LoggingConfiguration: { LogFilePrefix: 'site/' },
    });
    service.resourceCountIs('AWS::CloudFront::OriginAccessControl', 1);
    service.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: logicalIdOf(site().bucket) },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudfront.amazonaws.com' },
            Action: 's3:GetObject',
            Condition: {
              StringEquals: {
                'AWS:SourceArn': Match.objectLike({ 'Fn::Join': Match.anyValue() }),
              },
            },
          }),
        ]),
      },
    });
  });

  it('serves the pages over HTTPS with their security headers, and every other path from the API, uncached', () => {
    service.hasResourceProperties('AWS::CloudFront::ResponseHeadersPolicy', {
      ResponseHeadersPolicyConfig: Match.objectLike({
        SecurityHeadersConfig: {
          ContentSecurityPolicy: {
            ContentSecurityPolicy: WEB_SECURITY_HEADERS['Content-Security-Policy'],
            Override: true,
          },
          StrictTransportSecurity: Match.objectLike({ AccessControlMaxAgeSec: 31_536_000, Preload: true }),
          ContentTypeOptions: { Override: true },
          FrameOptions: { FrameOption: 'DENY', Override: true },
          ReferrerPolicy: { ReferrerPolicy: 'no-referrer', Override: true },
        },
      }),
    });
    const distribution = service.findResources('AWS::CloudFront::Distribution');
    const config = Object.values(distribution)[0]?.Properties.DistributionConfig as {
      DefaultCacheBehavior: Record<string, unknown>;
      CacheBehaviors: Record<string, unknown>[];
      Logging?: unknown;
      HttpVersion: string;
    };
    expect(config.CacheBehaviors.map((behavior) => behavior.PathPattern)).toEqual(['/console*', '/portal*']);
    const headersPolicy = Object.keys(service.findResources('AWS::CloudFront::ResponseHeadersPolicy'))[0];
    for (const behavior of config.CacheBehaviors) {
      expect(behavior.ViewerProtocolPolicy).toBe('redirect-to-https');
      expect(behavior.ResponseHeadersPolicyId).toBeDefined();
      // The site's own policy (the security headers), not a managed one.
      expect(behavior.ResponseHeadersPolicyId).toEqual({ Ref: headersPolicy });
      expect(behavior.FunctionAssociations).toHaveLength(1);
    }
    // The API: HTTPS only, every method, nothing cached, the viewer's headers but not its host.
    expect(config.DefaultCacheBehavior).toMatchObject({
      ViewerProtocolPolicy: 'https-only',
      AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
      CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
      OriginRequestPolicyId: 'b689b0a8-53d0-40ab-baf2-68738e2966ac',
    });
    expect(config.Logging).toBeDefined();
    expect(config.Logging).toMatchObject({
      Bucket: { 'Fn::GetAtt': [expect.stringMatching(/^WebSiteLogs/), 'RegionalDomainName'] },
      Prefix: 'cloudfront/',
    });
    expect(config.HttpVersion).toBe('http2and3');
    service.hasOutput('ConsoleUrl', Match.anyValue());
    // The console's config (the API it signs for) is answered at the edge, with the API's URL resolved at deploy.
    const code = JSON.stringify(
      Object.values(service.findResources('AWS::CloudFront::Function'))[0]?.Properties.FunctionCode,
    );
    expect(code).toContain('/console/config.json');
    expect(code).toContain('execute-api');
  });
});

describe("the site's firewalls: a CloudFront-scope web ACL in us-east-1, the regional one counting viewers not edges", () => {
  let deployed: PricingAppFixture;
  let templates: { service: Template; edge: Template };

  beforeAll(() => {
    deployed = pricingApp({ env: { account: '123456789012', region: 'eu-west-1' } });
    const edge = deployed.stacks.edge;
    if (!edge) throw new Error('no edge stack');
    templates = { service: Template.fromStack(deployed.stacks.service), edge: Template.fromStack(edge) };
  });
  afterAll(() => deployed.cleanup());

  const rulesOf = (template: Template, scope: string) => {
    const acls = Object.values(
      template.findResources('AWS::WAFv2::WebACL', { Properties: { Scope: scope } }),
    );
    expect(acls).toHaveLength(1);
    return acls[0]?.Properties.Rules as { Name: string; Statement: Record<string, unknown> }[];
  };

  it('puts the web ACL in us-east-1 (WAF CloudFront scope) with the managed rules and a per-viewer rate rule', () => {
    expect(deployed.stacks.edge?.region).toBe('us-east-1');
    expect(rulesOf(templates.edge, 'CLOUDFRONT').map((rule) => rule.Name)).toEqual([
      'AWSManagedRulesCommonRuleSet',
      'AWSManagedRulesKnownBadInputsRuleSet',
      'AWSManagedRulesAmazonIpReputationList',
      'RequestsPerIp',
    ]);
    expect(rulesOf(templates.edge, 'CLOUDFRONT').at(-1)?.Statement).toEqual({
      RateBasedStatement: { Limit: DEFAULT_REQUESTS_PER_IP_PER_5_MINUTES, AggregateKeyType: 'IP' },
    });
  });

  it('attaches it to the distribution across regions', () => {
    const distribution = Object.values(templates.service.findResources('AWS::CloudFront::Distribution'))[0];
    expect(JSON.stringify(distribution?.Properties.DistributionConfig.WebACLId)).toContain(
      'SiteFirewallWebAcl',
    );
  });

  it("sends the API the site's origin secret, which exempts its requests from the regional per-address count only", () => {
    const distribution = Object.values(templates.service.findResources('AWS::CloudFront::Distribution'))[0];
    const origins = distribution?.Properties.DistributionConfig.Origins as {
      OriginCustomHeaders?: unknown[];
    }[];
    const secretRef = {
      'Fn::Join': [
        '',
        [
          '{{resolve:secretsmanager:',
          { Ref: expect.stringMatching(/^SiteOriginSecret/) },
          ':SecretString:::}}',
        ],
      ],
    };
    const headers = origins.flatMap((origin) => origin.OriginCustomHeaders ?? []);
    expect(headers).toHaveLength(1);
    expect(headers[0]).toMatchObject({ HeaderName: SITE_ORIGIN_SECRET_HEADER });
    const secret = (headers[0] as { HeaderValue: unknown }).HeaderValue;
    const regional = rulesOf(templates.service, 'REGIONAL');
    // The managed rules still inspect the site's requests here; only the address count leaves them to the edge.
    expect(regional.map((rule) => rule.Name)).toEqual(
      rulesOf(templates.edge, 'CLOUDFRONT').map((rule) => rule.Name),
    );
    expect(regional.at(-1)?.Statement).toEqual({
      RateBasedStatement: {
        Limit: DEFAULT_REQUESTS_PER_IP_PER_5_MINUTES,
        AggregateKeyType: 'IP',
        ScopeDownStatement: {
          NotStatement: {
            Statement: {
              ByteMatchStatement: {
                FieldToMatch: { SingleHeader: { Name: SITE_ORIGIN_SECRET_HEADER } },
                PositionalConstraint: 'EXACTLY',
                SearchString: secret,
                TextTransformations: [{ Priority: 0, Type: 'NONE' }],
              },
            },
          },
        },
      },
    });
    expect(secret).toMatchObject(secretRef);
    // The logger masks a field of that name, should a header map ever be logged.
    expect(
      JSON.parse(JSON.stringify({ headers: { [SITE_ORIGIN_SECRET_HEADER]: 'value' } }, maskSensitive)),
    ).toEqual({
      headers: { [SITE_ORIGIN_SECRET_HEADER]: MASK },
    });
  });

  it('goes without the edge stack, and says so, when synthesized without an account and region', () => {
    expect(fixture.stacks.edge).toBeUndefined();
    Annotations.fromStack(fixture.stacks.service).hasWarning(
      '*',
      Match.stringLikeRegexp('the site has no edge web ACL'),
    );
  });
});
