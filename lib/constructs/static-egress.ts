import { Arn, CfnOutput, Fn, Stack, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { nagResource, SECURE_DEFAULTS } from './defaults';
import type { FunctionNetwork, ServiceFunction } from './service-function';

/** Availability zones a static egress may span: one NAT gateway and one address per zone. */
export const STATIC_EGRESS_MAX_AZS = 3;

export interface StaticEgressProps {
  /** NAT gateways, each in its own zone with its own Elastic IP (1–3). An environment-agnostic stack has 2 zones. */
  readonly availabilityZones: number;
  /**
   * TCP ports the functions may open connections to (partners' receivers, AWS APIs on 443). Narrowing it means
   * partners' URLs must use these ports: an endpoint registered on another one would time out on every attempt.
   * @default every TCP port: endpoint URLs may name any port (https only in AWS, C17), and the delivery client's
   * guard already decides which addresses may be reached
   */
  readonly ports?: readonly number[];
  /** @default 10.80.0.0/16 */
  readonly cidr?: string;
}

/**
 * Known, stable source addresses for outgoing calls: a VPC whose private subnets reach the internet only through
 * one NAT gateway per zone, each with an Elastic IP this construct allocates (so the addresses are in the
 * template's outputs before the first delivery, and stay the same across deployments). Functions placed in the
 * private subnets (`network`, then `grantNetworkInterfaces`) get a security group that allows outbound TCP on
 * TCP only (optionally on `ports` only), nothing inbound. DynamoDB is reached through a gateway endpoint (free, off the NAT); SQS, KMS,
 * EventBridge Scheduler and X-Ray through the NAT gateways (interface endpoints would cost more than the little
 * traffic they would carry). Flow logs of the whole VPC go to CloudWatch Logs.
 */
export class StaticEgress extends Construct {
  readonly vpc: ec2.Vpc;
  readonly securityGroup: ec2.SecurityGroup;
  /** The Elastic IPs, one per NAT gateway, in zone order. */
  readonly addresses: readonly ec2.CfnEIP[];
  readonly flowLogGroup: logs.LogGroup;
  /** Where functions go: the private subnets and the egress-only security group. */
  readonly network: FunctionNetwork;

  constructor(scope: Construct, id: string, props: StaticEgressProps) {
    super(scope, id);
    const zones = props.availabilityZones;
    if (!Number.isInteger(zones) || zones < 1 || zones > STATIC_EGRESS_MAX_AZS)
      throw new Error(`staticEgress.availabilityZones must be 1 to ${STATIC_EGRESS_MAX_AZS}, got ${zones}`);
    const ports = props.ports;
    if (
      ports !== undefined &&
      (ports.length === 0 || !ports.every((port) => Number.isInteger(port) && port >= 1 && port <= 65_535))
    )
      throw new Error(`staticEgress.ports must be TCP ports, got ${JSON.stringify(props.ports)}`);
    const stack = Stack.of(this);
    if (stack.availabilityZones.length < zones)
      throw new Error(
        `staticEgress: ${zones} zones asked for, the stack has ${stack.availabilityZones.length} ` +
          '(an environment-agnostic stack has 2: deploy with an account and region for more)',
      );

    this.addresses = Array.from(
      { length: zones },
      (_, index) =>
        new ec2.CfnEIP(this, `Address${index + 1}`, {
          domain: 'vpc',
          tags: [{ key: 'Name', value: `${stack.stackName}-delivery-egress-${index + 1}` }],
        }),
    );
    this.flowLogGroup = new logs.LogGroup(this, 'FlowLogs', {
      retention: SECURE_DEFAULTS.logRetention,
      removalPolicy: SECURE_DEFAULTS.logRemovalPolicy,
    });
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      ipAddresses: ec2.IpAddresses.cidr(props.cidr ?? '10.80.0.0/16'),
      maxAzs: zones,
      natGateways: zones,
      natGatewayProvider: ec2.NatProvider.gateway({
        eipAllocationIds: this.addresses.map((address) => address.attrAllocationId),
      }),
      subnetConfiguration: [
        { name: 'nat', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 26, mapPublicIpOnLaunch: false },
        { name: 'functions', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 22 },
      ],
      // Nothing uses the default security group; restricting it would need a custom-resource function.
      restrictDefaultSecurityGroup: false,
      flowLogs: {
        all: {
          destination: ec2.FlowLogDestination.toCloudWatchLogs(this.flowLogGroup),
          trafficType: ec2.FlowLogTrafficType.ALL,
        },
      },
      gatewayEndpoints: {
        DynamoDb: {
          service: ec2.GatewayVpcEndpointAwsService.DYNAMODB,
          subnets: [{ subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }],
        },
      },
    });

    this.securityGroup = new ec2.SecurityGroup(this, 'FunctionSecurityGroup', {
      vpc: this.vpc,
      description: `Outbound TCP${ports ? ` ${ports.join(', ')}` : ''} only: partner receivers and AWS APIs; nothing inbound`,
      allowAllOutbound: false,
    });
    if (ports === undefined)
      this.securityGroup.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.allTcp(), 'outbound TCP');
    for (const port of ports ?? [])
      this.securityGroup.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(port), `outbound TCP ${port}`);

    this.network = {
      vpc: this.vpc,
      subnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      securityGroups: [this.securityGroup],
    };

    new CfnOutput(stack, 'DeliveryEgressIps', {
      value: Fn.join(
        ',',
        this.addresses.map((address) => address.attrPublicIp),
      ),
      description:
        'Source addresses of webhook deliveries (NAT gateway Elastic IPs): give them to partners to allow',
    });
  }

  /**
   * What Lambda needs to place a function in the private subnets: create, describe and delete its network
   * interfaces (the actions of `AWSLambdaVPCAccessExecutionRole`, as an inline policy scoped to this VPC's
   * subnets and security group). The function is created after the policy: Lambda checks it at creation.
   */
  grantNetworkInterfaces(fn: ServiceFunction): void {
    const stack = Stack.of(this);
    const arn = (resource: string, resourceName: string) =>
      Arn.format({ service: 'ec2', resource, resourceName }, stack);
    const policy = new iam.Policy(this, `${fn.definition.id}NetworkInterfaces`, {
      statements: [
        new iam.PolicyStatement({
          actions: [
            'ec2:CreateNetworkInterface',
            'ec2:DeleteNetworkInterface',
            'ec2:AssignPrivateIpAddresses',
            'ec2:UnassignPrivateIpAddresses',
          ],
          resources: [
            arn('network-interface', '*'),
            ...this.vpc.privateSubnets.map((subnet) => arn('subnet', subnet.subnetId)),
            arn('security-group', this.securityGroup.securityGroupId),
          ],
        }),
        new iam.PolicyStatement({
          actions: ['ec2:DescribeNetworkInterfaces', 'ec2:DescribeSubnets'],
          resources: ['*'],
        }),
      ],
    });
    policy.attachToRole(fn.role);
    fn.function.node.addDependency(policy);
    Validations.of(policy).acknowledge(
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'ec2:DescribeNetworkInterfaces and ec2:DescribeSubnets support no resource-level permissions; Lambda ' +
          'calls them to manage the function network interfaces in this VPC.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::${nagResource(this, 'arn:<AWS::Partition>:ec2:<AWS::Region>:<AWS::AccountId>:network-interface/*')}]`,
        reason:
          'Lambda creates the function network interfaces itself; their ids are not known in advance. Creation is ' +
          'also bound to this VPC private subnets and security group (named exactly in the same statement).',
      },
    );
  }
}

/** Zones of a static egress when `staticEgressAzs` is not given. */
export const STATIC_EGRESS_DEFAULT_AZS = 2;

/**
 * The static egress asked for in CDK context: `-c staticEgress=true` (optionally `-c staticEgressAzs=<1–3>`,
 * default 2); off (undefined) otherwise, since NAT gateways and Elastic IPs are billed by the hour.
 */
export const staticEgressFromContext = (scope: Construct): StaticEgressProps | undefined => {
  const enabled: unknown = scope.node.tryGetContext('staticEgress');
  if (enabled !== true && enabled !== 'true') return undefined;
  const zones: unknown = scope.node.tryGetContext('staticEgressAzs');
  const availabilityZones =
    zones === undefined || zones === '' ? STATIC_EGRESS_DEFAULT_AZS : Number(zones as string | number);
  if (
    !Number.isInteger(availabilityZones) ||
    availabilityZones < 1 ||
    availabilityZones > STATIC_EGRESS_MAX_AZS
  )
    throw new Error(`context staticEgressAzs must be 1 to ${STATIC_EGRESS_MAX_AZS}, got ${String(zones)}`);
  return { availabilityZones };
};
