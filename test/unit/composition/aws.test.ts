/**
 * The AWS composition root, per function: built from exactly the environment the CDK sets on that function
 * (`environmentOf`, derived from the declaration its grants come from), every function's handler is built, every
 * member it declares is reachable, every other member is refused by name, and nothing reads a variable that is
 * not in its environment (besides the settings every function may be tuned with).
 */
import { describe, expect, it } from 'vitest';
import {
  awsDependencies,
  awsPlatform,
  queueArnFromUrl,
  queueArnOf,
} from '../../../functions/composition/aws';
import type { ServiceDependencies } from '../../../functions/composition/dependencies';
import { FUNCTION_FACTORIES } from '../../../functions/composition/functions';
import { functionEnvironment } from '../../../functions/composition/local/function-environment';
import { composeService } from '../../../functions/composition/service';
import {
  environmentOf,
  FUNCTIONS,
  type FunctionId,
  QUEUES,
  TABLES,
  TUNABLE_SETTINGS,
} from '../../../functions/definitions';

const ACCOUNT = '123456789012';
const queueUrl = (id: string) => `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/pricing-${id}`;

/** The environment the CDK gives one function, with AWS-shaped names (the definitions', not this test's). */
const environmentOfFunction = (functionId: FunctionId): Record<string, string> =>
  functionEnvironment(functionId, {
    region: 'eu-west-1',
    account: ACCOUNT,
    table: (id) => `pricing-${id}`,
    queueUrl,
    bucket: (id) => `pricing-${id}`,
  });

/** An environment that records every variable read. */
const recording = (env: Record<string, string>) => {
  const read = new Set<string>();
  const proxy = new Proxy(env, {
    get: (target, name) => {
      if (typeof name === 'string') read.add(name);
      return target[name as string];
    },
  });
  return { env: proxy, read };
};

/** Reaches every member (and every member of the grouped ones): the refusals, by member. */
const reachEverything = (deps: ServiceDependencies): Record<string, string> => {
  const refused: Record<string, string> = {};
  const visit = (object: object, prefix: string) => {
    for (const key of Object.keys(object)) {
      try {
        const value = (object as Record<string, unknown>)[key];
        if (['webhooks', 'receiptExport'].includes(key) && value && typeof value === 'object')
          visit(value, `${key}.`);
      } catch (error) {
        refused[`${prefix}${key}`] = (error as Error).message;
      }
    }
  };
  visit(deps, '');
  return refused;
};

describe('awsDependencies per function', () => {
  const functionIds = Object.keys(FUNCTIONS) as FunctionId[];

  it.each(functionIds)(
    '%s: its handler builds from its own environment, reading nothing else',
    (functionId) => {
      const { env, read } = recording(environmentOfFunction(functionId));
      const deps = composeService(awsPlatform(env), functionId);
      expect(() => FUNCTION_FACTORIES[functionId](deps)).not.toThrow();
      const refused = reachEverything(deps);
      // What it does not declare is refused by name, never for a missing variable.
      for (const message of Object.values(refused)) {
        expect(message).toMatch(
          new RegExp(
            `^the ${functionId} function (has no access to|does not schedule|does not publish|does not assume|does not register)`,
          ),
        );
      }
      const declared = new Set(['AWS_REGION', ...environmentOf(functionId).map((variable) => variable.name)]);
      expect([...read].filter((name) => !declared.has(name) && !TUNABLE_SETTINGS.test(name))).toEqual([]);
    },
  );

  it('refuses what a function does not declare: the catalog function has no receipts table', () => {
    const deps = composeService(awsPlatform(environmentOfFunction('catalog')), 'catalog');
    expect(() => deps.checkoutRepository).toThrow(
      'the catalog function has no access to table quotes: declare it in functions/definitions/access.ts',
    );
    expect(() => deps.secretsCipher).toThrow('the catalog function has no access to key secrets');
    expect(() => deps.scheduler).toThrow('the catalog function does not schedule retries');
  });

  it('names a missing variable when the member that needs it is first built', () => {
    const env = { ...environmentOfFunction('checkout') };
    delete env[TABLES.quotes.envVar];
    const deps = composeService(awsPlatform(env), 'checkout');
    expect(() => deps.checkoutRepository).toThrow(`missing environment variable ${TABLES.quotes.envVar}`);
  });

  it('needs AWS_REGION at once, and treats an empty value as missing', () => {
    expect(() => awsPlatform({})).toThrow('missing environment variable AWS_REGION');
    expect(() => awsPlatform({ AWS_REGION: '' })).toThrow('missing environment variable AWS_REGION');
  });

  it('refuses a delivery queue URL that is not an SQS URL when the scheduler is built', () => {
    const env = {
      ...environmentOfFunction('deliver'),
      [QUEUES.delivery.envVar]: 'http://localhost:4566/0/q',
    };
    expect(() => composeService(awsPlatform(env), 'deliver').scheduler).toThrow(/not an SQS queue URL/);
  });

  it('builds each function once per instance', () => {
    const env = environmentOfFunction('api');
    expect(awsDependencies('api', env)).toBe(awsDependencies('api', env));
  });
});

describe('queueArnFromUrl', () => {
  it('turns an SQS queue URL into its ARN', () => {
    expect(queueArnFromUrl(`https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/pricing-delivery`)).toBe(
      `arn:aws:sqs:eu-west-1:${ACCOUNT}:pricing-delivery`,
    );
  });

  it('keeps a FIFO queue name and derives the partition from the region', () => {
    expect(queueArnFromUrl(`https://sqs.cn-north-1.amazonaws.com.cn/${ACCOUNT}/jobs.fifo`)).toBe(
      `arn:aws-cn:sqs:cn-north-1:${ACCOUNT}:jobs.fifo`,
    );
  });

  it.each([
    ['not a URL', 'pricing-delivery'],
    ['plain http', `http://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/q`],
    ['no account', 'https://sqs.eu-west-1.amazonaws.com/q'],
    ['non-numeric account', 'https://sqs.eu-west-1.amazonaws.com/acct/q'],
    ['extra path segment', `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/q/extra`],
    ['trailing slash', `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/q/`],
    ['local emulator URL', `http://127.0.0.1:4566/${ACCOUNT}/q`],
  ])('refuses a malformed URL (%s), naming it', (_label, url) => {
    expect(() => queueArnFromUrl(url)).toThrow(`not an SQS queue URL: ${url}`);
  });
});

describe('queueArnOf', () => {
  it('reads a queue under the SQS emulator endpoint as a queue of the function’s region', () => {
    const env = { AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:4566/' };
    expect(queueArnOf(`http://127.0.0.1:4566/${ACCOUNT}/pricing-delivery`, env, 'eu-west-1')).toBe(
      `arn:aws:sqs:eu-west-1:${ACCOUNT}:pricing-delivery`,
    );
  });

  it('holds any other URL to the SQS form, emulator or not', () => {
    const env = { AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:4566' };
    expect(queueArnOf(`https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/q`, env, 'eu-west-1')).toBe(
      `arn:aws:sqs:eu-west-1:${ACCOUNT}:q`,
    );
    expect(() => queueArnOf(`http://127.0.0.1:9999/${ACCOUNT}/q`, env, 'eu-west-1')).toThrow(
      'not an SQS queue URL',
    );
    expect(() => queueArnOf(`http://127.0.0.1:4566/${ACCOUNT}/q`, {}, 'eu-west-1')).toThrow(
      'not an SQS queue URL',
    );
  });
});
