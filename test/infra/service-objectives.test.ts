import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
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
import type { BurnSpeed } from '../../lib/constructs/service-objectives';
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

interface MetricQuery {
  readonly Id: string;
  readonly Expression?: string;
  readonly ReturnData?: boolean;
  readonly MetricStat?: {
    readonly Metric: { Namespace: string; MetricName: string; Dimensions: unknown };
    readonly Stat: string;
    readonly Period: number;
  };
}

/** How `renderRule` writes a resource's ARN. */
const arnText = (construct: IConstruct): string => `<arn of ${logicalIdOf(construct)}>`;

/** A CloudFormation string (an alarm rule, a dashboard body) as text, each `Fn::GetAtt … Arn` as `arnText`. */
const renderRule = (value: unknown): string => {
  if (typeof value === 'string') return value;
  const object = value as Record<string, unknown>;
  if (object['Fn::Join']) {
    const [separator, parts] = object['Fn::Join'] as [string, unknown[]];
    return parts.map(renderRule).join(separator);
  }
  if (object['Fn::GetAtt']) {
    const [logicalId, attribute] = object['Fn::GetAtt'] as [string, string];
    expect(attribute).toBe('Arn');
    return `<arn of ${logicalId}>`;
  }
  if (typeof object.Ref === 'string') return `<${object.Ref}>`;
  throw new Error(`cannot render ${JSON.stringify(value)}`);
};

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

