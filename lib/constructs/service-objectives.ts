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
/** The availability objective's error budget is spent over 30 days: 0.05 % of 30 days is 21.6 min of outage. */
const ERROR_BUDGET_DAYS = 30;
export type BurnSpeed = 'fast' | 'slow';
/**
 * The two burns that page (SRE workbook, "Alerting on SLOs"): a burn rate r spends the 30-day budget r times
 * faster than evenly, so r × long window / 30 days of it is gone when the long window alarms.
 */
const BURNS: Readonly<Record<BurnSpeed, { burnRate: number; long: Duration; short: Duration }>> = {
  /** 2 % of the budget in 1 hour. */
  fast: { burnRate: 14.4, long: Duration.hours(1), short: Duration.minutes(5) },
  /** 5 % of the budget in 6 hours (one period of 21 600 s: a ratio of sums over the whole window). */
  slow: { burnRate: 6, long: Duration.hours(6), short: Duration.minutes(30) },
};

/** Rounded to 12 decimals, so 1 − 0.9995 is 0.0005 and 14.4 × 0.0005 is 0.0072. */
const exact = (value: number): number => Number(value.toFixed(12));
const percent = (fraction: number): string => `${exact(fraction * 100)} %`;

/** One window of a burn: its length, its threshold (share of requests answered 5xx) and its minimum traffic. */
export interface BurnWindow {
  readonly alarm: cloudwatch.Alarm;
  readonly window: Duration;
  /** Share of requests answered 5xx above which the window breaches (a fraction: 0.0072). */
  readonly errorRatio: number;
  /** Fewer requests in the window than this read as 0 %: a single 5xx can never breach a window by itself. */
  readonly minimumRequests: number;
}

/** A burn: its long and short windows and the composite alarm that fires while both breach. */
export interface AvailabilityBurn {
  readonly burnRate: number;
  readonly alarm: cloudwatch.CompositeAlarm;
  readonly long: BurnWindow;
  readonly short: BurnWindow;
}

/**
 * The service-level objectives in CloudWatch (spec rule 18 and "Limits"; targets in
 * `functions/definitions/objectives.ts`): one alarm per objective on the functions' EMF metrics (API Gateway's
 * for availability, the delivery DLQ's depth alarm for dead deliveries) and one dashboard with a widget per
 * objective. Quiet periods are missing data, never a breach. It also lets the `GET /admin/slo` function read
 * what it reports: the metrics (GetMetricData), the DLQ's depth and the API's name.
 *
 * Availability (≥ 99.95 % of REST API requests not answered 5xx) alarms on how fast its error budget burns,
 * with the multi-window, multi-burn-rate alerts of the SRE workbook ("Alerting on SLOs"). The budget is 0.05 %
 * of the requests of 30 days (21.6 min of total outage). Each window is a metric-math alarm on the API's
 * `5XXError` and `Count` summed over one period as long as the window (sliding, evaluated every minute), so
 * its ratio is errors ÷ requests over the whole window:
 * - fast burn, rate 14.4 (2 % of the budget in 1 h): 5xx share above 0.72 % over the last 1 h AND the last
 *   5 min. Catches sharp outages: 26 s of total outage breach the hour, so a total outage alarms on its
 *   first minute of data, in 1 to 2 min and well within 5; a 1 % error rate alarms after about 43 min.
 * - slow burn, rate 6 (5 % of the budget in 6 h): above 0.3 % over the last 6 h AND the last 30 min. Catches
 *   the steady leaks the fast burn misses: a 0.5 % error rate alarms after about 3.6 h.
 * The long window says the budget is really burning; the short one that it still is, so a burn resets within
 * 5 (30) min of the recovery instead of an hour (6 h). A window with fewer requests than 1 ÷ its threshold
 * (139 fast, 334 slow) reads 0 %, so one failed request among a handful never pages; below that traffic
 * (about 0.5 request/s for 5 min) the ratio alarms cannot see an outage, a synthetic probe would. The
 * objective's alarm fires on either burn.
 */
export class ServiceObjectives extends Construct {
  readonly alarms: Readonly<Record<ObjectiveId, cloudwatch.IAlarm>>;
  /** The availability objective's burns; `alarms.availability` fires on either. */
  readonly availabilityBurns: Readonly<Record<BurnSpeed, AvailabilityBurn>>;
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

