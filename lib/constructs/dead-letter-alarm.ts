import type { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { SECURE_DEFAULTS } from './defaults';
import type { EncryptedQueue } from './encrypted-queue';

export interface DeadLetterAlarmProps {
  /** A terminal queue: a dead-letter queue or an on-failure destination. */
  readonly queue: EncryptedQueue;
  /**
   * Alarm when more than this many messages are visible.
   * @default 0 (the first dead letter alarms)
   */
  readonly threshold?: number;
  /** @default SECURE_DEFAULTS.deadLetterAlarmPeriod (1 minute) */
  readonly period?: Duration;
}

/** A CloudWatch alarm on the depth of a terminal queue: something the service could not process is waiting. */
export class DeadLetterAlarm extends Construct {
  readonly alarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: DeadLetterAlarmProps) {
    super(scope, id);
    const { definition } = props.queue;
    this.alarm = new cloudwatch.Alarm(this, 'Alarm', {
      alarmDescription: `Messages waiting in terminal queue ${definition.id}: ${definition.description}`,
      metric: props.queue.queue.metricApproximateNumberOfMessagesVisible({
        period: props.period ?? SECURE_DEFAULTS.deadLetterAlarmPeriod,
        statistic: cloudwatch.Stats.MAXIMUM,
      }),
      threshold: props.threshold ?? 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }
}