describe('availability: multi-window, multi-burn-rate alerts on the 30-day error budget', () => {
  const apiName = () => fixture.stacks.service.api.api.restApiName;
  const burns = () => objectives().availabilityBurns;
  const BUDGET = 1 - OBJECTIVES.availability.target;
  const THIRTY_DAYS = 30 * 24 * 3600;

  interface ExpectedWindow {
    readonly speed: BurnSpeed;
    readonly window: 'long' | 'short';
    readonly burnRate: number;
    readonly period: number;
    readonly thresholdPercent: number;
    readonly minimumRequests: number;
  }
  const windows: readonly ExpectedWindow[] = [
    {
      speed: 'fast',
      window: 'long',
      burnRate: 14.4,
      period: 3600,
      thresholdPercent: 0.72,
      minimumRequests: 139,
    },
    {
      speed: 'fast',
      window: 'short',
      burnRate: 14.4,
      period: 300,
      thresholdPercent: 0.72,
      minimumRequests: 139,
    },
    {
      speed: 'slow',
      window: 'long',
      burnRate: 6,
      period: 21600,
      thresholdPercent: 0.3,
      minimumRequests: 334,
    },
    {
      speed: 'slow',
      window: 'short',
      burnRate: 6,
      period: 1800,
      thresholdPercent: 0.3,
      minimumRequests: 334,
    },
  ];

  it.each(windows)(
    '$speed burn, $window window: 5xx share of at least $minimumRequests requests over $period s above $thresholdPercent %',
    (expected) => {
      const burnWindow = burns()[expected.speed][expected.window];
      const properties = resourceIn(template, burnWindow.alarm).Properties;
      expect(properties).toMatchObject({
        Threshold: expected.thresholdPercent,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
      expect(properties.DatapointsToAlarm).toBeUndefined();
      expect(properties.Period).toBeUndefined();
      const metrics = properties.Metrics as MetricQuery[];
      expect(metrics.filter((metric) => metric.ReturnData !== false)).toEqual([
        expect.objectContaining({
          Expression: `IF(requests >= ${expected.minimumRequests}, 100 * FILL(errors, 0) / requests, 0)`,
        }),
      ]);
      const stat = (id: string) => metrics.find((metric) => metric.Id === id)?.MetricStat;
      for (const [id, metricName] of [
        ['errors', '5XXError'],
        ['requests', 'Count'],
      ] as const) {
        expect(stat(id)).toEqual({
          Metric: {
            Namespace: 'AWS/ApiGateway',
            MetricName: metricName,
            Dimensions: [{ Name: 'ApiName', Value: apiName() }],
          },
          Stat: 'Sum',
          Period: expected.period,
        });
      }
      expect(burnWindow).toMatchObject({
        minimumRequests: expected.minimumRequests,
        errorRatio: expected.thresholdPercent / 100,
      });
      expect(burnWindow.window.toSeconds()).toBe(expected.period);
    },
  );

  it('thresholds are burn rate × budget (0.05 %): 14.4 spends 2 % of it in 1 h, 6 spends 5 % in 6 h', () => {
    expect(burns().fast.burnRate).toBe(14.4);
    expect(burns().slow.burnRate).toBe(6);
    for (const expected of windows) {
      expect(expected.thresholdPercent).toBeCloseTo(expected.burnRate * BUDGET * 100, 12);
    }
    const spent = (speed: BurnSpeed) =>
      (burns()[speed].burnRate * burns()[speed].long.window.toSeconds()) / THIRTY_DAYS;
    expect(spent('fast')).toBeCloseTo(0.02, 12);
    expect(spent('slow')).toBeCloseTo(0.05, 12);
    // A total outage breaches the fast long window after 0.72 % of an hour: about 26 s.
    expect((burns().fast.long.errorRatio * 3600).toFixed(1)).toBe('25.9');
  });

  it('a single 5xx never breaches a window by itself: the minimum is the fewest requests where it cannot', () => {
    for (const expected of windows) {
      const oneOf = (requests: number) => (100 * 1) / requests;
      expect(oneOf(expected.minimumRequests)).toBeLessThanOrEqual(expected.thresholdPercent);
      expect(oneOf(expected.minimumRequests - 1)).toBeGreaterThan(expected.thresholdPercent);
      expect(oneOf(expected.minimumRequests) * 2).toBeGreaterThan(expected.thresholdPercent);
    }
  });

  it('each window is one period as long as the window, within what CloudWatch accepts', () => {
    for (const expected of windows) {
      const properties = resourceIn(template, burns()[expected.speed][expected.window].alarm).Properties;
      const periods = (properties.Metrics as MetricQuery[]).flatMap((metric) =>
        metric.MetricStat ? [metric.MetricStat.Period] : [],
      );
      expect(periods).toEqual([expected.period, expected.period]);
      expect(expected.period % 60).toBe(0);
      const evaluated = expected.period * (properties.EvaluationPeriods as number);
      expect(evaluated).toBeLessThanOrEqual(expected.period < 3600 ? 86_400 : 604_800);
    }
  });

  it.each(['fast', 'slow'] as const)(
    '%s burn: a composite alarm while its long AND its short window breach',
    (speed) => {
      const properties = resourceIn(template, burns()[speed].alarm).Properties;
      expect(resourceIn(template, burns()[speed].alarm).Type).toBe('AWS::CloudWatch::CompositeAlarm');
      expect(renderRule(properties.AlarmRule)).toBe(
        `(ALARM("${arnText(burns()[speed].long.alarm)}") AND ALARM("${arnText(burns()[speed].short.alarm)}"))`,
      );
      expect(properties.AlarmDescription).toContain(`${speed} burn`);
    },
  );

  it('the objective’s alarm is a composite that fires on either burn', () => {
    const resource = alarmOf('availability');
    expect(resource.Type).toBe('AWS::CloudWatch::CompositeAlarm');
    expect(renderRule(resource.Properties.AlarmRule)).toBe(
      `(ALARM("${arnText(burns().fast.alarm)}") OR ALARM("${arnText(burns().slow.alarm)}"))`,
    );
    expect(resource.Properties.AlarmDescription).toContain(OBJECTIVES.availability.description);
  });

  it('the four windows are the only alarms on the API’s 5XXError (the hourly availability alarm is gone)', () => {
    const onErrors = Object.entries(template.findResources('AWS::CloudWatch::Alarm'))
      .filter(([, alarm]) => JSON.stringify(alarm).includes('"5XXError"'))
      .map(([logicalId]) => logicalId)
      .sort();
    expect(onErrors).toEqual(
      windows.map((expected) => logicalIdOf(burns()[expected.speed][expected.window].alarm)).sort(),
    );
    template.resourceCountIs('AWS::CloudWatch::CompositeAlarm', 3);
  });
});

describe('dashboard', () => {
  interface Widget {
    readonly type: string;
    readonly properties: { title: string; alarms?: string[]; annotations?: { alarms: string[] } };
  }
  const widgets = (): Widget[] =>
    (
      JSON.parse(renderRule(resourceIn(template, objectives().dashboard).Properties.DashboardBody)) as {
        widgets: Widget[];
      }
    ).widgets;
  const widgetOf = (objective: ObjectiveId): Widget => {
    const found = widgets().filter((widget) => widget.properties.title?.startsWith(`${objective}: `));
    expect(found).toHaveLength(1);
    return found[0] as Widget;
  };

  it('one dashboard with a widget per objective', () => {
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    expect(widgets().filter((widget) => widget.type !== 'text')).toHaveLength(Object.keys(OBJECTIVES).length);
  });

  it.each((Object.keys(OBJECTIVES) as ObjectiveId[]).filter((objective) => objective !== 'availability'))(
    '%s: the graph of its alarm',
    (objective) => {
      const widget = widgetOf(objective);
      expect(widget.type).toBe('metric');
      expect(widget.properties.annotations?.alarms).toEqual([arnText(objectives().alarms[objective])]);
    },
  );

  it('availability: the states of its composite, both burns and their four windows', () => {
    const widget = widgetOf('availability');
    expect(widget.type).toBe('alarm');
    expect(widget.properties.title).toBe('availability: ≥ 99.95 % (error budget burn rate)');
    const burns = objectives().availabilityBurns;
    expect(widget.properties.alarms).toEqual(
      [
        objectives().alarms.availability,
        burns.fast.alarm,
        burns.fast.long.alarm,
        burns.fast.short.alarm,
        burns.slow.alarm,
        burns.slow.long.alarm,
        burns.slow.short.alarm,
      ].map(arnText),
    );
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
          // Only GetItem: the report reads the breakers, nothing else of the rate state.
          Action: 'dynamodb:GetItem',
          Resource: expect.objectContaining({ 'Fn::ImportValue': expect.stringContaining('rateStateTable') }),
        }),
      ]),
    );
  });
});
