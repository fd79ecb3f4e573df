/**
 * Static egress of deliveries: off by default (no VPC, no Elastic IP: both cost money); with context
 * `staticEgress=true` the deliver function — and only it — runs in the private subnets of a VPC whose NAT
 * gateways each use an Elastic IP of the stack, listed in the `DeliveryEgressIps` output.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type CfnResource, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { StaticEgress } from '../../lib/constructs/static-egress';
import { addPricingStacks, type PricingStacks } from '../../lib/pricing-app';
import { logicalIdOf } from './fixture';

const outdirs: string[] = [];
afterAll(() => {
  for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
});

/** The app as `cdk synth -c …` builds it (context values are strings on the command line). */
const appWith = (context: Record<string, string>): PricingStacks => {
  const outdir = mkdtempSync(join(tmpdir(), 'pricing-egress-'));
  outdirs.push(outdir);
  const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [], ...context } });
  return addPricingStacks(app, { stage: 'test', nag: false });
};

interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly DependsOn?: readonly string[];
}

const resourcesOf = (template: Template, type: string): [string, Resource][] =>
  Object.entries(template.toJSON().Resources as Record<string, Resource>).filter(
    ([, resource]) => resource.Type === type,
  );

describe('static egress off (default)', () => {
  const stacks = appWith({});
  const template = Template.fromStack(stacks.service);

  it('creates no VPC, NAT gateway or Elastic IP, and no output', () => {
    for (const type of ['AWS::EC2::VPC', 'AWS::EC2::EIP', 'AWS::EC2::NatGateway', 'AWS::EC2::SecurityGroup'])
      template.resourceCountIs(type, 0);
    expect(template.toJSON().Outputs?.DeliveryEgressIps).toBeUndefined();
    expect(stacks.service.staticEgress).toBeUndefined();
  });

  it('runs no function in a VPC', () => {
    for (const [, fn] of resourcesOf(template, 'AWS::Lambda::Function'))
      expect(fn.Properties?.VpcConfig).toBeUndefined();
  });
});

