import type { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { SECURE_DEFAULTS } from './defaults';
import type { ServiceFunction } from './service-function';

export interface LogSignalAlarmProps {
  /** The function whose structured (JSON) log lines carry the signal. */
  readonly source: ServiceFunction;
  /** Value of the log line's top-level `alarm` field, e.g. `DeliveryDead`; also the metric's name. */
  readonly signal: string;
  /** Namespace of the metric the filter publishes (one per stage keeps stages apart). */
  readonly namespace: string;
  /** What the signal means, for the alarm's description. */
  readonly description: string;
  /** @default SECURE_DEFAULTS.deadLetterAlarmPeriod (1 minute) */
  readonly period?: Duration;
}

/**
 * A metric filter on a function's log group counting the lines `{ "alarm": "<signal>", … }`, and an alarm on
 * the first such line in a period. No default value is published, so quiet periods are missing data (not
 * breaching) rather than zeros.
 */
export class LogSignalAlarm extends Construct {
  readonly metricFilter: logs.MetricFilter;
  readonly alarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: LogSignalAlarmProps) {
    super(scope, id);
    if (!/^[A-Za-z0-9_]+$/.test(props.signal)) throw new Error(`signal must be a word, got ${props.signal}`);
    this.metricFilter = new logs.MetricFilter(this, 'Filter', {
      logGroup: props.source.logGroup,
      filterPattern: logs.FilterPattern.stringValue('$.alarm', '=', props.signal),
      metricNamespace: props.namespace,
      metricName: props.signal,
      metricValue: '1',
    });
    this.alarm = new cloudwatch.Alarm(this, 'Alarm', {
      alarmDescription: `${props.signal} logged by the ${props.source.definition.id} function: ${props.description}`,
      metric: this.metricFilter.metric({
        period: props.period ?? SECURE_DEFAULTS.deadLetterAlarmPeriod,
        statistic: cloudwatch.Stats.SUM,
      }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }
}
