import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import {
  API_NAME_ENV_VAR,
  METRIC_DIMENSIONS,
  type MetricDimensions,
  OBJECTIVES,
  type ObjectiveId,
  SERVICE_METRICS,
} from '../../functions/definitions/objectives';
import type { DeadLetterAlarm } from './dead-letter-alarm';
import type { EncryptedQueue } from './encrypted-queue';
import type { ServiceFunction } from './service-function';

export interface ServiceObjectivesProps {
  /** Namespace of the functions' EMF metrics (`Pricing/<stage>`). */
  readonly namespace: string;
  /** The REST API whose `5XXError` and `Count` measure availability. */
  readonly api: apigateway.RestApi;
  /** The delivery DLQ and its depth alarm (the DLQ objective reuses that alarm). */
  readonly deliveryDlq: EncryptedQueue;
  readonly deliveryDlqAlarm: DeadLetterAlarm;
  /** The function serving `GET /admin/slo`: reads the metrics, the DLQ's depth and the API's name. */
  readonly reader: ServiceFunction;
  /** @default `<stack name>-objectives` */
  readonly dashboardName?: string;
}

/** A steady breach of a latency objective: every 5-minute p95 of a quarter of an hour above the target. */
const LATENCY_PERIOD = Duration.minutes(5);
const LATENCY_EVALUATION_PERIODS = 3;
/** Shares of decisions need volume to mean something: one hour of commits or first attempts per datapoint. */
const SHARE_PERIOD = Duration.hours(1);
/** Single events that must never happen: the first one alarms. */
const EVENT_PERIOD = Duration.minutes(5);
/** The `rates` function reports the breakers every minute. */
const BREAKER_PERIOD = Duration.minutes(1);
/** Availability: hourly datapoints, alarming when two of the last three hours are below the target. */
const AVAILABILITY_PERIOD = Duration.hours(1);
const AVAILABILITY_EVALUATION_PERIODS = 3;
const AVAILABILITY_DATAPOINTS_TO_ALARM = 2;

const percent = (fraction: number): string => `${Number((fraction * 100).toFixed(4))} %`;

/**
 * The service-level objectives in CloudWatch (spec rule 18 and "Limits"; targets in
 * `functions/definitions/objectives.ts`): one alarm per objective on the functions' EMF metrics (API Gateway's
 * for availability, the delivery DLQ's depth alarm for dead deliveries) and one dashboard with a widget per
 * objective. Quiet periods are missing data, never a breach. It also lets the `GET /admin/slo` function read
 * what it reports: the metrics (GetMetricData), the DLQ's depth and the API's name.
 */
