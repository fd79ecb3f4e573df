import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { WEB_APPS, WEB_SECURITY_HEADERS } from '../web-build';
import type { SiteOriginSecret } from './api-firewall';
import { accessLogBucket } from './bucket-with-access-logs';
import { nagResource } from './defaults';

export interface WebSiteProps {
  /** The built pages (`lib/web-build.ts`): `<app>/index.html`, `app.js`, `app.css` per app. */
  readonly assetDir: string;
  /**
   * The service's API: every path that is not a page goes there through the same distribution, so the pages call
   * the API on their own origin (no CORS, the API's authorization unchanged).
   */
  readonly api: apigateway.RestApi;
  /** Added to every request forwarded to the API (see `ApiFirewall`). */
  readonly originSecret?: SiteOriginSecret;
  /** The distribution's CloudFront-scope web ACL (`EdgeFirewall`, us-east-1). */
  readonly webAclArn?: string;
}

/**
 * `/console` → `/console/`, `/console/` → `/console/index.html`, and `/console/config.json` answered at the edge with
 * what the console signs operators' calls for (the API's URL and region, known at deploy time): CloudFront Functions,
 * viewer request.
 */
const indexCode = (apps: readonly string[], config: string): string => `function handler(event) {
  var request = event.request;
  if (request.uri === '/console/config.json') {
    return {
      statusCode: 200,
      statusDescription: 'OK',
      headers: { 'content-type': { value: 'application/json' }, 'cache-control': { value: 'no-cache' } },
      body: { encoding: 'text', data: ${JSON.stringify(config)} },
    };
  }
  var match = request.uri.match(/^\\/(${apps.join('|')})(\\/?)$/);
  if (!match) return request;
  if (match[2] !== '/') {
    return { statusCode: 301, statusDescription: 'Moved Permanently', headers: { location: { value: '/' + match[1] + '/' } } };
  }
  request.uri = '/' + match[1] + '/index.html';
  return request;
}`;

/**
 * The operator console and the partner portal (`/console/`, `/portal/`): static files in a private S3 bucket read by
 * CloudFront through origin access control only, served over HTTPS with the pages' security headers (CSP, HSTS,
 * no framing, no sniffing, no referrer); every other path goes to the API, uncached, with the viewer's headers
 * (the pages' `Authorization` and `Idempotency-Key`) but the API's own host. Access logs of the bucket and of the
 * distribution go to a log bucket.
 */
export class WebSite extends Construct {
  readonly bucket: s3.Bucket;
  readonly distribution: cloudfront.Distribution;

