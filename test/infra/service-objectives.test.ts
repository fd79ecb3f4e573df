import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, type FunctionId } from '../../functions/definitions';
import {
  API_NAME_ENV_VAR,
  METRIC_DIMENSIONS,
  METRICS_NAMESPACE_ENV_VAR,
  OBJECTIVES,
  type ObjectiveId,
  SERVICE_METRICS,
} from '../../functions/definitions/objectives';
import {
  arnOf,
  type CfnResource,
  logicalIdOf,
  type PricingAppFixture,
  pricingApp,
  resourceIn,
} from './fixture';

let fixture: PricingAppFixture;
let template: Template;

beforeAll(() => {
  fixture = pricingApp();
  template = Template.fromStack(fixture.stacks.service);
});
afterAll(() => fixture.cleanup());

const NAMESPACE = 'Pricing/test';
const objectives = () => fixture.stacks.service.objectives;
const alarmOf = (objective: ObjectiveId): CfnResource => resourceIn(template, objectives().alarms[objective]);
const sortedDimensions = (dimensions: Readonly<Record<string, string>>) =>
  Object.entries(dimensions)
    .map(([Name, Value]) => ({ Name, Value }))
    .sort((a, b) => a.Name.localeCompare(b.Name));

interface MetricStat {
  readonly Metric: {
    readonly Namespace: string;
    readonly MetricName: string;
    readonly Dimensions: { Name: string; Value: unknown }[];
  };
  readonly Stat: string;
  readonly Period: number;
}

/** The one metric an alarm watches, whether CloudFormation holds it flat or (with a label) as `Metrics`. */
const metricStatOf = (properties: Record<string, unknown>) => {
  const metrics = properties.Metrics as { MetricStat?: MetricStat }[] | undefined;
  if (metrics) {
    expect(metrics).toHaveLength(1);
    const stat = metrics[0]?.MetricStat as MetricStat;
    return {
      namespace: stat.Metric.Namespace,
      metricName: stat.Metric.MetricName,
      dimensions: [...stat.Metric.Dimensions].sort((a, b) => a.Name.localeCompare(b.Name)),
      stat: stat.Stat,
      period: stat.Period,
    };
  }
  return {
    namespace: properties.Namespace,
    metricName: properties.MetricName,
    dimensions: [...(properties.Dimensions as { Name: string; Value: unknown }[])].sort((a, b) =>
      a.Name.localeCompare(b.Name),
    ),
    stat: properties.Statistic ?? properties.ExtendedStatistic,
    period: properties.Period,
  };
};

interface Expected {
  readonly objective: ObjectiveId;
  readonly metric: string;
  readonly dimensions: Readonly<Record<string, string>>;
  readonly statistic?: string;
  readonly extendedStatistic?: string;
  readonly period: number;
  readonly threshold: number;
  readonly comparison: string;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm?: number;
}

