import { ArnFormat, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import { nagResource } from './defaults';
import type { EncryptedQueue } from './encrypted-queue';
import { type ServiceFunction, viaService } from './service-function';

export interface SchedulerToQueueProps {
  /** Name of the schedule group that holds the one-time schedules. */
  readonly groupName: string;
  /** The only queue schedules may send to. */
  readonly target: EncryptedQueue;
  /**
   * What happens to the group (and the schedules pending in it) when it leaves the stack.
   * @default RemovalPolicy.DESTROY (CDK default for schedule groups: pending retries are not data)
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * EventBridge Scheduler → SQS: a schedule group for one-time schedules and the role Scheduler assumes to run
 * them, which can do nothing but send a message to the target queue (with the two KMS actions the queue's
 * encryption needs, through SQS only). Functions that create schedules are granted with `grantManageSchedules`.
 */
export class SchedulerToQueue extends Construct {
  readonly scheduleGroup: scheduler.ScheduleGroup;
  readonly role: iam.Role;
  readonly groupName: string;

  constructor(scope: Construct, id: string, props: SchedulerToQueueProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.groupName = props.groupName;
    this.scheduleGroup = new scheduler.ScheduleGroup(this, 'Group', {
      scheduleGroupName: props.groupName,
      ...(props.removalPolicy ? { removalPolicy: props.removalPolicy } : {}),
    });
    this.role = new iam.Role(this, 'Role', {
      description: `Assumed by EventBridge Scheduler to send scheduled messages to the ${props.target.definition.id} queue`,
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnEquals: { 'aws:SourceArn': this.scheduleGroup.scheduleGroupArn },
        },
      }),
      inlinePolicies: {
        SendToTarget: new iam.PolicyDocument({
          statements: [
            new iam.PolicyStatement({
              actions: ['sqs:SendMessage'],
              resources: [props.target.queue.queueArn],
            }),
            new iam.PolicyStatement({
              actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
              resources: [props.target.encryptionKey.keyArn],
              conditions: viaService(this, 'sqs'),
            }),
          ],
        }),
      },
    });
  }

  /** The ARN pattern of every schedule in the group (schedule names are chosen at run time). */
  get schedulesArn(): string {
    return Stack.of(this).formatArn({
      service: 'scheduler',
      resource: 'schedule',
      resourceName: `${this.groupName}/*`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
  }

  /**
   * Create one-time schedules in the group, and pass the scheduler role to them. Nothing deletes them: each is
   * created with `ActionAfterCompletion: DELETE`, which Scheduler carries out itself.
   */
  grantManageSchedules(grantee: ServiceFunction): void {
    grantee.addToRolePolicy(['scheduler:CreateSchedule'], [this.schedulesArn]);
    grantee.addToRolePolicy(['iam:PassRole'], [this.role.roleArn], {
      StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' },
    });
    Validations.of(grantee.defaultPolicy).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${this.nagArnPattern()}]`,
      reason:
        'Each retry creates a one-time schedule whose name is chosen at run time; the wildcard is the schedule ' +
        'name inside this one group, and only CreateSchedule is allowed on it.',
    });
  }

  /** How cdk-nag renders `schedulesArn` in a finding id. */
  private nagArnPattern(): string {
    return nagResource(
      this,
      `arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${this.groupName}/*`,
    );
  }
}