  constructor(scope: Construct, id: string, props: WebSiteProps) {
    super(scope, id);
    const apps = Object.keys(WEB_APPS);
    // CloudFront's standard logs are written with an ACL.
    const logs = accessLogBucket(this, 'Logs', {
      removalPolicy: RemovalPolicy.RETAIN,
      objectOwnership: s3.ObjectOwnership.OBJECT_WRITER,
    });
    this.bucket = new s3.Bucket(this, 'Bucket', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: true,
      serverAccessLogsBucket: logs,
      serverAccessLogsPrefix: 'site/',
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const custom = ['Permissions-Policy', 'Cross-Origin-Opener-Policy'] as const;
    const headers = new cloudfront.ResponseHeadersPolicy(this, 'Headers', {
      comment:
        'The pages: scripts, styles and calls from the site only; no framing, sniffing or referrer; HSTS.',
      securityHeadersBehavior: {
        contentSecurityPolicy: {
          contentSecurityPolicy: WEB_SECURITY_HEADERS['Content-Security-Policy'] ?? '',
          override: true,
        },
        strictTransportSecurity: {
          accessControlMaxAge: Duration.days(365),
          includeSubdomains: true,
          preload: true,
          override: true,
        },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: cloudfront.HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: cloudfront.HeadersReferrerPolicy.NO_REFERRER, override: true },
      },
      customHeadersBehavior: {
        customHeaders: custom.map((header) => ({
          header,
          value: WEB_SECURITY_HEADERS[header] ?? '',
          override: true,
        })),
      },
    });
    const index = new cloudfront.Function(this, 'Index', {
      code: cloudfront.FunctionCode.fromInline(
        indexCode(apps, JSON.stringify({ api_origin: props.api.url, region: Stack.of(this).region })),
      ),
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      comment: 'The apps’ index pages',
    });
    const pages: cloudfront.BehaviorOptions = {
      origin: origins.S3BucketOrigin.withOriginAccessControl(this.bucket),
      viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
      cachePolicy: cloudfront.CachePolicy.CACHING_OPTIMIZED,
      responseHeadersPolicy: headers,
      functionAssociations: [{ function: index, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST }],
    };
    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: `${Stack.of(this).stackName} console and partner portal`,
      defaultBehavior: {
        origin: new origins.RestApiOrigin(
          props.api,
          props.originSecret
            ? { customHeaders: { [props.originSecret.header]: props.originSecret.value } }
            : {},
        ),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
        cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
        originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      },
      additionalBehaviors: Object.fromEntries(apps.map((app) => [`/${app}*`, pages])),
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
      priceClass: cloudfront.PriceClass.PRICE_CLASS_100,
      enableLogging: true,
      logBucket: logs,
      logFilePrefix: 'cloudfront/',
      ...(props.webAclArn ? { webAclId: props.webAclArn } : {}),
    });
    if (!props.webAclArn)
      Validations.of(this.distribution).acknowledge({
        id: 'AwsSolutions-CFR2',
        reason:
          'Synthesized without an account and region, so without the edge web ACL (a stack in us-east-1): API paths ' +
          "still reach the regional WAF (managed rules; the site's requests are not counted per edge address). " +
          'Deploy with an account and region to get it.',
      });
    Validations.of(this.distribution).acknowledge(
      {
        id: 'AwsSolutions-CFR1',
        reason: 'Operators and partners sign in from anywhere; the API behind refuses whom it does not know.',
      },
      {
        id: 'AwsSolutions-CFR4',
        reason:
          'The default *.cloudfront.net certificate negotiates TLS 1.2+ with current browsers; a custom domain with its ' +
          'own certificate gets TLS_V1_2_2021 (minimumProtocolVersion is already set for it).',
      },
    );

    const deployment = new s3deploy.BucketDeployment(this, 'Pages', {
      sources: [s3deploy.Source.asset(props.assetDir)],
      destinationBucket: this.bucket,
      distribution: this.distribution,
      distributionPaths: apps.map((app) => `/${app}/*`),
      memoryLimit: 256,
    });
    // CDK's copy handler: a singleton function of the stack, with its own role.
    const handler = Stack.of(this).node.children.find((child) =>
      child.node.id.startsWith('Custom::CDKBucketDeployment'),
    );
    const copyGrants = [
      'Action::s3:GetObject*',
      'Action::s3:GetBucket*',
      'Action::s3:List*',
      'Action::s3:DeleteObject*',
      'Action::s3:Abort*',
      `Resource::${nagResource(this, 'arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*')}`,
      `Resource::<${Stack.of(this).getLogicalId(this.bucket.node.defaultChild as s3.CfnBucket)}.Arn>/*`,
      // CloudFront invalidations name no resource ARN.
      'Resource::*',
    ];
    for (const scope of [deployment, deployment.handlerRole, ...(handler ? [handler] : [])])
      Validations.of(scope).acknowledge(
        {
          id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
          reason:
            "CDK's BucketDeployment handler runs with the basic Lambda execution managed policy (its logs).",
        },
        ...copyGrants.map((grant) => ({
          id: `AwsSolutions-IAM5[${grant}]`,
          reason:
            "CDK's BucketDeployment copies the asset's objects into the site bucket and invalidates the distribution: " +
            'its grants are on the asset bucket, the site bucket and CloudFront invalidations only.',
        })),
        {
          id: 'AwsSolutions-L1',
          reason: "CDK's BucketDeployment handler runtime is chosen by aws-cdk-lib and follows its releases.",
        },
      );
  }
}