export class ServiceObjectives extends Construct {
  readonly alarms: Readonly<Record<ObjectiveId, cloudwatch.IAlarm>>;
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: ServiceObjectivesProps) {
    super(scope, id);
    const metric = (
      metricName: string,
      dimensionsMap: MetricDimensions,
      statistic: string,
      period: Duration,
      label: string,
    ): cloudwatch.Metric =>
      new cloudwatch.Metric({
        namespace: props.namespace,
        metricName,
        dimensionsMap: { ...dimensionsMap },
        statistic,
        period,
        label,
      });
    const alarm = (
      objective: ObjectiveId,
      alarmProps: Omit<cloudwatch.AlarmProps, 'alarmDescription' | 'treatMissingData'>,
    ): cloudwatch.Alarm =>
      new cloudwatch.Alarm(this, `${objective}Alarm`, {
        alarmDescription: `Objective ${objective}: ${OBJECTIVES[objective].description}`,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        ...alarmProps,
      });
    const latencyAlarm = (
      objective: 'price_latency_p95' | 'quote_latency_p95' | 'delivery_latency_p95',
      latency: cloudwatch.Metric,
    ): cloudwatch.Alarm =>
      alarm(objective, {
        metric: latency,
        threshold: OBJECTIVES[objective].target,
        comparisonOperator:
          OBJECTIVES[objective].comparison === 'below'
            ? cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
            : cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: LATENCY_EVALUATION_PERIODS,
        datapointsToAlarm: LATENCY_EVALUATION_PERIODS,
      });
    const shareAlarm = (
      objective: 'lock_window' | 'delivery_first_attempt_success',
      share: cloudwatch.Metric,
    ): cloudwatch.Alarm =>
      alarm(objective, {
        metric: share,
        threshold: OBJECTIVES[objective].target,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        evaluationPeriods: 1,
      });
    const firstOne = (objective: ObjectiveId, count: cloudwatch.Metric): cloudwatch.Alarm =>
      alarm(objective, {
        metric: count,
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
      });

    const availability = new cloudwatch.MathExpression({
      expression: '100 * (1 - FILL(errors, 0) / requests)',
      usingMetrics: {
        errors: props.api.metricServerError({ period: AVAILABILITY_PERIOD, statistic: cloudwatch.Stats.SUM }),
        requests: props.api.metricCount({ period: AVAILABILITY_PERIOD, statistic: cloudwatch.Stats.SUM }),
      },
      period: AVAILABILITY_PERIOD,
      label: 'Requests not answered 5xx (%)',
    });

    this.alarms = {
      totals_match: firstOne(
        'totals_match',
        metric(
          SERVICE_METRICS.commitTotalsMismatch,
          METRIC_DIMENSIONS.commit,
          cloudwatch.Stats.SUM,
          EVENT_PERIOD,
          'Receipts whose total differs from the quote',
        ),
      ),
      // Each decision is one 0/1 sample: the Average is the share inside the lock window.
      lock_window: shareAlarm(
        'lock_window',
        metric(
          SERVICE_METRICS.commitInsideLockWindow,
          METRIC_DIMENSIONS.commit,
          cloudwatch.Stats.AVERAGE,
          SHARE_PERIOD,
          'Share of commits inside the rate lock',
        ),
      ),
      signed_receipts: firstOne(
        'signed_receipts',
        metric(
          SERVICE_METRICS.receiptUnsigned,
          METRIC_DIMENSIONS.commit,
          cloudwatch.Stats.SUM,
          EVENT_PERIOD,
          'Receipts without versions or signature',
        ),
      ),
      price_latency_p95: latencyAlarm(
        'price_latency_p95',
        metric(
          SERVICE_METRICS.latency,
          METRIC_DIMENSIONS.getPrice,
          cloudwatch.Stats.p(95),
          LATENCY_PERIOD,
          'GET /catalog/prices p95 (ms)',
        ),
      ),
      quote_latency_p95: latencyAlarm(
        'quote_latency_p95',
        metric(
          SERVICE_METRICS.latency,
          METRIC_DIMENSIONS.quote,
          cloudwatch.Stats.p(95),
          LATENCY_PERIOD,
          'POST /pricing/quote p95 (ms)',
        ),
      ),
      delivery_latency_p95: latencyAlarm(
        'delivery_latency_p95',
        metric(
          SERVICE_METRICS.deliveryLatency,
          METRIC_DIMENSIONS.deliver,
          cloudwatch.Stats.p(95),
          LATENCY_PERIOD,
          'Delivery: first attempt to 2xx, p95 (ms)',
        ),
      ),
      delivery_first_attempt_success: shareAlarm(
        'delivery_first_attempt_success',
        metric(
          SERVICE_METRICS.deliveryFirstAttemptSuccess,
          METRIC_DIMENSIONS.deliver,
          cloudwatch.Stats.AVERAGE,
          SHARE_PERIOD,
          'Share of first attempts answered 2xx',
        ),
      ),
      delivery_dlq_depth: props.deliveryDlqAlarm.alarm,
      fx_breakers_open: firstOne(
        'fx_breakers_open',
        metric(
          SERVICE_METRICS.fxBreakersOpen,
          METRIC_DIMENSIONS.rates,
          cloudwatch.Stats.MAXIMUM,
          BREAKER_PERIOD,
          'FX breakers open',
        ),
      ),
      availability: alarm('availability', {
        metric: availability,
        threshold: OBJECTIVES.availability.target * 100,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        evaluationPeriods: AVAILABILITY_EVALUATION_PERIODS,
        datapointsToAlarm: AVAILABILITY_DATAPOINTS_TO_ALARM,
      }),
    };

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: props.dashboardName ?? `${Stack.of(this).stackName}-objectives`,
      defaultInterval: Duration.days(1),
    });
    this.dashboard.addWidgets(
      new cloudwatch.TextWidget({
        markdown:
          '# Service-level objectives\nOne widget per objective of spec rule 18 and "Limits"; each shows its ' +
          'alarm. `GET /admin/slo` reports the same objectives over the last 24 h.',
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      ...(Object.keys(OBJECTIVES) as ObjectiveId[]).map(
        (objective) =>
          new cloudwatch.AlarmWidget({
            title: `${objective}: ${this.targetOf(objective)}`,
            alarm: this.alarms[objective],
            width: 8,
            height: 6,
          }),
      ),
    );

    // GET /admin/slo: the API's name (ApiName of its metrics), the DLQ's depth, and the metrics themselves.
    props.reader.function.addEnvironment(API_NAME_ENV_VAR, props.api.restApiName);
    props.reader.addToRolePolicy(['sqs:GetQueueAttributes'], [props.deliveryDlq.queue.queueArn]);
    const readMetrics = new iam.Policy(this, 'ReadMetricsPolicy', {
      statements: [new iam.PolicyStatement({ actions: ['cloudwatch:GetMetricData'], resources: ['*'] })],
      roles: [props.reader.role],
    });
    Validations.of(readMetrics).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'cloudwatch:GetMetricData has no resource-level permissions (the Service Authorization Reference lists ' +
        'no resource type and no condition key for it), so it can only be granted on "*"; it reads metric ' +
        'values only, for the GET /admin/slo report, and this policy grants nothing else.',
    });
  }

  private targetOf(objective: ObjectiveId): string {
    const { target, comparison, unit } = OBJECTIVES[objective];
    const value = unit === 'ratio' ? percent(target) : `${target} ${unit}`;
    return `${comparison === 'at_least' ? '≥' : comparison === 'below' ? '<' : '≤'} ${value}`;
  }
}
