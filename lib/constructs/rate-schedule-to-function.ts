import { ArnFormat, Duration, Stack, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import type { ServiceFunction } from './service-function';

/** EventBridge Scheduler's own group, which holds schedules created without one. */
const DEFAULT_GROUP = 'default';

export interface RateScheduleToFunctionProps {
  /** The only function the schedule invokes. */
  readonly target: ServiceFunction;
  /** Minutes between two invocations (`rate(n minutes)`). */
  readonly rateMinutes: number;
  /**
   * Name of the schedule, unique in the account and region's default schedule group (the execution role's
   * trust policy names the schedule's ARN, so the name is fixed).
   */
  readonly scheduleName: string;
  /** @default the target function's description */
  readonly description?: string;
  /**
   * Retries after a failed invocation (Scheduler invokes Lambda asynchronously, so only an invocation that
   * Lambda refuses, e.g. throttled, is retried; the function's own errors are not).
   * @default 2
   */
  readonly retryAttempts?: number;
  /**
   * How long Scheduler keeps retrying one invocation. The default drops a run once the next one is due: a
   * periodic job catches up on its next run, so a late duplicate only adds load.
   * @default the rate, at least 60 seconds (Scheduler's minimum)
   */
  readonly maxEventAge?: Duration;
}

/** `rate(1 minute)`, `rate(5 minutes)`: Scheduler refuses the plural for one and the singular for more. */
export const rateExpression = (minutes: number): string => {
  if (!Number.isInteger(minutes) || minutes < 1)
    throw new Error(`rate must be a whole number of minutes ≥ 1, got ${minutes}`);
  return `rate(${minutes} ${minutes === 1 ? 'minute' : 'minutes'})`;
};

/**
 * EventBridge Scheduler → Lambda on a fixed rate: a recurring schedule (no flexible time window) and the role
 * Scheduler assumes to run it, which may do nothing but `lambda:InvokeFunction` on the one target function and
 * can be assumed only by Scheduler for this schedule (source account and schedule ARN).
 *
 * No dead-letter queue: a dropped run is made up by the next one, minutes later; what the target itself fails
 * on is in its logs and its own alarms.
 */
export class RateScheduleToFunction extends Construct {
  readonly schedule: scheduler.CfnSchedule;
  readonly role: iam.Role;
  readonly scheduleExpression: string;

  constructor(scope: Construct, id: string, props: RateScheduleToFunctionProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.scheduleExpression = rateExpression(props.rateMinutes);
    const retryAttempts = props.retryAttempts ?? 2;
    const maxEventAgeSeconds = (
      props.maxEventAge ?? Duration.seconds(Math.max(60, props.rateMinutes * 60))
    ).toSeconds();
    if (maxEventAgeSeconds < 60 || maxEventAgeSeconds > 86_400)
      throw new Error(`maxEventAge must be between 60 s and 24 h, got ${maxEventAgeSeconds} s`);
    if (!Token.isUnresolved(props.scheduleName) && !/^[0-9a-zA-Z._-]{1,64}$/.test(props.scheduleName))
      throw new Error(`schedule name must be 1-64 of [0-9a-zA-Z._-], got ${props.scheduleName}`);
    if (!Number.isInteger(retryAttempts) || retryAttempts < 0 || retryAttempts > 185)
      throw new Error(`retryAttempts must be a whole number between 0 and 185, got ${retryAttempts}`);

    // Formatted rather than read from the schedule: the schedule names the role, so the role naming the
    // schedule's attribute would be a cycle.
    const scheduleArn = stack.formatArn({
      service: 'scheduler',
      resource: 'schedule',
      resourceName: `${DEFAULT_GROUP}/${props.scheduleName}`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    this.role = new iam.Role(this, 'Role', {
      description: `Assumed by EventBridge Scheduler to invoke the ${props.target.definition.id} function on ${this.scheduleExpression}`,
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnEquals: { 'aws:SourceArn': scheduleArn },
        },
      }),
      inlinePolicies: {
        InvokeTarget: new iam.PolicyDocument({
          statements: [
            new iam.PolicyStatement({
              actions: ['lambda:InvokeFunction'],
              resources: [props.target.function.functionArn],
            }),
          ],
        }),
      },
    });

    this.schedule = new scheduler.CfnSchedule(this, 'Schedule', {
      name: props.scheduleName,
      groupName: DEFAULT_GROUP,
      description: props.description ?? props.target.definition.description,
      scheduleExpression: this.scheduleExpression,
      flexibleTimeWindow: { mode: 'OFF' },
      state: 'ENABLED',
      target: {
        arn: props.target.function.functionArn,
        roleArn: this.role.roleArn,
        input: '{}',
        retryPolicy: {
          maximumRetryAttempts: retryAttempts,
          maximumEventAgeInSeconds: maxEventAgeSeconds,
        },
      },
    });
  }
}
