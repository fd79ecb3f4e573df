import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import * as z from 'zod';
import { ApiGatewayCallerUsagePlan } from '../adapters/aws/api-gateway-usage-plan';
import { CALLER_USAGE_PLAN_NAME_ENV_VAR, OPERATOR_ROLES_ENV_VAR } from '../definitions';
import { type AwsOperatorRole, OPERATOR_ROLES, parseRoleArn } from '../domain/access/principals';
import type { CallerUsagePlan } from '../ports/usage-plan';
import type { Environment } from './environment';

/**
 * The caller usage plan of the API, built on first use: only the function that issues keys has its name (and
 * the grant); anywhere else using it is a deployment defect, reported by the variable's name.
 */
export const callerUsagePlanFromEnv = (env: Environment, region: string): CallerUsagePlan => {
  let plan: ApiGatewayCallerUsagePlan | undefined;
  const built = (): ApiGatewayCallerUsagePlan => {
    const name = env[CALLER_USAGE_PLAN_NAME_ENV_VAR];
    if (!name) throw new Error(`missing environment variable ${CALLER_USAGE_PLAN_NAME_ENV_VAR}`);
    plan ??= new ApiGatewayCallerUsagePlan(new APIGatewayClient({ region }), name);
    return plan;
  };
  return {
    register: (usageIdentifier) => built().register(usageIdentifier),
    remove: (usageIdentifiers) => built().remove(usageIdentifiers),
  };
};

const operatorRolesSchema = z.array(
  z.strictObject({
    role_arn: z.string(),
    roles: z.array(z.enum(OPERATOR_ROLES)),
    human: z.boolean(),
  }),
);

/**
 * `OPERATOR_ROLES`: JSON `[{ "role_arn", "roles": [...], "human": true|false }, …]`, the operator roles the
 * stack created (a human role's sessions are people named by their source identity). Unset: no IAM principal
 * holds an operator role.
 */
export const operatorRolesFromEnv = (env: Environment): AwsOperatorRole[] => {
  const value = env[OPERATOR_ROLES_ENV_VAR];
  if (!value) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new Error(`${OPERATOR_ROLES_ENV_VAR} is not JSON`);
  }
  const roles = operatorRolesSchema.safeParse(parsed);
  if (!roles.success) throw new Error(`${OPERATOR_ROLES_ENV_VAR}: ${roles.error.issues[0]?.message}`);
  return roles.data.map((entry) => {
    const arn = parseRoleArn(entry.role_arn);
    if (!arn) throw new Error(`${OPERATOR_ROLES_ENV_VAR}: ${entry.role_arn} is not an IAM role ARN`);
    return { ...arn, roles: entry.roles, human: entry.human };
  });
};