/** One alarm per objective on the service's own metric, as the definitions name it. */
const ownMetricAlarms: readonly Expected[] = [
  {
    objective: 'totals_match',
    metric: SERVICE_METRICS.commitTotalsMismatch,
    dimensions: METRIC_DIMENSIONS.commit,
    statistic: 'Sum',
    period: 300,
    threshold: 0,
    comparison: 'GreaterThanThreshold',
    evaluationPeriods: 1,
  },
  {
    objective: 'lock_window',
    metric: SERVICE_METRICS.commitInsideLockWindow,
    dimensions: METRIC_DIMENSIONS.commit,
    statistic: 'Average',
    period: 3600,
    threshold: 0.99,
    comparison: 'LessThanThreshold',
    evaluationPeriods: 1,
  },
  {
    objective: 'signed_receipts',
    metric: SERVICE_METRICS.receiptUnsigned,
    dimensions: METRIC_DIMENSIONS.commit,
    statistic: 'Sum',
    period: 300,
    threshold: 0,
    comparison: 'GreaterThanThreshold',
    evaluationPeriods: 1,
  },
  {
    objective: 'price_latency_p95',
    metric: SERVICE_METRICS.latency,
    dimensions: METRIC_DIMENSIONS.getPrice,
    extendedStatistic: 'p95',
    period: 300,
    threshold: 120,
    comparison: 'GreaterThanThreshold',
    evaluationPeriods: 3,
    datapointsToAlarm: 3,
  },
  {
    objective: 'quote_latency_p95',
    metric: SERVICE_METRICS.latency,
    dimensions: METRIC_DIMENSIONS.quote,
    extendedStatistic: 'p95',
    period: 300,
    threshold: 250,
    comparison: 'GreaterThanThreshold',
    evaluationPeriods: 3,
    datapointsToAlarm: 3,
  },
  {
    objective: 'delivery_latency_p95',
    metric: SERVICE_METRICS.deliveryLatency,
    dimensions: METRIC_DIMENSIONS.deliver,
    extendedStatistic: 'p95',
    period: 300,
    threshold: 3000,
    comparison: 'GreaterThanOrEqualToThreshold',
    evaluationPeriods: 3,
    datapointsToAlarm: 3,
  },
  {
    objective: 'delivery_first_attempt_success',
    metric: SERVICE_METRICS.deliveryFirstAttemptSuccess,
    dimensions: METRIC_DIMENSIONS.deliver,
    statistic: 'Average',
    period: 3600,
    threshold: 0.999,
    comparison: 'LessThanThreshold',
    evaluationPeriods: 1,
  },
  {
    objective: 'fx_breakers_open',
    metric: SERVICE_METRICS.fxBreakersOpen,
    dimensions: METRIC_DIMENSIONS.rates,
    statistic: 'Maximum',
    period: 60,
    threshold: 0,
    comparison: 'GreaterThanThreshold',
    evaluationPeriods: 1,
  },
];

describe('an alarm per objective', () => {
  it('covers every objective of the definitions', () => {
    expect(Object.keys(objectives().alarms).sort()).toEqual(Object.keys(OBJECTIVES).sort());
  });

  it.each(ownMetricAlarms)('$objective: $metric, threshold $threshold ($comparison)', (expected) => {
    const properties = alarmOf(expected.objective).Properties;
    expect(properties).toMatchObject({
      Threshold: expected.threshold,
      ComparisonOperator: expected.comparison,
      EvaluationPeriods: expected.evaluationPeriods,
      TreatMissingData: 'notBreaching',
    });
    expect(properties.DatapointsToAlarm).toBe(expected.datapointsToAlarm);
    expect(metricStatOf(properties)).toEqual({
      namespace: NAMESPACE,
      metricName: expected.metric,
      dimensions: sortedDimensions(expected.dimensions),
      stat: expected.statistic ?? expected.extendedStatistic,
      period: expected.period,
    });
  });

  it('the thresholds are the objectives’ targets', () => {
    for (const expected of ownMetricAlarms) {
      const target: number = OBJECTIVES[expected.objective].target;
      expect(expected.threshold === target || expected.threshold === 0).toBe(true);
    }
  });

  it('the REST API is named after its stack, so its metrics are its own in a shared account', () => {
    template.hasResourceProperties('AWS::ApiGateway::RestApi', {
      Name: `${fixture.stacks.service.stackName}-api`,
    });
  });

  it('availability: 100 × (1 − 5XXError / Count) of the REST API below 99.95 %, 2 of 3 hours', () => {
    const properties = alarmOf('availability').Properties;
    const apiName = fixture.stacks.service.api.api.restApiName;
    expect(properties).toMatchObject({
      Threshold: 99.95,
      ComparisonOperator: 'LessThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      TreatMissingData: 'notBreaching',
    });
    const metrics = properties.Metrics as {
      Id: string;
      Expression?: string;
      ReturnData?: boolean;
      MetricStat?: {
        Metric: { Namespace: string; MetricName: string; Dimensions: unknown };
        Stat: string;
        Period: number;
      };
    }[];
    const expression = metrics.find((metric) => metric.Expression !== undefined);
    expect(expression?.Expression).toBe('100 * (1 - FILL(errors, 0) / requests)');
    const stat = (id: string) => metrics.find((metric) => metric.Id === id)?.MetricStat;
    expect(stat('errors')).toEqual({
      Metric: {
        Namespace: 'AWS/ApiGateway',
        MetricName: '5XXError',
        Dimensions: [{ Name: 'ApiName', Value: apiName }],
      },
      Stat: 'Sum',
      Period: 3600,
    });
    expect(stat('requests')).toEqual({
      Metric: {
        Namespace: 'AWS/ApiGateway',
        MetricName: 'Count',
        Dimensions: [{ Name: 'ApiName', Value: apiName }],
      },
      Stat: 'Sum',
      Period: 3600,
    });
  });

  it('the delivery DLQ objective reuses the DLQ depth alarm instead of a second one', () => {
    const dlqAlarm = fixture.stacks.service.alarms.deliveryDlq?.alarm;
    expect(dlqAlarm).toBeDefined();
    expect(objectives().alarms.delivery_dlq_depth).toBe(dlqAlarm);
    const dlq = fixture.stacks.service.queues.deliveryDlq.queue;
    const onDlq = Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter((alarm) =>
      JSON.stringify((alarm as CfnResource).Properties.Dimensions ?? []).includes(logicalIdOf(dlq)),
    );
    expect(onDlq).toHaveLength(1);
  });
});