describe.each([
  { azs: '2', expected: 2 },
  { azs: '1', expected: 1 },
])('static egress on (staticEgressAzs=$azs)', ({ azs, expected }) => {
  const stacks = appWith({ staticEgress: 'true', staticEgressAzs: azs });
  const template = Template.fromStack(stacks.service);
  const egress = stacks.service.staticEgress;
  const deliverId = logicalIdOf(stacks.service.functions.deliver.function);

  it(`has one VPC and ${expected} NAT gateway(s), each with its own Elastic IP of the stack`, () => {
    template.resourceCountIs('AWS::EC2::VPC', 1);
    const eips = resourcesOf(template, 'AWS::EC2::EIP');
    const nats = resourcesOf(template, 'AWS::EC2::NatGateway');
    expect(eips).toHaveLength(expected);
    expect(nats).toHaveLength(expected);
    expect(eips.every(([, eip]) => eip.Properties?.Domain === 'vpc')).toBe(true);
    const allocations = nats.map(([, nat]) => JSON.stringify(nat.Properties?.AllocationId));
    expect(new Set(allocations).size).toBe(expected);
    expect(allocations.sort()).toEqual(
      eips.map(([id]) => JSON.stringify({ 'Fn::GetAtt': [id, 'AllocationId'] })).sort(),
    );
  });

  it('lists the addresses in the DeliveryEgressIps output', () => {
    const output = template.toJSON().Outputs?.DeliveryEgressIps as { Value: unknown };
    const eipIds = (egress?.addresses ?? []).map((address) => logicalIdOf(address));
    expect(eipIds).toHaveLength(expected);
    const addresses = eipIds.map((id) => ({ 'Fn::GetAtt': [id, 'PublicIp'] }));
    // One address is the address itself (CDK drops a join of one).
    expect(output.Value).toEqual(addresses.length === 1 ? addresses[0] : { 'Fn::Join': [',', addresses] });
  });

  it('puts the deliver function, and only it, in the private subnets with the egress-only security group', () => {
    const functions = resourcesOf(template, 'AWS::Lambda::Function');
    const inVpc = functions.filter(([, fn]) => fn.Properties?.VpcConfig !== undefined).map(([id]) => id);
    expect(inVpc).toEqual([deliverId]);
    const config = functions.find(([id]) => id === deliverId)?.[1].Properties?.VpcConfig as {
      SubnetIds: unknown[];
      SecurityGroupIds: unknown[];
    };
    const privateSubnets = (egress?.vpc.privateSubnets ?? []).map((subnet) => ({ Ref: logicalIdOf(subnet) }));
    expect(privateSubnets).toHaveLength(expected);
    expect(config.SubnetIds).toEqual(privateSubnets);
    expect(config.SecurityGroupIds).toEqual([
      { 'Fn::GetAtt': [logicalIdOf(egress?.securityGroup ?? stacks.service), 'GroupId'] },
    ]);
  });

  it('allows outbound TCP (partners may use any port) and nothing inbound', () => {
    const [[, group]] = resourcesOf(template, 'AWS::EC2::SecurityGroup') as [[string, Resource]];
    expect(group.Properties?.SecurityGroupEgress).toEqual([
      expect.objectContaining({ CidrIp: '0.0.0.0/0', IpProtocol: 'tcp', FromPort: 0, ToPort: 65535 }),
    ]);
    expect(group.Properties?.SecurityGroupIngress).toBeUndefined();
    template.resourceCountIs('AWS::EC2::SecurityGroupIngress', 0);
  });

  it('logs the VPC flows and reaches DynamoDB through a gateway endpoint', () => {
    template.hasResourceProperties('AWS::EC2::FlowLog', {
      ResourceType: 'VPC',
      TrafficType: 'ALL',
      LogDestinationType: 'cloud-watch-logs',
    });
    template.hasResourceProperties('AWS::EC2::VPCEndpoint', {
      VpcEndpointType: 'Gateway',
      ServiceName: { 'Fn::Join': ['', ['com.amazonaws.', { Ref: 'AWS::Region' }, '.dynamodb']] },
    });
  });

  it('grants the network-interface actions inline (no managed policy), before the function is created', () => {
    const deliver = resourcesOf(template, 'AWS::Lambda::Function').find(([id]) => id === deliverId)?.[1];
    const role = deliver?.Properties?.Role as { 'Fn::GetAtt': [string, string] } | undefined;
    const roleId = role?.['Fn::GetAtt'][0];
    const deliverRole = resourcesOf(template, 'AWS::IAM::Role').find(([id]) => id === roleId);
    expect(deliverRole).toBeDefined();
    expect(deliverRole?.[1].Properties?.ManagedPolicyArns).toBeUndefined();
    const policies = resourcesOf(template, 'AWS::IAM::Policy').filter(([, policy]) =>
      JSON.stringify(policy.Properties?.PolicyDocument).includes('ec2:CreateNetworkInterface'),
    );
    expect(policies).toHaveLength(1);
    const [[policyId, policy]] = policies as [[string, Resource]];
    expect(policy.Properties?.Roles).toEqual([{ Ref: roleId }]);
    expect(deliver?.DependsOn).toContain(policyId);
  });
});

describe('static egress context', () => {
  it('refuses a zone count outside 1–3, and 3 zones in an environment-agnostic stack', () => {
    expect(() => appWith({ staticEgress: 'true', staticEgressAzs: '0' })).toThrow(/staticEgressAzs/);
    expect(() => appWith({ staticEgress: 'true', staticEgressAzs: 'two' })).toThrow(/staticEgressAzs/);
    expect(() => appWith({ staticEgress: 'true', staticEgressAzs: '3' })).toThrow(/environment-agnostic/);
  });

  it('narrows outbound traffic to the ports given to the construct, and refuses what is not a port', () => {
    const stack = new Stack(new App(), 'Egress', { env: { account: '111111111111', region: 'eu-west-1' } });
    const narrowed = new StaticEgress(stack, 'Narrow', { availabilityZones: 1, ports: [443, 8443] });
    const egress = Template.fromStack(stack).findResources('AWS::EC2::SecurityGroup');
    expect(
      egress[stack.getLogicalId(narrowed.securityGroup.node.defaultChild as CfnResource)]?.Properties,
    ).toMatchObject({
      SecurityGroupEgress: [
        expect.objectContaining({ IpProtocol: 'tcp', FromPort: 443, ToPort: 443 }),
        expect.objectContaining({ IpProtocol: 'tcp', FromPort: 8443, ToPort: 8443 }),
      ],
    });
    expect(() => new StaticEgress(stack, 'None', { availabilityZones: 1, ports: [] })).toThrow(/ports/);
    expect(() => new StaticEgress(stack, 'Bad', { availabilityZones: 1, ports: [70_000] })).toThrow(/ports/);
  });

  it('stays off unless staticEgress is true', () => {
    expect(appWith({ staticEgress: 'false', staticEgressAzs: '2' }).service.staticEgress).toBeUndefined();
  });
});