    this.availabilityBurns = {
      fast: this.availabilityBurn(props.api, 'fast'),
      slow: this.availabilityBurn(props.api, 'slow'),
    };

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
      // A composite under its own id: CloudFormation cannot change the type of an existing logical id.
      availability: new cloudwatch.CompositeAlarm(this, 'availabilityBurnAlarm', {
        alarmDescription:
          `Objective availability: ${OBJECTIVES.availability.description} Its ${ERROR_BUDGET_DAYS}-day error ` +
          `budget burns fast (${BURNS.fast.burnRate}× over ${BURNS.fast.long.toHumanString()} and ` +
          `${BURNS.fast.short.toHumanString()}) or slowly (${BURNS.slow.burnRate}× over ` +
          `${BURNS.slow.long.toHumanString()} and ${BURNS.slow.short.toHumanString()}).`,
        alarmRule: cloudwatch.AlarmRule.anyOf(
          this.availabilityBurns.fast.alarm,
          this.availabilityBurns.slow.alarm,
        ),
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
      ...(Object.keys(OBJECTIVES) as ObjectiveId[]).map((objective) =>
        objective === 'availability'
          ? // A composite alarm has no metric to graph: its state, its burns' and their windows'.
            new cloudwatch.AlarmStatusWidget({
              title: `${objective}: ${this.targetOf(objective)} (error budget burn rate)`,
              alarms: [
                this.alarms.availability,
                ...Object.values(this.availabilityBurns).flatMap((burn) => [
                  burn.alarm,
                  burn.long.alarm,
                  burn.short.alarm,
                ]),
              ],
              width: 8,
              height: 6,
            })
          : new cloudwatch.AlarmWidget({
              title: `${objective}: ${this.targetOf(objective)}`,
              alarm: this.alarms[objective],
              width: 8,
              height: 6,
            }),
      ),
    );

    // GET /admin/slo: the API's name (ApiName of its metrics) and the metrics themselves; the reader's access to
    // the DLQ's depth is its declaration's (`readsQueueDepths`).
    props.reader.function.addEnvironment(API_NAME_ENV_VAR, props.api.restApiName);
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

  /** A burn of the availability budget: its two window alarms and the composite firing while both breach. */
  private availabilityBurn(api: apigateway.RestApi, speed: BurnSpeed): AvailabilityBurn {
    const { burnRate, long, short } = BURNS[speed];
    const budget = exact(1 - OBJECTIVES.availability.target);
    const errorRatio = exact(burnRate * budget);
    const minimumRequests = Math.ceil(1 / errorRatio);
    const window = (name: 'Long' | 'Short', length: Duration): BurnWindow => {
      const over = length.toHumanString();
      const ratio = new cloudwatch.MathExpression({
        expression: `IF(requests >= ${minimumRequests}, 100 * FILL(errors, 0) / requests, 0)`,
        usingMetrics: {
          errors: api.metricServerError({ period: length, statistic: cloudwatch.Stats.SUM }),
          requests: api.metricCount({ period: length, statistic: cloudwatch.Stats.SUM }),
        },
        period: length,
        label: `Requests answered 5xx over ${over} (%)`,
      });
      return {
        alarm: new cloudwatch.Alarm(
          this,
          `availability${speed === 'fast' ? 'Fast' : 'Slow'}Burn${name}Alarm`,
          {
            alarmDescription:
              `Objective availability, ${speed} burn (${burnRate}× the ${ERROR_BUDGET_DAYS}-day error budget): ` +
              `over ${over}, more than ${percent(errorRatio)} of at least ${minimumRequests} requests answered 5xx.`,
            metric: ratio,
            threshold: exact(errorRatio * 100),
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluationPeriods: 1,
            treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          },
        ),
        window: length,
        errorRatio,
        minimumRequests,
      };
    };
    const longWindow = window('Long', long);
    const shortWindow = window('Short', short);
    return {
      burnRate,
      long: longWindow,
      short: shortWindow,
      alarm: new cloudwatch.CompositeAlarm(
        this,
        `availability${speed === 'fast' ? 'Fast' : 'Slow'}BurnAlarm`,
        {
          alarmDescription:
            `Objective availability, ${speed} burn: the ${ERROR_BUDGET_DAYS}-day error budget burns ${burnRate}× ` +
            `too fast over ${long.toHumanString()} and still over the last ${short.toHumanString()}.`,
          alarmRule: cloudwatch.AlarmRule.allOf(longWindow.alarm, shortWindow.alarm),
        },
      ),
    };
  }

  private targetOf(objective: ObjectiveId): string {
    const { target, comparison, unit } = OBJECTIVES[objective];
    const value = unit === 'ratio' ? percent(target) : `${target} ${unit}`;
    return `${comparison === 'at_least' ? '≥' : comparison === 'below' ? '<' : '≤'} ${value}`;
  }
}