describe('dashboard', () => {
  it('one dashboard with an alarm widget per objective', () => {
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    const body = JSON.stringify(resourceIn(template, objectives().dashboard).Properties.DashboardBody);
    for (const objective of Object.keys(OBJECTIVES) as ObjectiveId[]) {
      expect(body).toContain(logicalIdOf(objectives().alarms[objective]));
      expect(body).toContain(`${objective}: `);
    }
    expect(body.match(/\\"type\\":\\"metric\\"/g)?.length).toBe(Object.keys(OBJECTIVES).length);
  });
});

describe('functions', () => {
  const variablesOf = (functionId: FunctionId): Record<string, unknown> =>
    (
      resourceIn(template, fixture.stacks.service.functions[functionId].function).Properties.Environment as {
        Variables: Record<string, unknown>;
      }
    ).Variables;

  it.each(Object.keys(FUNCTIONS) as FunctionId[])('%s publishes into the stage namespace', (functionId) => {
    expect(variablesOf(functionId)[METRICS_NAMESPACE_ENV_VAR]).toBe(NAMESPACE);
  });

  it('the admin function (GET /admin/slo) knows the API name', () => {
    expect(variablesOf('admin')[API_NAME_ENV_VAR]).toBe(fixture.stacks.service.api.api.restApiName);
  });

  const statementsOf = (policy: CfnResource) =>
    (policy.Properties.PolicyDocument as { Statement: { Action: unknown; Resource: unknown }[] }).Statement;

  it('the admin function may read metric data, in a policy of its own that grants nothing else', () => {
    const policies = Object.values(template.findResources('AWS::IAM::Policy')) as CfnResource[];
    const readers = policies.filter((policy) =>
      statementsOf(policy).some((statement) => statement.Action === 'cloudwatch:GetMetricData'),
    );
    expect(readers).toHaveLength(1);
    const [reader] = readers as [CfnResource];
    expect(statementsOf(reader)).toEqual([
      { Action: 'cloudwatch:GetMetricData', Effect: 'Allow', Resource: '*' },
    ]);
    expect(reader.Properties.Roles).toEqual([
      { Ref: logicalIdOf(fixture.stacks.service.functions.admin.role) },
    ]);
  });

  it('the admin function may read the delivery DLQ depth and the rate state', () => {
    const adminPolicy = resourceIn(
      template,
      fixture.stacks.service.functions.admin.role.node.findChild('DefaultPolicy'),
    );
    expect(statementsOf(adminPolicy)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Action: 'sqs:GetQueueAttributes',
          Resource: arnOf(fixture.stacks.service.queues.deliveryDlq.queue),
        }),
        expect.objectContaining({
          Action: expect.arrayContaining(['dynamodb:GetItem']),
          Resource: expect.objectContaining({ 'Fn::ImportValue': expect.stringContaining('rateStateTable') }),
        }),
      ]),
    );
  });
});
